"""The events an online feature state holds (:class:`windowagg.online.OnlineFeatures`): what
arrived in time and what the state's frames can still reach.

Each ``update`` is checked against the mark its earlier updates set (the newest event time
less the allowed lateness, as a Spark watermark moves between micro-batches): an event older
than the mark is dropped and counted, never mixed in. Events that no
query at the mark or later can reach (the widest range frame before it, and each key's last
events there that a ``rows`` frame counts back over) are let go in bulk, as the
point-in-time stream lets them go (:func:`~windowagg.engine.rolling.at_stream.reachable`).
A query whose frame would reach what was let go is refused
(:class:`HistoryEvictedError`), never answered from part of its frame.

Queries are answered by the same evaluation as ``rolling_aggregate(at=)``
(:func:`~windowagg.engine.rolling.at.compute_at`) over the held events, with ties in arrival
order as in the batch call over the events in that order. Where the key has numbers (one
column of whole numbers as they are, of floats their bits; strings, binary, decimals and
several columns coded by a hash table kept from call to call, :mod:`.key_codes`), the state
holds its events in parts (merged as a binary counter, so that many small updates leave
O(log n) of them), each part in key and time order with ties in arrival order: an update's
events are sorted once, and two parts merge in one compiled pass
(:func:`~windowagg.kernels.key_order.merged_rows`). The parts' key numbers, times and the
fixed-width columns the entries read are also laid one after another in one index
(:class:`~.part_index.PartIndex`). A batch then finds each asked key's run in every part
among the part's distinct keys, merges the runs key by key in one compiled pass (as
stretches of rows that lie one after another), copies those stretches of the columns, and
hands the evaluation the events of the keys it asks for alone, already in the order it would
sort them into, so it does not sort them. Where every entry is a count, sum, mean, max, min,
distinct count, first or last value of one column (:mod:`.compiled_at`), one compiled call does
all of it, the keys a chunk at a time, reading the runs where they lie and writing the answers
at their requests' rows (:func:`~windowagg.kernels.runs_at.runs_at`). A batch that reads many
events cuts its asked keys into ranges of about equal events (:data:`RANGES_PER_THREAD` per
thread), each merged and answered on one thread, each thread taking the next range as it
finishes one (:func:`~windowagg.engine.parallel.claimed`): a point-in-time answer is its frame's
alone, so the answers are those of one thread. Each such batch costs time in proportion to the
events it reads. Where some entries are counts, sums, means, maxima, minima, first or last
values or distinct counts over a range or a rows frame, each part also keeps prefix sums, tables
of its best rows and its rows grouped by value for them, and a batch has those entries answered
from them (:mod:`.summaries`) in O(parts x log d) per query (the other entries evaluated over
the events), unless it asks for so few events a request that reading them costs less.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...kernels.key_order import (
    asked_keys,
    by_place,
    merged_rows,
    query_segments,
    rows_by_run,
)
from .. import parallel
from ..columns import (
    column_times,
    from_words,
    limits,
    moved,
    numbers_as_times,
    one_array,
    word_type,
    words,
)
from ..keys import in_key_order
from ..memory import empty, read_only, zeros
from .at import by_value, compute_at, entries_read, evaluate_at, in_events_unit
from .at_stream import reachable
from .compiled_at import KNOWN_NOTHING, Asked, Compiled, answered_at, compiled
from .key_codes import HELD_AS_CODES, KeyCodes, codeable
from .part_index import PartIndex, Runs
from .plan import RollingPlan
from .summaries import (
    EVALUATION_SETUP,
    Served,
    answered,
    answers,
    extremes_of,
    served,
    summarized,
    walk_pays,
)

__all__ = ["Held", "HistoryEvictedError", "of_keys", "times_as_numbers"]


class HistoryEvictedError(ValueError):
    """A query whose frame reaches events the online state has already let go."""


def times_as_numbers(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A time column as numbers in the unit frames are measured in (a timestamp's own unit,
    microseconds for a date), exactly: int64 for timestamps, dates and whole numbers, float64
    for floats; and which rows have a time."""
    type_ = col.type
    if pa.types.is_timestamp(type_) or pa.types.is_int64(type_) or pa.types.is_float64(type_):
        found = words(col)  # a 64-bit column of one chunk: its words as they lie
        if found is not None:
            wide = np.float64 if pa.types.is_float64(type_) else np.int64
            values = found[0].view(wide)
            if len(found) == 1:
                return values, np.ones(len(values), bool)
            return np.where(found[1], values, 0), found[1]
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
        #: the columns the entries read, all a query gathers
        self.read = entries_read(plan, schema.empty_table()).column_names
        #: where the key's columns have numbers (:mod:`.key_codes`: whole numbers, floats,
        #: strings, binary, decimals), each part is in key and time order (ties in arrival
        #: order: the order the evaluation puts them in), and ``index`` holds the parts' key
        #: numbers and times, distinct keys and fixed-width columns read
        types = [schema.field(k).type for k in plan.keys]
        self.codes = KeyCodes(types) if codeable(types) else None
        #: the key columns the parts hold as their codes (int64; each the place of its
        #: column among the key's): string and binary ones no entry reads, put back as they
        #: were by :meth:`table`
        self.as_codes = {
            k: i
            for i, (k, t) in enumerate(zip(plan.keys, types))
            if self.indexed and t in HELD_AS_CODES and k not in self.read
        }
        #: the entries that are counts, sums, means, maxima, minima, first or last values or
        #: distinct counts over a range or rows frame, answered from each part's prefix sums,
        #: tables and groups (:mod:`.summaries`), as a plan of them alone (None: no such
        #: entry); and the others, evaluated over the events, with the columns they read
        #: (None: no other entry)
        self.served: Served | None = None
        self.rest: Reading | None = None
        #: where some entries are served, the columns each part keeps prefix sums of (maybe
        #: none), and the (column, largest) pairs whose tables of their best rows it keeps
        self.summed: dict[str, bool] | None = None
        self.extremes: frozenset[tuple[str, bool]] = frozenset()
        #: and the columns whose rows grouped by key and value it keeps (distinct counts)
        self.grouped: frozenset[str] = frozenset()
        fixed: set[str] = set()
        if self.indexed:
            fixed = {n for n in self.read if word_type(schema.field(n).type) is not None}
            self.served = served(plan, schema, fixed)
        #: every entry evaluated over the events, with the columns read (and, where the
        #: index holds them, as one compiled call answers them: :mod:`.compiled_at`)
        self.whole = Reading(plan, self.read, compiled(plan, schema, fixed) if fixed else None)
        if self.served is not None:
            self.summed = summarized(self.served.plan)
            self.extremes = extremes_of(self.served.plan)
            self.grouped = self.served.grouped
            names = {e.name for e in self.served.plan.entries}
            if len(names) < len(plan.entries):
                rest = replace(plan, entries=tuple(e for e in plan.entries if e.name not in names))
                read = entries_read(rest, schema.empty_table()).column_names
                self.rest = Reading(rest, read, compiled(rest, schema, fixed))
        #: where the key is one column whose value a request may give as a Python ``int`` (an
        #: integer column but an unsigned 64-bit one, whose codes are its bits: a key is its
        #: own number in the index), ``str`` (a string column: its UTF-8 bytes' code) or
        #: ``bytes`` (a binary column): that Python type, and an integer type's span
        self.one_key: tuple[type, int, int] | None = None
        plain = self.codes.plain[0] if self.codes is not None and len(types) == 1 else pa.null()
        if pa.types.is_integer(plain) and plain != pa.uint64():
            info = np.iinfo(plain.to_pandas_dtype())
            self.one_key = int, int(info.min), int(info.max)
        elif pa.types.is_string(plain) or pa.types.is_large_string(plain):
            self.one_key = str, 0, 0
        elif pa.types.is_binary(plain) or pa.types.is_large_binary(plain):
            self.one_key = bytes, 0, 0
        self.index = self._fresh()
        self.newest: float | None = None  # the newest event time in time (None: none yet)
        #: the earliest query time answered once events were let go (None: none let go)
        self.answers_from: float | None = None
        self.dropped = 0
        self.after = 0  # events held after the last letting go

    @property
    def indexed(self) -> bool:
        """Whether the key has numbers (:attr:`codes`), and the parts an index."""
        return self.codes is not None

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
            self._hold(events.filter(pa.array(keep)) if not keep.all() else events)
            self._merge()
        self._evict()
        return keep

    def restore(self, events: pa.Table) -> None:
        """Hold ``events`` (every one in time, in arrival order or, where the key has numbers,
        in key and time order with ties in arrival order: a saved state's, or those kept
        when events are let go) and nothing else. The key's codes start afresh: a part after
        the first may then be sorted again (a key it holds that the first does not got a
        later code than it had)."""
        self.parts, self.index = [], self._fresh()
        if self.codes is not None:  # codes afresh: a key let go keeps none
            self.codes = KeyCodes(self.codes.types)
            self.index.reserve(events.num_rows)
        for batch in events.to_batches():  # each the run of arrivals of a part, or of one
            if batch.num_rows:
                self._hold(pa.Table.from_batches([batch]))
                self._merge()

    def _hold(self, part: pa.Table) -> None:
        """Hold ``part`` as the newest part: in key and time order where the key has numbers
        (:func:`key_time_order`; ties keep their order)."""
        part = part.combine_chunks()
        if self.codes is not None:
            keys, each = self.codes.of_each([part.column(k) for k in self.plan.keys], add=True)
            for k, i in self.as_codes.items():  # held as codes: a merge takes them cheaply
                part = part.set_column(part.schema.get_field_index(k), k, pa.array(each[i]))
            times, _ = times_as_numbers(part.column(self.plan.time))
            if not in_key_order(keys, times):
                order = key_time_order(keys, times)
                part, keys, times = part.take(pa.array(order)), keys[order], times[order]
            self.index.push(keys, times, part)
        self.parts.append(part)

    def _fresh(self) -> PartIndex:
        """An index of no part, for this state's times and read columns."""
        numbers = times_as_numbers(self.schema.empty_table().column(self.plan.time))[0]
        # the columns a compiled call reads: their span in each part spares it passes
        readings = [r.fast for r in (self.whole, self.rest) if r is not None]
        spanned = frozenset(c.column for c in readings if c is not None and c.column is not None)
        return PartIndex(
            numbers.dtype,
            self.schema,
            self.read,
            self.summed,
            self.extremes,
            self.grouped,
            spanned,
        )

    def _merge(self) -> None:
        """Merge the newest part into the one before while that one is no larger (a binary
        counter: O(log n) parts, each event copied O(log n) times), so that many small
        updates leave few parts to read; in key and time order, the older's rows first on
        ties (:func:`~windowagg.kernels.key_order.merged_rows`)."""
        parts = self.parts
        while len(parts) > 1 and parts[-2].num_rows <= parts[-1].num_rows:
            newer, older = parts.pop(), parts[-1]
            both = pa.concat_tables([older, newer])
            if self.indexed:
                index = self.index
                (ka, ta), (kb, tb) = index.part(index.parts - 2), index.part(index.parts - 1)
                n = both.num_rows
                keys, times, rows = (
                    np.empty(n, np.int64),
                    np.empty(n, ta.dtype),
                    np.empty(n, np.int64),
                )
                merged_rows(ka, ta, kb, tb, keys, times, rows)
                grouped = index.merged_groups(rows)  # the two parts' groups, merged
                both = both.take(pa.array(rows))
            parts[-1] = both.combine_chunks()
            if self.indexed:
                self.index.pop(2)  # laid again, merged
                self.index.push(keys, times, parts[-1], grouped)

    def _evict(self) -> None:
        """Let go of the events no query at the mark or later reaches
        (:func:`~windowagg.engine.rolling.at_stream.reachable`), in one pass once the events
        held have doubled since the last, where at least half of them go."""
        held = self.count
        if self.newest is None or held < 2 * self.after:
            return
        earliest = self.newest - self.lateness
        kept = reachable(self.plan, self.table(), earliest)
        assert kept is not None
        if 2 * kept.num_rows <= held:
            self.restore(kept)
            self.answers_from = earliest
        self.after = kept.num_rows

    def table(self) -> pa.Table:
        """Every held event (an empty table in the schema where none), part by part in
        arrival order, each part in arrival order or, where the key has numbers, in key and
        time order with ties in arrival order: a stable sort by key and time puts ties in
        arrival order either way."""
        if not self.parts:
            return self.schema.empty_table()
        held, codes = pa.concat_tables(self.parts), self.codes
        for k, i in self.as_codes.items():  # the key columns held as codes, as they were
            assert codes is not None  # a key held as codes has them
            place = held.schema.get_field_index(k)
            held = held.set_column(place, k, codes.decoded(i, held.column(k)))
        return held

    def answer(self, queries: pa.Table, at_time: str, at_keys: tuple) -> list[pa.Array]:
        """Every entry's column at ``queries``' rows, over the held events; refused where a
        query's frame reaches events let go."""
        start = self.answers_from
        if start is not None:
            q, timed = times_as_numbers(
                in_events_unit(self.plan, self.schema, queries, at_time).column(at_time)
            )
            early = timed & (q < start)  # NaN compares false: no frame reaches back
            if early.any():
                self._evicted(q[early].min().item())
        keys = self.plan.keys
        if self.codes is not None and self.parts:
            # the queries' keys in the events' key types, compared by value (as the batch
            # call compares them: a key no value of that type equals is null)
            asked = [
                by_value(one_array(queries.column(a)), t) for a, t in zip(at_keys, self.codes.plain)
            ]
            return self._by_key(queries, asked, at_time)
        events = of_keys(self.table(), keys, queries, at_keys)
        return compute_at(self.plan, events, queries, at_time, at_keys)

    def _parts_pay(self, runs: Runs, n: int) -> bool:
        """Whether ``n`` requests of ``runs``' keys cost less from the parts than reading
        their events: where other entries read the events anyway, for a hot key's requests
        alone; where the groups' walk is weighed later (:func:`~.summaries.walk_pays`),
        always; else where the requests ask for enough events each."""
        if self.rest is not None:  # the events are read for the other entries anyway
            return runs.n >= MIXED_PER_REQUEST * n
        if self.grouped:  # the groups' walk weighed against the events (:func:`answered`)
            return True
        return runs.n + EVALUATION_SETUP >= SUMMED_PER_REQUEST * n

    def _evicted(self, at: float) -> None:
        """Refuse a query at ``at``, before :attr:`answers_from`: its frames reach events let
        go."""
        type_, start = self.schema.field(self.plan.time).type, self.answers_from
        assert start is not None  # some events were let go
        raise HistoryEvictedError(
            f"a query at {_shown(at, type_)} reaches events the online state has let go: it "
            f"answers queries at {_shown(start, type_)} or later (the newest event time less "
            "the allowed lateness, when it last let events go); allow more lateness to answer "
            "queries further back"
        )

    def one(self, key: object, at: object) -> list | None:
        """One request's answers as Python values (None for a null) from the parts' sums,
        tables and groups (:func:`~.summaries.answers`), with no table: where the key is one
        column and ``key`` a Python value of it (:attr:`one_key`: an int in an integer
        column's span, a string's ``str``, a binary's ``bytes``), ``at`` a time of the
        events' time type as Arrow converts it (:meth:`_time_number`), every entry is
        served, and the parts serve this request (as :meth:`_by_key` weighs one). None
        elsewhere: the caller then asks through a one-row table, whose answers these
        equal."""
        served, kind = self.served, self.one_key
        if served is None or self.rest is not None or kind is None or not self.parts:
            return None
        if type(key) is not kind[0]:
            return None
        if isinstance(key, int):
            if not kind[1] <= key <= kind[2]:
                return None
            number = key
        else:  # the code of its bytes (-1: a key never seen, which holds no event)
            try:
                raw = key.encode() if isinstance(key, str) else key
            except UnicodeEncodeError:  # a lone surrogate: the table's path says why
                return None
            assert isinstance(raw, bytes) and self.codes is not None
            codes = self.codes.columns[0]
            assert codes is not None  # a string or binary column's
            size = np.array([0, len(raw)], np.int64)
            number = codes.of(size, np.frombuffer(raw, np.uint8), add=False)[0]
        t = self._time_number(at)
        if t is None:
            return None
        if self.answers_from is not None and t < self.answers_from:
            self._evicted(t)
        runs = self.index.runs(np.array([number], np.int64))
        place = np.zeros(1, np.int64)
        if not self._parts_pay(runs, 1) or not walk_pays(served, self.index, runs, place):
            return None  # its events cost less to read: the evaluation answers it
        qtimes = np.array([t], self.index.times.data.dtype)
        got = answers(served, self.index, runs, place, qtimes)
        if got is None:
            return None
        return [None if none is not None and none[0] else v[0].item() for v, none in got]

    def _time_number(self, at: object) -> int | float | None:
        """``at`` as the laid times hold it, where the events' time is a timestamp or an
        int64 (Arrow's conversion of it to that type: a timestamp's count of its unit) or a
        float64 (a number, not NaN); None for any other time type, a null, or a value Arrow
        does not convert (the one-row table's path then says why)."""
        type_ = self.schema.field(self.plan.time).type
        try:
            scalar = pa.scalar(at, type_)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return None
        if not scalar.is_valid:
            return None
        if pa.types.is_timestamp(type_):
            return scalar.value
        if pa.types.is_int64(type_):
            return scalar.as_py()
        if pa.types.is_float64(type_):
            number = scalar.as_py()
            return None if math.isnan(number) else number
        return None

    def _by_key(self, queries: pa.Table, asked: list[pa.Array], at_time: str) -> list[pa.Array]:
        """The answers where the key has numbers (``asked``: the queries' key columns in the
        events' key types): the held
        events of the keys asked for alone (the others lie in no query's frame), found in
        key and time order with each key's count (:meth:`_by_index`), so the evaluation
        (:func:`~windowagg.engine.rolling.at.evaluate_at`) is handed the keys' segments and
        each query's, and neither sorts the events nor matches keys again; only the columns
        the entries read are gathered (the times come with the keys found). A batch of at
        least :data:`~windowagg.engine.parallel.PARALLEL_ROWS` events, on several threads,
        runs in ranges of keys (:meth:`_in_ranges`). A batch that asks for many events a
        request has the entries the parts serve answered from their sums and tables
        (:meth:`_from_summaries`), and only the others evaluated over the events."""
        assert self.codes is not None  # the key has numbers
        q = self.codes.of(asked, add=False)  # -1: a key never seen
        valid = None  # every key column holds a value
        for col in asked:
            if col.null_count:
                ok = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), bool)
                valid = ok if valid is None else valid & ok
        wanted, place = asked_of(q, valid)
        runs = self.index.runs(wanted)
        served, others = self.served, self.rest
        if served is not None and self._parts_pay(runs, len(place)):
            got = self._from_summaries(queries, place, runs, at_time)
            if got is not None and others is None:
                return got
            if got is not None and others is not None:
                # the other entries over the events, each then in its place
                rest = self._evaluated(queries, place, runs, at_time, others)
                by_name = dict(zip([e.name for e in served.plan.entries], got))
                by_name |= zip([e.name for e in others.plan.entries], rest)
                return [by_name[e.name] for e in self.plan.entries]
        return self._evaluated(queries, place, runs, at_time, self.whole)

    def _evaluated(
        self,
        queries: pa.Table,
        place: np.ndarray,
        runs: Runs,
        at_time: str,
        reading: Reading,
    ) -> list[pa.Array]:
        """The entries of ``reading`` over the held events of ``runs``: by its compiled call
        (:meth:`_compiled`) where it has one, else by the evaluation (:meth:`_of_runs`); in
        ranges of keys on the engine's threads (:data:`RANGES_PER_THREAD` per thread, on
        one thread too) where the batch reads :data:`~windowagg.engine.parallel.PARALLEL_ROWS`
        events or more."""
        ranges = [(0, runs.lo.shape[1])]
        if runs.n >= parallel.PARALLEL_ROWS:
            cut = parallel.grouped(np.r_[0, np.cumsum(runs.each)], RANGES_PER_THREAD)
            ranges = cut if len(cut) > 1 else ranges
        fast = self._compiles(reading)
        if fast is not None:
            got = self._compiled(queries, place, runs, ranges, at_time, fast)
            if got is not None:
                return got
        if len(ranges) > 1:

            def of_runs(asked: pa.Table, at: np.ndarray, keys: Runs) -> Answers:
                return self._of_runs(asked, at, keys, at_time, reading)

            got = self._in_ranges(queries, place, runs, ranges, at_time, of_runs)
            assert got is not None  # the evaluation answers every range
            return got
        return list(self._of_runs(queries, place, runs, at_time, reading))

    def _in_ranges(
        self,
        queries: pa.Table,
        place: np.ndarray,
        runs: Runs,
        ranges: list[tuple[int, int]],
        at_time: str,
        answer: Callable[[pa.Table, np.ndarray, Runs], Answers | None],
    ) -> list[pa.Array] | None:
        """``answer`` (:meth:`_of_runs` or :meth:`_summarized`) with ``runs``' keys in
        ``ranges`` (of about equal work, one or more per thread), each range with its queries
        (those of a null key with the first) in key order (ties in the batch's order: the
        evaluation then neither sorts them nor puts its answers back) on one thread, each
        thread taking the next range as it finishes one
        (:func:`~windowagg.engine.parallel.claimed`), the answers then put back in the
        queries' order (each range puts its own there, on its thread, where every column
        has a fixed width: :class:`InOrder`): each query's answer is its frame's alone, so
        they are one thread's answers. None where ``answer`` gives none for some range."""
        order = by_key(place, runs.lo.shape[1])
        cuts = _cuts(place[order], ranges)
        stamps = one_array(queries.column(at_time))
        laid = words(stamps)  # the times' words (and validity), found once
        back = InOrder(len(place))

        def run(r: int) -> tuple[np.ndarray, Answers | None]:
            (a, b), rows = ranges[r], order[cuts[r] : cuts[r + 1]]
            at = place[rows]
            if laid is None:  # not of a fixed width: Arrow's take
                asked = pa.table({at_time: stamps.take(pa.array(rows))})
            else:
                asked = pa.table({at_time: from_words(stamps.type, [w[rows] for w in laid])})
            at = np.where(at >= 0, at - a, -1)
            got = answer(asked, at, runs.keys(a, b))
            if got is not None:
                back.put(rows, got)
            return rows, got

        answered = parallel.claimed(run, range(len(ranges)))
        pieces = [columns for _, columns in answered if columns is not None]
        if len(pieces) < len(answered):
            return None
        if back.whole:  # each range put its answers in place, on its thread
            return back.columns()
        order = np.concatenate([rows for rows, _ in answered])
        return moved([pa.concat_arrays(list(column)) for column in zip(*pieces)], order)

    def _from_summaries(
        self, queries: pa.Table, place: np.ndarray, runs: Runs, at_time: str
    ) -> list[pa.Array] | None:
        """The answers from each part's prefix sums (:meth:`_summarized`), a batch of at
        least :data:`PARALLEL_REQUESTS` requests on several threads in ranges of keys of
        about equal work (:data:`KEY_REQUESTS`; :meth:`_in_ranges`); None where the sums do
        not serve, or the distinct counts' groups cost more than the events
        (:func:`~.summaries.walk_pays`)."""
        assert self.served is not None  # some entries are served
        if not self.index.sound or not walk_pays(self.served, self.index, runs, place):
            return None
        if len(place) >= PARALLEL_REQUESTS and parallel.get_threads() > 1:
            asked = np.bincount(place[place >= 0], minlength=runs.lo.shape[1])
            work = asked + KEY_REQUESTS * (asked > 0)  # each asked key's bounds and walk
            ranges = parallel.grouped(np.r_[0, np.cumsum(work)])
            if len(ranges) > 1:

                def summarized(asked: pa.Table, at: np.ndarray, keys: Runs) -> list | None:
                    return self._summarized(asked, at, keys, at_time)

                return self._in_ranges(queries, place, runs, ranges, at_time, summarized)
        return self._summarized(queries, place, runs, at_time)

    def _summarized(
        self, queries: pa.Table, place: np.ndarray, runs: Runs, at_time: str
    ) -> list[pa.Array] | None:
        """The answers from each part's prefix sums (:func:`~.summaries.answered`): the
        requests' times in the unit and type of the laid times (a null time as the bounds
        read one, NaN as +inf, as :func:`~windowagg.engine.columns.times_of` has them);
        None where their types differ, or the sums do not serve."""
        col = in_events_unit(self.plan, self.schema, queries, at_time).column(at_time)
        qtimes, timed = times_as_numbers(col)
        times = self.index.times.view()
        if qtimes.dtype != times.dtype:
            return None
        if qtimes.dtype == np.float64 or col.null_count:
            qtimes = qtimes.copy()  # its own, to write the null and NaN times into
            if qtimes.dtype == np.float64:
                qtimes[np.isnan(qtimes)] = np.inf
            if col.null_count:
                qtimes[~timed] = limits(times)[0]
        assert self.served is not None  # some entries are served
        return answered(self.served, self.index, runs, place, qtimes)

    def _of_runs(
        self, queries: pa.Table, place: np.ndarray, runs: Runs, at_time: str, reading: Reading
    ) -> Answers:
        """The entries of ``reading`` at ``queries`` (each asking for the key at ``place``
        among ``runs``' keys, -1 for a null key), evaluated over the held events of ``runs``
        (:func:`~.at.evaluate_at`)."""
        plan, read, _ = reading
        events, counts, numbers = self._by_index(runs, read)
        seg, qseg, times = self._segments(place, counts, numbers)
        return evaluate_at(plan, events, times, seg, qseg, queries, at_time, self.schema)

    def _compiles(self, reading: Reading) -> Compiled | None:
        """The reading's one compiled call (:mod:`.compiled_at`) where it has one and the
        column it reads holds no null (None where the evaluation answers it)."""
        fast = reading.fast
        if fast is not None and (fast.column is None or self.index.valid[fast.column] is None):
            return fast
        return None

    def _segments(
        self, place: np.ndarray, counts: np.ndarray, numbers: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The asked keys' segments of the events found (``counts`` of each key, times
        ``numbers``), each query's (key ``place``, -1: none), and the times as the
        evaluation reads a time column (doubles already where the index lays them so)."""
        seg, qseg = empty(len(counts) + 1, np.int64), empty(len(place), np.int64)
        m = query_segments(place, counts, seg, qseg, empty(len(counts), np.int64))
        times = numbers if self.index.doubles else numbers_as_times(self.plan.time, numbers)
        return seg[: m + 1], qseg, times

    def _compiled(
        self,
        queries: pa.Table,
        place: np.ndarray,
        runs: Runs,
        ranges: list[tuple[int, int]],
        at_time: str,
        fast: Compiled,
    ) -> list[pa.Array] | None:
        """:meth:`_evaluated` by the reading's compiled call (:func:`~.compiled_at.answered_at`)
        over the runs as they lie in the index, a call per range of keys: the requests by
        key (a null key's first), then time, their times converted once for the batch. None
        where the call leaves the batch to the evaluation."""
        order = by_key(place, runs.lo.shape[1])
        col = in_events_unit(self.plan, self.schema, queries, at_time)[at_time]
        numbers = column_times(at_time, col)
        at, qtimes = place[order], numbers[order]
        if not in_key_order(at, qtimes):  # a key asked at several times, not in time order
            order = np.lexsort((numbers, place))
            at, qtimes = place[order], numbers[order]
        asked = Asked(at, qtimes, order, _cuts(at, ranges))
        index, column = self.index, fast.column
        laid = (index.times.view(), np.zeros(0) if column is None else index.values(column)[0])
        known = KNOWN_NOTHING if column is None else index.spans[column].known()
        lohi = (runs.lo, runs.hi, runs.each)
        return answered_at(fast, laid, lohi, ranges, asked, index.doubles, known)

    @property
    def nbytes(self) -> int:
        """The bytes the state holds: the events' columns and each part's keys and times."""
        held = sum(p.nbytes for p in self.parts)
        return held + (self.index.nbytes + self.codes.nbytes if self.codes is not None else 0)

    def _by_index(self, runs: Runs, columns: list[str]) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        """The ``columns`` of the held events of ``runs``' keys, in key and time order, ties
        in arrival order, how many of each key, and their times as numbers
        (:func:`times_as_numbers`): merged across the parts by the index
        (:meth:`~.part_index.PartIndex.merged`), the fixed-width columns gathered from it,
        any other column taken from each part (:func:`taken`) and put in that order."""
        stretches, times, counts = self.index.merged(runs)
        found = {c: self.index.gathered(c, stretches) for c in columns}
        other = [c for c, col in found.items() if col is None]
        if other:  # each part's rows of them, taken from the part, then put in order
            rows = stretches.rows()
            starts = np.array(self.index.bounds, np.int64)
            local, at = empty(len(rows), np.int64), empty(len(rows), np.int64)
            bounds = empty(len(self.parts) + 1, np.int64)
            rows_by_run(rows, starts, local, at, bounds, empty(len(self.parts), np.int64))
            spans = [
                (p, a, b)
                for p, (a, b) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
                if b > a
            ]
            for c in other:
                parts = [self.parts[p].column(c) for p, _, _ in spans]
                found[c] = taken(parts, spans, local, at, self.schema.field(c).type)
        return pa.table(found), counts, times


#: a batch read over its events is cut into this many ranges of keys per thread, each thread
#: claiming the next as it finishes one (:func:`~windowagg.engine.parallel.claimed`), so that
#: a thread whose core is busy takes fewer. In one process, a uniform batch of the online
#: suite (10M events, 2 threads) took 0.87-0.92 times as long in four ranges a thread as in
#: one when each range's merge, copy and evaluation were Python's steps; with one compiled
#: call a range (its keys merged and answered a chunk at a time, :mod:`.compiled_at`), two
#: and four took the same time (4.43 and 4.50 ms), eight longer (4.68 ms). A Zipf batch
#: answered from the parts gains nothing (its hot keys are not cut), so it keeps one
RANGES_PER_THREAD = 4

#: a batch's answer columns
Answers = Sequence[pa.Array]


class InOrder:
    """A batch's answer columns (of ``n`` rows) put together in its requests' order, range
    by range, each range's on its own thread (:meth:`put`): the words of each column (and
    its validity, where some range has a null) written at the range's rows. ``whole`` where
    every range put its columns (none without a fixed width)."""

    def __init__(self, n: int) -> None:
        self.n, self.lock = n, threading.Lock()
        self.types: list[pa.DataType] = []
        self.words: list[list[np.ndarray | None]] = []  # each column's words and validity
        self.ranges = self.put_ranges = 0

    def put(self, rows: np.ndarray, columns: Answers) -> None:
        """A range's ``columns``, whose row ``i`` is the request at ``rows[i]``."""
        found = [words(c) for c in columns]
        with self.lock:
            self.ranges += 1
            if any(w is None for w in found):
                return
            if not self.words:
                self.types = [c.type for c in columns]
                self.words = [[empty(self.n, w[0].dtype), None] for w in found if w is not None]
            for slot, w in zip(self.words, found):
                if w is not None and len(w) > 1 and slot[1] is None:  # nulls: all valid first
                    slot[1] = np.ones(self.n, bool)
            self.put_ranges += 1
        for slot, w in zip(self.words, found):
            assert w is not None and slot[0] is not None
            slot[0][rows] = w[0]
            if len(w) > 1:
                assert slot[1] is not None
                slot[1][rows] = w[1]

    @property
    def whole(self) -> bool:
        return self.put_ranges == self.ranges > 0

    def columns(self) -> list[pa.Array]:
        """The columns, in the requests' order."""
        return [
            from_words(t, [w for w in slot if w is not None])
            for t, slot in zip(self.types, self.words)
        ]


