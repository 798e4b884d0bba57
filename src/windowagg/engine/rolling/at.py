"""Rolling frames of one table at another table's rows (point-in-time features): for each query
row, every entry over the events of its key in the frame placed at the query's time.

The events are put in key and time order once (:func:`~windowagg.engine.columns.arrange`);
each query finds its key's run of events (its segment) through one dictionary of the two
tables' keys, and the queries are put in (segment, time) order. Both bounds of every frame
then only move forward: two pointers per segment find them
(:func:`windowagg.kernels.bounds.at_bounds`), in O(events + queries) per frame, exactly (no
rounding of the frame's tail), and the frames are given to the same evaluation as rolling
frames and windows (:func:`~windowagg.engine.evaluate.evaluate`: a FIFO sweep, compiled for
every aggregation with a kernel, order statistics, counts per value), each event entering and
leaving a frame once. A query whose key has no event, or whose key or time is null, gets an
empty frame: count 0, every other aggregation null (SQL's rule). An event whose time is null
lies in no query's frame, whatever the frame (as a null key matches nothing). Keys compare
by value across types: a query key that no event key's type can hold matches nothing.
:func:`compute_at` does all of it; :func:`evaluate_at` is its second half, for events already
in key and time order with their segments and each query's found (an online state holds its
events so: :mod:`.online`); queries already in (segment, time) order are not sorted.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...frames import Frame
from ...kernels.bounds import at_bounds
from .. import parallel
from ..columns import arrange, as_floats, as_ints, column_times, limits, moved, take
from ..evaluate import evaluate
from ..keys import Keyed, in_key_order, key_codes, keyed_sort
from ..memory import empty, zeros
from ..stages import stage
from ..sweep import FrameBounds, offsets
from .plan import RollingPlan

__all__ = ["by_value", "check_queries", "compute_at", "entries_read", "evaluate_at"]


def check_queries(
    plan: RollingPlan, events: pa.Schema, queries: pa.Schema, at_time: str, at_keys: tuple
) -> None:
    """Raise, before any work, for a query table that cannot be matched to the events: a
    missing column, a key or time of another kind, an output name it already has."""
    fields = {f.name: f.type for f in queries}
    if len(at_keys) != len(plan.keys):
        raise ValueError(
            f"at_key names {len(at_keys)} column(s) for the {len(plan.keys)} of key {plan.keys}"
        )
    for name, role in [(at_time, "at_time"), *((k, "at_key") for k in at_keys)]:
        if name not in fields:
            raise ValueError(f"{role} column {name!r} is not in the query table")
    ttype, qtype = events.field(plan.time).type, fields[at_time]
    if _kind(ttype) != _kind(qtype):
        raise TypeError(
            f"at_time column {at_time!r} holds {qtype}, the events' time {plan.time!r} {ttype}: "
            "both timestamps or dates, or both numbers"
        )
    for k, a in zip(plan.keys, at_keys):
        if not pa.types.is_null(fields[a]) and not _castable(fields[a], events.field(k).type):
            raise TypeError(
                f"at_key column {a!r} holds {fields[a]}, the events' key {k!r} "
                f"{events.field(k).type}"
            )
    taken = [e.name for e in plan.entries if e.name in fields]
    if taken:
        raise ValueError(f"output column(s) {taken} already exist in the query table")


def _kind(t: pa.DataType) -> str:
    return "time" if pa.types.is_timestamp(t) or pa.types.is_date(t) else "number"


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    if source == target:
        return True
    numeric = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal)
    strings = (pa.types.is_string, pa.types.is_large_string)
    return any(
        f(source) and any(g(target) for g in group) for group in (numeric, strings) for f in group
    )


def by_value(column: pa.Array, target: pa.DataType) -> pa.Array:
    """A query's key column in the events' key type, compared by value: a key that no value
    of that type equals (1.5 against integers, 257 against int8, 2**53 + 1 against doubles)
    becomes null, which matches no event."""
    if column.type == target:
        return column
    try:
        return pc.cast(column, target)
    except (pa.ArrowInvalid, OverflowError):  # some values have no equal in ``target``
        cast = pc.cast(column, target, safe=False)
        same = pc.equal(pc.cast(cast, column.type, safe=False), column)
        if pa.types.is_integer(column.type) and pa.types.is_integer(target):  # no wrap around
            signs = [pc.less(a, pa.scalar(0, a.type)) for a in (cast, column)]
            same = pc.and_(same, pc.equal(*signs))
        same = pc.fill_null(same, False)
        return pc.if_else(same, cast, pa.scalar(None, target))


def _segments(
    plan: RollingPlan, seg: np.ndarray, first: pa.Table, queries: pa.Table, at_keys: tuple
) -> np.ndarray:
    """Each query's segment of the sorted events (the run of its key; ``seg``: the segments'
    bounds, ``first``: each one's key), -1 for none: a key without events, or a null in the
    query's key."""
    q = queries.num_rows
    groups = first.num_rows
    if not plan.keys:  # one segment, or none
        return np.full(q, 0 if len(seg) > 1 else -1, np.int64)
    asked = pa.table(
        [
            by_value(queries.column(a).combine_chunks(), first.schema.field(k).type)
            for k, a in zip(plan.keys, at_keys)
        ],
        names=list(plan.keys),
    )
    keyed = key_codes(pa.concat_tables([first, asked]), plan.keys)
    of_code = np.full(keyed.m, -1, np.int64)
    of_code[keyed.codes[:groups]] = np.arange(groups)
    out = of_code[keyed.codes[groups:]]
    for k in plan.keys:
        column = asked.column(k)
        if column.null_count:
            out[pc.is_null(column).to_numpy(zero_copy_only=False)] = -1
    null_key = zeros(groups, bool)  # events with a null key match no query
    for k in plan.keys:
        null_key |= pc.is_null(first.column(k)).to_numpy(zero_copy_only=False)
    if null_key.any():
        out[null_key[np.maximum(out, 0)] & (out >= 0)] = -1
    return out


