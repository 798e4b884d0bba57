"""Counts, sums and means of an online state's requests from each part's prefix sums, in
O(parts x log d) per request: no event of the frame is read.

Where every entry of the state is a count, sum or mean (by its record's evaluation) over a
range frame, of a fixed-width column (a float64 or an integer column for a sum or a mean),
each part of the state's index (:class:`~.part_index.PartIndex`) holds, when it is laid, the
prefix counts of each such column's values and, where its values are whole numbers (a float
column's, by :func:`~windowagg.kernels.passes.whole_prefix`; an integer column's) whose sums
cannot overflow, their exact int64 prefix sums, laid one after another as the parts are
(:class:`~.part_index.Prefixes`). A batch of
requests then finds each request's frame in every part as rows of its key's run there (the
batch engine's own bounds, :func:`~windowagg.kernels.bounds.at_bounds`, galloping from the
run's start: O(log d)), and each entry's answer is the difference of two prefixes per part,
added over the parts: a count as it is, a sum exact (a float column's then rounded once to
a double: what the engine's exactly rounded sum gives; an integer column's as it is, where
no sum of the parts can overflow, so Spark's overflow rules never apply), a mean that sum
over the count; null where the frame holds no value, as SQL has it.

This is FiBA's range query, ``query(t_from, t_to)`` (Tangwongsan, Hirzel and Schneider,
"Optimal and General Out-of-Order Sliding-Window Aggregation", section 2, "Query Sharing",
and section 4, window sharing by range queries), for the invertible aggregations, where a
prefix difference answers a range without a tree. A part whose values are not such whole
numbers (a fraction, NaN, an infinity) has no sums: a batch that would read them is
answered by the evaluation over the events, as every other state is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.bounds import at_bounds
from ..columns import limits
from ..evaluators.common import with_nulls
from ..memory import NO_NULLS, empty
from ..sweep import offsets
from .plan import RollingPlan

if TYPE_CHECKING:
    from .part_index import Prefixes

__all__ = ["answered", "summarized"]

#: the evaluations answered from prefix sums
SUMMED = frozenset({Evaluation.COUNT, Evaluation.SUM, Evaluation.MEAN})

#: the sums over every part answered from prefixes stay below this (each part's largest
#: magnitude times its values, summed over the parts): no int64 sum of them overflows
SUM_BOUND = 4.0e18


def summarized(plan: RollingPlan, schema: pa.Schema, fixed: set[str]) -> dict[str, bool] | None:
    """The columns whose parts get prefix sums (each with whether an entry sums it), where
    every entry of ``plan`` is a count, sum or mean over a range frame of a column of
    ``fixed`` (the index's fixed-width columns; a float64 or an integer one for a sum or a
    mean, :func:`_summable`), or a count of rows; else None."""
    columns: dict[str, bool] = {}
    for e in plan.entries:
        if e.frame is None or e.frame.kind != "range" or e.evaluation not in SUMMED:
            return None
        if e.other is not None or e.counts is not None or e.states:
            return None
        if e.column is None:  # count(*): the frame's rows
            if e.evaluation is not Evaluation.COUNT:
                return None
            continue
        if e.column not in fixed:
            return None
        sums = e.evaluation is not Evaluation.COUNT
        if sums and not _summable(schema.field(e.column).type):
            return None
        columns[e.column] = columns.get(e.column, False) or sums
    return columns


def _summable(type_: pa.DataType) -> bool:
    """Whether a sum or a mean of a column of ``type_`` comes from its parts' prefix sums: a
    double's (of whole numbers) or an integer's (an unsigned 64-bit one may not fit int64)."""
    return type_ == pa.float64() or (pa.types.is_integer(type_) and type_ != pa.uint64())


def answered(
    plan: RollingPlan,
    times: np.ndarray,
    bounds: list[int],
    prefixes: dict[str, Prefixes],
    lo: np.ndarray,
    hi: np.ndarray,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[pa.Array] | None:
    """Every entry's column at the requests (key ``place[j]`` among the runs' keys, -1 for
    none; time ``qtimes[j]``, in the times' type, a null time ``limits(times)[0]``): each
    part's frame found among its run of the key (``lo[p, w]`` to ``hi[p, w] - 1`` of the
    laid ``times``; part ``p`` is rows ``bounds[p]`` on), in one pass of the bounds over
    every part's runs, and each entry from the columns' ``prefixes`` there. None where a part
    lacks the sums an entry needs, or the sums over every part could overflow: the
    evaluation over the events answers then."""
    for e in plan.entries:
        pre = prefixes.get(e.column) if e.column is not None else None
        if e.evaluation is Evaluation.COUNT or pre is None:
            continue
        if not all(pre.whole) or sum(pre.bound) >= SUM_BOUND:
            return None
    parts, w = lo.shape
    n = len(place)
    order = np.lexsort((qtimes, place))  # by key, then time: as the bounds walk them
    at = place[order]
    # each part's runs as segments, part after part: its run w is segment 2 (p w + w), the
    # gap after it the next; every request once per part, in that order
    seg = np.empty(2 * parts * w, np.int64)
    seg[0::2], seg[1::2] = lo.ravel(), hi.ravel()
    part = np.arange(parts)[:, None]
    qseg = np.where(at >= 0, 2 * (part * w + at), -1).ravel()
    qsorted = np.tile(qtimes[order], parts)
    lims = limits(times)
    # each frame's first and end row of every request's frame in each part, as places in
    # the laid prefixes (row r of part p at r + p; an empty frame's places are equal)
    found: dict[Frame, tuple[np.ndarray, np.ndarray]] = {}
    for f in plan.frames:
        first, last = offsets(f, times)
        unbounded = f.start is None, f.end is None
        a, b = empty(parts * n, np.int64), empty(parts * n, np.int64)
        at_bounds(times, seg, qseg, qsorted, False, first, last, lims, *unbounded, a, b)
        found[f] = a.reshape(parts, n) + part, b.reshape(parts, n) + part
    out = []
    for e in plan.entries:
        assert e.frame is not None  # a rolling frame's entry
        a, b = found[e.frame]
        pre = prefixes.get(e.column) if e.column is not None else None
        if pre is None:  # count(*): the frames' rows
            count = (b - a).sum(axis=0)
        else:
            counts = pre.counts.view()
            count = (counts[b] - counts[a]).sum(axis=0)
        if e.evaluation is Evaluation.COUNT:
            out.append(with_nulls(_in_order(count, order), NO_NULLS, e.type))
            continue
        assert pre is not None and pre.sums is not None
        sums = pre.sums.view()
        total = (sums[b] - sums[a]).sum(axis=0)
        none = count == 0
        if pa.types.is_integer(e.type):  # an integer column's sum: exact, as it is
            out.append(with_nulls(_in_order(total, order), _in_order(none, order), e.type))
            continue
        values = total.astype(np.float64)  # rounded once; an integer mean's as the engine's
        if e.evaluation is Evaluation.MEAN:
            values /= np.maximum(count, 1)
        out.append(with_nulls(_in_order(values, order), _in_order(none, order), e.type))
    return out


def _in_order(x: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Answers in the requests' order, ``x`` in ``order``'s."""
    out = np.empty_like(x)
    out[order] = x
    return out
