"""``windowagg bench streaming``: Structured Streaming queries replaying the same seeded events
from parquet files through ``readStream``, trigger ``availableNow``, parquet sink, append mode:
windowagg's ``window_aggregate`` against Spark's built-in streaming windowed aggregation
(``withWatermark`` + ``groupBy(window(...))``), both checked equal (window count and total).

Cases: sliding 60 s / 1 s with every file in one micro-batch and with 100k events per
micro-batch; 20 sliding windows in one windowagg query against the 20 built-in queries (at
100k events per micro-batch); ``rolling_aggregate`` with ``range:1h`` (no built-in
equivalent: rows per second); and the floor of Spark's Python stateful operator,
``applyInPandasWithState`` with a function that does nothing, over the same groups of keys as
windowagg's query, at the same micro-batches. Each row reports events per second, seconds per
micro-batch and the state size per key over the replay (Spark's ``stateOperators``). The
sliding cases run 3 times each (``--quick``: once), in turn, the order rotating, and report the
median and spread; the 20 built-in queries and the rolling frame run once. Every case runs with
as many shuffle partitions (the stateful operators' partitions) as the session has cores and
Spark's default HDFS-backed state store, the fastest settings for both sides; the *settings*
rows run the sliding case at 100k events per micro-batch on both sides under each state store,
at that number of partitions and at the session's default, once each.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..spark import rolling_aggregate, window_aggregate
from ..spark.session import spark_session
from ..spark.sql import cores as spark_cores
from ..spark.state import G, group_of
from .core import Row, checking_now

KEYS, DELAY = 100, "10 seconds"
#: files per micro-batch where the replay runs in several (100k events a micro-batch)
PER = 2
PARTITIONS, PROVIDER = (
    "spark.sql.shuffle.partitions",
    "spark.sql.streaming.stateStore.providerClass",
)
#: Spark's state store providers, its default first
STORES = {
    "HDFS-backed": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "RocksDB": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}


def _settings(spark, partitions: int, store: str) -> None:
    """Shuffle partitions and state store for the queries started next."""
    spark.conf.set(PARTITIONS, str(partitions))
    spark.conf.set(PROVIDER, STORES[store])


def _files(root: str, n: int, files: int, seed: int = 7) -> None:
    """``n`` events of ``KEYS`` keys, about one per key and second, a little out of order."""

    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, n // KEYS * 1_000_000, n)) + rng.integers(-2_000_000, 2_000_000, n)
    t += 1_700_000_000_000_000  # November 2023, in microseconds
    k, v = rng.integers(0, KEYS, n), rng.integers(0, 100, n).astype(float)
    os.makedirs(root)
    for i, part in enumerate(np.array_split(np.arange(n), files)):
        pq.write_table(
            pa.table({"k": k[part], "ts": pa.array(t[part], pa.timestamp("us")), "v": v[part]}),
            f"{root}/f{i:04d}.parquet",
        )


def _run(spark, src: str, per: int, build: Callable, work: str) -> tuple[float, list, Any]:
    """Seconds of one query to completion, its progress reports and its output."""
    reader = spark.readStream.schema("k long, ts timestamp, v double")
    stream = reader.option("maxFilesPerTrigger", per).parquet(src).withWatermark("ts", DELAY)
    out, ck = tempfile.mkdtemp(dir=work), tempfile.mkdtemp(dir=work)
    a = time.perf_counter()
    q = (
        build(stream)
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", ck)
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    return time.perf_counter() - a, q.recentProgress, spark.read.parquet(out)


def _state(progress: list) -> list[float]:
    """State bytes per key after each micro-batch."""
    return [
        sum(o.get("memoryUsedBytes", 0) for o in p.get("stateOperators") or []) / KEYS
        for p in progress
    ]


def streaming_suite(quick: bool, report: Callable[[str], None]) -> list[Row]:
    from pyspark.sql import functions as F

    spark = spark_session(progress=False)
    saved = {k: spark.conf.get(k) for k in (PARTITIONS, PROVIDER)}
    default_partitions = int(saved[PARTITIONS] or 8)
    cores = spark_cores(spark.range(1))  # a local session: its threads
    _settings(spark, cores, "HDFS-backed")
    n = 40_000 if quick else 1_000_000
    reps = 1 if quick else 3
    files = 4 if quick else 20  # 50k events a file
    work = tempfile.mkdtemp(prefix="windowagg-bench-streaming-")
    src = f"{work}/in"
    _files(src, n, files)
    rows: list[Row] = []
    sliding = "sliding:60s/1s"
    lengths = [5 * (i + 1) for i in range(20)]  # 5 s to 100 s, slide 1 s
    if checking_now():  # answers only: four of the lengths, four built-in queries
        lengths = lengths[::5]
    many = f"{len(lengths)} windows"

    def ours(specs):
        return lambda s: window_aggregate(
            s, time="ts", windows=specs, aggs={"sum": ("sum", "v")}, key="k"
        )

    def builtin(length):
        return lambda s: s.groupBy("k", F.window("ts", f"{length} seconds", "1 second")).agg(
            F.sum("v").alias("sum")
        )

    def floor(s):
        from pyspark.sql.streaming.state import GroupStateTimeout

        def nothing(key, frames, state):
            for _ in frames:
                pass
            return iter(())

        grouped = s.select("*", group_of([F.col("k")])).groupBy(G)  # as windowagg's query
        return grouped.applyInPandasWithState(
            nothing, f"{G} int", "x long", "append", GroupStateTimeout.EventTimeTimeout
        )

    def rolling(s):
        return rolling_aggregate(s, time="ts", key="k", aggs={"h": ("sum", "v", "range:1h")})

    def summary(df) -> tuple[int, float]:
        r = df.agg(F.count(F.lit(1)), F.sum("sum")).first()
        return int(r[0]), float(r[1] or 0)

    if not checking_now():  # warm-up: workers, kernels, the JVM
        _run(spark, src, files, ours(sliding), work)
        _run(spark, src, files, builtin(60), work)
    sides = (
        ("windowagg", ours(sliding)),
        ("built-in", builtin(60)),
        ("applyInPandasWithState floor", floor),
    )
    for label, per in (("one micro-batch", files), ("100k events per micro-batch", PER)):
        batches = files // per
        runs: dict[str, list] = {name: [] for name, _ in sides}
        for rep in range(reps):  # each side in turn, the order rotating
            for i in range(len(sides)):
                name, build = sides[(i + rep) % len(sides)]
                runs[name].append(_run(spark, src, per, build, work))
        got = {}
        for name, _ in sides:
            took = [r[0] for r in runs[name]]
            secs, (_, progress, out) = statistics.median(took), runs[name][-1]
            check = summary(out) if name != "applyInPandasWithState floor" else (0, 0.0)
            got[name] = check
            state = _state(progress)
            extra = {
                "windows": check[0],
                "s/batch": secs / batches,
                "state/key": max(state, default=0),
                "state/key last": (state or [0])[-1],
            }
            spread = (max(took) - min(took)) / secs
            rows.append(
                Row(
                    "streaming",
                    name,
                    "sum",
                    label,
                    batches,
                    secs,
                    spread,
                    n,
                    float(check[1]),
                    extra,
                )
            )
            report(
                f"  sliding 60s/1s, {label}: {name} {secs:.2f} s, {n / secs:,.0f} events/s, "
                f"{check[0]} windows, state/key {max(state, default=0):,.0f} B"
            )
        if got["windowagg"] != got["built-in"]:
            raise AssertionError(f"windowagg {got['windowagg']} != built-in {got['built-in']}")
    # 100k events per micro-batch: in one micro-batch the built-in query of 35 s runs out of
    # aggregation memory (a 2 GiB driver), each event copied into 35 windows at once
    secs, progress, out = _run(spark, src, PER, ours([f"sliding:{x}s/1s" for x in lengths]), work)
    mine = summary(out)
    rows.append(
        Row(
            "streaming",
            "windowagg",
            "sum",
            many,
            len(lengths),
            secs,
            0.0,
            n,
            mine[1],
            {"windows": mine[0]},
        )
    )
    total, count, value = 0.0, 0, 0.0
    for length in lengths:
        s, _, out = _run(spark, src, PER, builtin(length), work)
        c, v = summary(out)
        total, count, value = total + s, count + c, value + v
    rows.append(
        Row(
            "streaming",
            "built-in",
            "sum",
            many,
            len(lengths),
            total,
            0.0,
            n,
            value,
            {"windows": count},
        )
    )
    report(f"  {many}: windowagg {secs:.2f} s, built-in ({len(lengths)} queries) {total:.2f} s")
    if (mine[0], mine[1]) != (count, value):
        raise AssertionError(f"{many}: windowagg {mine} != built-in {(count, value)}")
    secs, progress, out = _run(spark, src, PER, rolling, work)
    emitted = out.count()
    state = _state(progress)
    rows.append(
        Row(
            "streaming",
            "windowagg",
            "sum",
            "rolling range:1h",
            files // PER,
            secs,
            0.0,
            emitted,
            float(emitted),
            {"state/key": max(state, default=0)},
        )
    )
    report(
        f"  rolling range:1h, 100k events per micro-batch: {secs:.2f} s, "
        f"{emitted / secs:,.0f} rows/s"
    )
    settings = [(p, store) for p in sorted({cores, default_partitions}) for store in STORES]
    if checking_now():  # answers only: the other state store
        settings = [(cores, "RocksDB")]
    for partitions, store in settings:
        _settings(spark, partitions, store)
        label = f"settings: {partitions} partitions, {store}"
        got = {}
        for name, build in sides[:2]:
            secs, _, out = _run(spark, src, PER, build, work)
            got[name] = summary(out)
            rows.append(
                Row("streaming", name, "sum", label, files // PER, secs, 0.0, n, got[name][1])
            )
            report(f"  sliding 60s/1s, 100k events per micro-batch, {label}: {name} {secs:.2f} s")
        if got["windowagg"] != got["built-in"]:
            raise AssertionError(f"{label}: windowagg {got['windowagg']} != {got['built-in']}")
    for k, was in saved.items():
        if was is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, was)
    shutil.rmtree(work, ignore_errors=True)
    return rows
