"""Online features: the point-in-time frames of ``rolling_aggregate(at=)`` on events that are
still arriving, so that a feature served at request time is the feature a training backfill
computes.

:class:`OnlineFeatures` holds the events (:class:`~windowagg.engine.rolling.online.Held`):
``update`` takes them in any order within the allowed lateness, ``query`` answers queries
with exactly what ``rolling_aggregate(every event held, at=queries)`` answers, value and type,
and ``save``/``load`` carry the state across a restart. :func:`replay` plays an event log and
a query log through a state in arrival order and compares every answer with the batch call
over the events that had arrived by each query.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .durations import SpecError, duration, unit_of
from .engine.entries import names as names_of
from .engine.memory import engine_memory
from .engine.rolling.at import check_queries
from .engine.rolling.online import Held, HistoryEvictedError, times_as_numbers
from .engine.rolling.plan import plan_rolling
from .tables import AnyTable, Columns, _to_arrow, _with_columns, rolling_aggregate

__all__ = ["HistoryEvictedError", "OnlineFeatures", "Replay", "replay"]

_FORMAT = "windowagg.online/1"


class OnlineFeatures:
    """Point-in-time features over events still arriving, equal to the batch call.

    Parameters
    ----------
    time : str
        The events' time column: timestamps, dates or numbers.
    key : str, list of str or None
        Each key's events have their own frames.
    aggs : dict
        As :func:`windowagg.rolling_aggregate`'s: ``output name -> (aggregation, column,
        frame)``, range and ``rows`` frames, Spark's names, types and null rules.
    allowed_lateness : str, number or timedelta, default 0
        How far behind the newest event time an event may arrive and still count: a duration
        (``"10m"``), a ``timedelta``, or a number of seconds (of the time's own unit where
        the times are plain numbers). An event older than the newest time of the earlier
        updates less this is dropped and counted in :attr:`dropped`.
    schema : pyarrow.Schema, optional
        The events' schema, where queries may come before the first event (else the first
        ``update`` gives it); every entry is checked against it at once.

    Notes
    -----
    ``query(q)`` answers what ``rolling_aggregate(events, time=, key=, aggs=, at=q)`` answers
    over every event held, in arrival order (ties keep it); ``get(key, at)`` answers one
    request, given by its key and time alone, as a dict. Events older than the newest
    time less the widest range frame and the lateness are let go (each key's last events
    that a ``rows`` frame reaches stay); a query whose frame reaches further back raises
    :class:`HistoryEvictedError`. An event with no time or a null key lies in no frame and
    is not held.
    """

    def __init__(
        self,
        *,
        time: str,
        key: Columns = None,
        aggs: Mapping[str, tuple],
        allowed_lateness: str | float | dt.timedelta = 0,
        schema: pa.Schema | None = None,
    ) -> None:
        if not isinstance(time, str):
            raise TypeError(f"time must be a column name, got {time!r}")
        if not isinstance(aggs, dict) or not aggs:
            raise TypeError(
                "aggs must be a non-empty dict: output name -> (aggregation, column, frame)"
            )
        if isinstance(allowed_lateness, bool) or not isinstance(
            allowed_lateness, str | int | float | dt.timedelta
        ):
            raise TypeError(
                "allowed_lateness is a duration ('10m'), a timedelta or a number of seconds, "
                f"got {allowed_lateness!r}"
            )
        self.time, self.keys, self.aggs = time, names_of(key, "key"), dict(aggs)
        self.allowed_lateness = allowed_lateness
        self._held: Held | None = None  # made by the first update (the events' schema)
        #: the query table's schema and columns last checked (another is checked again)
        self._checked: tuple | None = None
        if schema is not None:
            self._held = self._start(schema)

    @property
    def dropped(self) -> int:
        """Events dropped for arriving later than the allowed lateness."""
        return 0 if self._held is None else self._held.dropped

    @property
    def held(self) -> int:
        """Events held now."""
        return 0 if self._held is None else self._held.count

    def update(self, events: AnyTable) -> int:
        """Take a batch of events (a pandas, Polars or Arrow table, or a dict of arrays), in
        any order; returns how many were held (the others were late, or lie in no frame)."""
        arrow, _ = _to_arrow(events)
        return int(self._add(arrow).sum())

    def _add(self, arrow: pa.Table) -> np.ndarray:
        """Which rows of ``arrow`` the state held."""
        if self._held is None:
            self._held = self._start(arrow.schema)
        held = self._held
        return held.add(_conform(arrow, held.schema).combine_chunks())

    def query(
        self, queries: AnyTable, *, at_time: str | None = None, at_key: Columns = None
    ) -> AnyTable:
        """The query table, whole and in its own order and kind, with one column per entry:
        each entry over the events held with the query's key in the frame placed at the
        query's time (``at_time``, default ``time``; ``at_key``, default ``key``)."""
        if self._held is None:
            raise ValueError(
                "no events yet: call update() first, or give the events' schema (schema=)"
            )
        held = self._held
        arrow, kind = _to_arrow(queries)
        at_keys = held.plan.keys if at_key is None else names_of(at_key, "at_key")
        at_time = held.plan.time if at_time is None else at_time
        asked = (held.schema, arrow.schema, at_time, tuple(at_keys))
        if asked != self._checked:  # the same schema and columns as the last call: checked
            check_queries(held.plan, held.schema, arrow.schema, at_time, at_keys)
            self._checked = asked
        with engine_memory():
            new = held.answer(arrow, at_time, at_keys)
        return _with_columns(queries, arrow, kind, [e.name for e in held.plan.entries], new)

    def get(self, key: object, at: object) -> dict[str, Any]:
        """One request's features, ``{name: value}``: what :meth:`query` answers to a one-row
        table of ``key`` (a tuple of values where the key has several columns) and the time
        ``at``, in the events' key and time types, each value as Python holds it (an int, a
        float, None for a null: ``pyarrow``'s ``as_py``). A request of a key of one integer,
        string or binary column that the parts' sums, tables and groups serve is answered
        from them with no table at all; any other through that one-row table."""
        if self._held is None:
            raise ValueError(
                "no events yet: call update() first, or give the events' schema (schema=)"
            )
        held = self._held
        values = key if isinstance(key, tuple) else (key,)
        if len(values) != len(self.keys):
            raise ValueError(
                f"key {key!r}: the state's key has {len(self.keys)} columns {list(self.keys)}"
                + ("; give a tuple of their values" if len(self.keys) > 1 else "")
            )
        got = held.one(values[0], at) if len(values) == 1 else None
        if got is None:
            row = {}
            for name, value in zip((*self.keys, self.time), (*values, at)):
                type_ = held.schema.field(name).type
                try:
                    row[name] = pa.array([value], type_)
                except (pa.ArrowException, TypeError, ValueError, OverflowError) as err:
                    what = "time" if name == self.time else "key"
                    raise ValueError(
                        f"{what} {value!r} is not a value of column {name!r} ({type_}): {err}"
                    ) from None
            with engine_memory():
                columns = held.answer(pa.table(row), self.time, tuple(self.keys))
            got = [column[0].as_py() for column in columns]
        return dict(zip([e.name for e in held.plan.entries], got))

    def save(self, path: str | os.PathLike) -> None:
        """Write the state to ``path``: a Parquet file where the name ends in ``.parquet``,
        else an Arrow IPC file. The file is written beside ``path`` and then moved onto it,
        so a crash during ``save`` leaves the previous file whole."""
        target = Path(path)
        meta: dict[str, Any] = {
            "format": _FORMAT,
            "time": self.time,
            "keys": list(self.keys),
            "aggs": {k: list(_portable(k, v)) for k, v in self.aggs.items()},
            "allowed_lateness": _lateness_text(self.allowed_lateness),
        }
        held = self._held
        if held is None:
            table = pa.table({})
        else:
            table = held.table()
            meta |= {
                "newest": held.newest,
                "answers_from": held.answers_from,
                "dropped": held.dropped,
            }
        table = table.replace_schema_metadata({b"windowagg.online": json.dumps(meta).encode()})
        staged = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            if target.suffix == ".parquet":
                pq.write_table(table, staged)
            else:
                with pa.OSFile(str(staged), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                    w.write_table(table)
            os.replace(staged, target)
        finally:
            staged.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | os.PathLike) -> OnlineFeatures:
        """The state :meth:`save` wrote to ``path``."""
        source = Path(path)
        if source.suffix == ".parquet":
            table = pq.read_table(source)
        else:
            with pa.memory_map(str(source)) as f:
                table = pa.ipc.open_file(f).read_all()
        raw = (table.schema.metadata or {}).get(b"windowagg.online")
        meta = json.loads(raw) if raw else {}
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{str(source)!r} is not a state written by OnlineFeatures.save")
        aggs = {k: tuple(v) for k, v in meta["aggs"].items()}
        state = cls(
            time=meta["time"],
            key=meta["keys"],
            aggs=aggs,
            allowed_lateness=meta["allowed_lateness"],
        )
        if "newest" in meta:
            table = table.replace_schema_metadata(None)
            held = state._start(table.schema)
            held.newest, held.dropped = meta["newest"], meta["dropped"]
            held.answers_from = meta["answers_from"]
            held.restore(table)
            state._held = held
        return state

    def _start(self, schema: pa.Schema) -> Held:
        """The held state for events of ``schema``: every entry checked, before any work."""
        plan = plan_rolling(
            schema, time=self.time, key=self.keys, aggs=self.aggs, order_by=None, onto_events=False
        )
        inputs = {c for e in plan.entries for c in e.inputs}
        kept = [f.name for f in schema if f.name in {*plan.keys, plan.time, *inputs}]
        lateness = _lateness(self.allowed_lateness, schema.field(self.time).type)
        return Held(plan, pa.schema([schema.field(n) for n in kept]), lateness)

    def __repr__(self) -> str:
        return (
            f"OnlineFeatures(time={self.time!r}, key={list(self.keys)!r}, "
            f"aggs={list(self.aggs)!r}: {self.held:,} events held, {self.dropped:,} dropped)"
        )


