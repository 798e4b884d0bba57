"""``windowagg bench spark``: windowagg's Spark pipeline against Spark's built-in windows, side
by side in one Spark session on the same cached data (1 million events, 100 keys; ``--quick``:
200,000).

* one sliding window, slide 1 s, length L = 5, 20, 60 s: ``window_aggregate`` against
  ``groupBy(key, window(ts, L, 1 s))``, which copies every event into L windows;
* 20 sliding windows (lengths 1 to 20 s, slide 1 s) in one ``window_aggregate`` call against the
  20 built-in queries they replace.

Each case and its baseline are timed in turn in every repetition (5; ``--quick``: 3), after one
warm-up run of each and of the JVM as a whole, so that a drift in the machine's speed during the
run touches both sides of a ratio alike.

Every case folds its output into a checksum (the sum of all window sums, integer values so
that the order of addition does not matter), and the checksums of a case and its baseline agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .core import Row, measure_interleaved


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
    reps = 3 if quick else 5
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

    def pair(param: str, x: float, cases: list[tuple[str, Callable[[], float]]]) -> None:
        """windowagg and its baseline, timed in turn in every repetition (the machine's speed
        drifts; alternating keeps the ratio fair)."""
        stats = measure_interleaved([lambda r=run: np.array([r()]) for _n, run in cases], reps)
        got = []
        for (name, _run), (med, spread, chk) in zip(cases, stats):
            got.append(Row("spark", name, "sum", param, x, med, spread, n, chk))
            report(f"  {param}={x:<4g} {name:34s} {med:8.2f} s  ({n / med / 1e6:.2f} M "
                   f"events/s, spread {spread:.0%})")  # fmt: skip
        rows.extend(got)
        report(f"     speed-up {got[1].median_s / got[0].median_s:.1f}x")

    ours(["sliding:5s/1s"])(), builtin([5])()  # the JVM's own warm-up, before any timing
    for L in [5, 20, 60]:
        pair("sliding length s", L, [("windowagg window_aggregate", ours([f"sliding:{L}s/1s"])),
                                     ("Spark window()", builtin([L]))])  # fmt: skip
    lengths = list(range(1, 21))
    pair("windows", 20, [("windowagg, 20 windows in one call",
                          ours([f"sliding:{L}s/1s" for L in lengths])),
                         ("Spark window(), 20 queries", builtin(lengths))])  # fmt: skip
    df.unpersist()
    return rows
