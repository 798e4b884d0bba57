"""``windowagg bench asof``: point-in-time frames, ``rolling_aggregate(events, at=queries)``
(each query row gets the frames of its key's events placed at its own time), against what
users of one machine write for the job today, each checked equal:

* DuckDB's range join: the queries joined to their key's events in the frame, then
  ``GROUP BY`` the query (over the Arrow tables, no copy; DuckDB's sides sum their answers in
  SQL and bring out no rows, windowagg's return the query table with its new columns);
* DuckDB's union trick: both tables in one, a ``RANGE`` window function over it, the query
  rows kept (their values null, so that they add nothing);
* windowagg's own ``rolling_aggregate`` on that union, the rows of the queries kept.

Polars' ``join_where`` + ``group_by`` ran out of memory (24 GB) at the smallest size here, and
its ``join_asof``, like DuckDB's ``ASOF JOIN``, returns one row, not an aggregate: neither is a
baseline. The union trick does not give ``rows`` frames (the query rows take places), so those
frames run on windowagg alone.

Workload (seeded, ``default_rng(5)``): events whose keys are Zipf-distributed over 100,000
values (the share of key r proportional to r^-1.1), times uniform microseconds over 90 days in
random order, values integers 0-99 as doubles (every side's sums are exact); queries with keys
from the same distribution and times uniform over the same span, in random order. Every side
runs in this process in turn, after a garbage collection and a pause of 0.3 s, in every
repetition; medians and spreads. Peak memory: a child process runs the call twice and reports
the peak resident memory of the second run over what it held before, beside the inputs' and
the output's sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..spark import rolling_aggregate as spark_rolling
from ..spark import spark_session
from ..spark.sql import cores
from ..tables import rolling_aggregate
from .core import Row, measure_interleaved, warm_up
from .rolling import peak_worker_rss

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["asof_suite", "tables"]

KEYS, ZIPF_S, DAYS = 100_000, 1.1, 90
#: the frames of the large run, and the aggregations each frame gets in one call
FRAMES = ["range:1h", "range:1d", "range:30d", "rows:100"]
AGGS = ["sum", "count", "max", "mean", "count_distinct"]


def skewed(events: int, queries: int, half: bool, seed: int = 6) -> tuple[pa.Table, pa.Table]:
    """Events and queries with keys uniform over 100,000 values, or (``half``) with half of
    each table in key 0; times uniform over 90 days."""
    rng = np.random.default_rng(seed)
    span = DAYS * 86_400_000_000

    def part(n: int) -> dict[str, np.ndarray | pa.Array]:
        k = rng.integers(0, KEYS, n)
        if half:
            k[rng.random(n) < 0.5] = 0
        return {"k": k, "ts": pa.array(rng.integers(0, span, n), pa.timestamp("us"))}

    ev = pa.table({**part(events), "v": rng.integers(0, 100, events).astype(float)})
    return ev, pa.table(part(queries))


def tables(events: int, queries: int, seed: int = 5) -> tuple[pa.Table, pa.Table]:
    """The workload's events (``k``, ``ts``, ``v``) and queries (``k``, ``ts``)."""
    rng = np.random.default_rng(seed)
    p = np.arange(1, KEYS + 1, dtype=float) ** -ZIPF_S
    p /= p.sum()
    span = DAYS * 86_400_000_000

    def part(n: int) -> dict[str, np.ndarray | pa.Array]:
        return {
            "k": rng.choice(KEYS, n, p=p),
            "ts": pa.array(rng.integers(0, span, n), pa.timestamp("us")),
        }

    ev = pa.table({**part(events), "v": rng.integers(0, 100, events).astype(float)})
    return ev, pa.table(part(queries))


def _total(*columns: pa.Array | pa.ChunkedArray) -> float:
    """The checksum: every column's sum, nulls as zero."""
    return float(sum(np.nansum(pc.fill_null(c, 0).to_numpy(zero_copy_only=False)) for c in columns))


def _sql_interval(frame: str) -> str:
    n, unit = int(frame[len("range:") : -1]), {"h": "HOUR", "d": "DAY"}[frame[-1]]
    return f"INTERVAL {n} {unit}"


