"""``windowagg bench rolling``: per-row frames (``rolling_aggregate``) against what a user would
otherwise run, side by side in one session on the same data.

* Spark (1M rows, 100 keys, times over 1000 s; ``--quick``: 100,000 rows over 100 s, the same
  rows per frame): frames ``range:10s``, ``range:60s``, ``range:600s`` (about 100, 600 and
  6000 rows) and ``rows:1000``, for sum and max, against Spark's built-in
  ``F.<agg>("v").over(Window.partitionBy("k").orderBy(F.unix_micros("ts")).rangeBetween(...))``
  in its default evaluation and with its segment tree
  (``spark.sql.window.segmentTree.enabled``, set for that query only); then six entries (sum
  and max over the three range frames) in one call against the six built-in expressions in one
  ``select``. Then all of it again at 10M rows over 10,000 s (the same rows per frame), where
  the work dominates Spark's fixed costs, against the segment tree (and the default evaluation
  at 100 rows per frame: at 6,000 it takes minutes per run). And at 1M rows, the same shuffle,
  sort and Arrow round trip with a function that returns its input: the floor every Python
  path pays.
* Skew: half of all rows in one key; the peak resident memory of Spark's Python workers during
  ``rolling_aggregate``, against the uniform keys and against ``applyInPandas`` (a key's rows
  in one pandas frame).

Local tables are ``windowagg bench local`` (:mod:`.local`). Every case and its baselines are
timed in turn in each repetition (3, six entries 2; ``--quick``: 1), after one warm-up of
each side. Values are whole numbers,
so sums are exact and every side's checksum (the sum of its output column) is equal.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import numpy as np

from ..frames import frame
from ..spark import rolling_aggregate, spark_session
from ..spark.sql import cores
from .core import Row, measure_interleaved, warm_up

RANGES = ["range:10s", "range:60s", "range:600s"]
#: the parameter of the skew cases (their measure: the peak memory of one Python worker)
SKEW = "skew, peak worker memory"
FRAMES = [*RANGES, "rows:1000"]


def _spark_data(spark, n: int, keys: int, span_s: float, skew: bool = False, seed: int = 11):
    from pyspark.sql import functions as F

    key = (F.rand(seed) * keys).cast("int")
    if skew:  # half of the rows in key 0
        key = F.when(F.rand(seed + 5) < 0.5, F.lit(0)).otherwise(key)
    df = spark.range(n).select(
        key.alias("k"),
        F.timestamp_micros(
            F.lit(1_767_225_600_000_000) + (F.rand(seed + 1) * span_s * 1e6).cast("long")
        ).alias("ts"),
        F.floor(F.rand(seed + 2) * 100).cast("double").alias("v"),
    )
    return df.cache()


def _builtin(df, entries: dict, segment_tree: bool):
    """The built-in window expressions for ``entries`` (name -> (agg, frame)) in one select."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cols = []
    for name, (agg, text) in entries.items():
        f = frame(text, 1e6)
        assert f.start is not None and f.end is not None  # the suite's frames are bounded
        w = Window.partitionBy("k")
        if f.kind == "rows":
            w = w.orderBy("ts").rowsBetween(int(f.start), int(f.end))
        else:
            w = w.orderBy(F.unix_micros("ts")).rangeBetween(int(f.start), int(f.end))
        cols.append(getattr(F, agg)("v").over(w).alias(name))
    spark = df.sparkSession

    def run() -> np.ndarray:
        if segment_tree:
            spark.conf.set("spark.sql.window.segmentTree.enabled", "true")
        try:
            out = df.select(*cols).agg(*[F.sum(c).alias(c) for c in entries]).first()
        finally:
            spark.conf.unset("spark.sql.window.segmentTree.enabled")
        return np.array([float(out[c]) for c in entries])

    return run


