"""Compile every kernel once, so later processes load them from numba's on-disk cache."""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from .families import ADD, INVERTIBLE, SELECT, SELECTIVE, SUMF, WELFORD, XCOUNT

FAMILIES = (SUMF, ADD, SELECT, XCOUNT, WELFORD)
SHARING = ("recalc", "flatfat", "bint", "flatfit", "slickdeque")


def jobs() -> list[tuple[str, str]]:
    """Every (algorithm, family) pair that has a compiled kernel."""
    from ..fifo import ALGORITHMS

    out = [("fiba", fam) for fam in FAMILIES]  # the longest first: the workers end together
    for alg in ALGORITHMS:
        for fam in FAMILIES:
            if alg == "soe" and fam not in INVERTIBLE:
                continue
            if alg == "slickdeque" and fam not in INVERTIBLE | SELECTIVE:
                continue
            out.append((alg, fam))
    return out


def compile_one(job: tuple[str, str]) -> tuple[str, str, float]:
    """Compile (or load) the kernels of one pair; return how long it took."""
    from ..fifo.compiled import COUNT, FifoState
    from ..ooo.compiled import BTreeState

    alg, fam = job
    start = time.perf_counter()
    x = np.arange(8, dtype=np.float64)
    if alg == "fiba":  # FiBA and the classic tree share one kernel per family
        BTreeState(fam).slide(0, x, x, x, np.array([3.0]), np.empty((8, 1)))
        return alg, fam, time.perf_counter() - start
    ranges = (2,) if alg == "slickdeque" else ()
    state = FifoState(alg, fam, 16, ranges)
    state.run(COUNT, values=x, args=x, size=3, out=np.empty((8, 1)))
    if alg in SHARING:
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
