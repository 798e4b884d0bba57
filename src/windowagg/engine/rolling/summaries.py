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
there, by pivots, :mod:`windowagg.kernels.row_cuts`; every frame in one compiled call,
:func:`~windowagg.kernels.part_answers.frames_at`), and each entry's answer is the
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
holds a row of its part's frame, O(σ parts log n) for a key of σ distinct values (the key's
groups in each part found at once, from where each of the part's keys has its groups begin);
where the requests' keys hold too few events per group for that to cost less than reading
them (:data:`GROUP_COST`), the batch is answered by the evaluation over the events.

This is FiBA's range query, ``query(t_from, t_to)`` (Tangwongsan, Hirzel and Schneider,
"Optimal and General Out-of-Order Sliding-Window Aggregation", section 2, "Query Sharing",
and section 4, window sharing by range queries): for the invertible aggregations a prefix
difference answers a range without a tree; for max and min, a sparse table's two blocks of
partial aggregates and the range's partial blocks. A part whose values are not such whole
numbers (a fraction, NaN, an infinity) has no sums, and one whose values hold a NaN no table
of its best rows: a batch that would read them is answered by the evaluation over the
events, as every other state is."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.distinct_groups import distinct_at, key_groups
from ...kernels.extremes import extremes_at
from ...kernels.part_answers import frames_at, prefix_totals, values_at
from ..columns import limits
from ..entries import Entry
from ..evaluators.common import with_nulls
from ..keys import in_key_order
from ..memory import NO_NULLS, empty, read_only
from ..sweep import offsets
from .part_index import flags
from .plan import RollingPlan

if TYPE_CHECKING:
    from .part_index import Groups, PartIndex, Runs

__all__ = ["answered", "extremes_of", "grouped_of", "served", "summarized", "walk_pays"]

#: the evaluations answered from prefix sums
SUMMED = frozenset({Evaluation.COUNT, Evaluation.SUM, Evaluation.MEAN})
#: the evaluations answered from each part's tables of its best rows (``max``, ``min``)
EXTREMES = frozenset({Evaluation.LARGEST, Evaluation.SMALLEST})
#: the evaluations answered from the ends of each part's frame (``first``, ``last``)
ENDS = frozenset({Evaluation.FIRST, Evaluation.LAST})
#: the evaluation answered from each part's rows grouped by key and value (distinct counts)
GROUPED = frozenset({Evaluation.DISTINCT})

#: what reading a batch's events costs whatever its size (the evaluation's set-up), in
#: events' worth: the parts' answers have none of it
EVALUATION_SETUP = 1 << 14