def cases(ev: pa.Table, qs: pa.Table, frame: str) -> dict[str, Callable[[], float]]:
    """windowagg and the baselines of a ``range`` frame, sum and count; each returns its
    checksum."""
    aggs = {"s": ("sum", "v", frame), "c": ("count", "v", frame)}

    def ours() -> float:
        out = rolling_aggregate(ev, time="ts", key="k", aggs=aggs, at=qs)
        return _total(out["s"], out["c"])

    def union() -> float:
        q = qs.append_column("v", pa.nulls(len(qs), pa.float64()))
        both = pa.concat_tables(
            [
                ev.append_column("q", pa.repeat(False, len(ev))),
                q.append_column("q", pa.repeat(True, len(qs))),
            ]
        )
        out = rolling_aggregate(both, time="ts", key="k", aggs=aggs).filter(pc.field("q"))
        return _total(out["s"], out["c"])

    runs = {"windowagg": ours, "windowagg on the union": union}
    try:
        import duckdb
    except ImportError:
        return runs
    con = duckdb.connect()
    con.register("ev", ev)
    con.register("qs", qs.append_column("i", pa.array(np.arange(len(qs)))))
    width = _sql_interval(frame)
    window = f"PARTITION BY k ORDER BY ts RANGE BETWEEN {width} PRECEDING AND CURRENT ROW"

    def duck(sql: str) -> float:
        """The checksum of ``sql``'s ``s`` and ``c`` in DuckDB itself (no rows brought out)."""
        row = con.execute(f"SELECT coalesce(sum(s), 0) + sum(c) FROM ({sql})").fetchone()
        assert row is not None
        return float(row[0])

    def duck_union() -> float:
        return duck(
            f"SELECT s, c FROM (SELECT q, sum(v) OVER w AS s, count(v) OVER w AS c FROM "
            f"(SELECT k, ts, v, false AS q FROM ev UNION ALL "
            f"SELECT k, ts, NULL::DOUBLE, true FROM qs) WINDOW w AS ({window})) WHERE q"
        )

    def duck_join() -> float:
        return duck(
            "SELECT q.i, sum(e.v) AS s, count(e.v) AS c FROM qs q LEFT JOIN ev e "
            f"ON e.k = q.k AND e.ts BETWEEN q.ts - {width} AND q.ts GROUP BY q.i"
        )

    return runs | {"DuckDB union + window": duck_union, "DuckDB range join": duck_join}


#: the child process of :func:`peak_memory`
_PEAK = """
import json, sys
from windowagg.bench.asof import AGGS, tables
from windowagg import release_memory
from windowagg.bench.core import peak_rss
from windowagg.tables import rolling_aggregate

ev, qs = tables(int(sys.argv[1]), int(sys.argv[2]))
aggs = {a: (a, "v", sys.argv[3]) for a in AGGS}
run = lambda: rolling_aggregate(ev, time="ts", key="k", aggs=aggs, at=qs)
run()  # warm: compiled code loaded
release_memory()  # the reserve let go: the run's own memory, all of it, is measured
out, peak = peak_rss(run)
print(json.dumps({"peak": peak, "input": (ev.nbytes + qs.nbytes) / 2**20,
                  "output": out.nbytes / 2**20}))
"""