def _ours(df, entries: dict):
    from pyspark.sql import functions as F

    aggs = {name: (agg, "v", text) for name, (agg, text) in entries.items()}

    def run() -> np.ndarray:
        out = rolling_aggregate(df, time="ts", key="k", aggs=aggs)
        row = out.agg(*[F.sum(c).alias(c) for c in entries]).first()
        assert row is not None  # an aggregate has one row
        return np.array([float(row[c]) for c in entries])

    return run


def returns_input(batches):
    """A mapInArrow function that returns its input: a Python stage's round trip alone."""
    yield from batches


def _floor(df):
    """What ``rolling_aggregate`` costs before any aggregation: the same shuffle by key, sort
    by time and Arrow round trip through the Python workers, with a function that returns its
    input (the checksum is the input's sum)."""
    from pyspark.sql import functions as F

    def run() -> np.ndarray:
        spread = df.repartition(cores(df), "k").sortWithinPartitions("ts")
        row = spread.mapInArrow(returns_input, df.schema).agg(F.sum("v").alias("v")).first()
        return np.array([float(row["v"])])

    return run


def _python_workers() -> list[int]:
    """The pids of Spark's Python workers (forked from ``pyspark.daemon``)."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
            pids.append(int(pid))
    return pids


def peak_worker_rss(run: Callable[[], object]) -> tuple[float, float]:
    """``run()`` while sampling the resident memory of every Python worker every 20 ms:
    (seconds, the largest one worker reached, in MiB)."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for pid in _python_workers():
                try:
                    with open(f"/proc/{pid}/status") as f:
                        for line in f:
                            if line.startswith("VmRSS:"):
                                peak[0] = max(peak[0], int(line.split()[1]))
                except OSError:
                    pass
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start = time.perf_counter()
    try:
        run()
    finally:
        done.set()
        thread.join()
    return time.perf_counter() - start, peak[0] / 1024


#: rows per frame at about 1000 rows per second over all keys (10 per key and second)
ROWS_PER_FRAME = {"range:10s": 100, "range:60s": 600, "range:600s": 6000, "rows:1000": 1000}


def _rows(report, param, x, n, cases, stats, agg) -> list[Row]:
    """``param``: the frame (or what varies); ``x``: its rows per frame (or the count)."""
    rows = []
    for (name, _), (med, spread, chk) in zip(cases, stats):
        rows.append(Row("rolling", name, agg, param, x, med, spread, n, chk))
        report(
            f"  {agg:4s} {param:11s} {name:38s} {med:8.3f} s  (spread {spread:.0%}, "
            f"checksum {chk:.6g})"
        )
    ours = rows[0].median_s
    report("       " + ", ".join(f"{r.case}: {r.median_s / ours:.1f}x" for r in rows[1:]))
    return rows


def _frame_cases(
    df, n: int, reps: int, default: Callable[[str], bool], report: Callable[[str], None]
) -> list[Row]:
    """Sum and max over every frame, then six entries in one call, against the segment tree,
    and against the default evaluation where ``default(frame)`` (6 entries: ``"six"``)."""
    rows: list[Row] = []
    for text in FRAMES:
        for agg in ("sum", "max"):
            e = {"o": (agg, text)}
            cases = [
                ("windowagg rolling_aggregate", _ours(df, e)),
                ("Spark segment tree", _builtin(df, e, True)),
            ]
            if default(text):
                cases.append(("Spark default", _builtin(df, e, False)))
            stats = measure_interleaved([r for _, r in cases], reps, warm=0)
            rows += _rows(report, text, ROWS_PER_FRAME[text], n, cases, stats, agg)
    six = {f"{agg}_{t.split(':')[1]}": (agg, t) for t in RANGES for agg in ("sum", "max")}
    cases = [
        ("windowagg, 6 entries in one call", _ours(df, six)),
        ("Spark segment tree, 6 in one select", _builtin(df, six, True)),
    ]
    if default("six"):
        cases.append(("Spark default, 6 in one select", _builtin(df, six, False)))
    stats = measure_interleaved([r for _, r in cases], min(reps, 2), warm=1)
    return rows + _rows(report, "6 entries", 6, n, cases, stats, "six")


