"""Point-in-time answers of counts, sums, means, maxima, minima, distinct counts and first and
last values of one column in one compiled call
(:func:`~windowagg.kernels.entries_at.entries_at`): what :func:`~.at.evaluate_at` gives,
from the same kernels, without the Python steps between them.
An online state's batch on several threads answers each range of keys so
(:meth:`~.online.Held._of_runs`), and its ranges then hardly wait for Python's lock.

A plan is answered so where every entry is such an aggregation over a range or ``rows``
frame (:func:`compiled`) of one float64 or int64 column (or a count of rows) that holds no
null; values the evaluators treat apart (NaN, sums beyond the doubles' range, integers whose
sums could overflow, distinct values that are not whole numbers of a small range) leave the
call to :func:`~.at.evaluate_at` (:func:`answered_at` gives None)."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...frames import Frame
from ...kernels.entries_at import (
    COUNT,
    DISTINCT,
    FIRST,
    INT_MEAN,
    INT_SUM,
    LARGEST,
    LAST,
    MEAN,
    SMALLEST,
    SUM,
    entries_at,
)
from ...kernels.exact_sums import PARTS
from ..columns import column_times, limits
from ..evaluators.common import with_nulls
from ..keys import in_key_order
from ..memory import NO_NULLS, empty, read_only
from ..sweep import SPAN, offsets
from .at import in_events_unit
from .plan import RollingPlan

__all__ = ["KNOWN_NOTHING", "Compiled", "Raw", "answered_at", "compiled"]

#: what :func:`answered_at` is told of the values where nothing is known of them (the
#: call finds what it needs by passes over them)
KNOWN_NOTHING = read_only(np.zeros(4, np.int64))

#: each evaluation answered here, over a float64 column and over an int64 one
_HOW = {
    Evaluation.COUNT: (COUNT, COUNT),
    Evaluation.SUM: (SUM, INT_SUM),
    Evaluation.MEAN: (MEAN, INT_MEAN),
    Evaluation.LARGEST: (LARGEST, LARGEST),
    Evaluation.SMALLEST: (SMALLEST, SMALLEST),
    Evaluation.DISTINCT: (DISTINCT, DISTINCT),
    Evaluation.FIRST: (FIRST, FIRST),
    Evaluation.LAST: (LAST, LAST),
}


class Raw(NamedTuple):
    """An entry's answers as the call leaves them: their values, which are null (None:
    none) and the entry's type; :meth:`array` makes the Arrow array."""

    values: np.ndarray
    null: np.ndarray | None
    type: pa.DataType

    def array(self) -> pa.Array:
        return with_nulls(self.values, NO_NULLS if self.null is None else self.null, self.type)


class Compiled(NamedTuple):
    """A plan as :func:`answered_at` answers it: the column its entries read (None: counts
    of rows alone) and its type, its frames, and each entry's kind (``how``), frame and
    type (an int64 or a float64: where the call writes its answer)."""

    column: str | None
    type: pa.DataType | None
    frames: tuple[Frame, ...]
    how: np.ndarray
    frame: np.ndarray
    types: tuple[pa.DataType, ...]


def compiled(plan: RollingPlan, schema: pa.Schema, fixed: set[str]) -> Compiled | None:
    """``plan`` as :func:`answered_at` answers it, or None where some entry is not a count,
    sum, mean, max, min, distinct count or first or last value (without ``ignorenulls``)
    over a rolling frame of one float64 or int64
    column of ``fixed`` (the index's fixed-width columns, not the time), in the type the
    evaluation gives it."""
    read = {e.column for e in plan.entries if e.column is not None}
    if len(read) > 1 or plan.reads_times:
        return None
    column = next(iter(read), None)
    type_ = None if column is None else schema.field(column).type
    if column is not None and (
        column not in fixed or column == plan.time or type_ not in (pa.float64(), pa.int64())
    ):
        return None
    whole = type_ == pa.int64()
    frames = tuple(dict.fromkeys(e.frame for e in plan.entries if e.frame is not None))
    how, where = [], []
    for e in plan.entries:
        kinds = _HOW.get(e.evaluation)  # type: ignore[arg-type]
        if e.frame is None or kinds is None or e.other or e.counts or e.states:
            return None
        if getattr(e.agg, "ignorenulls", False):  # a column without nulls, but the rule's own
            return None
        h = kinds[whole]
        if e.column is None and h != COUNT:
            return None
        want = _answer_type(h, type_)
        if e.type != want:
            return None
        how.append(h)
        where.append(frames.index(e.frame))
    return Compiled(
        column,
        type_,
        frames,
        read_only(np.array(how, np.int64)),
        read_only(np.array(where, np.int64)),
        tuple(e.type for e in plan.entries),
    )


