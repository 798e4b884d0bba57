"""Freed memory kept for the next call. On glibc, memory freed at the top of the heap beyond
128 KiB goes back to the system, and arrays of more than 128 KiB to 32 MiB are mapped afresh
each time; a call then pays a page fault for every page of its arrays, and in a virtual
machine a fault can cost tens of microseconds (a tenth of a second for a million windows).
:func:`keep_freed_memory` raises both thresholds once, on the first call of the engine: the
process keeps up to ``WINDOWAGG_KEEP_MIB`` (default 512; 0: leave malloc alone) of freed
memory for the next allocations. Other C libraries and platforms are left as they are."""

from __future__ import annotations

import os

__all__ = ["keep_freed_memory"]

_done = False
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory() -> bool:
    """Raise glibc's trim and mmap thresholds (once per process); whether they were set."""
    global _done
    if _done:
        return False
    _done = True
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