class Reading(NamedTuple):
    """Entries evaluated over the events (a plan of them), the columns they read, and the
    plan as one compiled call answers it (:func:`~.compiled_at.compiled`; None: it does
    not)."""

    plan: RollingPlan
    read: list[str]
    fast: Compiled | None = None


#: a batch is answered from the parts' prefix sums (:mod:`.summaries`) unless it asks for more than
#: :data:`SUMMED_PER_REQUEST` events a request, less :data:`~.summaries.EVALUATION_SETUP` events in
#: all: reading fewer costs less. Measured on 10M events in three parts: one request costs about 70
#: us from the sums, 78 us and 2.7 ns an event from its events; a batch about 90 us and 0.3-0.8 us a
#: request from the sums (the more requests ask for one key, the less), 170 us, 0.25 us a request
#: and 5.3 ns an event from its events, on one thread (on two, a batch of 10,000 uniform requests:
#: 8.3 ms from the sums, 5.1 ms from its events; 1,000 of them: 0.69 ms and 0.91 ms)
SUMMED_PER_REQUEST = 128

#: a batch of this many requests or more is answered from the parts on several threads, each
#: a range of keys of about equal work (fewer: a thread's hand-off costs more than it saves)
PARALLEL_REQUESTS = 1 << 10

#: what finding an asked key's frames in every part and walking its groups once costs, in
#: requests' worth (several requests of one key at one time share them): the ranges of a
#: batch answered from the parts on several threads are of about equal work so counted.
#: Measured on the online suite's Zipf state (10M events), batches of 10,000 requests of
#: about 3,100 keys: the two ranges of a batch, each on one thread in turn, took 5.3 ms
#: (8,150 requests of 1,268 keys, the hot ones) and 3.0 ms (1,850 requests of 1,791 keys)
#: when cut at 12, about 1.2 us a key and 0.46 us a request; in one process, batches on 2
#: threads cut at 1, 2, 3, 4 and 6 took 1.17, 1.01, 0.86, 0.84 and 0.90 times as long as
#: at 12
KEY_REQUESTS = 4