def spark_cases(quick: bool, report: Callable[[str], None]) -> list[Row]:
    spark = spark_session("local[2]", progress=False)
    n, span = (100_000, 100.0) if quick else (1_000_000, 1000.0)
    reps = 1 if quick else 3
    df = _spark_data(spark, n, 100, span)
    df.count()
    one = {"o": ("sum", "range:10s")}
    warm_up(_ours(df, one), _builtin(df, one, False), _builtin(df, one, True), rounds=2)
    report(f"Spark, {n:,} rows, 100 keys, times over {span:g} s:")
    rows = _frame_cases(df, n, reps, lambda frame: True, report)
    cases = [
        ("windowagg rolling_aggregate", _ours(df, {"o": ("sum", "range:600s")})),
        ("shuffle, sort, Arrow round trip only", _floor(df)),
    ]
    stats = measure_interleaved([r for _, r in cases], reps, warm=1)
    rows += _rows(report, "range:600s", 6000, n, cases, stats, "floor")
    df.unpersist()
    if not quick:
        rows += _scale_cases(spark, 10 * n, 10 * span, reps, report)
    rows += skew_cases(spark, n if quick else 5 * n, report)
    return rows


def _scale_cases(spark, n: int, span: float, reps: int, report) -> list[Row]:
    """Ten times the rows over ten times the span (the same rows per frame), where the work
    dominates Spark's fixed costs: every case against the segment tree; against the default
    evaluation at 100 rows per frame only (at 6,000 it takes minutes per run)."""
    df = _spark_data(spark, n, 100, span)
    df.count()
    report(f"Spark, {n:,} rows, 100 keys, times over {span:g} s:")
    rows = _frame_cases(df, n, reps, lambda frame: frame == "range:10s", report)
    df.unpersist()
    return rows


def skew_cases(spark, n: int, report: Callable[[str], None]) -> list[Row]:
    """Peak Python worker memory: uniform keys, half the rows in one key, and that skewed key
    loaded whole by ``applyInPandas`` (what a per-key pandas job does)."""
    import pandas as pd
    from pyspark.sql import functions as F

    report("Skew: half of all rows in one key; peak memory of one Python worker")
    rows = []
    for label, skew in (("uniform keys", False), ("half the rows in one key", True)):
        df = _spark_data(spark, n, 100, n / 1000, skew=skew)
        df.count()

        def run(df=df) -> None:
            out = rolling_aggregate(df, time="ts", key="k", aggs={"o": ("sum", "v", "range:60s")})
            out.agg(F.sum("o")).first()

        warm_up(run)
        secs, peak = peak_worker_rss(run)
        rows.append(
            Row(
                "rolling",
                f"windowagg, {label}",
                "sum",
                SKEW,
                n,
                secs,
                0.0,
                n,
                0.0,
                {"peak_worker_rss_mib": round(peak, 1)},
            )
        )
        report(f"  windowagg, {label:28s} {secs:6.2f} s, peak worker RSS {peak:7.1f} MiB")
        if skew:

            def whole(pdf: pd.DataFrame) -> pd.DataFrame:
                return pd.DataFrame({"n": [len(pdf)]})

            def pandas_run(df=df) -> None:
                df.groupBy("k").applyInPandas(whole, "n long").agg(F.sum("n")).first()

            warm_up(pandas_run)
            secs, peak = peak_worker_rss(pandas_run)
            extra = {"peak_worker_rss_mib": round(peak, 1)}
            rows.append(
                Row(
                    "rolling",
                    "applyInPandas, each key whole (a count)",
                    "sum",
                    SKEW,
                    n,
                    secs,
                    0.0,
                    n,
                    0.0,
                    extra,
                )
            )
            report(
                f"  applyInPandas, each key whole    {secs:6.2f} s, peak worker RSS {peak:7.1f} MiB"
            )
        df.unpersist()
    return rows


def rolling_suite(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return spark_cases(quick, report)