def in_events_unit(
    plan: RollingPlan, events: pa.Schema, queries: pa.Table, at_time: str
) -> pa.Table:
    """The queries with their time in the unit of the events' time (``events``, the events'
    schema; a timestamp's own unit, a date's microseconds: the frames are in it), exactly; a
    query time finer than that unit is an error that says so."""
    want, have = events.field(plan.time).type, queries.schema.field(at_time).type
    if want == have and not pa.types.is_date(want):  # the same unit (a date's: days)
        return queries
    if not all(pa.types.is_timestamp(t) or pa.types.is_date(t) for t in (want, have)):
        return queries  # numbers: compared as they are
    unit = want.unit if pa.types.is_timestamp(want) else "us"  # a date: microseconds
    tz = have.tz if pa.types.is_timestamp(have) else None
    if pa.types.is_timestamp(have) and have.unit == unit:
        return queries
    try:
        col = pc.cast(queries.column(at_time), pa.timestamp(unit, tz))
    except pa.ArrowInvalid:
        raise ValueError(
            f"at_time column {at_time!r} holds times finer than the events' {want} "
            f"({have}): cast the events' time {plan.time!r} to {have}"
        ) from None
    return queries.set_column(queries.schema.get_field_index(at_time), at_time, col)


def compute_at(
    plan: RollingPlan, events: pa.Table, queries: pa.Table, at_time: str, at_keys: tuple
) -> list[pa.Array]:
    """Every entry's column at the rows of ``queries`` (in their order), over ``events``.
    An event without a time lies in no frame (as a null key matches no query): it is left
    out."""
    when = events.column(plan.time)
    if when.null_count:
        events = events.filter(pc.is_valid(when))
    order, times, seg = arrange(plan, events)
    firsts = seg[:-1] if order is None else order[seg[:-1]]  # each segment's first event
    keys = events.select(list(plan.keys)).take(pa.array(firsts))
    schema = events.schema
    events = entries_read(plan, events).combine_chunks()
    if order is not None:  # gathered on the cores
        events = pa.table({c: take(events.column(c), order) for c in events.column_names})
    qseg = _segments(plan, seg, keys, queries, at_keys)
    return evaluate_at(plan, events, times, seg, qseg, queries, at_time, schema)


def entries_read(plan: RollingPlan, events: pa.Table) -> pa.Table:
    """The columns the entries read: their inputs, and the times where an entry reads them,
    where the FIFO sweep serves an entry (an ``arg`` result is the time of its row) or where
    nothing else is (kept first: the time column's type for the queries' times)."""
    read = [n for n in events.column_names if n in plan.inputs and n != plan.time]
    return events.select([plan.time, *read] if plan.reads_times else read)


def evaluate_at(
    plan: RollingPlan,
    events: pa.Table,
    times: np.ndarray,
    seg: np.ndarray,
    qseg: np.ndarray,
    queries: pa.Table,
    at_time: str,
    timing: pa.Schema | None = None,
) -> list[pa.Array]:
    """Every entry's column at the rows of ``queries`` (in their order), over ``events`` in
    key and time order (ties in arrival order): ``times``, their times
    (:func:`~windowagg.engine.columns.times_of`); ``seg``, the key segments; ``qseg``, each
    query's segment, -1 for none (what :func:`compute_at` finds, and an online state holds
    found); ``timing``, the events' schema (where ``events`` may lack the time column)."""
    timing = events.schema if timing is None else timing
    events = entries_read(plan, events)
    qtimes = column_times(at_time, in_events_unit(plan, timing, queries, at_time).column(at_time))
    if times.dtype != qtimes.dtype:  # whole numbers beyond doubles on one side
        kinds = timing.field(plan.time).type, queries.schema.field(at_time).type
        both = as_floats if any(pa.types.is_floating(k) for k in kinds) else as_ints
        times, qtimes = both(times), both(qtimes)
    # the queries by segment (none first), then time: the events' sort, on the cores (none
    # where they come in that order: one query, or queries as they were asked in turn)
    groups = len(seg) - 1
    qorder = None
    if not in_key_order(qseg, qtimes):
        keyed = Keyed(qseg + 1, groups + 1, np.empty(0, np.int64))
        qorder, qtimes, _ = keyed_sort(keyed, qtimes)
        qseg = qseg[qorder]
    frames = {
        f: FrameBounds.given(times, *_at_bounds(f, times, seg, qseg, qtimes), alone=True)
        for f in plan.frames
    }
    timed = plan.time in events.column_names
    times_col = events.column(plan.time) if timed else None
    columns = evaluate(plan.entries, events, frames, times_col)
    return columns if qorder is None else moved(columns, qorder)


@stage("bounds")
def _at_bounds(
    f: Frame, times: np.ndarray, seg: np.ndarray, qseg: np.ndarray, qtimes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every query's frame ``f`` as events ``[lo, hi)`` (:func:`~windowagg.kernels.bounds.
    at_bounds`), the sorted queries in chunks on the cores (a chunk that starts within a
    segment walks its pointers from the segment's start: the same bounds)."""
    n = len(qseg)
    lo, hi = empty(n, np.int64), empty(n, np.int64)
    args = (f.kind == "rows", *offsets(f, times), limits(times), f.start is None, f.end is None)
    parallel.by_chunks(
        lambda a, b: at_bounds(times, seg, qseg[a:b], qtimes[a:b], *args, lo[a:b], hi[a:b]), n
    )
    return lo, hi