def _lateness(value: str | float | dt.timedelta, ttype: pa.DataType) -> float:
    """``allowed_lateness`` in the frames' unit for a time column of ``ttype``."""
    unit = unit_of(ttype)
    if isinstance(value, str):
        if value.strip() in ("0", "0s"):
            return 0.0
        try:
            return duration(value, unit)
        except SpecError as e:
            raise ValueError(f"allowed_lateness: {e}") from None
    if isinstance(value, dt.timedelta):
        if unit is None:
            raise TypeError("allowed_lateness is a timedelta, but the times are plain numbers")
        micros = value // dt.timedelta(microseconds=1)
        if micros < 0:
            raise ValueError(f"allowed_lateness must be a duration >= 0, got {value!r}")
        whole = micros * unit
        return whole // 1_000_000 if whole % 1_000_000 == 0 else whole / 1_000_000
    else:
        seconds = float(value)
    if not seconds >= 0 or math.isinf(seconds):
        raise ValueError(f"allowed_lateness must be a finite duration >= 0, got {value!r}")
    return seconds * (unit or 1)


def _lateness_text(value: str | float | dt.timedelta) -> str | float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else value


def _portable(name: str, spec: tuple) -> tuple:
    """An entry as the saved file holds it: names and frames as text."""
    if not all(isinstance(x, str) or x is None for x in spec):
        raise TypeError(
            f"aggs[{name!r}] holds an object ({spec!r}): save() writes aggregations by name; "
            "keep the state of your own aggregations with them"
        )
    return spec


