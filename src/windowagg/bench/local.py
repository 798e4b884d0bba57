"""``windowagg bench local``: window aggregates and rolling frames on local tables, against
what a user of one machine runs today, each in the fastest form its own documentation shows:
Polars' lazy API on both its in-memory and its streaming engine (either is faster on some
cases; ``group_by_dynamic``, ``rolling_*_by(...).over("k")`` on the unsorted
frame, which needs no sort; a sort by time alone where Polars needs the time sorted within
each key), DuckDB over the Arrow table (a hash aggregate per window; each event unnested into
its sliding windows; sessions from a gap flag and a running sum) and pandas (``rolling`` after
a sort by time).

Workloads (seeded, ``default_rng(2)``):

* uniform (:func:`events`): keys uniform over 100 or 100,000 keys, times distinct integer
  microseconds spread uniformly over ``n / keys`` seconds (about one event per key and second;
  distinct, because pandas' time frames leave out a row's later peers) in random order, values
  uniform integers 0-99 as doubles, so every side's sums are exact and their checksums
  (windows and total, or the sum of every row's value) equal;
* skewed (:func:`skewed`): keys Zipf-distributed over 10,000 values, times in bursts of whole
  milliseconds (many ties) in random order, 1% of the values null (no pandas: its frames
  differ from SQL's on ties).

Polars and DuckDB are optional (the ``bench`` extra): a side that is not installed is left out.
Each case and its baselines run in turn in every repetition, after a warm-up, each after a
garbage collection and a pause of 0.3 s (Polars' and DuckDB's threads spin on after their
work); medians and spreads. Every side runs in a process of its own (:class:`Side`), as a user
runs one library: in one process, the memory that one library frees and takes back changes
what the next one's allocations cost (after DuckDB's sliding query, the next call there paid
seconds of page faults; the suite's test, which compares answers only, runs them in one).
Peak memory: a child process runs windowagg twice on the same table
and reports the peak resident memory of the second run (sampled every millisecond) over what
it held before, beside the input's and the output's sizes.
"""

from __future__ import annotations

import gc
import importlib
import json
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from ..engine.keys import key_codes, keyed_sort
from ..kernels.jit import kernel
from ..tables import rolling_aggregate, window_aggregate
from .core import Row, checking_now, measure_interleaved

__all__ = ["local_suite"]

#: Polars' engines: each baseline runs on both (either is faster on some cases)
ENGINES = ("in-memory", "streaming")
#: the rolling frames, and their Polars/pandas spelling
FRAMES = {"range:10s": "10s", "range:30s": "30s", "range:600s": "600s", "rows:1000": 1000}
#: the uniform workload's windows, and the skewed workload's
UNIFORM = {"sliding": "sliding:60s/1s", "tumbling": "tumbling:60s", "session": "session:2s"}
SKEWED = {"sliding": "sliding:10s/1s", "tumbling": "tumbling:60s"}


#: the skewed workload's keys and its exponent (the share of key r is proportional to r^-1.1)
ZIPF_KEYS, ZIPF_S = 10_000, 1.1


