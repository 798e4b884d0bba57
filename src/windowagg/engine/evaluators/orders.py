"""Order statistics by compiled order statistics over the rows' ranks (NaN above every number):
Spark's interpolated ``percentile`` and ``median``, the nearest rank (``percentile_disc`` as a
double, ``percentile_approx`` in the input's type, the library's ``quantile``), and the most
frequent value (Spark's ``mode``, ties to the smallest), O(log u) per row whatever the frame."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...aggregations import Evaluation, Percentile, PercentileDisc, Quantile, facts
from ...kernels.order_stats import ABOVE, BELOW, NEAREST, mode_frames
from ..columns import Column
from ..entries import Entry
from ..memory import empty, zeros
from ..sweep import FrameBounds, order_statistic, quantiles
from .common import (
    Inputs,
    counted,
    dense,
    take_rows,
    through,
    with_nulls,
)

#: the evaluations this evaluator serves (order statistics)
SERVES = frozenset(
    {Evaluation.PERCENTILE, Evaluation.NEAREST_RANK, Evaluation.QUANTILE, Evaluation.MODE}
)


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    if e.evaluation is Evaluation.MODE:
        return _mode(col, fr)
    if e.evaluation is Evaluation.QUANTILE:  # compiled order statistics (a sweep of sorted
        assert isinstance(e.agg, Quantile)  # partials costs O(frame) per row)
        q = quantiles(col.floats(), fr, e.agg.q)
        return with_nulls(q, np.isnan(q), e.type)
    return _percentile(col, fr, e)


def _ranks(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """Every row's rank among the column's values (1-based, distinct, ties in row order, NaN
    above every number; 0 for null) and the rows in that order."""

    if "ranks" not in col._cache:
        order = pc.sort_indices(col.array).to_numpy().astype(np.int64)  # NaN, then nulls last
        ranks = zeros(len(order), np.int64)
        count = int(np.count_nonzero(col.valid))
        ranks[order[:count]] = np.arange(1, count + 1)
        col._cache["ranks"] = (ranks, order)
    return col._cache["ranks"]


def _percentile(col: Column, fr: FrameBounds, e: Entry) -> pa.Array:
    """percentile and median (Spark's interpolation between the values at the floor and the
    ceiling of rank ``(n - 1) * p``, :func:`windowagg.aggregations.interpolate`),
    percentile_disc (the nearest rank, as a double) and percentile_approx (the nearest rank, in
    the column's type), by compiled order statistics over the rows' ranks (NaN above every
    number)."""

    ranks, order = _ranks(col)
    assert isinstance(e.agg, Percentile | PercentileDisc)  # its record says so
    p = e.agg.p
    if not len(order):  # no rows at all (no events for at=): every frame empty
        return pa.nulls(len(fr.bounds()[0]), e.type)
    if e.evaluation is Evaluation.NEAREST_RANK:
        picked = order_statistic(ranks, fr, p, NEAREST)
        out = take_rows(col.array, through(order, picked - 1))
        return out if facts(e.agg).keeps_type else out.cast(pa.float64())
    below = order_statistic(ranks, fr, p, BELOW)
    above = order_statistic(ranks, fr, p, ABOVE)
    values = col.floats()
    low = values[order[np.maximum(below, 1) - 1]]  # an empty frame's: null below
    high = values[order[np.maximum(above, 1) - 1]]
    count = counted(col, fr)[2]
    pos = (np.maximum(count, 1) - 1) * p
    floor = np.floor(pos)
    with np.errstate(invalid="ignore"):  # Spark's rounding: low + fraction * (high - low)
        out = np.where(
            (floor == np.ceil(pos)) | (low == high), low, low + (pos - floor) * (high - low)
        )
    return with_nulls(out, count == 0, e.type)


def _mode(col: Column, fr: FrameBounds) -> pa.Array:
    """The most frequent value of every frame, ties to the smallest (Spark's ``mode(x,
    true)``), compiled (:func:`windowagg.kernels.order_stats.mode_frames`): O(log u) per row."""

    ids, rep = dense(col)
    size = 1 << max(0, int(len(rep) - 1).bit_length())
    lo, hi = fr.bounds()
    out = empty(len(lo), np.int64)
    mode_frames(ids, lo, hi, zeros(2 * size, np.int64), out)
    return take_rows(col.array, through(rep, out))
