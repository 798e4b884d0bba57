"""windowagg.spark.rolling_aggregate against Spark's own window functions (values and types):
random data with several keys and a null key, equal times, null and NaN values, null times,
numeric and timestamp times; range and rows frames with preceding, following and unbounded
bounds; every aggregation Spark also has over doubles, longs, decimals, timestamps and strings.
The library's other aggregations against the local engine (their oracle is in
tests/engine), and bad input refused before any Spark job."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

pytest.importorskip("pyspark")

import windowagg
from tests.aggs import Concat
from windowagg.frames import frame
from windowagg.spark import rolling_aggregate

SQL = {
    "sum": "sum",
    "count": "count",
    "mean": "avg",
    "min": "min",
    "max": "max",
    "stddev": "stddev",
    "first": "first",
    "last": "last",
}
RANGE = [
    "range:6",
    "range:-4,+3",
    "range:unbounded,0",
    "range:+2,+5",
    "range:0,unbounded",
    "range:unbounded,unbounded",
]
ROWS = ["rows:4", "rows:-2,+2", "rows:unbounded,0", "rows:-1,unbounded", "rows:+1,+3"]


def table(spark, seed: int, n: int = 400, timestamps: bool = False):
    from pyspark.sql import functions as F

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        r = rng.random()
        x = None if r < 0.1 else math.nan if r < 0.15 else round(float(rng.normal()), 2)
        rows.append(
            (
                None if rng.random() < 0.05 else int(rng.integers(0, 4)),
                None if rng.random() < 0.04 else int(rng.integers(0, 60)),
                i,
                x,
                None if rng.random() < 0.1 else int(rng.integers(-50, 50)),
                None
                if rng.random() < 0.1
                else Decimal(int(rng.integers(-(10**6), 10**6))).scaleb(-2),
                None if rng.random() < 0.1 else str(rng.choice(["ant", "bee", "cat", "dog"])),
            )
        )
    df = spark.createDataFrame(
        rows, "k long, t long, id long, x double, i long, d decimal(10,2), s string"
    )
    if timestamps:  # seconds since 2026 as a timestamp
        df = df.withColumn("t", F.timestamp_seconds(F.col("t") + F.lit(1_767_225_600)))
    return df


def window(spec: str, timestamps: bool):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    f = frame(seconds(spec), 1e6) if timestamps else frame(spec)
    lo = Window.unboundedPreceding if f.start is None else int(f.start)
    hi = Window.unboundedFollowing if f.end is None else int(f.end)
    w = Window.partitionBy("k")
    if f.kind == "rows":
        return w.orderBy("t", "id").rowsBetween(lo, hi)
    return w.orderBy(F.unix_micros("t") if timestamps else F.col("t")).rangeBetween(lo, hi)


def seconds(spec: str) -> str:
    """A range frame over plain numbers, as a frame over timestamps (numbers are seconds)."""
    kind, _, body = spec.partition(":")
    if kind == "rows":
        return spec
    parts = [p if p in ("unbounded", "0") else p + "s" for p in body.split(",")]
    return kind + ":" + ",".join(parts)


def compare(spark, df, entries: dict, timestamps: bool) -> None:
    """entries: name -> (agg, column, frame); one rolling_aggregate against one select."""
    from pyspark.sql import functions as F

    aggs = {n: (a, c, seconds(f) if timestamps else f) for n, (a, c, f) in entries.items()}
    ours = rolling_aggregate(df, time="t", key="k", order_by="id", aggs=aggs)
    theirs = df.select(
        "*",
        *[
            getattr(F, SQL[a])(c).over(window(f, timestamps)).alias(n)
            for n, (a, c, f) in entries.items()
        ],
    )
    assert ours.schema == theirs.schema  # Spark's types, field for field
    got = {r["id"]: r for r in ours.collect()}
    want = {r["id"]: r for r in theirs.collect()}
    assert got.keys() == want.keys()
    for i, w in want.items():
        for n in entries:
            a, b = got[i][n], w[n]
            if isinstance(b, float) and isinstance(a, float):
                ok = (math.isnan(a) and math.isnan(b)) or math.isclose(
                    a, b, rel_tol=1e-9, abs_tol=1e-9
                )
            else:
                ok = a == b
            assert ok, (n, entries[n], i, a, b)


def entries(frames: list[str], x_aggs, others: list[tuple[str, str]]) -> dict:
    """name -> (aggregation, column, frame): ``x_aggs`` over x and ``others`` (aggregation,
    column) over every frame."""
    out = {}
    for j, f in enumerate(frames):
        out |= {f"{a}_x_{j}": (a, "x", f) for a in x_aggs}
        out |= {f"{a}_{c}_{j}": (a, c, f) for a, c in others}
    return out


@pytest.mark.parametrize("timestamps", [False, True], ids=["numbers", "timestamps"])
def test_range_frames_equal_sparks_window_functions(spark, timestamps) -> None:
    df = table(spark, 1 + timestamps, timestamps=timestamps)
    x_aggs = ("sum", "count", "mean", "min", "max", "stddev")
    others = [("sum", "i"), ("mean", "d"), ("max", "s"), ("min", "d")]
    compare(spark, df, entries(RANGE, x_aggs, others), timestamps)


def test_rows_frames_equal_sparks_window_functions(spark) -> None:
    df = table(spark, 3)
    others = [("sum", "d"), ("first", "s"), ("last", "t"), ("mean", "i")]
    compare(spark, df, entries(ROWS, SQL, others), False)


def test_no_key_and_many_batches(spark) -> None:
    """Without a key every row is one partition, as in Spark; a partition of many Arrow
    batches carries each key's rows across them."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rng = np.random.default_rng(4)
    n = 150_000
    pdf_t = np.sort(rng.integers(0, 50_000, n))
    df = spark.createDataFrame(
        [(int(t), i, float(v)) for i, (t, v) in enumerate(zip(pdf_t, rng.normal(size=n).round(3)))],
        "t long, id long, v double",
    )
    ours = rolling_aggregate(
        df,
        time="t",
        order_by="id",
        aggs={"s": ("sum", "v", "range:-30,+5"), "m": ("max", "v", "rows:-50,+10")},
    )
    by_time, by_row = Window.orderBy("t"), Window.orderBy("t", "id")
    theirs = df.select(
        "id",
        F.sum("v").over(by_time.rangeBetween(-30, 5)).alias("s"),
        F.max("v").over(by_row.rowsBetween(-50, 10)).alias("m"),
    )
    got = ours.select("id", "s", "m").toPandas().sort_values("id").to_numpy()
    want = theirs.toPandas().sort_values("id").to_numpy()
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9)


