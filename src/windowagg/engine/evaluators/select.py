"""The row a frame selects: the largest or smallest value (``max``, ``min``; the largest or
smallest ``y`` for ``max_by``/``min_by``), ties to the youngest, by one SlickDeque shared by every
frame over the column that ends with the same bound (:mod:`windowagg.kernels.select_frames`),
the result the input value itself, in its type; the frame's first and last row (its first or
last non-null one with ``ignorenulls``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels import select_frames as selection
from ...storage import EXACT
from .. import parallel
from ..columns import Column
from ..entries import Entry
from ..memory import empty
from ..stages import stage
from ..sweep import FrameBounds
from .common import (
    Inputs,
    counted,
    take_rows,
    with_nulls,
)

#: the evaluations this evaluator serves (the row a frame selects)
SERVES = frozenset({Evaluation.LARGEST, Evaluation.SMALLEST, Evaluation.FIRST, Evaluation.LAST})


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    if e.evaluation in (Evaluation.FIRST, Evaluation.LAST):
        lo, hi = fr.bounds()
        first = e.evaluation is Evaluation.FIRST
        if getattr(e.agg, "ignorenulls", False):
            return take_rows(col.array, _first_valid(col, lo, hi, first))
        return take_rows(col.array, np.where(hi == lo, -1, lo if first else hi - 1))
    by = e.column if e.other is None else e.other  # what is compared
    assert by is not None  # count(*) is no selection
    largest = e.evaluation is Evaluation.LARGEST
    by_y = e.other is not None  # max_by and min_by: the rank of y
    if (by, largest, by_y, e.frame) not in inputs.picks:  # every frame ending with this one
        group = [
            x.frame
            for x in inputs.entries
            if _compares(x) == _compares(e) and _ends(x.frame) == _ends(e.frame)
        ]
        group = list(dict.fromkeys(group))
        rows = select_rows(inputs.columns[by], largest, by_y, [inputs.frames[f] for f in group])
        inputs.picks.update({(by, largest, by_y, f): r for f, r in zip(group, rows)})
    pick = inputs.picks[(by, largest, by_y, e.frame)]
    return _select(col, fr, e, pick) if e.other is None else take_rows(col.array, pick)


def _select_keys(col: Column) -> np.ndarray:
    """What min/max compare: the values as doubles where that is exact, else (decimals,
    strings, integers beyond 2^53) their dense rank; NaN where the value is null."""

    if "keys" not in col._cache:
        keys = None
        if col.numeric or pa.types.is_temporal(col.type):
            keys = col.floats()
            exact = (
                pa.types.is_floating(col.type) or np.abs(np.nan_to_num(keys)).max(initial=0) < EXACT
            )
            keys = keys if exact else None
        if keys is None:
            rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense")
            keys = np.where(col.valid, rank.to_numpy().astype(float), np.nan)
        col._cache["keys"] = keys
    return col._cache["keys"]


def _by_keys(col: Column) -> np.ndarray:
    """What ``max_by``/``min_by`` compare of their ``y``: its dense rank (NaN above every
    number, as Spark orders it), NaN where ``y`` is null."""

    if "by" not in col._cache:
        rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense")
        col._cache["by"] = np.where(col.valid, rank.to_numpy().astype(float), np.nan)
    return col._cache["by"]


@stage("selection")
def select_rows(
    col: Column, largest: bool, by_y: bool, frames: list[FrameBounds]
) -> list[np.ndarray]:
    """For frames that end together, every row's selected row (the largest value for max,
    the smallest for min, the largest or smallest ``y`` for max_by and min_by, ties to the
    youngest; -1 if the frame has no value): one shared deque for all of them
    (:func:`windowagg.kernels.select_frames.select_frames`)."""

    keys = _by_keys(col) if by_y else _select_keys(col)
    keys = np.ascontiguousarray(keys if largest else -keys)
    n, k = len(frames[0].bounds()[1]), len(frames)
    if k == 1:  # the frame's own starts, as one row (a view)
        lo = np.ascontiguousarray(frames[0].bounds()[0], np.int64).reshape(1, n)
    else:
        lo = empty((k, n), np.int64)
        for j, fr in enumerate(frames):
            lo[j] = fr.bounds()[0]
    out = empty((k, n), np.int64)
    hi = frames[0].bounds()[1]

    def run(part: np.ndarray) -> None:
        a, b = int(part[0]), int(part[-1])
        if b <= a:
            return
        first = int(lo[:, a].min())  # no frame of these answers starts before it
        selection.select_frames(
            keys,
            lo,
            hi,
            a,
            b,
            first,
            empty(max(int(hi[b - 1]) - first, 1), np.int64),
            empty(k, np.int64),
            out,
        )

    # per-row frames: the keys in parts, one per core (a key longer than a thread's share:
    # chunks, as a window's answers, each starting at its first frame's rows)
    per_row = frames[0].frame is not None and not parallel.outweighs(frames[0].seg)
    pieces = parallel.parts(frames[0].seg) if per_row else parallel.chunks(n)
    parallel.on_cores(run, pieces)
    return list(out)


def _select(col: Column, fr: FrameBounds, entry: Entry, pick: np.ndarray) -> pa.Array:
    """min/max from the selected rows: the input value itself, in its own type."""

    out = take_rows(col.array, pick)
    if pa.types.is_floating(col.type):  # NaN is the largest double: max NaN if the frame holds
        lo, hi = fr.bounds()  # one, min NaN if it holds nothing else
        nan = col.nans(lo, hi)
        if nan is None:
            return out
        count = counted(col, fr)[2]
        patch = nan > 0 if entry.evaluation is Evaluation.LARGEST else (nan > 0) & (nan == count)
        if patch.any():
            v = out.to_numpy(zero_copy_only=False).astype(float)
            v[patch] = np.nan
            out = with_nulls(v, count == 0, entry.type)
    return out


def _first_valid(col: Column, lo: np.ndarray, hi: np.ndarray, first: bool) -> np.ndarray:
    """Every frame's first (or last) row with a value, -1 if none."""
    n = len(col.valid)
    rows = np.arange(n, dtype=np.int64)
    if first:
        nxt = np.r_[np.minimum.accumulate(np.where(col.valid, rows, n)[::-1])[::-1], n]
        at = nxt[lo]
        return np.where(at < hi, at, -1)
    prv = np.r_[-1, np.maximum.accumulate(np.where(col.valid, rows, -1))]
    at = prv[hi]
    return np.where(at >= lo, at, -1)


def _compares(e: Entry) -> tuple:
    """What a selection compares: the column, which way, and whether by ``y``'s rank."""
    return (e.other or e.column, e.evaluation, e.other is not None)


def _ends(frame: Frame | None) -> tuple | None:
    """What frames that end together share (min/max share one deque): a rows or range frame's
    kind and end; None for a window's entries (the windows' bounds, shared by all)."""
    return None if frame is None else (frame.kind, frame.end)
