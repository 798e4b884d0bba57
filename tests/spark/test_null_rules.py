"""One rule for missing values in every aggregation, the user's own too, on every path: the
table's. On Arrow and Polars tables and on Spark, null is missing (never reaches ``lift``)
and NaN is a value (it reaches ``lift`` as a float NaN, as Spark's and Arrow's own functions
take it); on pandas and numpy arrays NaN is missing, as their docs say. A non-commutative
aggregation (an affine map composition, which marks a NaN it is given) over 4.0, null, NaN,
5.0 gives the composition of 4.0, the mark and 5.0 on the former and of 4.0 and 5.0 on the
latter; a user's sum agrees with the built-in ``sum`` on every path. Integer sums that leave a
long's range raise by default and wrap where Spark's ANSI mode is off; ``sliding_aggregate``
takes a user's aggregation that lowers to a float."""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

import windowagg
from windowagg import spark as wspark
from windowagg.errors import ArithmeticOverflowError

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)


class Affine:
    """Compositions of x -> a * x + b, lifted from v as (0.5, v): associative, not commutative;
    ``lift`` of a missing value would give NaN, so a NaN result shows one reached it."""

    name = "affine"
    identity = (1.0, 0.0)

    def lift(self, v):
        assert v is not None  # a null never reaches lift
        return (0.5, MARK if math.isnan(v) else float(v))

    def combine(self, f, g):  # g after f
        return (g[0] * f[0], g[0] * f[1] + g[1])

    def lower(self, p):
        return p[0] * 10.0 + p[1]  # the composition applied to 10: a float


class UserSum:
    """A user's sum: a NaN it is given makes it NaN, as the built-in's."""

    identity = 0.0

    def lift(self, v):
        assert v is not None
        return float(v)

    def combine(self, a, b):
        return a + b

    def lower(self, p):
        return p


VALUES = [4.0, None, math.nan, 5.0]
#: what Affine lifts a NaN to
MARK = -1000.0
#: NaN missing (pandas, numpy): the composition of 4.0 then 5.0 at 10
WANT = 0.5 * (0.5 * 10 + 4.0) + 5.0
#: NaN a value (Arrow, Polars, Spark): 4.0, then the NaN's mark, then 5.0
WANT_NAN = 0.5 * (0.5 * (0.5 * 10 + 4.0) + MARK) + 5.0


def table() -> pa.Table:
    ts = [T0 + dt.timedelta(seconds=s) for s in range(len(VALUES))]
    return pa.table(
        {"k": [1] * len(VALUES), "ts": ts, "v": pa.array(VALUES, pa.float64(), from_pandas=False)}
    )


def test_local_tables_of_every_kind() -> None:
    arrow = table()
    assert arrow.column("v").null_count == 1  # a null and a NaN, told apart
    kinds = {
        "arrow": arrow,
        "polars": pl.from_arrow(arrow),
        "pandas": arrow.to_pandas(),
        "dict": {c: arrow.column(c).to_numpy(zero_copy_only=False) for c in arrow.column_names},
    }
    for kind, t in kinds.items():
        want = WANT if kind in ("pandas", "dict") else WANT_NAN
        aggs = {"f": (Affine(), "v"), "u": (UserSum(), "v"), "s": ("sum", "v")}
        w = _records(
            windowagg.window_aggregate(t, time="ts", key="k", windows="tumbling:1m", aggs=aggs)
        )
        rolling = {n: (*spec, "rows:4") for n, spec in aggs.items()}
        r = _records(windowagg.rolling_aggregate(t, time="ts", key="k", aggs=rolling))
        for got in (w[0], r[-1]):
            assert math.isclose(got["f"], want), (kind, got)
            if kind in ("pandas", "dict"):
                assert got["u"] == got["s"] == 9.0, (kind, got)
            else:
                assert math.isnan(got["u"]) and math.isnan(got["s"]), (kind, got)


def _records(out) -> list[dict]:
    if isinstance(out, pa.Table):
        return out.to_pylist()
    if isinstance(out, pl.DataFrame):
        return out.to_dicts()
    if isinstance(out, dict):
        return pd.DataFrame(out).to_dict("records")
    return out.to_dict("records")