def test_library_and_user_aggregations_equal_the_local_engine(spark) -> None:
    df = table(spark, 5).where("x is null or not isnan(x)")
    aggs = {
        "med": ("median", "x", "range:-4,+3"),
        "mc": ("maxcount", "i", "rows:5"),
        "am": ("argmax", "x", "range:6"),
        "cat": (Concat(), "i", "rows:-2,0"),
        "q": (windowagg.aggregation("quantile", q=0.9), "x", "range:unbounded,0"),
    }
    ours = rolling_aggregate(df, time="t", key="k", order_by="id", aggs=aggs)
    local = windowagg.rolling_aggregate(df.toPandas(), time="t", key="k", order_by="id", aggs=aggs)
    got = ours.toPandas().sort_values("id").reset_index(drop=True)
    want = local.sort_values("id").reset_index(drop=True)
    assert [f.dataType.simpleString() for f in ours.schema.fields[-5:]] == [
        "double",
        "bigint",
        "bigint",
        "string",
        "double",
    ]
    for n in aggs:
        a, b = got[n].to_numpy(), want[n].to_numpy()
        assert all(
            (x == y) or (x != x and y != y) or (x is None and y != y) for x, y in zip(a, b)
        ), n


def test_bad_input_fails_before_any_job(spark) -> None:
    df = table(spark, 6, n=10)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup()
    for aggs, error in [
        ({"out": ("sum", "nope", "rows:3")}, ValueError),
        ({"out": ("nope", "x", "rows:3")}, ValueError),
        ({"out": ("sum", "x", "range:1h")}, ValueError),
        ({"out": ("sum", "s", "rows:3")}, TypeError),
    ]:
        with pytest.raises(error):
            rolling_aggregate(df, time="t", key="k", aggs=aggs)
    assert spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs


