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

from .aggregations import AGGREGATIONS, AggregationProtocol, facts
from .compiled.btree_state import BTreeState
from .compiled.fifo_state import FifoState
from .fifo import ALGORITHMS
from .kernels.layout import COUNT


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
    """Every (algorithm, family) pair that has a compiled kernel; ``btree`` for the B-tree."""
    families = _families()
    out = [("btree", fam) for fam in families]  # the longest first: the workers end together
    for name, record in ALGORITHMS.items():
        out.extend((name, fam) for fam, agg in families.items() if record.serves(agg))
    return out


def compile_one(job: tuple[str, str]) -> tuple[str, str, float]:
    """Compile (or load) the kernels of one pair; return how long it took."""

    alg, fam = job
    start = time.perf_counter()
    x = np.arange(8, dtype=np.float64)
    if alg == "btree":
        BTreeState(fam).slide(0, x, x, x, np.array([3.0]), np.empty((8, 1)))
        return alg, fam, time.perf_counter() - start
    ranges = (2,) if alg == "slickdeque" else ()
    state = FifoState(alg, fam, 16, ranges)
    state.run(COUNT, values=x, args=x, size=3, out=np.empty((8, 1)))
    if ALGORITHMS[alg].shares_windows:
        state.run(COUNT, values=x, args=x, sizes=np.array([2.0]), out=np.empty((8, 1)))
    return alg, fam, time.perf_counter() - start


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