def test_sliding_aggregate_takes_a_user_aggregation_that_lowers_to_a_float() -> None:
    out = windowagg.sliding_aggregate(np.array([4.0, np.nan, np.nan, 5.0]), size=4, agg=Affine())
    assert out.dtype == float and math.isclose(out[-1], WANT)
    out = windowagg.sliding_aggregate(
        [4.0, None, math.nan, 5.0], size=4, agg=Affine(), times=[0.0, 2.0, 1.0, 3.0]
    )
    assert math.isclose(out[-1], WANT)
    x = np.array([4.0, np.nan, np.nan, 5.0])  # arrays: NaN is missing, for every aggregation
    mine, theirs = (windowagg.sliding_aggregate(x, size=4, agg=a) for a in (UserSum(), "sum"))
    assert mine.tolist() == theirs.tolist() == [4.0, 4.0, 4.0, 9.0]

    class Named(Affine):
        def lower(self, p):
            return f"{p}"

    with pytest.raises(TypeError, match="make lower return a number"):
        windowagg.sliding_aggregate([1.0, 2.0], size=2, agg=Named())


def test_spark_windows_rolling_frames_and_streams(spark, tmp_path) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame(table().to_pylist(), "k int, ts timestamp, v double")
    aggs = {"f": (Affine(), "v"), "u": (UserSum(), "v"), "s": ("sum", "v")}
    w = wspark.window_aggregate(df, time="ts", key="k", windows="tumbling:1m", aggs=aggs)
    rolling = {n: (*spec, "rows:4") for n, spec in aggs.items()}
    r = wspark.rolling_aggregate(df, time="ts", key="k", aggs=rolling)
    theirs = df.groupBy("k").agg(F.sum("v").alias("s")).collect()[0].s  # Spark's own
    assert math.isnan(theirs)
    for got in (w.collect()[0], r.orderBy("ts").collect()[-1]):
        assert math.isclose(got.f, WANT_NAN), got
        assert math.isnan(got.u) and math.isnan(got.s), got
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    with open(src / "part-0.json", "w") as fh:
        for s, v in enumerate(VALUES):
            v = "NaN" if v is not None and math.isnan(v) else v  # Spark reads "NaN" as NaN
            fh.write(json.dumps({"k": 1, "ts": str(T0 + dt.timedelta(seconds=s)), "v": v}) + "\n")
        fh.write(json.dumps({"k": 2, "ts": str(T0 + dt.timedelta(hours=1)), "v": 1.0}) + "\n")
    stream = spark.readStream.schema("k int, ts timestamp, v double").json(str(src))
    res = wspark.window_aggregate(
        stream.withWatermark("ts", "1 second"),
        time="ts",
        key="k",
        windows="tumbling:1m",
        aggs={"f": (Affine(), "v")},
    )
    q = (
        res.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    got = spark.read.parquet(str(out)).where(F.col("k") == 1).collect()
    assert got and math.isclose(got[-1].f, WANT_NAN)


def test_integer_overflow_raises_locally_and_under_ansi_and_wraps_without(spark) -> None:
    from pyspark.sql import functions as F

    rows = [{"k": 1, "ts": T0 + dt.timedelta(seconds=s), "v": 2**62} for s in range(2)]
    t = pa.Table.from_pylist(rows)
    with pytest.raises(ArithmeticOverflowError, match="beyond a long's range"):
        windowagg.window_aggregate(
            t, time="ts", key="k", windows="tumbling:1m", aggs={"s": ("sum", "v")}
        )
    with pytest.raises(ArithmeticOverflowError):
        windowagg.rolling_aggregate(t, time="ts", key="k", aggs={"s": ("sum", "v", "rows:2")})
    ok = windowagg.rolling_aggregate(
        t, time="ts", key="k", aggs={"s": ("sum", "v", "rows:1"), "m": ("mean", "v", "rows:2")}
    )
    assert ok.column("s").to_pylist() == [2**62, 2**62]  # no frame overflows
    assert ok.column("m").to_pylist() == [2.0**62, 2.0**62]  # a mean sums doubles, as Spark's
    df = spark.createDataFrame(rows, "k int, ts timestamp, v bigint")
    for windows in (["tumbling:1m"], ["tumbling:1m", "session:5s"]):  # SQL partials, rows
        with pytest.raises(Exception, match="ARITHMETIC_OVERFLOW|beyond a long's range"):
            wspark.window_aggregate(
                df,
                time="ts",
                key="k",
                windows=windows,
                aggs={"s": ("sum", "v"), "f": ("first", "v")},
            ).collect()
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        theirs = df.groupBy("k", F.window("ts", "1 minute")).agg(F.sum("v").alias("s")).first().s
        ours = (
            wspark.window_aggregate(
                df,
                time="ts",
                key="k",
                windows=["tumbling:1m"],
                aggs={"s": ("sum", "v"), "f": ("first", "v")},
            )
            .first()
            .s
        )
        rolled = wspark.rolling_aggregate(
            df, time="ts", key="k", aggs={"s": ("sum", "v", "rows:2")}
        )
        assert ours == theirs == -(2**63)  # wraps as Java's longs do
        assert rolled.orderBy("ts").collect()[-1].s == -(2**63)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", "true")


def test_a_mean_of_integers_beyond_a_long_is_sparks_avg(spark) -> None:
    """Spark's avg sums integers in doubles, so a mean whose sum leaves a long's range has an
    answer, not an overflow, under ANSI mode: the same on local windows (slice partials and
    rows), on Spark's SQL partials and over the rows."""
    from pyspark.sql import functions as F

    rows = [{"k": 1, "ts": T0 + dt.timedelta(seconds=s), "v": 2**62 + s} for s in range(3)]
    df = spark.createDataFrame(rows, "k int, ts timestamp, v bigint")
    theirs = df.groupBy("k", F.window("ts", "1 minute")).agg(F.avg("v").alias("m")).first().m
    for windows in (["tumbling:1m"], ["tumbling:1m", "count-tumbling:2"]):  # partials, rows
        kw = {"time": "ts", "key": "k", "windows": windows, "aggs": {"m": ("mean", "v")}}
        local = windowagg.window_aggregate(pa.Table.from_pylist(rows), **kw)
        ours = wspark.window_aggregate(df, **kw).where(F.col("window") == "tumbling:1m").first()
        assert local.column("m").to_pylist()[0] == ours.m == theirs == 2.0**62


def test_pandas_nan_is_missing() -> None:
    """A pandas float column cannot tell null from NaN: NaN is taken as missing (null), as
    pandas takes it, so sum skips it where a NaN value would make it NaN."""
    t = pd.DataFrame({"k": [1, 1], "ts": [T0, T0 + dt.timedelta(seconds=1)], "v": [1.0, np.nan]})
    out = windowagg.rolling_aggregate(t, time="ts", key="k", aggs={"s": ("sum", "v", "rows:2")})
    assert out["s"].tolist() == [1.0, 1.0]


MOMENTS = ["stddev", "stddev_pop", "variance", "var_pop", "skewness", "kurtosis"]


def test_moments_over_infinities_are_sparks(spark) -> None:
    """stddev, the variances and the moments over a frame holding +-inf: Spark's own answer
    (NaN), on local windows and rolling frames and on Spark's paths, against Spark's groupBy."""
    from pyspark.sql import functions as F

    groups = {1: [1.0, math.inf, 2.0], 2: [3.0, -math.inf], 3: [math.inf], 4: [1.0, 2.0, 4.0]}
    rows = [
        {"k": k, "ts": T0 + dt.timedelta(seconds=i), "v": v}
        for k, vs in groups.items()
        for i, v in enumerate(vs)
    ]
    df = spark.createDataFrame(rows, "k int, ts timestamp, v double")
    theirs = {
        r.k: r.asDict()
        for r in df.groupBy("k").agg(*[getattr(F, m)("v").alias(m) for m in MOMENTS]).collect()
    }
    arrow = pa.Table.from_pylist(rows)
    windows = {m: (m, "v") for m in MOMENTS}
    frames = {m: (m, "v", "range:unbounded,unbounded") for m in MOMENTS}
    answers = [
        _records(
            windowagg.window_aggregate(
                arrow, time="ts", key="k", windows="tumbling:1h", aggs=windows
            )
        ),
        _records(windowagg.rolling_aggregate(arrow, time="ts", key="k", aggs=frames)),
        [
            r.asDict()
            for r in wspark.window_aggregate(
                df, time="ts", key="k", windows="tumbling:1h", aggs=windows
            ).collect()
        ],
        [
            r.asDict()
            for r in wspark.rolling_aggregate(df, time="ts", key="k", aggs=frames).collect()
        ],
    ]
    for path, answer in enumerate(answers):
        assert {r["k"] for r in answer} == set(groups)
        for r in answer:
            for m in MOMENTS:
                want, got = theirs[r["k"]][m], r[m]
                if want is None or not math.isnan(want):
                    assert got == pytest.approx(want), (m, r, want)
                else:
                    assert got is not None and math.isnan(got), (path, m, r)
    assert math.isnan(theirs[1]["stddev"]) and math.isnan(theirs[3]["stddev_pop"])
