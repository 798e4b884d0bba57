"""The events an online feature state holds (:class:`windowagg.online.OnlineFeatures`): what
arrived in time, in arrival order, and what the state's frames can still reach.

Each ``update`` is checked against the mark its earlier updates set (the newest event time
less the allowed lateness, as a Spark watermark moves between micro-batches): an event older
than the mark is dropped and counted, never mixed in. Events that no
query at the mark or later can reach (the widest range frame before it, and each key's last
events there that a ``rows`` frame counts back over) are let go in bulk, as the
point-in-time stream lets them go (:func:`~windowagg.engine.rolling.at_stream.reachable`).
A query whose frame would reach what was let go is refused
(:class:`HistoryEvictedError`), never answered from part of its frame.

Queries are answered by the same evaluation as ``rolling_aggregate(at=)``
(:func:`~windowagg.engine.rolling.at.compute_at`) over the held events in arrival order, so
ties fall in arrival order as they do in the batch call over the events in that order. A
batch is evaluated over the events of the keys it asks for alone, found through each part's
keys sorted once (the parts merged as a binary counter, so that many small updates leave
O(log n) of them): O(log n) per asked key and part to find them, then one gather; every held
event where the asked keys hold most of them. Each batch then costs time in proportion to the
events it reads, not O(log d) per query.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...kernels.key_order import merged_runs
from .at import compute_at, in_events_unit
from .at_stream import reachable
from .plan import RollingPlan

__all__ = ["Held", "HistoryEvictedError", "of_keys", "times_as_numbers"]


class HistoryEvictedError(ValueError):
    """A query whose frame reaches events the online state has already let go."""


def times_as_numbers(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A time column as numbers in the unit frames are measured in (a timestamp's own unit,
    microseconds for a date), exactly: int64 for timestamps, dates and whole numbers, float64
    for floats; and which rows have a time."""
    if pa.types.is_date(col.type):
        col = pc.cast(col, pa.timestamp("us"))
    if pa.types.is_timestamp(col.type):
        col = pc.cast(col, pa.int64())
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        col = pc.cast(col, pa.float64())
    valid = np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), bool)
    filled = pc.fill_null(col, 0) if col.null_count else col
    wide = np.int64 if pa.types.is_integer(col.type) else np.float64
    return np.asarray(filled.to_numpy(zero_copy_only=False), wide), valid