def test_a_frame_that_looks_forward_on_a_stream_is_an_error(spark, tmp_path) -> None:
    (tmp_path / "in").mkdir()
    stream = spark.readStream.schema("k long, t timestamp, x double").parquet(str(tmp_path / "in"))
    with pytest.raises(ValueError, match="looks forward"):
        rolling_aggregate(stream, time="t", key="k", aggs={"s": ("sum", "x", "range:-1h,+5m")})
    with pytest.raises(ValueError, match="watermark"):  # backward: needs the watermark
        rolling_aggregate(stream, time="t", key="k", aggs={"s": ("sum", "x", "range:1h")})


def test_struct_and_list_results_keep_their_types(spark) -> None:
    """m4 gives a struct, collect an array, hll a long (as Spark's approx_count_distinct),
    argmin the time column's type; on Spark as on a local table."""
    import pyarrow as pa

    rows = [(1, 1.0), (2, None), (3, 3.0), (4, -2.0), (6, 5.0)]
    df = spark.createDataFrame(rows, "t long, x double")
    aggs = {
        "m": ("m4", "x", "rows:3"),
        "c": ("collect", "x", "rows:2"),
        "h": ("hll", "x", "range:unbounded,0"),
        "am": ("argmin", "x", "range:2"),
    }
    ours = rolling_aggregate(df, time="t", aggs=aggs)
    assert [f.dataType.simpleString() for f in ours.schema.fields[2:]] == [
        "struct<min:double,max:double,first:double,last:double>",
        "array<double>",
        "bigint",
        "bigint",
    ]
    table = pa.table({"t": [r[0] for r in rows], "x": [r[1] for r in rows]})
    local = windowagg.rolling_aggregate(table, time="t", aggs=aggs)
    got = sorted((r.asDict(recursive=True) for r in ours.collect()), key=lambda r: r["t"])
    assert got == local.to_pylist()
    assert got[3]["m"] == {"min": -2.0, "max": 3.0, "first": 3.0, "last": -2.0}
    assert got[4]["c"] == [-2.0, 5.0] and got[4]["am"] == 4 and got[4]["h"] == 4


@pytest.mark.parametrize("kind", ["bigint", "decimal(38,10)"])
def test_distinct_counts_beyond_a_doubles_precision_equal_sparks(spark, kind) -> None:
    """count_distinct of bigint values near 2**62 and decimals whose neighbours a double
    cannot tell apart, with nulls, over a range and a rows frame: Spark's own distinct count
    of the frame (``size(collect_set(v))``, which leaves nulls out), value for value."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rng = np.random.default_rng(21)
    rows = []
    for i in range(300):
        s = int(rng.integers(-6, 6))
        v = 2**62 + s if kind == "bigint" else Decimal(1234567890123456789 + s).scaleb(-10)
        rows.append((int(rng.integers(0, 3)), int(rng.integers(0, 80)), i, None if s == 5 else v))
    df = spark.createDataFrame(rows, f"k long, t long, i long, v {kind}")
    aggs = {"dr": ("count_distinct", "v", "range:10"), "dw": ("count_distinct", "v", "rows:6")}
    ours = rolling_aggregate(df, time="t", key="k", order_by="i", aggs=aggs)
    by = Window.partitionBy("k").orderBy("t", "i")
    theirs = df.select(
        "i",
        F.size(
            F.collect_set("v").over(Window.partitionBy("k").orderBy("t").rangeBetween(-10, 0))
        ).alias("dr"),
        F.size(F.collect_set("v").over(by.rowsBetween(-5, 0))).alias("dw"),
    )
    got = {r["i"]: (r["dr"], r["dw"]) for r in ours.collect()}
    want = {r["i"]: (r["dr"], r["dw"]) for r in theirs.collect()}
    assert got == want
    assert len(set(got.values())) > 3  # the counts differ between frames: they were counted
