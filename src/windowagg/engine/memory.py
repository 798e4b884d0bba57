"""Freed memory kept for the next call. On glibc, memory freed at the top of the heap beyond
128 KiB goes back to the system, and arrays of more than 128 KiB to 32 MiB are mapped afresh
each time; a call then pays a page fault for every page of its arrays, and in a virtual
machine a fault can cost tens of microseconds (a tenth of a second for a million windows).
:func:`keep_freed_memory` raises both thresholds once, on the first call of the engine: the
process keeps up to ``WINDOWAGG_KEEP_MIB`` (default 512; 0: leave malloc alone) of freed
memory for the next allocations. Other C libraries and platforms are left as they are.

NumPy asks the kernel for huge pages for every array of 4 MiB or more (``madvise``); where
the kernel then compacts memory on the fault (transparent huge pages in ``madvise`` mode,
after another process or library freed gigabytes), a fault stalls for far longer than the
work on the page: measured on a 2-core virtual machine, one call over ten million rows took
0.9 s alone and 1.4-2.2 s when another library's calls ran between its calls. Inside
:func:`engine_memory`, NumPy allocates plain pages (the caller's setting is put back after;
a ``NUMPY_MADVISE_HUGEPAGE`` of the user's is left alone).

Arrow allocates from its own pool (mimalloc by default), which hands freed memory back to
the system: a call after the previous call's output was dropped faulted in 840 MB again
(0.52 s for a call that takes 0.25 s when the memory is kept). While glibc keeps freed
memory, :func:`engine_memory` makes Arrow's pool glibc's (``pyarrow.system_memory_pool``) for
the call, so Arrow's arrays reuse the same kept memory; the caller's pool is put back after
(arrays keep the pool they came from)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["engine_memory", "keep_freed_memory"]

_kept: bool | None = None  # whether glibc keeps freed memory (None: not asked yet)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory() -> bool:
    """Raise glibc's trim and mmap thresholds (once per process); whether they are raised."""
    global _kept
    if _kept is None:
        _kept = _raise_thresholds()
    return _kept


def _raise_thresholds() -> bool:
    mib = int(os.environ.get("WINDOWAGG_KEEP_MIB", "512"))
    if mib <= 0 or any(k.startswith("MALLOC_") for k in os.environ):  # the user's own choice
        return False
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = _libc()
    except OSError:
        return False
    size = mib << 20
    return bool(libc.mallopt(M_MMAP_THRESHOLD, size)) and bool(libc.mallopt(M_TRIM_THRESHOLD, size))


def _libc():
    import ctypes

    return ctypes.CDLL("libc.so.6")


@contextmanager
def engine_memory() -> Iterator[None]:
    """The engine's allocations for the duration of a call: freed memory kept
    (:func:`keep_freed_memory`), Arrow's arrays from glibc's malloc while it keeps freed
    memory, NumPy's huge-page advice off; the caller's pool and advice restored on exit."""
    import pyarrow as pa

    pool = pa.default_memory_pool() if keep_freed_memory() else None
    if pool is not None:
        pa.set_memory_pool(pa.system_memory_pool())
    toggle = _hugepage_toggle()
    before = None if toggle is None else toggle(False)
    try:
        yield
    finally:
        if toggle is not None:
            toggle(before)
        if pool is not None:
            pa.set_memory_pool(pool)


def _hugepage_toggle():
    """NumPy's runtime switch for its huge-page advice (sets it, returns the previous value),
    or None where the user set ``NUMPY_MADVISE_HUGEPAGE`` or NumPy has no such switch."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return None
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return None
    return _set_madvise_hugepage