def peak_memory(events: int, queries: int, frame: str) -> dict:
    """windowagg's peak resident memory over what it held before, in MiB, in a child process
    that returns freed memory to the system (``WINDOWAGG_KEEP_MIB=0``)."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(events), str(queries), frame],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"WINDOWAGG_KEEP_MIB": "0"},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _compare(ev: pa.Table, qs: pa.Table, names: list[str], reps: int, report) -> list[Row]:
    """windowagg and the baselines ``names`` side by side (one-hour frames, sum and count),
    checked equal."""
    runs = {k: v for k, v in cases(ev, qs, "range:1h").items() if k in names}
    results = measure_interleaved(list(runs.values()), reps, settle=0.3)
    sums = {name: r[2] for name, r in zip(runs, results)}
    assert len(set(sums.values())) == 1, sums  # every side the same answer
    rows, items = [], len(ev) + len(qs)
    for name, (med, spread, check) in zip(runs, results):
        report(
            f"{len(ev):>10,} events {len(qs):>9,} queries range:1h sum,count  {name:24s} "
            f"{med:7.3f} s ±{spread:.0%}  ({med / results[0][0]:.3g}x windowagg's time)"
        )
        rows.append(Row("asof", name, "sum,count", "frame", "range:1h", med, spread, items, check))
    return rows


def asof_suite(quick: bool, report: Callable[[str], None]) -> list[Row]:
    reps = 3 if quick else 5
    # against every baseline at the size: 1M events, 100k queries, one-hour frames
    small, large = (
        ((100_000, 10_000), (1_000_000, 100_000))
        if quick
        else ((1_000_000, 100_000), (10_000_000, 1_000_000))
    )
    everyone = ["windowagg", "windowagg on the union", "DuckDB union + window", "DuckDB range join"]
    rows = _compare(*tables(*small), everyone, reps, report)
    # 10x the size: the range join does not finish in minutes
    ev, qs = tables(*large)
    rows += _compare(
        ev, qs, ["windowagg", "windowagg on the union", "DuckDB union + window"], reps, report
    )
    # every frame, five aggregations in one call, and the call's peak memory
    agg = ",".join(AGGS)
    for frame in FRAMES:
        aggs = {a: (a, "v", frame) for a in AGGS}

        def five(aggs: dict = aggs) -> float:
            out = rolling_aggregate(ev, time="ts", key="k", aggs=aggs, at=qs)
            return _total(*(out[a] for a in AGGS))

        ((med, spread, check),) = measure_interleaved([five], reps)
        mem = peak_memory(*large, frame)
        report(
            f"{large[0]:>10,} events {large[1]:>9,} queries {frame:9s} {agg}  {med:7.3f} s "
            f"±{spread:.0%}  peak {mem['peak']:.0f} MiB (inputs {mem['input']:.0f}, output "
            f"{mem['output']:.0f})"
        )
        extra = {f"{k} MiB": round(v) for k, v in mem.items()}
        rows.append(
            Row("asof", "windowagg", agg, "frame", frame, med, spread, sum(large), check, extra)
        )
    return rows + spark_cases(quick, report)


#: the floor of any Python worker on Spark: what windowagg's plan costs before its worker
#: computes anything
FLOOR = "Spark union, sorted, into a Python worker that reads it"


def _read_all(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A ``mapInArrow`` worker that reads every batch and answers nothing."""
    for _ in batches:
        pass
    return iter([])


