"""Counts, sums, means, maxima, minima, first and last values and distinct counts of an
online state's requests from each part's prefix sums, tables of its best rows, frame's ends
and rows grouped by value, in O(parts x log d) per request over range frames (O(parts^2 x
log^2 n) over rows frames of n rows): no event of the frame is read.

For the entries of the state that are counts, sums, means, maxima, minima, first or last
values (by their record's evaluation) over a range or a rows frame, of a fixed-width column
(a float64 or an integer column but for a count; :func:`served`; the state's other entries
are evaluated over the events), each part of the state's index
(:class:`~.part_index.PartIndex`) holds, when it is laid, the prefix counts of each counted
or summed column's values and, where its values are whole numbers (a float column's, by
:func:`~windowagg.kernels.passes.whole_prefix`; an integer column's) whose sums cannot
overflow, their exact int64 prefix sums, laid one after another as the parts are
(:class:`~.part_index.Prefixes`). A batch of requests then finds each request's frame in
every part as rows of its key's run there (the batch engine's own bounds,
:func:`~windowagg.kernels.bounds.at_bounds`, galloping from the run's start: O(log d); a
rows frame's ends in each part from where the rows at or before the request's time end
there, by pivots, :mod:`windowagg.kernels.row_cuts`), and each entry's answer is the
difference of two prefixes per part, added over the parts: a count as it is, a sum exact (a
float column's then rounded once to a double: what the engine's exactly rounded sum gives;
an integer column's as it is, where no sum of the parts can overflow, so Spark's overflow
rules never apply), a mean that sum over the count; null where the frame holds no value, as
SQL has it. A ``max`` or ``min`` (of a float64 or an integer column) comes from each part's
sparse table over blocks of its rows (:class:`~.part_index.Extremes`,
:mod:`windowagg.kernels.extremes`): the best row of each part's frame in O(1), the youngest
on ties, as the evaluation selects it. A ``first`` or ``last`` (without ``ignorenulls``) is
the value of the frame's first or last row in the merged order, among each part's: O(parts).
A distinct count (of an integer or a float column) comes from each part's rows grouped by
key and value (:class:`~.part_index.Groups`, :mod:`windowagg.kernels.distinct_groups`): the
key's groups walked in value order across the parts, a value counted where a group of it
holds a row of its part's frame, O(σ parts log n) for a key of σ distinct values; where the
requests' keys hold too few events per group for that to cost less than reading them
(:data:`GROUP_COST`), the batch is answered by the evaluation over the events.

This is FiBA's range query, ``query(t_from, t_to)`` (Tangwongsan, Hirzel and Schneider,
"Optimal and General Out-of-Order Sliding-Window Aggregation", section 2, "Query Sharing",
and section 4, window sharing by range queries): for the invertible aggregations a prefix
difference answers a range without a tree; for max and min, a sparse table's two blocks of
partial aggregates and the range's partial blocks. A part whose values are not such whole
numbers (a fraction, NaN, an infinity) has no sums, and one whose values hold a NaN no table
of its best rows: a batch that would read them is answered by the evaluation over the events,
as every other state is."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.bounds import at_bounds
from ...kernels.distinct_groups import distinct_at, key_groups
from ...kernels.extremes import extremes_at
from ...kernels.row_cuts import row_cuts
from ..columns import limits
from ..entries import Entry
from ..evaluators.common import with_nulls
from ..memory import NO_NULLS, empty
from ..sweep import offsets
from .part_index import flags
from .plan import RollingPlan

if TYPE_CHECKING:
    from .part_index import Groups, PartIndex

__all__ = ["answered", "extremes_of", "grouped_of", "served", "summarized"]

#: the evaluations answered from prefix sums
SUMMED = frozenset({Evaluation.COUNT, Evaluation.SUM, Evaluation.MEAN})
#: the evaluations answered from each part's tables of its best rows (``max``, ``min``)
EXTREMES = frozenset({Evaluation.LARGEST, Evaluation.SMALLEST})
#: the evaluations answered from the ends of each part's frame (``first``, ``last``)
ENDS = frozenset({Evaluation.FIRST, Evaluation.LAST})
#: the evaluation answered from each part's rows grouped by key and value (distinct counts)
GROUPED = frozenset({Evaluation.DISTINCT})

#: a batch's distinct counts come from the groups (:func:`_distinct`) where its requests'
#: keys hold fewer groups in all, times this, than the events of its keys: a group costs a
#: binary search and a step of the merge, an event a read and a count
GROUP_COST = 4

#: the sums over every part answered from prefixes stay below this (each part's largest
#: magnitude times its values, summed over the parts): no int64 sum of them overflows
SUM_BOUND = 4.0e18


def served(plan: RollingPlan, schema: pa.Schema, fixed: set[str]) -> RollingPlan | None:
    """The entries of ``plan`` answered from the parts' prefix sums and tables, as a plan of
    them alone (None where there is none): each a count, sum, mean, max or min over a range
    or rows frame of a column of ``fixed`` (the index's fixed-width columns; a float64 or an
    integer one but for a count, :func:`_summable`), a count of rows, or a first or last
    value (without ``ignorenulls``) of an integer or float column. The others are evaluated
    over the events."""
    entries = tuple(e for e in plan.entries if _served(e, schema, fixed))
    return replace(plan, entries=entries) if entries else None


def _served(e: Entry, schema: pa.Schema, fixed: set[str]) -> bool:
    """Whether entry ``e`` is answered from the parts (:func:`served`)."""
    if e.frame is None or e.evaluation not in SUMMED | EXTREMES | ENDS | GROUPED:
        return False
    if e.other is not None or e.counts is not None or e.states:
        return False
    if e.column is None:  # count(*): the frame's rows
        return e.evaluation is Evaluation.COUNT
    if e.column not in fixed:
        return False
    type_ = schema.field(e.column).type
    plain = pa.types.is_integer(type_) or pa.types.is_floating(type_)
    if e.evaluation in ENDS:  # the row itself, null or not: a number's value as it is
        return plain and e.type == type_ and not getattr(e.agg, "ignorenulls", False)
    if e.evaluation in GROUPED:  # numbers compared as they are (-0.0 is 0.0, NaN none)
        return plain
    return e.evaluation is Evaluation.COUNT or _summable(type_)


def summarized(plan: RollingPlan) -> dict[str, bool]:
    """The columns whose parts get prefix sums for ``plan``'s entries (those :func:`served`
    answers), each with whether an entry sums it (else it is only counted). A max or min
    adds no column: its parts keep tables of their best rows (:func:`extremes_of`)."""
    columns: dict[str, bool] = {}
    for e in plan.entries:
        if e.column is not None and e.evaluation not in EXTREMES | ENDS | GROUPED:
            sums = e.evaluation is not Evaluation.COUNT
            columns[e.column] = columns.get(e.column, False) or sums
    return columns


def extremes_of(plan: RollingPlan) -> frozenset[tuple[str, bool]]:
    """The (column, largest) pairs of ``plan``'s ``max`` and ``min`` entries."""
    return frozenset(
        (e.column, e.evaluation is Evaluation.LARGEST)
        for e in plan.entries
        if e.evaluation in EXTREMES and e.column is not None
    )


