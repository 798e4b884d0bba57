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
them (:data:`GROUP_COST`), the batch is answered by the evaluation over the events. Several
requests of one key at one time (a hot key's, asked at the newest time) are answered once
(:func:`_asked_once`).

This is FiBA's range query, ``query(t_from, t_to)`` (Tangwongsan, Hirzel and Schneider,
"Optimal and General Out-of-Order Sliding-Window Aggregation", section 2, "Query Sharing",
and section 4, window sharing by range queries): for the invertible aggregations a prefix
difference answers a range without a tree; for max and min, a sparse table's two blocks of
partial aggregates and the range's partial blocks. A part whose values are not such whole
numbers (a fraction, NaN, an infinity) has no sums, and one whose values hold a NaN no table
of its best rows: a batch that would read them is answered by the evaluation over the
events, as every other state is."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.distinct_groups import distinct_at, walked_groups
from ...kernels.extremes import extremes_at
from ...kernels.part_answers import (
    COUNTED,
    MEAN,
    ROWS,
    SUMS,
    ends_at,
    frames_at,
    summed_at,
    values_at,
)
from ..columns import from_words, limits
from ..entries import Entry
from ..keys import in_key_order
from ..memory import empty, read_only
from ..sweep import offsets
from .part_index import flags
from .plan import RollingPlan

if TYPE_CHECKING:
    from .part_index import PartIndex, Runs

__all__ = ["answered", "answers", "extremes_of", "grouped_of", "served", "summarized", "walk_pays"]

#: the evaluations answered from prefix sums
SUMMED = frozenset({Evaluation.COUNT, Evaluation.SUM, Evaluation.MEAN})
#: the evaluations answered from each part's tables of its best rows (``max``, ``min``)
EXTREMES = frozenset({Evaluation.LARGEST, Evaluation.SMALLEST})
#: the evaluations answered from the ends of each part's frame (``first``, ``last``)
ENDS = frozenset({Evaluation.FIRST, Evaluation.LAST})
#: the evaluation answered from each part's rows grouped by key and value (distinct counts)
GROUPED = frozenset({Evaluation.DISTINCT})

#: an empty column of prefixes: what a count of rows, or a count, reads for the sums
NO_PREFIX = np.zeros(0, np.int64)

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


def served(plan: RollingPlan, schema: pa.Schema, fixed: set[str]) -> Served | None:
    """The entries of ``plan`` answered from the parts' prefix sums and tables, as a plan of
    them alone with how each is answered (:class:`Served`; None where there is none): each a
    count, sum, mean, max or min over a range or rows frame of a column of ``fixed`` (the
    index's fixed-width columns; a float64 or an integer one but for a count,
    :func:`_summable`), a count of rows, or a first or last value (without ``ignorenulls``)
    of an integer or float column. The others are evaluated over the events."""
    entries = tuple(e for e in plan.entries if _served(e, schema, fixed))
    return Served.of(replace(plan, entries=entries)) if entries else None


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


class Step(NamedTuple):
    """How :func:`answered` gives an entry (found once for a state, :class:`Served`): the
    place of its frame among the plan's frames, and what
    :func:`~windowagg.kernels.part_answers.summed_at` gives of a count, sum or mean (-1 for a
    max, min, first, last or distinct count), into an array of ``dtype``."""

    entry: Entry
    frame: int
    how: int
    dtype: type


@dataclass(frozen=True, eq=False)
class Served:
    """The entries a state answers from its parts (:func:`served`), as a plan of them alone,
    its frames, each entry's :class:`Step`, and the columns of its distinct counts."""

    plan: RollingPlan
    frames: tuple[Frame, ...]
    steps: tuple[Step, ...]
    grouped: frozenset[str]

    @classmethod
    def of(cls, plan: RollingPlan) -> Served:
        frames = tuple(plan.frames)
        steps = []
        for e in plan.entries:
            assert e.frame is not None  # a rolling frame's entry
            how = -1
            if e.evaluation is Evaluation.COUNT:
                how = ROWS if e.column is None else COUNTED
            elif e.evaluation in SUMMED:
                how = MEAN if e.evaluation is Evaluation.MEAN else SUMS
            dtype = np.int64 if pa.types.is_integer(e.type) else np.float64
            steps.append(Step(e, frames.index(e.frame), how, dtype))
        return cls(plan, frames, tuple(steps), grouped_of(plan))


