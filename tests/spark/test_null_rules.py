"""One rule for missing values in a user's aggregation on every path: nulls and NaN never reach
its ``lift`` (they count as its ``identity``), so a non-commutative aggregation (an affine map
composition, whose ``lift(None)`` is the identity) over 4.0, null, NaN, 5.0 gives the
composition of 4.0 and 5.0; integer sums that leave a long's range raise by default and wrap
where Spark's ANSI mode is off; ``sliding_aggregate`` takes a user's aggregation that lowers to
a float."""

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
        return (0.5, float(v)) if v is not None else self.identity

    def combine(self, f, g):  # g after f
        return (g[0] * f[0], g[0] * f[1] + g[1])

    def lower(self, p):
        return p[0] * 10.0 + p[1]  # the composition applied to 10: a float


VALUES = [4.0, None, math.nan, 5.0]
#: the composition of 4.0 then 5.0 at 10: 0.5 * (0.5 * 10 + 4) + 5
WANT = 0.5 * (0.5 * 10 + 4.0) + 5.0


def table() -> pa.Table:
    ts = [T0 + dt.timedelta(seconds=s) for s in range(len(VALUES))]
    return pa.table(
        {"k": [1] * len(VALUES), "ts": ts, "v": pa.array(VALUES, pa.float64(), from_pandas=False)}
    )


def test_local_tables_of_every_kind() -> None:
    arrow = table()
    assert arrow.column("v").null_count == 1  # a null and a NaN, told apart
    kinds = {"arrow": arrow, "polars": pl.from_arrow(arrow), "pandas": arrow.to_pandas()}
    for kind, t in kinds.items():
        w = windowagg.window_aggregate(
            t, time="ts", key="k", windows="tumbling:1m", aggs={"f": (Affine(), "v")}
        )
        r = windowagg.rolling_aggregate(
            t, time="ts", key="k", aggs={"f": (Affine(), "v", "rows:4")}
        )
        got_w = (
            w.to_pylist()
            if kind == "arrow"
            else w.to_dicts()
            if kind == "polars"
            else w.to_dict("records")
        )[0]["f"]
        got_r = list(r["f"] if kind != "arrow" else r.column("f").to_pylist())[-1]
        assert math.isclose(got_w, WANT) and math.isclose(got_r, WANT), kind


def test_sliding_aggregate_takes_a_user_aggregation_that_lowers_to_a_float() -> None:
    out = windowagg.sliding_aggregate(np.array([4.0, np.nan, np.nan, 5.0]), size=4, agg=Affine())
    assert out.dtype == float and math.isclose(out[-1], WANT)
    out = windowagg.sliding_aggregate(
        [4.0, None, math.nan, 5.0], size=4, agg=Affine(), times=[0.0, 2.0, 1.0, 3.0]
    )
    assert math.isclose(out[-1], WANT)

    class Named(Affine):
        def lower(self, p):
            return f"{p}"

    with pytest.raises(TypeError, match="make lower return a number"):
        windowagg.sliding_aggregate([1.0, 2.0], size=2, agg=Named())


def test_spark_windows_rolling_frames_and_streams(spark, tmp_path) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame(table().to_pylist(), "k int, ts timestamp, v double")
    w = wspark.window_aggregate(
        df, time="ts", key="k", windows="tumbling:1m", aggs={"f": (Affine(), "v")}
    ).collect()
    assert math.isclose(w[0].f, WANT)
    r = wspark.rolling_aggregate(df, time="ts", key="k", aggs={"f": (Affine(), "v", "rows:4")})
    assert math.isclose(r.orderBy("ts").collect()[-1].f, WANT)
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
    assert got and math.isclose(got[-1].f, WANT)


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