def grouped_of(plan: RollingPlan) -> frozenset[str]:
    """The columns of ``plan``'s distinct counts."""
    return frozenset(
        e.column for e in plan.entries if e.evaluation in GROUPED and e.column is not None
    )


def _summable(type_: pa.DataType) -> bool:
    """Whether a sum or a mean of a column of ``type_`` comes from its parts' prefix sums: a
    double's (of whole numbers) or an integer's (an unsigned 64-bit one may not fit int64)."""
    return type_ == pa.float64() or (pa.types.is_integer(type_) and type_ != pa.uint64())


def answered(
    plan: RollingPlan,
    index: PartIndex,
    lo: np.ndarray,
    hi: np.ndarray,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[pa.Array] | None:
    """Every entry's column at the requests (key ``place[j]`` among the runs' keys, -1 for
    none; time ``qtimes[j]``, in the laid times' type, a null time ``limits(times)[0]``):
    each part's frame found among its run of the key (``lo[p, w]`` to ``hi[p, w] - 1`` of
    the ``index``'s laid times; part ``p`` is rows ``index.bounds[p]`` on), in one pass of
    the bounds over every part's runs, and each entry from the columns' prefixes there, or
    from their tables of their best rows, or the frame's first or last row. None where a
    part lacks the sums or the table an
    entry needs, or the sums over every part could overflow: the evaluation over the events
    answers then."""
    times, prefixes = index.times.view(), index.prefixes
    for e in plan.entries:
        if e.evaluation in EXTREMES:
            assert e.column is not None  # a max or min of a column
            if not all(index.extremes[(e.column, e.evaluation is Evaluation.LARGEST)].clean):
                return None
            continue
        if e.evaluation in ENDS | GROUPED:  # rows, or the groups: nothing to check here
            continue
        pre = prefixes.get(e.column) if e.column is not None else None
        if e.evaluation is Evaluation.COUNT or pre is None:
            continue
        if not all(pre.whole) or sum(pre.bound) >= SUM_BOUND:
            return None
    parts, w = lo.shape
    groups = {c: _key_groups(index.grouped[c], lo, hi) for c in grouped_of(plan)}
    if groups:  # the groups each request walks, against the events its keys hold
        asked = np.bincount(place[place >= 0], minlength=w)
        events = int((hi - lo).sum())
        walked = [int((gv - gu).sum(axis=0) @ asked) for gu, gv in groups.values()]
        if GROUP_COST * max(walked) > events:
            return None  # the keys' values repeat too little: reading the events costs less
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
    rows: dict[Frame, tuple[np.ndarray, np.ndarray]] = {}  # the frames as laid rows
    for f in plan.frames:
        unbounded = f.start is None, f.end is None
        a, b = empty(parts * n, np.int64), empty(parts * n, np.int64)
        if f.kind == "rows":  # each part's rows at or before the time, then the frame's cuts
            at_bounds(
                times, seg, qseg, qsorted, False, *offsets(UP_TO, times), lims, True, False, a, b
            )
            a, b = _rows_frame(times, lo, hi, at, b.reshape(parts, n), f, qsorted[:n] == lims[0])
        else:
            first, last = offsets(f, times)
            at_bounds(times, seg, qseg, qsorted, False, first, last, lims, *unbounded, a, b)
        rows[f] = a.reshape(parts, n), b.reshape(parts, n)
        found[f] = rows[f][0] + part, rows[f][1] + part
    out = []
    for e in plan.entries:
        assert e.frame is not None  # a rolling frame's entry
        if e.evaluation in GROUPED:
            assert e.column is not None  # a distinct count of a column
            count = _distinct(index, e.column, groups[e.column], at, *rows[e.frame])
            out.append(with_nulls(_in_order(count, order), NO_NULLS, e.type))
            continue
        if e.evaluation in EXTREMES | ENDS:  # a row's value: the best, or the first or last
            picked = (_extreme if e.evaluation in EXTREMES else _end)(index, e, *rows[e.frame])
            out.append(_value(index, e, picked, order))
            continue
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


#: the range frame of a request's events at or before its time, where its rows frame ends
UP_TO = Frame("range", None, 0, "range:unbounded,0")


def _rows_frame(
    times: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    at: np.ndarray,
    up: np.ndarray,
    f: Frame,
    untimed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each request's rows frame ``f`` in each part (rows ``a[p, j]`` to ``b[p, j] - 1``) from
    where its rows at or before its time end there (``up``), by
    :func:`~windowagg.kernels.row_cuts.row_cuts` (the requests in key and time order, key
    ``at[j]`` among the runs ``lo`` to ``hi``); empty where the request has no time
    (``untimed``), as the evaluation has it."""
    parts, n = up.shape
    a, b = empty((parts, n), np.int64), empty((parts, n), np.int64)
    start, end = int(f.start or 0), int(f.end or 0)
    work = empty(parts, np.int64), empty(parts, np.int64)
    row_cuts(times, lo, hi, at, up, start, end, f.start is None, f.end is None, a, b, *work)
    b[:, untimed] = a[:, untimed]
    return a, b


def _extreme(index: PartIndex, e: Entry, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The row of a max or min (entry ``e``) over each request's frames (rows ``a[p, j]`` to
    ``b[p, j] - 1`` of each part ``p``): the best, found from the parts' tables; -1 where no
    frame holds a value."""
    assert e.column is not None  # a max or min of a column
    largest = e.evaluation is Evaluation.LARGEST
    tables = index.extremes[(e.column, largest)]
    values, valid = index.values(e.column)
    best = empty(a.shape[1], np.int64)
    args = (tables.laid.view(), np.array(tables.offs, np.int64), np.array(index.bounds, np.int64))
    extremes_at(values, *flags(valid), index.times.view(), largest, *args, a, b, best)
    return best


def _end(index: PartIndex, e: Entry, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The row of a ``first`` or ``last`` (entry ``e``) over each request's frames (rows
    ``a[p, j]`` to ``b[p, j] - 1`` of each part ``p``): the frame's first row in the merged
    order (the earliest time, the earlier part on a tie: its first row there) or its last
    (the latest time, the later part on a tie); -1 where no frame holds a row. O(parts) a
    request."""
    times = index.times.view()
    first = e.evaluation is Evaluation.FIRST
    held = b > a
    row = a if first else b - 1
    at = times[np.where(held, row, 0)] if len(times) else np.zeros(a.shape, times.dtype)
    whole = np.iinfo(np.int64)  # the bounds beyond every time of the laid times' type
    most, least = (whole.max, whole.min) if times.dtype == np.int64 else (np.inf, -np.inf)
    if first:  # the earliest; argmin keeps the earlier part on a tie
        p = np.argmin(np.where(held, at, most), axis=0)
    else:  # the latest; the later part on a tie: argmax over the parts from the last
        p = a.shape[0] - 1 - np.argmax(np.where(held, at, least)[::-1], axis=0)
    j = np.arange(a.shape[1])
    return np.where(held[p, j], row[p, j], -1)


def _key_groups(grouped: Groups, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each asked key's groups in each part (its runs ``lo`` to ``hi``): groups
    ``gu[p, w]`` to ``gv[p, w] - 1`` (:func:`~windowagg.kernels.distinct_groups.key_groups`)."""
    gu, gv = empty(lo.shape, np.int64), empty(lo.shape, np.int64)
    goff = np.array(grouped.goff, np.int64)
    key_groups(grouped.rows.view(), grouped.groups.view(), goff, lo, hi, gu, gv)
    return gu, gv


def _distinct(
    index: PartIndex,
    column: str,
    groups: tuple[np.ndarray, np.ndarray],
    at: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """The number of distinct values of ``column`` over each request's frames (rows
    ``a[p, j]`` to ``b[p, j] - 1`` of each part ``p``), from the groups of its key
    (``at[j]``, -1: none; ``groups``: :func:`_key_groups`), by
    :func:`~windowagg.kernels.distinct_groups.distinct_at`."""
    grouped = index.grouped[column]
    values = index.values(column)[0]
    out = empty(a.shape[1], np.int64)
    work = empty(a.shape[0], np.int64), empty(a.shape[0], np.int64)
    laid = grouped.rows.view(), grouped.groups.view()
    distinct_at(values, *laid, *groups, at, a, b, out, *work)
    return out


def _value(index: PartIndex, e: Entry, rows: np.ndarray, order: np.ndarray) -> pa.Array:
    """Entry ``e``'s column: the value of its column at each request's row (``rows``, the
    requests in ``order``'s order), in the entry's type; null where the row is -1 or holds
    no value."""
    assert e.column is not None  # a row's value of a column
    values, valid = index.values(e.column)
    none = rows < 0
    picked = np.where(none, 0, rows)
    taken = values[picked] if len(values) else np.zeros(len(picked), values.dtype)
    if valid is not None and len(valid):
        none |= ~valid[picked].astype(bool)
    return with_nulls(_in_order(taken, order), _in_order(none, order), e.type)


def _in_order(x: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Answers in the requests' order, ``x`` in ``order``'s."""
    out = np.empty_like(x)
    out[order] = x
    return out