def answered(
    served: Served,
    index: PartIndex,
    runs: Runs,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[pa.Array] | None:
    """:func:`answers` as Arrow arrays of the entries' types, of their own memory (nothing
    the kernels wrote is checked again: :func:`~windowagg.engine.evaluators.common.with_nulls`'
    checks cost a single request more than its array)."""
    got = answers(served, index, runs, place, qtimes)
    if got is None:
        return None
    return [
        from_words(step.entry.type, [values] if none is None else [values, ~none])
        for step, (values, none) in zip(served.steps, got)
    ]


def answers(
    served: Served,
    index: PartIndex,
    runs: Runs,
    place: np.ndarray,
    qtimes: np.ndarray,
) -> list[tuple[np.ndarray, np.ndarray | None]] | None:
    """Every served entry's answers at the requests (key ``place[j]`` among the ``runs``'
    keys, -1 for none; time ``qtimes[j]``, in the laid times' type, a null time
    ``limits(times)[0]``), in their order, with which are null (None: none, as the kernels
    count them; the values each of the entry type's width: an int64 or float64 count, sum or
    mean, a number column's own value): each part's frame found among its run of the key
    (``lo[p, w]`` to ``hi[p, w] - 1`` of the ``index``'s laid times; part ``p`` is rows
    ``index.bounds[p]`` on), in one pass of the bounds over every part's runs, and each entry
    from the columns' prefixes there, or from their tables of their best rows, or the
    frame's first or last row, or its key's groups (where they pay: :func:`walk_pays`,
    weighed by the caller), one compiled call an entry over arrays of the parts found once as
    they lie (:func:`_read`). None where a part lacks the sums or the table an entry needs,
    or the sums over every part could overflow: the evaluation over the events answers
    then."""
    if not index.sound:
        return None
    lo, hi = runs.lo, runs.hi
    parts, w = lo.shape
    at, qsorted, back = _asked_once(place, qtimes)
    n = len(at)
    # each frame's first and end row of every request's frame in each part (an empty
    # frame's are equal), in one call
    (times, *spec), read = _read(served, index)
    work = _work(index, len(served.frames), parts, n, w, times.dtype)
    frames_at(times, lo, hi, at, qsorted, *spec, *work.frames, *work.space)
    out = []
    for step, arrays in zip(served.steps, read):
        e, first, end = step.entry, work.first[step.frame], work.end[step.frame]
        if step.how >= 0:  # a count, sum or mean: from the prefixes
            got = empty(n, step.dtype)
            none = summed_at(*arrays, first, end, step.how, got, work.none)
            out.append(_in_order(got, work.none if none else None, back))
        elif e.evaluation in GROUPED:  # a distinct count: from the key's groups
            count = empty(n, np.int64)
            cuts = *work.cuts, empty(parts, arrays[0].dtype)  # the values' type
            distinct_at(*arrays, runs.at, at, first, end, lo, hi, count, *cuts, work.full)
            out.append(_in_order(count, None, back))
        else:  # a row's value: the best, or the first or last
            picks, values = arrays
            (extremes_at if e.evaluation in EXTREMES else ends_at)(*picks, first, end, work.rows)
            taken = empty(n, values[0].dtype)
            none = values_at(*values, work.rows, taken, work.none)
            out.append(_in_order(taken, work.none if none else None, back))
    return out


def _in_order(
    values: np.ndarray, none: np.ndarray | None, back: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Answers and which are null (None: none) in the requests' order: request ``j``'s is
    ``values[back[j]]`` (``back`` None: ``values[j]``); the flags copied from the work space
    the next entry writes."""
    if back is not None:
        return values[back], None if none is None else none[back]
    return values, None if none is None else none.copy()


def _read(served: Served, index: PartIndex) -> tuple[tuple, tuple[tuple, ...]]:
    """The arrays of the parts, as they lie, that :func:`answered` hands its compiled calls
    for ``served``'s frames (the laid times, their limits and the frames' spec) and for each
    entry: found once after each push or pop (:attr:`~.part_index.PartIndex.found`)."""
    found = index.found.get(served)
    if found is None:
        times = index.times.view()
        spec = (times, limits(times), *_frames_spec(served.frames, times.dtype == np.int64))
        found = index.found[served] = spec, tuple(_arrays(index, s) for s in served.steps)
    return found


#: a request of at most this many keys and times (a single request) takes its frames and
#: work space from its thread's, kept with the parts as they lie (:func:`_work`): a dozen
#: fresh arrays cost it more than its compiled steps
FEW = 8


class Work(NamedTuple):
    """What :func:`answered`'s compiled calls write and no answer keeps, for ``n`` requests:
    each frame ``f``'s first and end rows in every part (``first[f][p, j]``), as
    :func:`~windowagg.kernels.part_answers.frames_at` writes them (``frames``: every frame's,
    ``(f, parts x n)``) with its work space (``space``); a flag (``none``: a sum of no value,
    a row with none) and a row (``rows``) per request; a distinct count's cuts in each part
    (``cuts``, ``full``)."""

    first: tuple[np.ndarray, ...]
    end: tuple[np.ndarray, ...]
    frames: tuple[np.ndarray, np.ndarray]
    space: tuple[np.ndarray, ...]
    none: np.ndarray
    rows: np.ndarray
    cuts: tuple[np.ndarray, np.ndarray]
    full: np.ndarray


def _work(index: PartIndex, f: int, parts: int, n: int, w: int, dtype: np.dtype) -> Work:
    """The :class:`Work` of ``f`` frames of ``n`` requests of ``w`` keys over ``parts``
    parts (times of ``dtype``); for :data:`FEW` or fewer, this thread's own, found once
    after each push or pop (:attr:`~.part_index.PartIndex.found`)."""
    few = n <= FEW and w <= FEW
    key = (_work, threading.get_ident(), f, parts, n, w)
    got = index.found.get(key) if few else None
    if got is None:
        a, b = empty((f, parts, n), np.int64), empty((f, parts, n), np.int64)
        space = (
            *(empty(parts * n, np.int64), empty(parts, np.int64), empty(parts, np.int64)),
            *(empty(2 * parts * w, np.int64), empty(parts * n, np.int64), empty(parts * n, dtype)),
        )
        got = Work(
            tuple(a),
            tuple(b),
            (a.reshape(f, -1), b.reshape(f, -1)),
            space,
            empty(n, bool),
            empty(n, np.int64),
            (empty(parts, np.int64), empty(parts, np.int64)),
            empty(parts, bool),
        )
        if few:
            index.found[key] = got
    return got


def _arrays(index: PartIndex, step: Step) -> tuple:
    """The arrays of the parts that :func:`answered` reads for ``step``'s entry."""
    e = step.entry
    if step.how == ROWS:
        return NO_PREFIX, NO_PREFIX
    assert e.column is not None  # an entry of a column
    if step.how >= 0:
        pre = index.prefixes[e.column]
        return pre.counts.view(), NO_PREFIX if pre.sums is None else pre.sums.view()
    values, valid = index.values(e.column)
    if e.evaluation in GROUPED:
        grouped = index.grouped[e.column]
        laid = grouped.rows.view(), grouped.groups.view(), grouped.first.view()
        each = values[:0] if grouped.values is None else grouped.values.view()
        return each, *laid, index.laid[0], np.array(grouped.goff, np.int64)
    taken = values, *flags(valid)
    if e.evaluation in ENDS:
        return (index.times.view(), e.evaluation is Evaluation.FIRST), taken
    largest = e.evaluation is Evaluation.LARGEST
    tables = index.extremes[(e.column, largest)]
    table = tables.laid.view(), np.array(tables.offs, np.int64), index.laid[1]
    return (*taken, index.times.view(), largest, *table), taken


def _frames_spec(frames: tuple[Frame, ...], whole: bool) -> tuple[np.ndarray, ...]:
    """``frames`` as :func:`~windowagg.kernels.part_answers.frames_at` reads them, over
    int64 times (``whole``) or doubles: whether each is a ``rows`` frame, its offsets
    (:func:`~windowagg.engine.sweep.offsets`), whether its start and its end are unbounded,
    a ``rows`` frame's rows, and a zero offset (read-only: found once a layout, by
    :func:`_read`)."""
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


def walk_pays(served: Served, index: PartIndex, runs: Runs, place: np.ndarray) -> bool:
    """Whether ``served``'s distinct counts (none: True) at the requests (key ``place[j]`` among
    the ``runs``' keys, -1 for none) cost less from the parts, each request walking its key's
    groups, than reading the events of the keys (:data:`GROUP_COST`)."""
    grouped = served.grouped
    n, reading = len(place), runs.n + EVALUATION_SETUP
    if not grouped:
        return True
    if GROUP_REQUEST * n > reading:  # too few events a request, whatever the groups
        return False
    if GROUP_COST * runs.n * n + GROUP_REQUEST * n <= reading:
        return True  # each request walks no more groups than its key holds events
    walked = 0
    for c in grouped:  # the groups the requests walk, in one compiled call a column
        groups = index.grouped[c]
        laid = (groups.first.view(), index.laid[0], np.array(groups.goff, np.int64))
        walked = max(walked, walked_groups(*laid, runs.at, place))
    return GROUP_COST * walked + GROUP_REQUEST * n <= reading


def _asked_once(
    place: np.ndarray, qtimes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The requests (key ``place[j]``, time ``qtimes[j]``) by key, then time, as the bounds
    walk them, each key and time once: several requests of one key at one time (a hot key's,
    asked at the newest time) share one answer, found once. Their keys and times, and where
    each request's answer lies among theirs (None: each its own, in order: one request, or
    requests asked by key and time, each once)."""
    n = len(place)
    order = None if in_key_order(place, qtimes) else np.lexsort((qtimes, place))
    at = place if order is None else place[order]
    qsorted = qtimes if order is None else qtimes[order]
    if n < 2:
        return at, qsorted, None
    new = empty(n, bool)
    new[0] = True
    np.not_equal(at[1:], at[:-1], out=new[1:])
    new[1:] |= qsorted[1:] != qsorted[:-1]
    once = None if new.all() else np.cumsum(new) - 1
    if once is not None:
        at, qsorted = at[new], qsorted[new]
    if order is None:
        return at, qsorted, once
    back = empty(n, np.int64)
    back[order] = np.arange(n) if once is None else once
    return at, qsorted, back