def skewed(n: int, seed: int = 2):
    """The skewed workload as a pyarrow Table: ``k`` Zipf-distributed over 10,000 keys, ``ts``
    in whole milliseconds, in bursts (``n / 100`` bursts at random whole seconds over ``n``
    seconds, each event at a random millisecond of a random burst's second: about 100 events
    in a second, then about 100 s of quiet, ties common), in random order, ``v`` integers 0-99
    as doubles, 1% null."""

    rng = np.random.default_rng(seed)
    p = np.arange(1, ZIPF_KEYS + 1, dtype=float) ** -ZIPF_S
    k = rng.choice(ZIPF_KEYS, n, p=p / p.sum())
    bursts = np.sort(rng.integers(0, n, n // 100)) * 1000  # ms
    t = (bursts[rng.integers(0, len(bursts), n)] + rng.integers(0, 1000, n)) * 1000
    v = rng.integers(0, 100, n).astype(float)
    return pa.table(
        {"k": k, "ts": pa.array(t, pa.timestamp("us")), "v": pa.array(v, mask=rng.random(n) < 0.01)}
    )


def workload(n: int, keys: int | str):
    """The uniform workload over ``keys`` keys, or the skewed one (``keys="skewed"``)."""
    return skewed(n) if keys == "skewed" else events(n, int(keys))


def events(n: int, keys: int, seed: int = 2):
    """The workload as a pyarrow Table: ``k`` (int64), ``ts`` (timestamp, us), ``v``; about
    one event per key and second, over ``n / keys`` seconds."""

    rng = np.random.default_rng(seed)
    k = rng.integers(0, keys, n)
    width = 1_000_000 // keys  # microseconds per event: n / keys seconds in all
    t = rng.permutation(n) * width + rng.integers(0, width, n)  # distinct
    v = rng.integers(0, 100, n).astype(float)
    return pa.table({"k": k, "ts": pa.array(t, pa.timestamp("us")), "v": v})


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def _seconds(text: str) -> int:
    return int(text.removesuffix("s"))


def dynamic(lazy: Any, size: int, slide: int) -> Any:
    """Polars' windows of ``size`` seconds every ``slide`` over ``ts``, per ``k``
    (``group_by_dynamic``, to be aggregated), each window ``[start, start + size)``; the time
    sorted within each key first: a sort by time is the fastest way."""
    return lazy.sort("ts").group_by_dynamic(
        "ts",
        every=f"{slide}s",
        period=f"{size}s",
        offset=f"-{size - slide}s",
        group_by="k",
        closed="left",
        start_by="window",
    )


def window_cases(table, spec: str, agg: str = "sum", five: bool = False) -> list:
    """windowagg and the baselines for ``spec`` (``sliding:Ss/Ds``, ``tumbling:Ss`` or
    ``session:Gs``, whole seconds) of ``agg`` (sum or max) of ``v``, or five entries; each
    returns (windows, total of the first entry)."""

    kind, numbers = spec.split(":")
    size, slide = [_seconds(x) for x in numbers.split("/")] * (1 if "/" in numbers else 2)
    aggs = {"s": (agg, "v")}
    if five:
        aggs |= {"n": ("count", "*"), "hi": ("max", "v"), "a": ("mean", "v"), "lo": ("min", "v")}

    def ours():
        out = window_aggregate(table, time="ts", windows=spec, aggs=aggs, key="k")
        return np.array([out.num_rows, np.nansum(out.column("s").to_numpy(zero_copy_only=False))])

    cases = [("windowagg window_aggregate", ours)]
    pl, duckdb = _optional("polars"), _optional("duckdb")
    if pl is not None and kind != "session":  # Polars has no session windows
        frame = pl.from_arrow(table).lazy()
        exprs = [getattr(pl.col("v"), agg)().alias("s")]
        if five:
            exprs += [
                pl.len(),
                pl.col("v").max().alias("hi"),
                pl.col("v").mean().alias("a"),
                pl.col("v").min().alias("lo"),
            ]
        query = dynamic(frame, size, slide)

        for engine in ENGINES:

            def polars(engine=engine):
                out = query.agg(*exprs).collect(engine=engine)
                return np.array([out.height, out["s"].sum()])

            cases.append((f"Polars group_by_dynamic ({engine})", polars))
        if kind == "tumbling":  # also a group_by of the key and the truncated time
            grouped = frame.group_by("k", pl.col("ts").dt.truncate(f"{size}s").alias("w"))
            for engine in ENGINES:

                def truncated(engine=engine):
                    out = grouped.agg(*exprs).collect(engine=engine)
                    return np.array([out.height, out["s"].sum()])

                cases.append((f"Polars group_by(truncate) ({engine})", truncated))
    if duckdb is not None:
        con = duckdb.connect()
        con.register("events", table)
        fns = f"{agg}(v) AS s" + (", count(*), max(v), avg(v), min(v)" if five else "")
        us = "epoch_us(ts)"  # whole microseconds (epoch_ms rounds)
        step = f"{us} // {slide * 1_000_000}"
        sliding = (
            f"SELECT k, w, {fns} FROM (SELECT k, v, unnest(range({step} - {size // slide - 1}, "
            f"{step} + 1)) AS w FROM events) GROUP BY k, w"
        )
        session = (
            f"SELECT k, g, {fns} FROM (SELECT k, v, sum(f) OVER (PARTITION BY k ORDER BY ts "
            "ROWS UNBOUNDED PRECEDING) AS g FROM (SELECT k, ts, v, CASE WHEN ts - lag(ts) OVER "
            f"(PARTITION BY k ORDER BY ts) <= INTERVAL {size} SECOND THEN 0 ELSE 1 END AS f "
            "FROM events)) GROUP BY k, g"
        )
        tumbling = f"SELECT k, {step} AS w, {fns} FROM events GROUP BY k, w"
        sql = {"tumbling": tumbling, "sliding": sliding, "session": session}[kind]

        def duck():
            n, s = con.execute(f"SELECT count(*), sum(s) FROM ({sql})").fetchone()
            return np.array([n, s])

        name = {
            "tumbling": "GROUP BY window",
            "sliding": "unnest + GROUP BY",
            "session": "lag, running sum, GROUP BY",
        }[kind]
        cases.append(("DuckDB " + name, duck))
    return cases


#: the five-entry rolling call: (name, aggregation), each over ``v``
FIVE = [("o", "sum"), ("n", "count"), ("hi", "max"), ("a", "mean"), ("lo", "min")]


@kernel
def _two_pointers(t, v, seg, size, order, out):
    """The floor of a rolling sum over ``range:size`` (:func:`floor_sum`): rows in order by
    key and time (key k's rows are ``order[seg[k]:seg[k + 1]]``, times ``t`` in that order),
    one pass per key with two pointers (a row's frame is ``[t - size, t]``, its later peers
    in it), each value read at its row (NaN: null), each frame's sum (NaN where no value is
    valid) written at its row's place in the input's order."""
    for k in range(seg.shape[0] - 1):
        lo = seg[k]
        hi = seg[k]
        total = 0.0
        count = 0
        for i in range(seg[k], seg[k + 1]):
            while hi < seg[k + 1] and t[hi] <= t[i]:
                x = v[order[hi]]
                if x == x:
                    total += x
                    count += 1
                hi += 1
            while t[lo] < t[i] - size:
                x = v[order[lo]]
                if x == x:
                    total -= x
                    count -= 1
                lo += 1
            out[order[i]] = total if count else np.nan


def floor_sum(table, size: float) -> np.ndarray:
    """The physical floor of a rolling sum over ``range:size`` (seconds, on values without
    NaN): read the columns, put the rows in order by key and time (the fastest sort there is
    for it, windowagg's own radix sort by key, then each key's times, on both cores), one
    compiled pass of two pointers per key, each value read at its row and each result written
    at its row's place in the input's order; no planning, no types beyond doubles, no Arrow
    output."""
    micros = table.column("ts").cast(pa.int64()).to_numpy().astype(float)
    order, t, seg = keyed_sort(key_codes(table, ["k"]), micros)
    v = table.column("v").to_numpy(zero_copy_only=False)  # nulls: NaN
    out = np.empty(len(v))
    _two_pointers(t, v, seg, size * 1e6, order, out)
    return out


def rolling_cases(table, frame: str, agg: str, pandas: bool = True) -> list:
    """windowagg ``rolling_aggregate`` against Polars and pandas, per row, every key, and for a
    sum over time its physical floor (:func:`floor_sum`); ``agg="five"``: five entries in one
    call (:data:`FIVE`; Polars' five expressions in one ``select``, no pandas). Each returns
    the sum of every row's result (the first entry's)."""

    entries = FIVE if agg == "five" else [("o", agg)]

    def ours():
        aggs = {name: (a, "v", frame) for name, a in entries}
        out = rolling_aggregate(table, time="ts", key="k", aggs=aggs)
        return np.array([np.nansum(out.column("o").to_numpy(zero_copy_only=False))])

    cases = [("windowagg rolling_aggregate", ours)]
    size = FRAMES[frame]
    if agg == "sum" and isinstance(size, str):
        seconds = _seconds(size)
        cases.append(
            ("floor (radix sort, two-pointer loop)", lambda: np.nansum(floor_sum(table, seconds)))
        )
    pl = _optional("polars")
    if pl is not None:
        lazy = pl.from_arrow(table).lazy()
        if isinstance(size, int):  # rows frames follow the order of the rows: by time
            lazy = lazy.sort("ts")

        def expr(a: str):
            col = pl.col("v")
            if a == "count":  # the non-null values: a sum of ones
                col, a = col.is_not_null().cast(pl.UInt32), "sum"
            if isinstance(size, int):
                return getattr(col, f"rolling_{a}")(window_size=size, min_samples=1)
            return getattr(col, f"rolling_{a}_by")("ts", window_size=size, closed="both")

        exprs = [expr(a).over("k").alias(name) for name, a in entries]

        name = "Polars rolling" + ("_*" if isinstance(size, int) else "_*_by")
        for engine in ENGINES:

            def polars(engine=engine):
                out = lazy.select(exprs).collect(engine=engine)
                return np.array([out.get_column("o").sum()])

            cases.append((f"{name} ({engine})", polars))
    if not pandas or agg == "five":
        return cases
    pdf = table.to_pandas()

    def pandas_():
        by = pdf.sort_values("ts").groupby("k")
        r = (
            by.rolling(size, min_periods=1)
            if isinstance(size, int)
            else by.rolling(size, on="ts", closed="both")
        )
        return np.array([getattr(r["v"], agg)().sum()])

    cases.append(("pandas groupby().rolling()", pandas_))
    return cases


_BUILD: dict[str, Callable[..., Any]] = {"window": window_cases, "rolling": rolling_cases}
#: windowagg's row in a process that opted in to keeping freed memory between calls
#: (:func:`windowagg.keep_freed_memory`): what the default, which leaves malloc alone, costs
KEPT = "windowagg, freed memory kept"
_TABLE: dict = {}


def _serve_init(n: int, keys: int | str) -> None:
    _TABLE["events"] = workload(n, keys)


def _serve(kind: str, args: tuple, name: str) -> tuple[float, Any]:
    """In a :class:`Side`'s process: run case ``name`` of ``_BUILD[kind](table, *args)`` once
    (the cases of the last request kept), timed here, after a garbage collection."""

    if kind not in _BUILD:  # the scaling suite's cases, registered on import
        importlib.import_module(".scaling", __package__)
    if _TABLE.get("key") != (kind, args):
        _TABLE.pop("cases", None)  # the last case's state (a connection, a frame) freed first
        _TABLE["cases"], _TABLE["key"] = dict(_BUILD[kind](_TABLE["events"], *args)), (kind, args)
    run = _TABLE["cases"][name]
    gc.collect()
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


class Side:
    """One library's side of the bench in a process of its own, holding the workload;
    ``env``: variables the process starts with (windowagg's memory opt-in)."""

    def __init__(self, n: int, keys: int | str, env: dict[str, str] | None = None):
        saved = dict(os.environ)
        os.environ.update(env or {})  # a spawned process starts with the parent's environment
        try:
            self.pool = multiprocessing.get_context("spawn").Pool(1, _serve_init, (n, keys))
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def run(self, kind: str, args: tuple, name: str) -> tuple[float, Any]:
        return self.pool.apply(_serve, (kind, args, name))

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


def sides(n: int, keys: int | str, libraries: tuple[str, ...]) -> dict[str, Side]:
    """A :class:`Side` per library, each holding the workload; inside
    :func:`~windowagg.bench.core.checking`, where the answers are wanted and not the times,
    one process serves them all."""
    if checking_now():
        return dict.fromkeys(libraries, Side(n, keys))
    return {lib: Side(n, keys) for lib in libraries}


#: the child process of :func:`peak_memory`
_PEAK = """
import json, sys
from windowagg import release_memory
from windowagg.bench.core import peak_rss
from windowagg.bench.local import events
from windowagg.tables import window_aggregate

n, keys, spec = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
t = events(n, keys)
run = lambda: window_aggregate(t, time="ts", windows=spec, aggs={"s": ("sum", "v")}, key="k")
run()  # warm: compiled code loaded, Arrow's pool grown once
release_memory()  # the reserve let go: the run's own memory, all of it, is measured
out, peak = peak_rss(run)
print(json.dumps({"peak": peak, "input": t.nbytes / 2**20, "output": out.nbytes / 2**20}))
"""


def peak_memory(n: int, keys: int, what: str) -> dict:
    """windowagg's peak resident memory on the workload, in a child process: the most it held
    during a second run (sampled every millisecond) over what it held before, in MiB, with the
    input's and the output's sizes. The child returns freed memory to the system
    (``WINDOWAGG_KEEP_MIB=0``): kept, the first run's memory would serve the second, and the
    second's peak would say nothing of what a call needs."""
    spec = UNIFORM[what]
    env = os.environ | {"WINDOWAGG_KEEP_MIB": "0"}  # freed memory returned: the call's own peak
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(n), str(keys), spec],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def local_suite(quick: bool, report: Callable[[str], None]) -> list[Row]:
    sizes = [100_000] if quick else [1_000_000, 10_000_000]
    rows: list[Row] = []

    def pair(request, param, x, n, agg, reps):
        kind, args = request
        names = [name for name, _ in _BUILD[kind](small, *args)]
        sides = [sides_of[name.split()[0]] for name in names]
        runs = [lambda s=s, name=name: s.run(kind, args, name) for s, name in zip(sides, names)]
        if "kept" in sides_of:  # windowagg's case again, where the process opted in
            runs.append(lambda: sides_of["kept"].run(kind, args, names[0]))
            names.append(KEPT)
        stats = measure_interleaved(runs, reps, settle=0.3, self_timed=True)
        got = []
        for name, (med, spread, chk) in zip(names, stats):
            got.append(Row("local", name, agg, param, x, med, spread, n, chk))
            report(
                f"  {param:18s} {agg:5s} {name:34s} {med:8.3f} s  ({n / med / 1e6:6.1f} M "
                f"events/s, spread {spread:.0%}, checksum {chk:.10g})"
            )
        report(
            "       " + ", ".join(f"{r.case}: {r.median_s / got[0].median_s:.2f}x" for r in got[1:])
        )
        rows.extend(got)

    for n in sizes:
        reps = 5 if n <= 1_000_000 else 3
        for keys in (100, 100_000):
            small = events(1000, keys)
            sides_of = sides(n, keys, ("windowagg", "floor", "Polars", "DuckDB", "pandas"))
            sides_of["kept"] = Side(n, keys, {"WINDOWAGG_KEEP_MIB": "512"})
            report(f"{n:,} events, {keys:,} keys, times in random order:")
            try:
                for what, spec in UNIFORM.items():
                    pair(("window", (spec,)), what, keys, n, "sum", reps)
                pair(
                    ("window", (UNIFORM["sliding"], "sum", True)), "sliding", keys, n, "five", reps
                )
                for agg in ("sum", "max", "mean", "five"):
                    pair(
                        ("rolling", ("range:600s", agg, keys == 100 and agg in ("sum", "max"))),
                        "range:600s",
                        keys,
                        n,
                        agg,
                        reps,
                    )
                if keys == 100:
                    for frame in ("range:10s", "rows:1000"):
                        for agg in ("sum", "max"):
                            pair(("rolling", (frame, agg)), frame, keys, n, agg, reps)
            finally:
                for side in set(sides_of.values()):
                    side.close()
            for what in ("sliding", "session"):
                mem = peak_memory(n, keys, what)
                rows.append(
                    Row(
                        "local",
                        "windowagg window_aggregate",
                        "peak MiB",
                        what,
                        keys,
                        0.0,
                        0.0,
                        n,
                        mem["peak"],
                        mem,
                    )
                )
                report(
                    f"  {what} peak memory {mem['peak']:.0f} MiB (input {mem['input']:.0f} "
                    f"MiB, output {mem['output']:.0f} MiB)"
                )
    for n in [100_000] if quick else [2_000_000, 10_000_000]:
        reps = 5 if n <= 2_000_000 else 3
        small = skewed(1000)
        sides_of = sides(n, "skewed", ("windowagg", "floor", "Polars", "DuckDB"))
        report(f"{n:,} events, skewed keys (Zipf over {ZIPF_KEYS:,}), bursty times, 1% nulls:")
        try:
            for agg in ("sum", "max"):
                pair(("window", (SKEWED["sliding"], agg)), "sliding", "skewed", n, agg, reps)
            pair(("window", (SKEWED["tumbling"],)), "tumbling", "skewed", n, "sum", reps)
            for agg in ("sum", "max", "mean", "five"):
                pair(("rolling", ("range:30s", agg, False)), "range:30s", "skewed", n, agg, reps)
        finally:
            for side in set(sides_of.values()):
                side.close()
    return rows
