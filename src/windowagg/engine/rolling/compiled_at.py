"""Point-in-time answers of counts, sums, means, maxima, minima, distinct counts and first and
last values of one column, over an online state's held events of the keys a batch asks for,
in one compiled call per range of keys (:func:`~windowagg.kernels.runs_at.runs_at`): the
keys' runs in the parts merged a chunk at a time, each chunk answered by
:func:`~windowagg.kernels.entries_at.entries_at` (what :func:`~.at.evaluate_at` gives, from
the same kernels) and its answers written at their rows of the batch, without the Python
steps between them. A batch on several threads runs its ranges so
(:meth:`~.online.Held._evaluated`), and they hardly wait for Python's lock.

A plan is answered so where every entry is such an aggregation over a range or ``rows``
frame (:func:`compiled`) of one float64 or int64 column (or a count of rows) that holds no
null; values the evaluators treat apart (NaN, sums beyond the doubles' range, integers whose
sums could overflow, distinct values that are not whole numbers of a small range) leave the
batch to :func:`~.at.evaluate_at` (:func:`answered_at` gives None)."""

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
)
from ...kernels.exact_sums import PARTS
from ...kernels.runs_at import runs_at
from .. import parallel
from ..columns import limits
from ..evaluators.common import with_nulls
from ..memory import NO_NULLS, empty, read_only
from ..sweep import SPAN, offsets
from .plan import RollingPlan

__all__ = ["CHUNK", "KNOWN_NOTHING", "Asked", "Compiled", "answered_at", "compiled"]

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


class Asked(NamedTuple):
    """A batch's requests as :func:`answered_at` reads them: each one's key (its place among
    the runs' keys, -1 for a null key), by key (-1 first), then time; its time as
    :func:`~windowagg.engine.columns.column_times` finds it; its row in the batch; and where
    each range of keys' requests begin among them (one more than the ranges)."""

    place: np.ndarray
    times: np.ndarray
    rows: np.ndarray
    cuts: list[int]


def answered_at(
    c: Compiled,
    laid: tuple[np.ndarray, np.ndarray],
    runs: tuple[np.ndarray, np.ndarray, np.ndarray],
    ranges: list[tuple[int, int]],
    asked: Asked,
    doubles: bool,
    known: np.ndarray = KNOWN_NOTHING,
) -> list[pa.Array] | None:
    """Every entry of ``c`` at the ``asked`` requests (the answers in the batch's order), as
    :func:`~.at.evaluate_at` gives them over the events of the runs' keys (key ``w``'s rows of
    part ``p``: ``runs[0][p, w]`` to ``runs[1][p, w] - 1`` of the ``laid`` times and column,
    ``runs[2][w]`` rows in all; the column's none null, or an empty array for counts of rows),
    merged in time order, ties in arrival order (:func:`~windowagg.kernels.runs_at.runs_at`; the
    times as doubles where ``doubles``): one compiled call per range of keys (``ranges``, each
    thread claiming the next as it finishes one, :func:`~windowagg.engine.parallel.claimed`).
    None where the values are ones the evaluation treats apart, or the requests' times are not
    of the merged times' type. ``known``: what is known of a set of values that holds these
    (:meth:`~.part_index.Spans.known`), which spares the call passes over them."""
    times, values = laid
    lo, hi, each = runs
    qtimes = asked.times
    if qtimes.dtype != (np.float64 if doubles else times.dtype):
        return None
    n, e, nf = len(asked.place), len(c.how), len(c.frames)
    spec = _spec(c.frames, qtimes.dtype == np.int64)
    out_f, out_i, null = empty((e, n)), empty((e, n), np.int64), empty((e, n), bool)
    kinds = set(c.how.tolist())
    select = bool(kinds & {LARGEST, SMALLEST})
    # the compared keys: a max of doubles compares the values themselves
    keyed = SMALLEST in kinds or (LARGEST in kinds and values.dtype != np.float64)
    distinct = DISTINCT in kinds
    inputs = (read_only(times), read_only(values), read_only(lo), read_only(hi))
    place, rows = read_only(asked.place), read_only(asked.rows)
    qtimes = read_only(qtimes)
    lims = limits(qtimes)

    def answer(r: int) -> bool:
        (a, b), (u, v) = ranges[r], asked.cuts[r : r + 2]
        sizes = each[a:b]
        # the largest chunk: CHUNK events, or a key of more alone
        most = min(int(sizes.sum()), max(CHUNK, int(sizes.max()) if b > a else 0))
        limit = most + SPAN
        q = v - u
        return bool(
            runs_at(
                *inputs,
                a,
                b,
                place[u:v],
                qtimes[u:v],
                rows[u:v],
                CHUNK,
                lims,
                *spec,
                NO_NULLS,
                c.how,
                c.frame,
                limit,
                known,
                out_f,
                out_i,
                null,
                empty(most, np.float64 if doubles else times.dtype),
                empty(most if len(values) else 0, values.dtype),
                empty(most, np.int64),
                empty(most, np.int64),
                empty(lo.shape[1], np.int64),
                empty(lo.shape[0], np.int64),
                empty(b - a + 1, np.int64),
                empty(q, np.int64),
                empty(nf * q, np.int64),
                empty(nf * q, np.int64),
                empty(e * q),
                empty(e * q, np.int64),
                empty(e * q, bool),
                empty(q, np.int64),
                empty(PARTS),
                empty(q, bool),
                empty(most if keyed else 0),
                empty(most if distinct else 0, np.int64),
                empty(limit if distinct else 0, np.int64),
                empty(most + 1 if select else 0, np.int64),
                empty(1, np.int64),
                empty(q, np.int64),
            )
        )

    if not all(parallel.claimed(answer, range(len(ranges)))):
        return None
    out = []
    for j, type_ in enumerate(c.types):  # each an int64 or a float64 (:func:`compiled`)
        got, none = (out_i if type_ == pa.int64() else out_f)[j], null[j]
        nullable = c.how[j] not in (COUNT, DISTINCT) and np.count_nonzero(none) > 0
        out.append(with_nulls(got, none if nullable else NO_NULLS, type_))
    return out


#: a range's keys are merged and answered a chunk of about this many events at a time
#: (:func:`~windowagg.kernels.runs_at.runs_at`), which stay in the core's own cache
CHUNK = 1 << 15


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
