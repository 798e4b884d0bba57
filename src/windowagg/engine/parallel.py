"""The engine's work on the cores: key segments in parts of about equal rows, given frames in
chunks, each on a thread (the compiled kernels release the GIL), as many threads as
:func:`get_threads` says: ``WINDOWAGG_THREADS`` when set (read at import), else the cores this
process may use (its CPU affinity and its container's CPU limit, not the machine's count), or
what :func:`set_threads` sets. Like Polars' ``POLARS_MAX_THREADS``, the count is windowagg's
own: numba's and any other library's threads are left as they are."""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from . import stages

__all__ = [
    "available",
    "by_chunks",
    "chunks",
    "get_threads",
    "on_cores",
    "parts",
    "set_threads",
]

#: the environment variable that sets the engine's threads at import
ENV = "WINDOWAGG_THREADS"


def available() -> int:
    """The cores this process may use: its CPU affinity, within its container's CPU limit
    (cgroup v2 ``cpu.max``, rounded up), at least 1."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        n = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as fh:
            quota, period = fh.read().split()[:2]
        if quota != "max":
            n = min(n, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):  # no cgroup v2 limit
        pass
    return max(1, n)


def _threads(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"{what} must be a whole number of threads >= 1, got {value!r}")
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{what} must be a whole number of threads >= 1, got {value!r}") from None
    if n < 1:
        raise ValueError(f"{what} must be a whole number of threads >= 1, got {value!r}")
    return n


def set_threads(n: int) -> None:
    """Run the engine's work on ``n`` threads from now on (at least 1), in this process."""
    global _THREADS
    _THREADS = _threads(n, "set_threads(n)")


def get_threads() -> int:
    """The threads the engine's work runs on (:func:`set_threads`, ``WINDOWAGG_THREADS``, or
    the cores this process may use)."""
    return _THREADS


_THREADS = _threads(os.environ[ENV], ENV) if os.environ.get(ENV) else available()

T = TypeVar("T")
R = TypeVar("R")

#: rows below which one core answers every key (a thread's start costs more than it saves)
PARALLEL_ROWS = 100_000


def parts(seg: np.ndarray) -> list[np.ndarray]:
    """Key segments split at key boundaries into one part of about equal rows per thread
    (:func:`get_threads`), each a segment array of its own; one part for few rows."""

    n, cores = int(seg[-1] - seg[0]), get_threads()
    if cores < 2 or n < PARALLEL_ROWS or len(seg) < 3:
        return [seg]
    cuts = np.searchsorted(seg, seg[0] + np.arange(1, cores) * n / cores)
    cuts = np.unique(np.clip(cuts, 1, len(seg) - 2))
    edges = [0, *cuts.tolist(), len(seg) - 1]
    return [seg[a : b + 1] for a, b in itertools.pairwise(edges) if b > a]


def chunks(n: int, most: int | None = None) -> list[np.ndarray]:
    """Answers ``0..n-1`` of given frames in one part per core (any cut will do: each part's
    sweep starts empty), each as a segment array ``[a, b]``; one part for few answers;
    ``most``: at most that many parts."""

    cores = get_threads() if most is None else max(1, min(most, get_threads()))
    if cores < 2 or n < PARALLEL_ROWS:
        return [np.array([0, n], np.int64)]
    cuts = [n * c // cores for c in range(cores + 1)]
    return [np.array([a, b], np.int64) for a, b in itertools.pairwise(cuts)]


def on_cores(run: Callable[[T], R], pieces: Sequence[T]) -> list[R]:
    """``run(piece)`` for every piece, on a thread each (compiled kernels release the GIL)."""
    if len(pieces) == 1:
        return [run(pieces[0])]
    stages.on_threads()
    global _POOL, _pool_size
    if _POOL is None or _pool_size < len(pieces):  # a pool of at least a thread per piece
        _pool_size = max(len(pieces), get_threads())
        _POOL = ThreadPoolExecutor(_pool_size, thread_name_prefix="windowagg")
    return list(_POOL.map(run, pieces))


def by_chunks(run: Callable[[int, int], R], n: int) -> list[R]:
    """``run(a, b)`` for the rows ``[a, b)`` of each of :func:`chunks` of ``0..n-1``, on the
    cores, in order: a compiled pass over views ``x[a:b]`` of its arrays (a view of a
    contiguous array is contiguous: the same compiled code), its results then combined."""
    return on_cores(lambda c: run(int(c[0]), int(c[1])), chunks(n))


_POOL: ThreadPoolExecutor | None = None
_pool_size = 0
