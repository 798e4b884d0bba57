"""Per-row frames over key segments (SQL window frames; :mod:`windowagg.frames`), in O(1)
per row whatever the frame.

Rows sorted by key, then time (then order) form one segment per key. Within a segment both
ends of a row's frame only move forward, so the frame is a FIFO window (DABA paper, Section
2.1): each row enters and leaves it once. The compiled path runs a FIFO algorithm's kernel
over all segments in one call (:func:`windowagg.kernels.driver.fifo_frames`); aggregations
without a kernel run the same two pointers over the Python reference.

Complexity: O(n) combines for n rows with Two-Stacks Lite (amortized) or DABA Lite (worst
case), whatever the frame's length; memory O(longest frame).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..aggregations import facts, resolve
from ..compiled import kernel_of
from ..compiled.fifo_state import FifoState, capacity_for
from ..frames import Frame

__all__ = ["rolling"]

#: the FIFO algorithm per-row frames run on (amortized O(1), exact: no subtract-on-evict)
ALGORITHM = "two_stacks_lite"


def _offsets(frame: Frame) -> tuple[bool, float, float, bool, bool]:
    ranged = frame.kind == "range"
    lo = 0.0 if frame.start is None else float(frame.start)
    hi = 0.0 if frame.end is None else float(frame.end)
    return ranged, lo, hi, frame.start is None, frame.end is None


def rolling(values: np.ndarray, times: np.ndarray, seg: np.ndarray, frame: Frame, agg: Any,
            args: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The aggregate of every row's frame.

    Parameters
    ----------
    values : float64 array
        One value per row, rows sorted by key, then time; NaN is a missing value.
    times : float64 array
        The rows' times (sorted within each key); used by range frames.
    seg : int64 array
        Key segments: the rows of key k are ``seg[k]`` to ``seg[k + 1] - 1``.
    frame : Frame
        The frame (:func:`windowagg.frames.frame`).
    agg : aggregation
        Compiled when it has a kernel, else the Python reference.
    args : float64 array, optional
        The args of argmin/argmax (default: the times).

    Returns
    -------
    numpy.ndarray
        One float64 per row (NaN where the aggregation has no value), or an object array of
        the lowered results for aggregations that do not lower to one number.
    """
    agg = resolve(agg)
    args = times if args is None else args
    if kernel_of(agg) is None:
        return _reference(values, args, times, seg, frame, agg)
    family, code = kernel_of(agg)
    agg.check_values(values)
    ranged, lo, hi, lo_unb, hi_unb = _offsets(frame)
    state = FifoState(ALGORITHM, family, capacity_for(1024))
    out = np.empty((len(values), 1))
    pos = np.zeros(4, np.int64)
    while True:
        state.frames(code, values, args, times, seg, ranged, lo, hi, lo_unb, hi_unb, pos, out)
        if pos[0] >= len(seg) - 1:
            return out[:, 0]
        state.ensure(2 * state.cap)  # the frame outgrew the state: keep it, and go on


def bounds(times: np.ndarray, seg: np.ndarray, frame: Frame) -> tuple[np.ndarray, np.ndarray]:
    """Every row's frame as rows ``[lo, hi)`` of the sorted table (binary search per key)."""
    n = len(times)
    lo, hi = np.empty(n, np.int64), np.empty(n, np.int64)
    for k in range(len(seg) - 1):
        s, e = int(seg[k]), int(seg[k + 1])
        i = np.arange(s, e)
        t = times[s:e]
        if frame.start is None:
            lo[s:e] = s
        elif frame.kind == "range":
            lo[s:e] = s + np.searchsorted(t, t + frame.start, "left")
        else:
            lo[s:e] = np.clip(i + int(frame.start), s, e)
        if frame.end is None:
            hi[s:e] = e
        elif frame.kind == "range":
            hi[s:e] = s + np.searchsorted(t, t + frame.end, "right")
        else:
            hi[s:e] = np.clip(i + int(frame.end) + 1, s, e)
    return lo, np.maximum(lo, hi)


def _reference(values, args, times, seg, frame, agg) -> np.ndarray:
    """The Python reference over the same frames: a FIFO window per key, the frame's rows
    entering at its end and leaving at its start (aggregations without a kernel)."""
    from ..fifo import fifo

    pairs = facts(agg).pairs
    scalar = facts(agg).scalar
    out = np.empty(len(values), float if scalar else object)
    los, his = bounds(times, seg, frame)
    for k in range(len(seg) - 1):
        w = fifo(ALGORITHM, agg, backend="python")
        lo = hi = int(seg[k])
        for i in range(int(seg[k]), int(seg[k + 1])):
            while lo < hi and lo < los[i]:
                w.evict()
                lo += 1
            if lo == hi:  # empty: rows before the frame never enter it
                lo = hi = max(lo, int(los[i]))
            while hi < his[i]:
                w.insert((args[hi], values[hi]) if pairs else values[hi])
                hi += 1
            r = w.query()
            out[i] = (np.nan if r is None else r) if scalar else r
    return out