#: a batch's distinct counts come from the groups (:func:`_distinct`) where walking its
#: requests' keys' groups (a group: this many events' worth, a binary search and a step of
#: the merge) and answering its requests from the parts (each: :data:`GROUP_REQUEST` events'
#: worth) costs less than reading the events of its keys and the evaluation's set-up
#: (:data:`EVALUATION_SETUP`). Measured on one thread on the online suite's state
#: (10M events, its five entries from the parts), batches of 10,000 requests: Zipf keys
#: (758 events and 239 groups a request) 38 ms from the parts against 75 ms reading the
#: events; uniform keys (95 events and 79 groups a request) 38-42 ms against 11-14 ms; Zipf
#: keys whose values rarely repeat (a group an event) over 15 s against 0.48 s
GROUP_COST, GROUP_REQUEST = 1.25, 256


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
    runs: Runs,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[pa.Array] | None:
    """Every entry's column at the requests (key ``place[j]`` among the ``runs``' keys, -1
    for none; time ``qtimes[j]``, in the laid times' type, a null time
    ``limits(times)[0]``): each part's frame found among its run of the key (``lo[p, w]`` to
    ``hi[p, w] - 1`` of the ``index``'s laid times; part ``p`` is rows ``index.bounds[p]``
    on), in one pass of the bounds over every part's runs, and each entry from the columns'
    prefixes there, or from their tables of their best rows, or the frame's first or last
    row, or its key's groups (where they pay: :func:`walk_pays`, weighed by the caller).
    None where a part lacks the sums or the table an entry needs, or the sums over every
    part could overflow: the evaluation over the events answers then."""
    times, prefixes = index.times.view(), index.prefixes
    lo, hi = runs.lo, runs.hi
    if not index.sound:
        return None
    parts, w = lo.shape
    n = len(place)
    # by key, then time, as the bounds walk them (one request, or requests asked in turn,
    # already are)
    order = None if in_key_order(place, qtimes) else np.lexsort((qtimes, place))
    at = place if order is None else place[order]
    qsorted = qtimes if order is None else qtimes[order]
    # each frame's first and end row of every request's frame in each part (an empty
    # frame's are equal), in one call
    frames = tuple(plan.frames)
    a, b = empty((len(frames), parts * n), np.int64), empty((len(frames), parts * n), np.int64)
    work = empty(parts * n, np.int64), empty(parts, np.int64), empty(parts, np.int64)
    laid = empty(2 * parts * w, np.int64), empty(parts * n, np.int64), empty(parts * n, times.dtype)
    spec = _frames_spec(frames, times.dtype == np.int64)
    frames_at(times, lo, hi, at, qsorted, limits(times), *spec, a, b, *work, *laid)
    rows = {f: (a[i].reshape(parts, n), b[i].reshape(parts, n)) for i, f in enumerate(frames)}
    out = []
    for e in plan.entries:
        assert e.frame is not None  # a rolling frame's entry
        first, end = rows[e.frame]
        if e.evaluation in GROUPED:
            assert e.column is not None  # a distinct count of a column
            count = _distinct(index, e.column, runs.at, at, first, end)
            out.append(with_nulls(_in_order(count, order), NO_NULLS, e.type))
            continue
        if e.evaluation in EXTREMES | ENDS:  # a row's value: the best, or the first or last
            picked = (_extreme if e.evaluation in EXTREMES else _end)(index, e, first, end)
            out.append(_value(index, e, picked, order))
            continue
        pre = prefixes.get(e.column) if e.column is not None else None
        count = empty(n, np.int64)
        if pre is None:  # count(*): the frames' rows
            np.sum(end - first, axis=0, out=count)
        else:
            prefix_totals(pre.counts.view(), first, end, count)
        if e.evaluation is Evaluation.COUNT:
            out.append(with_nulls(_in_order(count, order), NO_NULLS, e.type))
            continue
        assert pre is not None and pre.sums is not None
        total = empty(n, np.int64)
        prefix_totals(pre.sums.view(), first, end, total)
        none = _in_order(count == 0, order)
        if pa.types.is_integer(e.type):  # an integer column's sum: exact, as it is
            out.append(with_nulls(_in_order(total, order), none, e.type))
            continue
        values = total.astype(np.float64)  # rounded once; an integer mean's as the engine's
        if e.evaluation is Evaluation.MEAN:
            values /= np.maximum(count, 1)
        out.append(with_nulls(_in_order(values, order), none, e.type))
    return out


@functools.lru_cache(maxsize=256)
def _frames_spec(frames: tuple[Frame, ...], whole: bool) -> tuple[np.ndarray, ...]:
    """``frames`` as :func:`~windowagg.kernels.part_answers.frames_at` reads them, over
    int64 times (``whole``) or doubles: whether each is a ``rows`` frame, its offsets
    (:func:`~windowagg.engine.sweep.offsets`), whether its start and its end are unbounded,
    a ``rows`` frame's rows, and a zero offset (read-only: found once)."""
    times = np.empty(0, np.int64 if whole else np.float64)
    rows = np.array([f.kind == "rows" for f in frames], bool)
    offs = np.zeros((len(frames), 4), times.dtype)
    unbounded = np.array([(f.start is None, f.end is None) for f in frames], bool).reshape(-1, 2)
    cuts = np.zeros((len(frames), 2), np.int64)
    for i, f in enumerate(frames):
        if f.kind == "rows":
            cuts[i] = int(f.start or 0), int(f.end or 0)
        else:
            offs[i, 0:2], offs[i, 2:4] = offsets(f, times)
    zero = np.zeros(2, times.dtype)
    return tuple(read_only(x) for x in (rows, offs, unbounded, cuts, zero))


