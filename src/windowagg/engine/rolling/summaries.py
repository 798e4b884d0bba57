"""Counts, sums and means of an online state's requests from each part's prefix sums, in
O(parts x log d) per request: no event of the frame is read.

Where every entry of the state is a count, sum or mean (by its record's evaluation) over a
range frame, of a fixed-width column (a float column for a sum or a mean), each part of the
state's index (:class:`~.part_index.PartIndex`) holds, when it is laid, the prefix counts of
each such column's values (where the part has a null) and, for a float column whose values
are whole numbers that cannot overflow, their exact int64 prefix sums
(:func:`~windowagg.kernels.passes.whole_prefix`). A batch of requests then finds each
request's frame in every part as rows of its key's run there (the batch engine's own bounds,
:func:`~windowagg.kernels.bounds.at_bounds`, galloping from the run's start: O(log d)), and
each entry's answer is the difference of two prefixes per part, added over the parts: a
count as it is, a sum exact and then rounded once to a double (what the engine's exactly
rounded sum gives), a mean that sum over the count; null where the frame holds no value, as
SQL has it. This is FiBA's range query (Tangwongsan et al., "Out-of-Order Sliding-Window
Aggregation with Efficient Bulk Evictions and Insertions", section 5) for the invertible
aggregations, where a prefix difference answers a range without a tree. A part whose values
are not such whole numbers (a fraction, NaN, an infinity) has no sums: a batch that would read
them is answered by the evaluation over the events, as every other state is."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.bounds import at_bounds
from ...kernels.passes import whole_prefix
from ..columns import limits
from ..evaluators.common import with_nulls
from ..memory import NO_NULLS, empty, read_only
from ..sweep import offsets
from .plan import RollingPlan

__all__ = ["Summary", "answered", "summarized", "summary"]

#: the evaluations answered from prefix sums
SUMMED = frozenset({Evaluation.COUNT, Evaluation.SUM, Evaluation.MEAN})

#: the sums over every part answered from prefixes stay below this (each part's largest
#: magnitude times its values, summed over the parts): no int64 sum of them overflows
SUM_BOUND = 4.0e18


class Summary(NamedTuple):
    """One part's prefix sums of a column: ``valid[i]``, the values among its first ``i``
    rows (None where the part has no null: ``i``); ``sums[i]``, their exact sum (None where
    the values are not whole numbers that fit, or no entry sums them); ``bound``, the
    largest magnitude times the rows (what any frame's sum stays within)."""

    valid: np.ndarray | None
    sums: np.ndarray | None
    bound: float

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.valid, self.sums) if a is not None)


def summarized(plan: RollingPlan, schema: pa.Schema, fixed: set[str]) -> dict[str, bool] | None:
    """The columns whose parts get prefix sums (each with whether an entry sums it), where
    every entry of ``plan`` is a count, sum or mean over a range frame of a column of
    ``fixed`` (the index's fixed-width columns; a float64 one for a sum or a mean), or a
    count of rows; else None."""
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
        if sums and schema.field(e.column).type != pa.float64():
            return None
        columns[e.column] = columns.get(e.column, False) or sums
    return columns


def summary(values: np.ndarray, valid: np.ndarray | None, sums: bool) -> Summary:
    """A part's :class:`Summary` of a column: its values (float64 words where ``sums``, any
    fixed width else), whether each is valid (None: every one)."""
    n = len(values)
    counts = None  # held with the part: NumPy's memory, not the engine's reserve for a call
    if valid is not None:
        counts = np.empty(n + 1, np.int64)
        counts[0] = 0
        np.cumsum(valid, out=counts[1:])
    if not sums:
        return Summary(counts, None, 0.0)
    x = values if valid is None else np.where(valid, values, 0.0)
    prefix = np.empty(n + 1, np.int64)
    if not whole_prefix(read_only(np.ascontiguousarray(x, np.float64)), prefix):
        return Summary(counts, None, 0.0)
    top = max(-float(x.min()), float(x.max())) if n else 0.0  # two passes, no array made
    return Summary(counts, prefix, top * n)


def answered(
    plan: RollingPlan,
    times: np.ndarray,
    bounds: list[int],
    parts: list[dict[str, Summary]],
    lo: np.ndarray,
    hi: np.ndarray,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[pa.Array] | None:
    """Every entry's column at the requests (key ``place[j]`` among the runs' keys, -1 for
    none; time ``qtimes[j]``, in the times' type, a null time ``limits(times)[0]``): each
    part's frame found among its run of the key (``lo[p, w]`` to ``hi[p, w] - 1`` of the
    laid ``times``; part ``p`` is rows ``bounds[p]`` on), each entry from its prefix sums
    there (``parts[p]``). None where a part lacks the sums an entry needs, or the sums over
    every part could overflow: the evaluation over the events answers then."""
    columns: dict[str, bool] = {}
    for e in plan.entries:
        if e.column is not None:
            columns[e.column] = columns.get(e.column, False) or e.evaluation is not Evaluation.COUNT
    for c, sums in columns.items():
        if sums and (
            any(p[c].sums is None for p in parts) or sum(p[c].bound for p in parts) >= SUM_BOUND
        ):
            return None
    n = len(place)
    order = np.lexsort((qtimes, place))  # by key, then time: as the bounds walk them
    qseg = np.where(place[order] >= 0, 2 * place[order], -1)
    qsorted = np.ascontiguousarray(qtimes[order])
    lims = limits(times)
    segs = []  # each part's runs as segments: run w is segment 2w, the gap after it 2w + 1
    for p in range(len(parts)):
        seg = np.empty(2 * lo.shape[1], np.int64)
        seg[0::2], seg[1::2] = lo[p], hi[p]
        segs.append(seg)
    #: each frame's first and end row of each request's frame in each part (within it)
    found: dict[Frame, list[tuple[np.ndarray, np.ndarray]]] = {}
    for f in plan.frames:
        first, last = offsets(f, times)
        unbounded = f.start is None, f.end is None
        ends = []
        for p, seg in enumerate(segs):
            a, b = empty(n, np.int64), empty(n, np.int64)
            at_bounds(times, seg, qseg, qsorted, False, first, last, lims, *unbounded, a, b)
            rows_a, rows_b = empty(n, np.int64), empty(n, np.int64)
            rows_a[order], rows_b[order] = a - bounds[p], b - bounds[p]
            ends.append((np.maximum(rows_a, 0), np.maximum(rows_b, 0)))
        found[f] = ends
    out = []
    for e in plan.entries:
        assert e.frame is not None  # a rolling frame's entry
        ends = found[e.frame]
        count = np.zeros(n, np.int64)
        total = np.zeros(n, np.int64)
        for p, (a, b) in enumerate(ends):
            s = parts[p].get(e.column) if e.column is not None else None
            valid = None if s is None else s.valid
            count += (b - a) if valid is None else valid[b] - valid[a]
            if e.evaluation is not Evaluation.COUNT:
                assert s is not None and s.sums is not None
                total += s.sums[b] - s.sums[a]
        if e.evaluation is Evaluation.COUNT:
            out.append(with_nulls(count, NO_NULLS, e.type))
            continue
        values = total.astype(np.float64)
        none = count == 0
        if e.evaluation is Evaluation.MEAN:
            values /= np.maximum(count, 1)
        out.append(with_nulls(values, none, e.type))
    return out
