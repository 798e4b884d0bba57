"""Compile every kernel once, so later processes load them from numba's on-disk cache.

Which kernels exist is read from the records: every (algorithm, family) pair where the FIFO
algorithm's record serves an aggregation of that family, and one B-tree kernel per family
(FiBA and the classic tree share it).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pyarrow as pa

from .aggregations import AGGREGATIONS, AggregationProtocol, facts
from .fifo import ALGORITHMS
from .kernels.layout import COUNT, OP_INSERT
from .online import OnlineFeatures
from .storage.btree_state import BTreeState
from .storage.fifo_state import FifoState
from .tables import rolling_aggregate, window_aggregate


def _families() -> dict[str, AggregationProtocol]:
    """Each compiled family and one aggregation of it (its records say which)."""
    out: dict[str, AggregationProtocol] = {}
    for factory in AGGREGATIONS.values():
        agg = factory()
        kernel = facts(agg).kernel
        if kernel is not None:
            out.setdefault(kernel.family, agg)
    return out


def jobs() -> list[tuple[str, str]]:
    """Every (algorithm, family) pair that has a compiled kernel; ``btree`` for the B-tree (its
    two entry points: ``btree_slide``, windows over times, and ``btree_run``, the operations of
    ``windowagg.ooo`` trees);
    ``tables`` for the table engine's own kernels (ordering, bounds, cells, selection)."""
    families = _families()
    out = [("btree", fam) for fam in families]  # the longest first: the workers end together
    out.append(("tables", "all"))
    for name, record in ALGORITHMS.items():
        out.extend((name, fam) for fam, agg in families.items() if record.serves(agg))
    return out


def compile_one(job: tuple[str, str]) -> tuple[str, str, float]:
    """Compile (or load) the kernels of one pair; return how long it took."""

    alg, fam = job
    start = time.perf_counter()
    x = np.arange(8, dtype=np.float64)
    if alg == "tables":
        _tables()
        return alg, fam, time.perf_counter() - start
    if alg == "btree":  # both entry points: windows over times, and the trees' operations
        BTreeState(fam).slide(0, x, x, x, np.array([3.0]), np.empty((8, 1)))
        BTreeState(fam).run(0, np.full(8, OP_INSERT, np.int8), x, x, x, np.empty((8, 1)))
        return alg, fam, time.perf_counter() - start
    ranges = (2,) if alg == "slickdeque" else ()
    state = FifoState(alg, fam, 16, ranges)
    state.run(COUNT, values=x, args=x, size=3, out=np.empty((8, 1)))
    if ALGORITHMS[alg].shares_windows:
        state.run(COUNT, values=x, args=x, sizes=np.array([2.0]), out=np.empty((8, 1)))
    return alg, fam, time.perf_counter() - start


