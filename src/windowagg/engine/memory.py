"""Freed memory kept for the next call: an opt-in, off unless the user asks for it.

On glibc, memory freed at the top of the heap beyond 128 KiB goes back to the system, and
arrays of more than 128 KiB to 32 MiB are mapped afresh each time; a call then pays a page
fault for every page of its arrays, and in a virtual machine a fault can cost tens of
microseconds (a tenth of a second for a million windows). :func:`keep_freed_memory` (or
``WINDOWAGG_KEEP_MIB=512`` in the environment, read on the engine's first call, which is the way
to ask for it on Spark's workers) raises both thresholds for the rest of the process: it keeps
up to that much freed memory for the next allocations. Arrow allocates from its own pool
(mimalloc by default), which hands freed memory back to the system; while glibc keeps freed
memory, :func:`engine_memory` makes Arrow's default pool glibc's
(``pyarrow.system_memory_pool``) for the duration of a call, so Arrow's arrays reuse the same
kept memory, and puts the caller's pool back after (arrays keep the pool they came from).

Both change the whole process, so neither happens by default: a call leaves malloc and Arrow's
default pool as it found them. What the default costs is measured on the local benchmark page.
A user setting of their own (any ``MALLOC_*`` variable) is never overridden. Other C libraries
and platforms are left as they are.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

__all__ = ["engine_memory", "keep_freed_memory"]

_kept: bool | None = None  # whether glibc keeps freed memory (None: the environment not read)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_memory(mib: int = 512) -> bool:
    """Opt in: raise glibc's trim and mmap thresholds to ``mib`` MiB for the rest of the
    process, so that each call of the engine reuses the memory the last one freed, and let the
    engine's calls allocate Arrow's arrays from the same malloc. Returns whether malloc keeps
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


@contextmanager
def engine_memory() -> Iterator[None]:
    """The engine's allocations for the duration of a call: by default as the caller has them;
    where the user opted in (:func:`keep_freed_memory`), Arrow's arrays from glibc's malloc,
    the caller's pool restored on exit."""
    if not _kept_now():
        yield
        return
    pool = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(pool)
