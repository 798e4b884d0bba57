"""The engine's memory: large arrays from a reserve the engine owns, and an opt-in that keeps
glibc's freed memory for the next call.

On glibc, memory freed at the top of the heap beyond 128 KiB goes back to the system, and
arrays of more than 32 MiB are mapped afresh each time; a call then pays a page fault (and the
kernel's zeroing) for every page of its arrays, and in a virtual machine a fault can cost tens
of microseconds. Arrow's default pool (mimalloc in pyarrow's wheels) hands freed memory back
too, a few milliseconds later. So the engine takes its large arrays (window and frame bounds,
prefix sums, every kernel's output: :func:`empty`, :func:`zeros`) from a :class:`Reserve` of
buffers it allocated from Arrow's default pool and keeps: a buffer whose arrays are all gone is
taken again by the next allocation that fits it, so a call writes into the pages the last one
wrote, without a fault, and the arrays that become output columns are Arrow's memory already.
The reserve holds at most :data:`RESERVE_BYTES` and lets its buffers go :data:`RELEASE_AFTER`
seconds after the engine's last call (as jemalloc, Polars' allocator, lets its dirty pages go
after ten seconds). Nothing about the process changes: malloc is left alone, and the pool is
the one the user has (their own, if they set one with ``pyarrow.set_memory_pool``).

:func:`keep_freed_memory` (or ``WINDOWAGG_KEEP_MIB=512`` in the environment, read on the
engine's first call, which is the way to ask for it on Spark's workers) goes further for the
rest of the process, where the user asks: it raises glibc's trim and mmap thresholds, so that
NumPy's and Arrow's other allocations reuse freed memory too, and the reserve's buffers then
come from glibc's malloc (``pyarrow.system_memory_pool``, passed to each allocation: Arrow's
default pool is never swapped, so the user's other threads see the pool they set). What each
setting costs is measured on the local benchmark page. A user setting of their own (any
``MALLOC_*`` variable) is never overridden. Other C libraries and platforms are left as they
are.

Nothing happens at import: no handler is registered and nothing is measured. A process
started by ``fork`` finds the parent's reserve by its process id on its first allocation and
starts an empty one; how many references a free buffer has is counted on the first
allocation.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import platform
import sys
import threading
import time

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = [
    "NO_NULLS",
    "empty",
    "engine_memory",
    "keep_freed_memory",
    "release_memory",
    "zeros",
]

_kept: bool | None = None  # whether glibc keeps freed memory (None: the environment not read)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory(mib: int = 512) -> bool:
    """Opt in: raise glibc's trim and mmap thresholds to ``mib`` MiB for the rest of the
    process, so that each call of the engine reuses the memory the last one freed, and let the
    engine's reserve allocate its buffers from the same malloc (Arrow's default pool is left
    as it is). Returns whether malloc keeps
    freed memory now (False off Linux/glibc, for ``mib <= 0``, or where a ``MALLOC_*``
    variable of the user's own is set)."""
    global _kept
    _kept = _raise_thresholds(mib)
    return _kept


def _kept_now() -> bool:
    """Whether the engine runs with freed memory kept: asked for by :func:`keep_freed_memory`,
    or by ``WINDOWAGG_KEEP_MIB`` (read once, on the first call)."""
    global _kept
    if _kept is None:
        mib = int(os.environ.get("WINDOWAGG_KEEP_MIB", "0"))
        _kept = mib > 0 and _raise_thresholds(mib)
    return _kept


def _raise_thresholds(mib: int) -> bool:
    if mib <= 0 or any(k.startswith("MALLOC_") for k in os.environ):  # the user's own choice
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = _libc()
    except OSError:
        return False
    size = mib << 20
    return bool(libc.mallopt(M_MMAP_THRESHOLD, size)) and bool(libc.mallopt(M_TRIM_THRESHOLD, size))


def _libc():
    return ctypes.CDLL("libc.so.6")


class engine_memory:
    """One call of the engine (``with engine_memory():``): the reserve's buffers from the pool
    of the user's choice (:func:`keep_freed_memory`: glibc's malloc; else Arrow's default
    pool), let go :data:`RELEASE_AFTER` seconds after the call ends."""

    __slots__ = ()

    def __enter__(self) -> None:
        _reserve.pool = pa.system_memory_pool() if _kept_now() else None

    def __exit__(self, *exc: object) -> None:
        _reserve.later()


#: arrays of at least this many bytes come from the engine's reserve (:func:`empty`)
LARGE = 1 << 20
#: arrays of fewer values than this are small whatever their type (of up to 64 bytes)
SMALL = LARGE // 64
#: the most the reserve holds, in bytes
RESERVE_BYTES = 2 << 30
#: seconds after the engine's last call at which the reserve lets its buffers go
RELEASE_AFTER = 10.0


class Reserve:
    """Large buffers the engine allocated and keeps for its next allocations, up to
    :data:`RESERVE_BYTES`. A buffer is only ever handed out as NumPy arrays over it, so it is
    free again when nothing but the reserve refers to it (every array over it gone); a call
    reuses the pages the last one wrote, without a page fault. :meth:`later` lets the buffers
    go :data:`RELEASE_AFTER` seconds after the last call (those still in use stay with their
    arrays), so an idle process holds nothing."""

    def __init__(self) -> None:
        #: where new buffers come from (None: Arrow's default pool at the time)
        self.pool: pa.MemoryPool | None = None
        self._empty()

    def _empty(self) -> None:
        """Nothing held, in this process."""
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.buffers: list[pa.Buffer] = []
        self.timer: threading.Timer | None = None
        self.deadline = 0.0

    def take(self, nbytes: int) -> pa.Buffer:
        """A free buffer of ``nbytes`` to twice that, or a new one from :attr:`pool` (kept
        while the reserve has room: free buffers make room first). In a child process
        started by ``fork``, the parent's buffers are left to it and the reserve starts empty."""
        if self.pid != os.getpid():
            self._empty()
        free = _free_count()
        with self.lock:
            for b in self.buffers:
                if nbytes <= b.size <= 2 * nbytes and sys.getrefcount(b) <= free:
                    return b
            buffer = pa.allocate_buffer(nbytes, memory_pool=self.pool or pa.default_memory_pool())
            held = sum(b.size for b in self.buffers)
            if held + nbytes > RESERVE_BYTES:
                self.buffers = [b for b in self.buffers if sys.getrefcount(b) > free]
                held = sum(b.size for b in self.buffers)
            if held + nbytes <= RESERVE_BYTES:
                self.buffers.append(buffer)
            return buffer

    def later(self) -> None:
        """Let the buffers go :data:`RELEASE_AFTER` seconds from now, unless a call comes
        first. One timer thread at a time, and none while the reserve holds nothing: a call
        moves the deadline, and the timer waits again until it passes."""
        with self.lock:
            if not self.buffers:
                return
            self.deadline = time.monotonic() + RELEASE_AFTER
            if self.timer is None:
                self._arm(RELEASE_AFTER)

    def _arm(self, seconds: float) -> None:
        self.timer = threading.Timer(seconds, self._expire)
        self.timer.daemon = True
        self.timer.start()

    def _expire(self) -> None:
        with self.lock:
            left = self.deadline - time.monotonic()
            if left > 0:
                self._arm(left)
                return
            self.timer = None
            self.buffers = []

    def release(self) -> None:
        with self.lock:
            self.buffers = []


@functools.cache
def _free_count() -> int:
    """``sys.getrefcount`` of a free buffer in :meth:`Reserve.take`'s loop (the list, the loop
    variable, the call's argument), counted once, on the first allocation."""
    for b in [pa.allocate_buffer(8)]:
        return sys.getrefcount(b)
    raise AssertionError


_reserve = Reserve()


def release_memory() -> None:
    """Let the engine's reserve of buffers go now, not :data:`RELEASE_AFTER` seconds after the
    last call (buffers that arrays still use go with their arrays)."""
    _reserve.release()


def empty(shape: int | tuple[int, ...], dtype: npt.DTypeLike = float) -> np.ndarray:
    """An uninitialised array for the engine's work or output. A large one (:data:`LARGE`
    bytes or more) comes from the engine's :class:`Reserve`, whose buffers come from Arrow's
    default memory pool (arrays that become output columns are Arrow's memory already);
    small ones from NumPy."""

    if isinstance(shape, int):  # small ones at once: the engine asks for many such
        if shape < SMALL:
            return np.empty(shape, dtype)
    elif isinstance(shape, tuple) and math.prod(shape) < SMALL:
        return np.empty(shape, dtype)
    dtype = np.dtype(dtype)
    count = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    if count * dtype.itemsize < LARGE or dtype.hasobject:
        return np.empty(shape, dtype)
    buffer = _reserve.take(count * dtype.itemsize)
    return np.frombuffer(buffer, dtype, count).reshape(shape)


def zeros(shape: int | tuple[int, ...], dtype: npt.DTypeLike = float) -> np.ndarray:
    """:func:`empty`, filled with zeros."""
    out = empty(shape, dtype)
    out.fill(0)
    return out


def read_only(x: np.ndarray) -> np.ndarray:
    """``x`` as the kernels take an input: read-only (a view, no copy, where ``x`` is
    writable). Numba compiles a kernel apart for a read-only array (Arrow's buffers, taken
    without a copy) and a writable one (the engine's own); inputs passed read-only in every
    case compile each kernel once."""
    if not x.flags.writeable:
        return x
    view = x.view()
    view.flags.writeable = False
    return view


#: an empty mask, read-only: no row null (every row valid) to an output or a kernel
NO_NULLS = read_only(np.zeros(0, bool))


def float_input(x: np.ndarray) -> np.ndarray:
    """``x`` as a kernel takes a column of values: contiguous float64, read-only
    (:func:`read_only`), whichever evaluator built it."""
    return read_only(np.ascontiguousarray(x, float))
