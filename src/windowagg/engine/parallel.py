"""The engine's work on both cores: key segments in parts of about equal rows, given frames in
chunks, each on a thread (the compiled kernels release the GIL)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numba
import numpy as np

__all__ = ["chunks", "on_cores", "parts"]

T = TypeVar("T")
R = TypeVar("R")

#: rows below which one core answers every key (a thread's start costs more than it saves)
PARALLEL_ROWS = 100_000


def parts(seg: np.ndarray) -> list[np.ndarray]:
    """Key segments split at key boundaries into one part of about equal rows per core
    (numba's thread count), each a segment array of its own; one part for few rows."""

    n, cores = int(seg[-1] - seg[0]), numba.get_num_threads()
    if cores < 2 or n < PARALLEL_ROWS or len(seg) < 3:
        return [seg]
    cuts = np.searchsorted(seg, seg[0] + np.arange(1, cores) * n / cores)
    cuts = np.unique(np.clip(cuts, 1, len(seg) - 2))
    edges = [0, *cuts.tolist(), len(seg) - 1]
    return [seg[a : b + 1] for a, b in itertools.pairwise(edges) if b > a]


def chunks(n: int) -> list[np.ndarray]:
    """Answers ``0..n-1`` of given frames in one part per core (any cut will do: each part's
    sweep starts empty), each as a segment array ``[a, b]``; one part for few answers."""

    cores = numba.get_num_threads()
    if cores < 2 or n < PARALLEL_ROWS:
        return [np.array([0, n], np.int64)]
    cuts = [n * c // cores for c in range(cores + 1)]
    return [np.array([a, b], np.int64) for a, b in itertools.pairwise(cuts)]


def on_cores(run: Callable[[T], R], pieces: Sequence[T]) -> list[R]:
    """``run(piece)`` for every piece, on a thread each (compiled kernels release the GIL)."""
    if len(pieces) == 1:
        return [run(pieces[0])]
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(thread_name_prefix="windowagg")
    return list(_POOL.map(run, pieces))


_POOL: ThreadPoolExecutor | None = None