def _tables() -> None:
    """The table engine's kernels, through the calls users make: windows of every kind and
    rolling frames over float and integer values, timestamps and numbers as times (and
    nanosecond epochs, whole numbers beyond doubles), in and out of order, over the rows and
    over their slices, with and without point-in-time queries, and the online state."""
    rng = np.random.default_rng(0)
    n = 2_000
    t = rng.permutation(n) * 1_000_000
    nanos = (t * 1000 + 1_800_000_000_000_000_000).astype("datetime64[ns]")  # beyond doubles
    for times in (t.astype("datetime64[us]"), t / 1e6, nanos):
        table = {
            "k": rng.integers(0, 20, n),
            "t": times,
            "v": rng.random(n),
            "i": rng.integers(0, 9, n),
        }
        unit = "" if times.dtype.kind == "f" else "s"
        aggs = {
            name: (agg, col)
            for agg in ("sum", "count", "mean", "min", "max", "stddev", "median")
            for col in ("v", "i")
            for name in [f"{agg}_{col}"]
        }
        for windows in (f"sliding:60{unit}/10{unit}", f"tumbling:60{unit}", f"session:5{unit}"):
            window_aggregate(table, time="t", key="k", windows=windows, aggs=aggs)
        window_aggregate(table, time="t", key="k", windows="count-sliding:50/10", aggs=aggs)
        sql = {name: entry for name, entry in aggs.items() if entry[0] not in ("stddev", "median")}
        window_aggregate(table, time="t", key="k", windows=f"sliding:60{unit}/10{unit}", aggs=sql)
        # slices far sparser than the rows: the cells as runs of the rows sorted by slice
        window_aggregate(table, time="t", key="k", windows=f"tumbling:1{unit}", aggs=sql)
        # few slices: one grid of cells for every key
        window_aggregate(table, time="t", key="k", windows=f"tumbling:600{unit}", aggs=sql)
        for frame in (f"range:60{unit}", "rows:50"):
            frames = {name: (agg, col, frame) for name, (agg, col) in aggs.items()}
            rolling_aggregate(table, time="t", key="k", aggs=frames)
            queries = {"k": table["k"][:100], "t": table["t"][:100]}
            rolling_aggregate(table, time="t", key="k", aggs=frames, at=queries)
            rolling_aggregate(table, time="t", key="k", aggs={"hi": ("max", "v", frame)})
            distinct = {f"d_{c}": ("count_distinct", c, frame) for c in ("v", "i")}
            rolling_aggregate(table, time="t", key="k", aggs=distinct)
        # the online state: parts merged as updates come, a batch gathered across them
        online = OnlineFeatures(time="t", key="k", aggs=frames, allowed_lateness=10**7)
        for lo in range(0, n, 500):
            online.update({c: v[lo : lo + 500] for c, v in table.items()})
        online.query(queries)
        # a batch of many events a request over one column: one compiled call
        # (windowagg.engine.rolling.compiled_at), over doubles and over longs
        for col in ("v", "i"):
            kinds = ("sum", "max", "min", "count_distinct", "first", "mean")
            one = {f"{agg}_{col}": (agg, col, frame) for agg in kinds}
            online = OnlineFeatures(time="t", key="k", aggs=one, allowed_lateness=10**7)
            online.update(table)
            online.query(queries)
    # an online state answered from its parts' prefix sums and tables of their best rows (a
    # key of many events): the bounds, a rows frame's cuts and the groups' merges and counts
    # over the parts' int64 times
    hot = {
        "k": np.zeros(6_000, np.int64),
        "t": (np.arange(6_000) * 1_000_000).astype("datetime64[us]"),
        "v": rng.integers(0, 9, 6_000).astype(float),
    }
    summed = {
        "s": ("sum", "v", "range:60s"),
        "n": ("count", "v", "range:60s"),
        "hi": ("max", "v", "range:60s"),
        "lo": ("min", "v", "range:60s"),
        "r": ("mean", "v", "rows:100"),  # a rows frame's ends in each part, by pivots
        "d": ("count_distinct", "v", "range:60s"),  # the parts' rows grouped by value
        "f": ("first", "v", "range:60s"),
    }
    online = OnlineFeatures(time="t", key="k", aggs=summed, allowed_lateness="1h")
    for lo in range(0, 6_000, 2_000):
        online.update({c: v[lo : lo + 2_000] for c, v in hot.items()})
    # ten requests: their groups' walk weighed against the key's events first
    online.query({"k": hot["k"][:10], "t": hot["t"][-10:]})
    # keys of a string column and of several columns: coded through a hash table of bytes
    named = hot | {"s": np.array(["a", "b", "c"], object)[rng.integers(0, 3, 6_000)]}
    for key in (["s"], ["s", "k"]):
        coded = OnlineFeatures(time="t", key=key, aggs={"s1": summed["s"]}, allowed_lateness="1h")
        coded.update(named)
        coded.query({c: named[c][:1] for c in ("s", "k", "t")})
    big = {"k": rng.integers(0, 20, 200_000), "t": rng.permutation(200_000) * 1.0}
    big["v"] = np.where(rng.random(200_000) < 0.01, np.nan, rng.random(200_000))
    # gathers on both cores; sums of 4,096 values or more, from prefix sums (rows:5) and
    # frame by frame (rows:2)
    sums = {"s": ("sum", "v", "rows:5"), "s2": ("sum", "v", "rows:2")}
    for values in (big["v"], pa.array(big["v"], from_pandas=True)):
        rolling_aggregate(big | {"v": values}, time="t", key="k", aggs=sums)
    wide = big | {"t": big["t"] * 2**29}  # a key and a row number wider than one word
    rolling_aggregate(wide, time="t", key="k", aggs={"s": ("sum", "v", "rows:5")})


def warmup(processes: int = 2, report=print) -> float:
    """Compile all kernels with ``processes`` workers; return the wall time."""
    start = time.perf_counter()
    todo = jobs()
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        for k, (alg, fam, secs) in enumerate(pool.map(compile_one, todo, chunksize=1), 1):
            report(f"[{k:2d}/{len(todo)}] {alg:16s} {fam:8s} {secs:6.2f} s")
    total = time.perf_counter() - start
    report(f"all {len(todo)} kernels ready in {total:.1f} s")
    return total