def _answer_type(how: int, column: pa.DataType | None) -> pa.DataType | None:
    """The type the evaluation gives an entry of ``how`` over a column of ``column``."""
    if how in (COUNT, DISTINCT, INT_SUM):
        return pa.int64()
    if how in (LARGEST, SMALLEST, FIRST, LAST):
        return column
    return pa.float64()


def answered_at(
    c: Compiled,
    values: np.ndarray,
    times: np.ndarray,
    seg: np.ndarray,
    qseg: np.ndarray,
    queries: pa.Table,
    at_time: str,
    plan: RollingPlan,
    schema: pa.Schema,
    known: np.ndarray = KNOWN_NOTHING,
    qtimes: np.ndarray | None = None,
) -> list[Raw] | None:
    """Every entry of ``c`` at ``queries`` (in their order, as :class:`Raw` answers) over
    events in key and time order (``values``: the column's, none null, or an empty array
    for counts of rows; ``times``;
    ``seg``, the key segments; ``qseg``, each query's segment, -1 for none), as
    :func:`~.at.evaluate_at` gives them (``schema``: the events'); None where the values are
    ones the evaluation treats apart, or the times' types differ. ``known``: what is known of
    a set of values that holds these (:meth:`~.part_index.Spans.known`), which spares the
    call passes over them. ``qtimes``: the queries' times as :func:`column_times` finds them,
    where the caller has them (a range of a batch's, found once for the batch)."""
    if qtimes is None:
        qtimes = column_times(at_time, in_events_unit(plan, schema, queries, at_time)[at_time])
    if qtimes.dtype != times.dtype:
        return None
    order = None
    if not in_key_order(qseg, qtimes):  # by segment (none first), then time, as the bounds go
        order = np.lexsort((qtimes, qseg))
        qseg, qtimes = qseg[order], qtimes[order]
    n, e, events = len(qseg), len(c.how), len(values)
    rows, lo_off, hi_off, unbounded = _spec(c.frames, times.dtype == np.int64)
    lo, hi = empty((len(c.frames), n), np.int64), empty((len(c.frames), n), np.int64)
    out_f, out_i, null = empty((e, n)), empty((e, n), np.int64), empty((e, n), bool)
    kinds = set(c.how.tolist())
    select = bool(kinds & {LARGEST, SMALLEST})
    # the compared keys: a max of doubles compares the values themselves
    keyed = SMALLEST in kinds or (LARGEST in kinds and values.dtype != np.float64)
    distinct = DISTINCT in kinds
    limit = events + SPAN
    ok = entries_at(
        read_only(times),
        read_only(seg),
        read_only(qseg),
        read_only(qtimes),
        limits(times),
        rows,
        lo_off,
        hi_off,
        unbounded,
        read_only(values),
        NO_NULLS,
        c.how,
        c.frame,
        limit,
        known,
        lo,
        hi,
        out_f,
        out_i,
        null,
        empty(n, np.int64),
        empty(PARTS),
        empty(n, bool),
        empty(events if keyed else 0),
        empty(events if distinct else 0, np.int64),
        empty(limit if distinct else 0, np.int64),
        empty(events + 1 if select else 0, np.int64),
        empty(1, np.int64),
        empty((1, n), np.int64),
    )
    if not ok:
        return None
    back = None
    if order is not None:
        back = empty(n, np.int64)
        back[order] = np.arange(n)
    out = []
    for j, type_ in enumerate(c.types):  # each an int64 or a float64 (:func:`compiled`)
        got, none = (out_i if type_ == pa.int64() else out_f)[j], null[j]
        if back is not None:
            got, none = got[back], none[back]
        nullable = c.how[j] not in (COUNT, DISTINCT) and np.count_nonzero(none) > 0
        out.append(Raw(got, none if nullable else None, type_))
    return out


@functools.lru_cache(maxsize=64)
def _spec(frames: tuple[Frame, ...], whole: bool) -> tuple[np.ndarray, ...]:
    """``frames`` as :func:`~windowagg.kernels.bounds.at_bounds` takes them, over int64
    times (``whole``) or doubles: whether each is a ``rows`` frame, its start's and its
    end's offsets (:func:`~windowagg.engine.sweep.offsets`), and whether each side is
    unbounded (read-only: found once a plan and time type)."""
    times = np.empty(0, np.int64 if whole else np.float64)
    rows = np.array([f.kind == "rows" for f in frames], bool)
    found = [offsets(f, times) for f in frames]
    lo_off = np.array([a for a, _ in found], times.dtype).reshape(len(frames), 2)
    hi_off = np.array([b for _, b in found], times.dtype).reshape(len(frames), 2)
    unbounded = np.array([(f.start is None, f.end is None) for f in frames], bool)
    return tuple(read_only(x) for x in (rows, lo_off, hi_off, unbounded.reshape(-1, 2)))