def _conform(arrow: pa.Table, schema: pa.Schema) -> pa.Table:
    """``arrow``'s columns of ``schema``, cast to its types (a batch of another type that
    holds the same values is taken; one that does not is refused by column)."""
    missing = [n for n in schema.names if n not in arrow.column_names]
    if missing:
        raise ValueError(f"the events lack column(s) {missing} that the state holds")
    columns = []
    for field in schema:
        col = arrow.column(field.name)
        if col.type != field.type:
            try:
                col = col.cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise TypeError(
                    f"column {field.name!r} holds {col.type}, the state's events {field.type}: {e}"
                ) from None
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)


@dataclass(frozen=True)
class Replay:
    """What :func:`replay` found: ``served``, the query table with the features as the
    online state served them; ``backfill``, the same queries with the batch call's features
    over the events that had arrived by each query; ``differences``, the features that are
    not equal in value or type (0 where online equals the backfill); ``dropped``, the late
    events."""

    served: pa.Table
    backfill: pa.Table
    features: int
    differences: int
    dropped: int


def replay(
    events: AnyTable,
    queries: AnyTable,
    *,
    time: str,
    key: Columns = None,
    aggs: Mapping[str, tuple],
    arrival: str,
    at_arrival: str | None = None,
    allowed_lateness: str | float | dt.timedelta = 0,
    at_time: str | None = None,
    at_key: Columns = None,
) -> Replay:
    """Play an event log and a query log through an :class:`OnlineFeatures` state in arrival
    order (``arrival`` on the events, ``at_arrival`` on the queries, default the same name;
    at equal arrival, events first), then compare every feature served with
    ``rolling_aggregate(at=)`` over the events that had arrived (and were not late) by its
    query: the check that online and offline are one definition."""
    ev, _ = _to_arrow(events)
    qs, _ = _to_arrow(queries)
    at_arrival = arrival if at_arrival is None else at_arrival
    for table, col, role in ((ev, arrival, "arrival"), (qs, at_arrival, "at_arrival")):
        if col not in table.column_names:
            raise ValueError(f"{role} column {col!r} is not in the table")
    (ea, ea_ok), (qa, qa_ok) = (
        times_as_numbers(ev.column(arrival)),
        times_as_numbers(qs.column(at_arrival)),
    )
    if not (ea_ok.all() and qa_ok.all()) or np.isnan(ea).any() or np.isnan(qa).any():
        raise ValueError("every event and query needs an arrival")
    ev_order = np.argsort(ea, kind="stable")
    qs_order = np.argsort(qa, kind="stable")
    state = OnlineFeatures(
        time=time, key=key, aggs=aggs, allowed_lateness=allowed_lateness, schema=ev.schema
    )
    held: list[np.ndarray] = []  # the rows of ``ev`` each update held
    served, backfill = [], []
    cuts = np.searchsorted(ea[ev_order], qa[qs_order], side="right")
    starts = np.flatnonzero(np.r_[True, cuts[1:] != cuts[:-1]]) if len(cuts) else cuts
    done = 0
    for start, end in zip(starts, [*starts[1:], len(qs_order)]):
        upto = int(cuts[start])
        if upto > done:  # the events that arrived since the last queries, in one update
            rows = ev_order[done:upto]
            held.append(rows[state._add(ev.take(pa.array(rows)))])
            done = upto
        q = qs.take(pa.array(qs_order[start:end]))
        served.append(state.query(q, at_time=at_time, at_key=at_key))
        arrived = ev.take(pa.array(np.concatenate([np.empty(0, np.int64), *held])))
        backfill.append(
            rolling_aggregate(
                arrived, time=time, key=key, aggs=aggs, at=q, at_time=at_time, at_key=at_key
            )
        )
    inverse = np.argsort(qs_order, kind="stable")
    if not served:
        raise ValueError("the query log is empty")
    back = pa.concat_tables(backfill).take(pa.array(inverse))
    got = pa.concat_tables(served).take(pa.array(inverse))
    differences = sum(_differ(got.column(n), back.column(n)) for n in aggs)
    return Replay(got, back, len(aggs) * got.num_rows, differences, state.dropped)


def _differ(a: pa.ChunkedArray, b: pa.ChunkedArray) -> int:
    """How many positions differ in value or type (nulls equal nulls, NaN equals NaN)."""
    if a.type != b.type:
        return len(a)
    return sum(x != y and not (x != x and y != y) for x, y in zip(a.to_pylist(), b.to_pylist()))
