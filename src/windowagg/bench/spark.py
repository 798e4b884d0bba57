"""``windowagg bench spark``: windowagg's Spark pipeline against Spark's built-in windows, side
by side in one Spark session on the same cached data (1 million events, 100 keys; ``--quick``:
200,000).

* one sliding window, slide 1 s, length L = 5, 20, 60 s: ``window_aggregate`` against
  ``groupBy(key, window(ts, L, 1 s))``, which copies every event into L windows;
* 20 sliding windows (lengths 1 to 20 s, slide 1 s) in one ``window_aggregate`` call against the
  20 built-in queries they replace.

Every case folds its output into a checksum (the sum of all window sums, integer values so
that the order of addition does not matter), and the checksums of a case and its baseline agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .core import Row, measure


def _data(spark, n: int, keys: int = 100, seed: int = 11):
    """n events over n / 1000 seconds (about 1000 per second over all keys), built inside
    Spark (a DataFrame made from local data would carry that data in every query plan)."""
    from pyspark.sql import functions as F

    span_us = int(n / 1000 * 1e6)
    df = spark.range(n).select(
        (F.rand(seed) * keys).cast("int").alias("k"),
        F.timestamp_micros(F.lit(1_704_067_200_000_000) + (F.rand(seed + 1) * span_us)
                           .cast("long")).alias("ts"),
        F.floor(F.rand(seed + 2) * 100).cast("double").alias("v"),
    )  # fmt: skip
    return df.cache()


def spark_suite(quick: bool, report: Callable[[str], None]) -> list[Row]:
    from pyspark.sql import functions as F

    from ..spark import spark_session, window_aggregate

    spark = spark_session("local[2]", progress=False)
    spark.sparkContext.setLogLevel("ERROR")
    n = 200_000 if quick else 1_000_000
    reps = 3
    df = _data(spark, n)
    df.count()
    rows: list[Row] = []

    def total(out) -> float:
        return float(out.agg(F.sum("value")).first()[0] or 0.0)

    def ours(specs):
        return lambda: total(window_aggregate(df, time="ts", value="v", windows=specs,
                                              agg="sum", key="k"))  # fmt: skip

    def builtin(lengths):
        def run() -> float:
            acc = 0.0
            for L in lengths:
                w = F.window("ts", f"{L} seconds", "1 second")
                acc += total(df.groupBy("k", w).agg(F.sum("v").alias("value")))
            return acc

        return run

    def case(name: str, param: str, x: float, run) -> Row:
        med, spread, chk = measure(lambda: np.array([run()]), reps, warm=1)
        row = Row("spark", name, "sum", param, x, med, spread, n, chk)
        rows.append(row)
        report(f"  {param}={x:<4g} {name:34s} {med:8.2f} s  ({n / med / 1e6:.2f} M events/s)")
        return row

    for L in [5, 20, 60]:
        a = case("windowagg window_aggregate", "sliding length s", L, ours([f"sliding:{L}s/1s"]))
        b = case("Spark window()", "sliding length s", L, builtin([L]))
        report(f"     speed-up {b.median_s / a.median_s:.1f}x")
    lengths = list(range(1, 21))
    a = case("windowagg, 20 windows in one call", "windows", 20,
             ours([f"sliding:{L}s/1s" for L in lengths]))  # fmt: skip
    b = case("Spark window(), 20 queries", "windows", 20, builtin(lengths))
    report(f"     speed-up {b.median_s / a.median_s:.1f}x")
    df.unpersist()
    return rows