def walk_pays(plan: RollingPlan, index: PartIndex, runs: Runs, place: np.ndarray) -> bool:
    """Whether ``plan``'s distinct counts (none: True) at the requests (key ``place[j]`` among
    the ``runs``' keys, -1 for none) cost less from the parts, each request walking its key's
    groups, than reading the events of the keys (:data:`GROUP_COST`)."""
    grouped = grouped_of(plan)
    n, reading = len(place), runs.n + EVALUATION_SETUP
    if not grouped:
        return True
    if GROUP_REQUEST * n > reading:  # too few events a request, whatever the groups
        return False
    if GROUP_COST * runs.n * n + GROUP_REQUEST * n <= reading:
        return True  # each request walks no more groups than its key holds events
    walked = 0
    for c in grouped:
        gu, gv = _key_groups(index, index.grouped[c], runs.at)
        walked = max(walked, _walked(gu, gv, place))
    return GROUP_COST * walked + GROUP_REQUEST * n <= reading


def _walked(gu: np.ndarray, gv: np.ndarray, at: np.ndarray) -> int:
    """The groups the requests (of keys ``at``, -1: none) walk, their keys' groups in each
    part ``gu[p, w]`` to ``gv[p, w] - 1``."""
    per_key = (gv - gu).sum(axis=0)
    return int(per_key[at[at >= 0]].sum())


def _extreme(index: PartIndex, e: Entry, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The row of a max or min (entry ``e``) over each request's frames (rows ``a[p, j]`` to
    ``b[p, j] - 1`` of each part ``p``): the best, found from the parts' tables; -1 where no
    frame holds a value."""
    assert e.column is not None  # a max or min of a column
    largest = e.evaluation is Evaluation.LARGEST
    tables = index.extremes[(e.column, largest)]
    values, valid = index.values(e.column)
    best = empty(a.shape[1], np.int64)
    args = (tables.laid.view(), np.array(tables.offs, np.int64), index.laid[1])
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


def _key_groups(index: PartIndex, grouped: Groups, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each asked key's groups in each part (its place among the part's distinct keys
    ``at``): groups ``gu[p, w]`` to ``gv[p, w] - 1``
    (:func:`~windowagg.kernels.distinct_groups.key_groups`)."""
    gu, gv = empty(at.shape, np.int64), empty(at.shape, np.int64)
    goff = np.array(grouped.goff, np.int64)
    key_groups(grouped.first.view(), index.laid[0], goff, at, gu, gv)
    return gu, gv


def _distinct(
    index: PartIndex,
    column: str,
    place: np.ndarray,
    at: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """The number of distinct values of ``column`` over each request's frames (rows
    ``a[p, j]`` to ``b[p, j] - 1`` of each part ``p``), from the groups of its key
    (``at[j]``, -1: none; the part's distinct key ``place[p, at[j]]``), by
    :func:`~windowagg.kernels.distinct_groups.distinct_at`."""
    grouped = index.grouped[column]
    values = index.values(column)[0]
    out = empty(a.shape[1], np.int64)
    parts = a.shape[0]
    work = empty(parts, np.int64), empty(parts, np.int64), empty(parts, values.dtype)
    laid = grouped.rows.view(), grouped.groups.view(), grouped.first.view()
    offs = index.laid[0], np.array(grouped.goff, np.int64)
    distinct_at(values, *laid, *offs, place, at, a, b, out, *work)
    return out


def _value(index: PartIndex, e: Entry, rows: np.ndarray, order: np.ndarray | None) -> pa.Array:
    """Entry ``e``'s column: the value of its column at each request's row (``rows``, the
    requests in ``order``'s order), in the entry's type; null where the row is -1 or holds
    no value (:func:`~windowagg.kernels.part_answers.values_at`)."""
    assert e.column is not None  # a row's value of a column
    values, valid = index.values(e.column)
    taken, none = empty(len(rows), values.dtype), empty(len(rows), bool)
    values_at(values, *flags(valid), rows, taken, none)
    return with_nulls(_in_order(taken, order), _in_order(none, order), e.type)


def _in_order(x: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """Answers in the requests' order, ``x`` in ``order``'s (None: theirs)."""
    if order is None:
        return x
    out = np.empty_like(x)
    out[order] = x
    return out