class Held:
    """The events held for ``plan``'s frames, with ``lateness`` in the frames' unit."""

    def __init__(self, plan: RollingPlan, schema: pa.Schema, lateness: float) -> None:
        whole = not pa.types.is_floating(schema.field(plan.time).type)
        self.plan, self.schema = plan, schema
        # on whole times, t < newest - lateness is t < newest - floor(lateness)
        self.lateness: float = math.floor(lateness) if whole else float(lateness)
        self.parts: list[
            pa.Table
        ] = []  # in arrival order, each half the size of the one before or more
        #: each part's keys sorted and the stable order that sorts them, where the key is one
        #: integer column: made as the part is (merged from its two parts' when they merge)
        self._sorted: dict[int, tuple[pa.Table, np.ndarray, np.ndarray]] = {}
        field = schema.field(plan.keys[0]) if len(plan.keys) == 1 else None
        self._indexed = field is not None and pa.types.is_signed_integer(field.type)
        self.newest: float | None = None  # the newest event time in time (None: none yet)
        #: the earliest query time answered once events were let go (None: none let go)
        self.answers_from: float | None = None
        self.dropped = 0
        self.after = 0  # events held after the last letting go

    @property
    def count(self) -> int:
        return sum(p.num_rows for p in self.parts)

    @property
    def mark(self) -> float | None:
        """Events older than this are late (the newest time so far less the lateness)."""
        return None if self.newest is None else self.newest - self.lateness

    def add(self, events: pa.Table) -> np.ndarray:
        """Hold ``events`` (in the state's schema) but those older than the mark, which are
        counted in ``dropped``; events with no time or a null key lie in no frame and are
        not held (an event in time with a null key still moves the mark). Returns which were
        held."""
        t, timed = times_as_numbers(events.column(self.plan.time))
        if t.dtype == np.float64 and np.isnan(t[timed]).any():
            raise ValueError(f"an event's time {self.plan.time!r} is NaN: it has no place in time")
        mark = self.mark
        if mark is not None:
            late = timed & (t < mark)
            self.dropped += int(late.sum())
            timed &= ~late
        if timed.any():  # any event in time moves the mark, as a watermark does
            top = t[timed].max().item()
            self.newest = top if self.newest is None else max(self.newest, top)
        keep = timed
        for k in self.plan.keys:
            keep &= np.asarray(events.column(k).is_valid().to_numpy(zero_copy_only=False), bool)
        if keep.any():
            self.parts.append(events.filter(pa.array(keep)) if not keep.all() else events)
            if self._indexed:
                self._index(self.parts[-1])
            self._merge()
        self._evict()
        return keep

    def _merge(self) -> None:
        """Merge the newest part into the one before while that one is no larger (a binary
        counter: O(log n) parts, each event copied O(log n) times), so that many small
        updates leave few parts to read."""
        parts = self.parts
        while len(parts) > 1 and parts[-2].num_rows <= parts[-1].num_rows:
            newer, older = parts.pop(), parts[-1]
            parts[-1] = pa.concat_tables([older, newer]).combine_chunks()
            if self._indexed:  # the two parts' sorted keys merged, the older's first on ties
                (ka, oa), (kb, ob) = self._index(older), self._index(newer)
                keys, order = np.empty((2, parts[-1].num_rows), np.int64)  # the state's own
                merged_runs(ka, oa, kb, ob, older.num_rows, keys, order)
                self._sorted[id(parts[-1])] = (parts[-1], keys, order)
                del self._sorted[id(older)], self._sorted[id(newer)]

    def _evict(self) -> None:
        """Let go of the events no query at the mark or later reaches
        (:func:`~windowagg.engine.rolling.at_stream.reachable`), in one pass once the events
        held have doubled since the last, where at least half of them go."""
        held = self.count
        if self.newest is None or held < 2 * self.after:
            return
        earliest = self.newest - self.lateness
        kept = reachable(self.plan, pa.concat_tables(self.parts), earliest)
        assert kept is not None
        if 2 * kept.num_rows <= held:
            self.parts, self.answers_from = [kept], earliest
            self._sorted = {}
            if self._indexed:
                self._index(kept)
        self.after = kept.num_rows

    def table(self) -> pa.Table:
        """Every held event, in arrival order (an empty table in the schema where none)."""
        if not self.parts:
            return self.schema.empty_table()
        return pa.concat_tables(self.parts)

    def answer(self, queries: pa.Table, at_time: str, at_keys: tuple) -> list[pa.Array]:
        """Every entry's column at ``queries``' rows, over the held events; refused where a
        query's frame reaches events let go."""
        start = self.answers_from
        if start is not None:
            timing = self.schema.empty_table()
            q, timed = times_as_numbers(
                in_events_unit(self.plan, timing, queries, at_time).column(at_time)
            )
            early = timed & (q < start)  # NaN compares false: no frame reaches back
            if early.any():
                type_ = self.schema.field(self.plan.time).type
                raise HistoryEvictedError(
                    f"a query at {_shown(q[early].min().item(), type_)} reaches events the "
                    f"online state has let go: it answers queries at {_shown(start, type_)} "
                    "or later (the newest event time less the allowed lateness, when it last "
                    "let events go); allow more lateness to answer queries further back"
                )
        events = self._asked(queries, at_keys)
        return compute_at(self.plan, events, queries, at_time, at_keys)

    def _asked(self, queries: pa.Table, at_keys: tuple) -> pa.Table:
        """The held events of the keys ``queries`` ask for (the others lie in no query's
        frame): found through each part's sorted keys where the key is one integer column of
        the queries' type, else :func:`of_keys`. Every held event where those keys hold most
        of them (the copy would cost more than it saves)."""
        keys = self.plan.keys
        if self._indexed and self.parts:
            col, asked = self.parts[0].column(keys[0]), queries.column(at_keys[0])
            if col.type == asked.type:
                wanted = pc.unique(asked).drop_null().to_numpy()
                return self._by_index(np.sort(wanted.astype(np.int64)))
        return of_keys(self.table(), keys, queries, at_keys)

    def _index(self, part: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """``part``'s keys sorted, and the stable order that sorts them (so a key's events
        stay in arrival order), made once per part (a loaded state's on its first query)."""
        found = self._sorted.get(id(part))
        if found is None or found[0] is not part:
            k = np.asarray(part.column(self.plan.keys[0]).to_numpy(), np.int64)
            order = np.argsort(k, kind="stable")
            found = self._sorted[id(part)] = (part, k[order], order)
        return found[1], found[2]

    @property
    def nbytes(self) -> int:
        """The bytes the state holds: the events' columns and each part's sorted keys."""
        index = sum(k.nbytes + o.nbytes for _, k, o in self._sorted.values())
        return sum(p.nbytes for p in self.parts) + index

    def _by_index(self, wanted: np.ndarray) -> pa.Table:
        """The held events whose key is in ``wanted`` (sorted): each part's, key by key, each
        key's in arrival order (the evaluation's stable sort by key and time then puts ties
        in arrival order, as over every event). Every held event where those are most."""
        found = []
        for part in self.parts:
            sorted_keys, order = self._index(part)
            lo = np.searchsorted(sorted_keys, wanted, "left")
            hi = np.searchsorted(sorted_keys, wanted, "right")
            found.append((part, order, lo, hi))
        total = sum(int((hi - lo).sum()) for _, _, lo, hi in found)
        if 2 * total > self.count:
            return self.table()
        out = [part.take(pa.array(order[_runs(lo, hi)])) for part, order, lo, hi in found]
        return pa.concat_tables(out) if out else self.schema.empty_table()


def _runs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The positions ``lo[i], ..., hi[i] - 1`` of every run, one run after another."""
    lengths = hi - lo
    ends = np.cumsum(lengths)
    if not len(ends) or not ends[-1]:
        return np.empty(0, np.int64)
    return np.arange(ends[-1]) + np.repeat(lo - (ends - lengths), lengths)


#: events sampled, evenly over the arrival order, to judge whether a batch asks for the keys
#: of most of them (then all are evaluated, without a pass over every key)
SAMPLE = 4096


def of_keys(events: pa.Table, keys: tuple, queries: pa.Table, at_keys: tuple) -> pa.Table:
    """The events whose key some query asks for, in their order: the others lie in no query's
    frame, and the evaluation's cuts (:func:`~windowagg.engine.parallel.blocks`) follow the
    queries, so the answers are those over every event. All of them where the key is not one
    column of the same type on both sides, or holds floats (NaN), and where the queries ask for
    the keys of most of them (judged first on a sample)."""
    if len(keys) != 1 or not events.num_rows:
        return events
    col, asked = events.column(keys[0]), queries.column(at_keys[0])
    if col.type != asked.type or pa.types.is_floating(col.type):
        return events
    wanted = pc.unique(asked)
    step = max(1, events.num_rows // SAMPLE)
    sample = col.take(pa.array(np.arange(0, events.num_rows, step)))
    if 2 * (pc.sum(pc.is_in(sample, value_set=wanted)).as_py() or 0) > len(sample):
        return events  # most of them, by a sample: the pass and the copy would be lost
    asks = pc.is_in(col, value_set=wanted)
    if 2 * (pc.sum(asks).as_py() or 0) > events.num_rows:
        return events
    return events.filter(asks)


def _shown(value: float, type_: pa.DataType) -> str:
    """A time in the frames' unit as a column of ``type_`` shows it."""
    if pa.types.is_timestamp(type_):
        return str(pa.scalar(int(value), pa.int64()).cast(pa.timestamp(type_.unit, type_.tz)))
    if pa.types.is_date(type_):
        return str(pa.scalar(int(value), pa.int64()).cast(pa.timestamp("us")))
    return f"{value:g}"
