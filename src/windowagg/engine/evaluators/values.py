"""A frame's values themselves: Spark's ``collect_list`` (the non-null values in order, NaN a
value) and the library's ``collect`` (nulls and NaN left out), sliced out of the column in one
take; Spark's ``collect_set`` (the distinct values, ascending); the exact number of distinct
values (a count per value)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ..columns import Column
from ..entries import Entry
from ..memory import NO_NULLS
from ..sweep import FrameBounds, distinct
from .common import (
    Inputs,
    dense,
    with_nulls,
)

#: the evaluations this evaluator serves (the frame's values)
SERVES = frozenset({Evaluation.LIST, Evaluation.VALUES, Evaluation.SET, Evaluation.DISTINCT})


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    if e.evaluation is Evaluation.LIST:
        return _collected(col, fr, e, keep=col.valid)
    if e.evaluation is Evaluation.VALUES:
        return _collected(col, fr, e)
    if e.evaluation is Evaluation.SET:
        return _set(col, fr, e)
    return with_nulls(distinct(col, fr), NO_NULLS, e.type)  # a count: never null


def _collected(
    col: Column, fr: FrameBounds, entry: Entry, keep: np.ndarray | None = None
) -> pa.Array:
    """Every frame's values in order (``keep``: the rows that count; by default the non-missing
    ones, nulls and NaN left out, as the library's aggregations leave them): one take from the
    column, no Python object per value."""

    if keep is None:
        keep = col.valid & ~np.isnan(col.floats())
    at = np.r_[0, np.cumsum(keep)]
    lo, hi = fr.bounds()
    values = col.array.filter(pa.array(keep))
    if values.type != entry.type.value_type:
        values = values.cast(entry.type.value_type)
    sizes = at[hi] - at[lo]
    ends = np.cumsum(sizes)
    idx = (
        np.arange(int(ends[-1]) if len(ends) else 0)
        - np.repeat(ends - sizes, sizes)
        + np.repeat(at[lo], sizes)
    )
    return pa.ListArray.from_arrays(
        pa.array(np.r_[0, ends], pa.int32()), values.take(pa.array(idx))
    ).cast(entry.type)


def _set(col: Column, fr: FrameBounds, e: Entry) -> pa.Array:
    """Every frame's distinct values, ascending (Spark's ``collect_set``). A row's value is new
    to exactly the frames that hold the row but not the value's previous row, a run of frames
    (both bounds never decrease): one (frame, value) pair per answer, in numpy."""

    ids, rep = dense(col)
    lo, hi = fr.bounds()
    rows = np.flatnonzero(ids >= 0)
    vid = ids[rows]
    prev = np.full(len(rows), -1, np.int64)  # the value's previous row
    by = np.lexsort((rows, vid))
    same = np.zeros(len(rows), bool)
    same[1:] = vid[by][1:] == vid[by][:-1]
    prev[by[same]] = rows[by][np.flatnonzero(same) - 1]
    start = np.maximum(np.searchsorted(hi, rows, "right"), np.searchsorted(lo, prev, "right"))
    end = np.searchsorted(lo, rows, "right")
    sizes = np.maximum(end - start, 0)
    frame = np.repeat(start - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    value = np.repeat(vid, sizes)
    order = np.lexsort((value, frame))
    offsets = np.r_[0, np.cumsum(np.bincount(frame, minlength=len(lo)))].astype(np.int32)
    values = col.array.take(pa.array(rep[value[order]]))
    return pa.ListArray.from_arrays(pa.array(offsets), values).cast(e.type)