def _spark_sides(ev: DataFrame, qs: DataFrame, width_us: int) -> dict[str, Callable[[], float]]:
    """On Spark, one-``width_us`` frames (sum and count): windowagg at the queries, the floor
    of its plan (:data:`FLOOR`: the same union, partitioned by key and sorted by time as
    windowagg's is, read by a Python worker that computes nothing), windowagg on the union,
    Spark's union + window function (its segment tree, and its default evaluation) and Spark's
    range join + ``groupBy``; each returns its checksum (the floor NaN)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame = f"range:{width_us}us"
    aggs = {"s": ("sum", "v", frame), "c": ("count", "v", frame)}
    spark = ev.sparkSession

    def total(df: DataFrame) -> float:
        row = df.agg(F.coalesce(F.sum("s"), F.lit(0.0)) + F.sum("c")).first()
        assert row is not None  # an aggregate has one row
        return float(row[0])

    union = ev.withColumn("q", F.lit(False)).unionByName(
        qs.withColumn("v", F.lit(None).cast("double")).withColumn("q", F.lit(True))
    )

    def window(segment_tree: bool) -> Callable[[], float]:
        w = Window.partitionBy("k").orderBy(F.unix_micros("ts")).rangeBetween(-width_us, 0)
        over = union.select("q", F.sum("v").over(w).alias("s"), F.count("v").over(w).alias("c"))

        def run() -> float:
            if segment_tree:
                spark.conf.set("spark.sql.window.segmentTree.enabled", "true")
            try:
                return total(over.where("q"))
            finally:
                spark.conf.unset("spark.sql.window.segmentTree.enabled")

        return run

    def join() -> float:
        e, q = ev.alias("e"), qs.withColumn("i", F.monotonically_increasing_id()).alias("q")
        low = F.col("q.ts") - F.expr(f"make_dt_interval(0, 0, 0, {width_us / 1e6})")
        cond = (F.col("e.k") == F.col("q.k")) & F.col("e.ts").between(low, F.col("q.ts"))
        grouped = q.join(e, cond, "left").groupBy("q.i")
        return total(grouped.agg(F.sum("e.v").alias("s"), F.count("e.v").alias("c")))

    def floor() -> float:  # the union's columns are those of windowagg's: k, ts, v, a flag
        ordered = union.repartition(cores(ev), "k").sortWithinPartitions("ts")
        ordered.mapInArrow(_read_all, "s double").write.format("noop").mode("overwrite").save()
        return float("nan")  # no answers: left out of the checksums

    return {
        "windowagg": lambda: total(spark_rolling(ev, time="ts", key="k", aggs=aggs, at=qs)),
        FLOOR: floor,
        "windowagg on the union": lambda: total(
            spark_rolling(union, time="ts", key="k", aggs=aggs).where("q")
        ),
        "Spark union + window, segment tree": window(True),
        "Spark union + window, default": window(False),
        "Spark range join + groupBy": join,
    }


def spark_cases(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """On Spark (``local[2]``): every side at 200k events and 20k queries (one-hour frames;
    Spark's range join pairs every query with every event of its key before it filters, so
    it grows with the square of a key's share), every side at 1M events and 100k queries with
    the range join run once (minutes), and one-day frames at 5M events and 500k queries
    against the segment tree (its default evaluation recomputes each row's frame: minutes at
    this size)."""
    spark = spark_session("local[2]", progress=False)
    div = 10 if quick else 1
    everyone = [
        "windowagg",
        FLOOR,
        "windowagg on the union",
        "Spark union + window, segment tree",
        "Spark union + window, default",
        "Spark range join + groupBy",
    ]
    sizes = [  # (events, queries), frame seconds, sides timed three times, sides run once
        ((200_000 // div, 20_000 // div), 3_600, everyone, []),
        ((1_000_000 // div, 100_000 // div), 3_600, everyone[:5], everyone[5:]),
        ((5_000_000 // div, 500_000 // div), 86_400, everyone[:4], []),
    ]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="windowagg-asof-") as tmp:
        for (n, q), seconds, names, once in sizes:
            ev_t, qs_t = tables(n, q)
            paths = [os.path.join(tmp, f"{name}-{n}.parquet") for name in ("ev", "qs")]
            for t, path in zip((ev_t, qs_t), paths):
                pq.write_table(t, path)
            ev, qs = (spark.read.parquet(p).cache() for p in paths)
            ev.count(), qs.count()
            every = _spark_sides(ev, qs, seconds * 1_000_000)
            sides = {k: v for k, v in every.items() if k in names}
            warm_up(sides["windowagg"])  # the workers' (kernels loaded), before any timing
            results = measure_interleaved(list(sides.values()), 1 if quick else 3, warm=0)
            for name in once:  # too slow to repeat: one run
                start = time.perf_counter()
                check = every[name]()
                results.append((time.perf_counter() - start, 0.0, check))
                sides[name] = every[name]
            sums = {name: r[2] for name, r in zip(sides, results) if name != FLOOR}
            assert len(set(sums.values())) == 1, sums
            frame = {3_600: "range:1h", 86_400: "range:1d"}[seconds]
            for name, (med, spread, check) in zip(sides, results):
                report(
                    f"Spark {n:>10,} events {q:>9,} queries {frame} sum,count  {name:36s} "
                    f"{med:7.2f} s ±{spread:.0%}  ({med / results[0][0]:.3g}x windowagg's time)"
                )
                rows.append(
                    Row(
                        "asof",
                        f"Spark: {name}",
                        "sum,count",
                        "frame on Spark",
                        frame,
                        med,
                        spread,
                        n + q,
                        check,
                    )
                )
            ev.unpersist(), qs.unpersist()
        rows += _skew_cases(spark, tmp, 500_000 if quick else 5_000_000, report)
    return rows


def _skew_cases(spark: SparkSession, tmp: str, n: int, report: Callable[[str], None]) -> list[Row]:
    """The peak resident memory of one Python worker: keys uniform, then half of the events
    (and of the queries) in one key; one-day frames, sum and count."""
    from pyspark.sql import functions as F

    rows = []
    for label, half in (("uniform keys", False), ("half the events in one key", True)):
        paths = [os.path.join(tmp, f"skew-{x}-{half}.parquet") for x in ("ev", "qs")]
        for t, path in zip(skewed(n, n // 10, half), paths):
            pq.write_table(t, path)
        ev, qs = (spark.read.parquet(p).cache() for p in paths)
        ev.count(), qs.count()
        aggs = {"s": ("sum", "v", "range:1d"), "c": ("count", "v", "range:1d")}
        out = spark_rolling(ev, time="ts", key="k", aggs=aggs, at=qs)

        def run(out: DataFrame = out) -> None:
            out.agg(F.sum("c")).first()

        warm_up(run)
        secs, peak = peak_worker_rss(run)
        report(f"Spark {n:>10,} events, {label:28s} {secs:6.2f} s, peak worker RSS {peak:7.1f} MiB")
        extra = {"peak_worker_rss_mib": round(peak, 1)}
        rows.append(
            Row(
                "asof",
                "Spark: windowagg",
                "sum,count",
                "keys on Spark",
                label,
                secs,
                0.0,
                n,
                0.0,
                extra,
            )
        )
        ev.unpersist(), qs.unpersist()
    return rows
