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
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from . import stages

__all__ = [
    "available",
    "blocks",
    "by_chunks",
    "chunks",
    "cuts_keys",
    "get_threads",
    "grouped",
    "on_cores",
    "outweighs",
    "parts",
    "pieces",
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
    the cores this process may use); 1 within a piece of work :func:`on_cores` handed to a
    thread (its own work runs on that thread: the others have theirs)."""
    return 1 if _piece.inside else _THREADS


_THREADS = _threads(os.environ[ENV], ENV) if os.environ.get(ENV) else available()

T = TypeVar("T")
R = TypeVar("R")

#: rows below which one core answers every key (a thread's start costs more than it saves)
PARALLEL_ROWS = 100_000
#: the most rows a sweep runs over before it starts afresh (a long key's runs, a block of
#: given frames): fixed, so that the answers do not depend on the thread count
LONG = 1 << 17


def parts(seg: np.ndarray) -> list[np.ndarray]:
    """Key segments split at key boundaries into one part of about equal rows per thread
    (:func:`get_threads`), each a segment array of its own; one part for few rows."""

    if int(seg[-1] - seg[0]) < PARALLEL_ROWS:
        return [seg]
    return [seg[a : b + 1] for a, b in grouped(seg)]


def _long_keys(seg: np.ndarray) -> np.ndarray | None:
    """How many runs each key is cut into (:func:`pieces`): a key of more than :data:`LONG`
    rows into runs of at most that many, whatever the thread count, so that where a sweep
    starts afresh, and so every answer, is the same on any number of threads; None where no
    key is cut (few rows, no long key)."""
    n = int(seg[-1] - seg[0])
    if n < PARALLEL_ROWS or len(seg) < 2:
        return None
    cuts = -(-np.diff(seg) // LONG)
    return None if (cuts <= 1).all() else np.maximum(cuts, 1)


def cuts_keys(seg: np.ndarray) -> bool:
    """Whether :func:`pieces` cuts a key of ``seg`` (one holds more than :data:`LONG` rows)."""
    return _long_keys(seg) is not None


def outweighs(seg: np.ndarray) -> bool:
    """Whether a key of ``seg`` holds more rows than a thread's share of them, on several
    threads: its runs (:func:`pieces`) then go to several threads."""
    n, cores = int(seg[-1] - seg[0]), get_threads()
    if cores < 2 or n < PARALLEL_ROWS or len(seg) < 2:
        return False
    return bool(np.diff(seg).max() * cores > n) and cuts_keys(seg)


def grouped(bounds: np.ndarray, per_thread: int = 1) -> list[tuple[int, int]]:
    """Runs ``[bounds[u], bounds[u + 1])`` grouped into ``per_thread`` parts of about equal
    rows per thread (none cut; on one thread too), each part a range ``(a, b)`` of run
    numbers."""
    n, cores = int(bounds[-1] - bounds[0]), get_threads() * per_thread
    if cores < 2 or len(bounds) < 3:
        return [(0, len(bounds) - 1)]
    at = np.searchsorted(bounds, bounds[0] + np.arange(1, cores) * n / cores)
    at = np.unique(np.clip(at, 1, len(bounds) - 2))
    edges = [0, *at.tolist(), len(bounds) - 1]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def pieces(seg: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`parts` where no key holds more than :data:`LONG` rows; else each such key first
    cut into runs of that many rows from its first (the same cuts on any number of threads,
    where a one-thread sweep starts afresh too), the runs then grouped into parts of about
    equal rows, one per thread, so that a long key (a hot key of skewed data) runs on several
    threads. Each part: a segment array of runs of rows, and for each run its key's first
    and end row (``home``, shape ``(runs, 2)``: a run that starts within its key finds its
    frames from there, :func:`windowagg.kernels.bounds.range_bounds`)."""
    cuts = _long_keys(seg)
    if cuts is None:
        return [(p, np.stack([p[:-1], p[1:]], axis=1)) for p in parts(seg)]
    key = np.repeat(np.arange(len(seg) - 1), cuts)
    j = np.arange(len(key)) - np.repeat(np.cumsum(cuts) - cuts, cuts)  # the run of its key
    bounds = np.r_[seg[key] + j * LONG, seg[-1]].astype(np.int64)
    home = np.stack([seg[key], seg[key + 1]], axis=1).astype(np.int64)
    return [(bounds[a : b + 1], home[a:b]) for a, b in grouped(bounds)]