#: a state with other entries too reads the events for them anyway: its served entries come
#: from the parts where a batch asks for this many events a request or more, so that what
#: their evaluation over the events would cost outweighs the parts' cost per request.
#: Measured on the online suite's Zipf state (10M events, a distinct count beside four
#: served entries), batches of 10,000, 1,000, 100 and 10 requests (757, 6,000, 41,000 and
#: 174,000 events a request): 48 against 44 ms, 25 against 30, 18 against 20, 10.4 against
#: 11.7 from the parts and reading every entry's events
MIXED_PER_REQUEST = 1 << 11

#: the asked keys are found through a table of their span where it holds at most this many
#: keys per query, plus :data:`SPAN_FLOOR` (:func:`~windowagg.kernels.key_order.asked_keys`)
SPAN_PER_QUERY, SPAN_FLOOR = 16, 1 << 16


def asked_of(q: np.ndarray, valid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The keys asked for (``q`` where ``valid``; None: every one), sorted and distinct, and
    each query's place among them (-1 where not ``valid``): one key as it is; keys of a
    narrow span through a table of it, in compiled passes
    (:func:`~windowagg.kernels.key_order.asked_keys`); else by a sort."""
    place = empty(len(q), np.int64)
    if len(q) == 1:
        ok = valid is None or bool(valid[0])
        place[0] = 0 if ok else -1
        return q if ok else q[:0], place
    if valid is None:
        valid = np.ones(len(q), bool)
    some = q if valid.all() else q[valid]
    if not len(some):
        place.fill(-1)
        return some, place
    low, high = int(some.min()), int(some.max())
    if high - low < SPAN_PER_QUERY * len(q) + SPAN_FLOOR:
        wanted = empty(len(some) + 1, np.int64)
        table = zeros(high - low + 1, np.int64)
        w = asked_keys(read_only(q), read_only(valid), low, table, wanted, place)  # one compile
        return wanted[:w], place
    wanted, inverse = np.unique(some, return_inverse=True)
    place.fill(-1)
    place[valid] = inverse
    return wanted, place


def by_key(place: np.ndarray, keys: int) -> np.ndarray:
    """The requests in order of their key's ``place`` among ``keys`` keys (a null key's, -1,
    first; ties in the batch's order): a counting sort."""
    order = empty(len(place), np.int64)
    by_place(read_only(place), empty(keys + 2, np.int64), order)
    return order


def _cuts(at: np.ndarray, ranges: list[tuple[int, int]]) -> list[int]:
    """Where each range of keys' requests begin among requests by key (``at``, their keys'
    places; those of a null key with the first range), and their end."""
    return [0, *np.searchsorted(at, [a for a, _ in ranges[1:]]).tolist(), len(at)]


def taken(
    columns: list[pa.ChunkedArray],
    spans: list[tuple[int, int, int]],
    local: np.ndarray,
    at: np.ndarray,
    type_: pa.DataType,
) -> pa.Array:
    """The rows ``local[a:b]`` of each part's column (one per span ``(p, a, b)``), put at
    ``at[a:b]`` of the result, with Arrow's take (a part whole where all its rows are
    asked)."""
    pieces = []
    for col, (_, a, b) in zip(columns, spans):
        whole = col.combine_chunks()
        pieces.append(whole if b - a == len(whole) else whole.take(pa.array(local[a:b])))
    if not pieces:
        return pa.array([], type_)
    if len(pieces) == 1:  # one part: its rows already in order
        return pieces[0]
    return pa.concat_arrays(pieces).take(pa.array(at))


def key_time_order(keys: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The stable order of rows by key, then time (ties in their order): one sort of the two
    packed into one word where they fit (whole-number times), else two stable sorts."""
    if len(keys) and times.dtype == np.int64:
        k0, t0 = int(keys.min()), int(times.min())
        bits = (int(times.max()) - t0).bit_length()
        if (int(keys.max()) - k0).bit_length() + bits <= 62:
            return np.argsort(((keys - k0) << bits) | (times - t0), kind="stable")
    order = np.argsort(times, kind="stable")
    return order[np.argsort(keys[order], kind="stable")]


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