def blocks(n: int) -> list[np.ndarray]:
    """Answers ``0..n-1`` of given frames (a window's rows, frames found before) in blocks of
    :data:`LONG` answers, each a sweep's fresh start (the same on any number of threads), the
    blocks grouped into one part per thread: each part a segment array of its blocks."""
    if n < PARALLEL_ROWS:
        return [np.array([0, n], np.int64)]
    bounds = np.r_[np.arange(0, n, LONG), n].astype(np.int64)
    return [bounds[a : b + 1] for a, b in grouped(bounds)]


def chunks(n: int, most: int | None = None) -> list[np.ndarray]:
    """Answers ``0..n-1`` of given frames in one part per core (any cut will do: each part's
    sweep starts empty), each as a segment array ``[a, b]``; one part for few answers;
    ``most``: at most that many parts."""

    if n < PARALLEL_ROWS:
        return [np.array([0, n], np.int64)]
    cores = get_threads() if most is None else max(1, min(most, get_threads()))
    if cores < 2:
        return [np.array([0, n], np.int64)]
    cuts = [n * c // cores for c in range(cores + 1)]
    return [np.array([a, b], np.int64) for a, b in itertools.pairwise(cuts)]


def on_cores(run: Callable[[T], R], pieces: Sequence[T]) -> list[R]:
    """``run(piece)`` for every piece, on a thread each (compiled kernels release the GIL):
    the first on the calling thread, the others on the pool's. Within a piece, the engine's
    work runs on its thread alone (:func:`get_threads` is 1 there, and pieces handed out
    there run one after the other), so a piece never waits for a thread of the pool."""
    if len(pieces) == 1 or _piece.inside:
        return [run(p) for p in pieces]
    stages.on_threads()
    global _POOL, _pool_size
    if _POOL is None or _pool_size < len(pieces):  # a pool of at least a thread per piece
        _pool_size = max(len(pieces), get_threads())
        _POOL = ThreadPoolExecutor(_pool_size, thread_name_prefix="windowagg")

    def alone(piece: T) -> R:
        _piece.inside = True
        try:
            return run(piece)
        finally:
            _piece.inside = False

    later = [_POOL.submit(alone, p) for p in pieces[1:]]
    first = alone(pieces[0])  # on this thread: no hand-off for it
    return [first, *(f.result() for f in later)]


def claimed(run: Callable[[T], R], pieces: Sequence[T]) -> list[R]:
    """``run(piece)`` for every piece, in their order, on as many threads as the engine has
    (:func:`on_cores`), each thread claiming the next piece as it finishes the one before:
    a thread whose core is busy with other work takes fewer pieces, not the same share."""
    threads = min(get_threads(), len(pieces))
    if threads < 2 or _piece.inside:
        return [run(p) for p in pieces]
    out: list = [None] * len(pieces)
    following = itertools.count()  # its next() is one step under the interpreter's lock

    def claiming(_: int) -> None:
        while (i := next(following)) < len(pieces):
            out[i] = run(pieces[i])

    on_cores(claiming, range(threads))
    return out


class _Piece(threading.local):
    """Whether this thread runs a piece of :func:`on_cores` now."""

    inside = False


_piece = _Piece()


def by_chunks(run: Callable[[int, int], R], n: int) -> list[R]:
    """``run(a, b)`` for the rows ``[a, b)`` of each of :func:`chunks` of ``0..n-1``, on the
    cores, in order: a compiled pass over views ``x[a:b]`` of its arrays (a view of a
    contiguous array is contiguous: the same compiled code), its results then combined."""
    if n < PARALLEL_ROWS:  # one chunk
        return [run(0, n)]
    return on_cores(lambda c: run(int(c[0]), int(c[1])), chunks(n))


_POOL: ThreadPoolExecutor | None = None
_pool_size = 0
