"""``rolling_aggregate(events, ..., at=queries)`` on Spark: point-in-time frames computed by the
local engine (:mod:`windowagg.engine.rolling.at`) inside each Python worker.

The events (the columns the entries read) and the queries (all their columns, renamed aside)
are put in one DataFrame, hash-partitioned by key, so that a key's events and queries meet in
one partition, sorted within each partition by time alone (Spark's radix sort of one column),
and streamed through ``mapInArrow``
(:class:`~windowagg.engine.rolling.at_stream.AtStream`): each query is answered, exactly, once every
event its frames can hold has arrived, and a worker keeps only the events that later queries
can reach, so a key with half of all events is not loaded whole. The query rows come back
whole with one column per entry.

On two streams, events and queries meet per group of keys in ``applyInPandasWithState``
(:func:`_run_stream`); a stream of queries against a batch of events keeps each group's
events as the initial state of ``transformWithStateInPandas`` and answers the queries of each
micro-batch at once (:func:`_run_on_events`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..engine.columns import times_of
from ..engine.memory import engine_memory
from ..engine.rolling.at import check_queries
from ..engine.rolling.at_stream import AtStream, answered
from ..engine.rolling.online import of_keys
from ..engine.rolling.plan import RollingPlan
from .plan import arrow_schema, entry_field
from .sql import cores, quoted, task_threads
from .state import (
    G,
    Step,
    grouped,
    grouped_with_state,
    listed,
    listed_fields,
    packed,
    state_rows,
    unlisted,
    unpacked,
    watermark_delay_ms,
)

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

__all__ = ["run_at"]

#: the union's column that tells an event (true) from a query (false)
EVENT = "__wa_event"


def run_at(
    events: DataFrame, queries: DataFrame, plan: RollingPlan, at_time: str, at_keys: tuple
) -> DataFrame:
    """The query rows of ``queries`` with the plan's entries over ``events`` at their times."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    streaming = events.isStreaming
    if streaming and not queries.isStreaming:
        raise ValueError(
            "at= on a stream of events takes a stream of queries with a watermark (the queries "
            "are a batch DataFrame: give the events as a batch too, or the queries as a stream)"
        )
    check_queries(plan, arrow_schema(events), arrow_schema(queries), at_time, at_keys)
    if queries.isStreaming and not streaming:
        _need_rocksdb(events)
    if streaming:
        if not plan.timestamp:
            raise TypeError(
                f"streaming needs a timestamp time column (withWatermark), got {plan.time!r}"
            )
        watermark_delay_ms(events, plan.time)
        watermark_delay_ms(queries, at_time)

    def col(name: str) -> Column:
        return F.col(quoted(name))

    types = {f.name: f.dataType for f in events.schema.fields}
    reads = list(
        dict.fromkeys(
            [*plan.keys, plan.time, *plan.order_by, *(c for e in plan.entries for c in e.inputs)]
        )
    )
    # the queries' own columns in the union: a key or the time of the events' type travels in
    # the events' column (no copy), any other under a name of its own
    placed = {a: k for k, a in zip(plan.keys, at_keys)} | {at_time: plan.time}
    own = {f.name: f.dataType for f in queries.schema.fields}
    asked = {
        c: placed[c] if c in placed and own[c] == types[placed[c]] else f"__wa_q{i}"
        for i, c in enumerate(queries.columns)
    }
    sides = [
        events.select(*[col(c) for c in reads], F.lit(True).alias(EVENT)),
        queries.select(
            *[_by_value(col(a), own[a], types[k]).alias(k) for k, a in zip(plan.keys, at_keys)],
            _as_type(col(at_time), own[at_time], types[plan.time]).alias(plan.time),
            *[col(c).alias(asked[c]) for c in queries.columns if asked[c] != placed.get(c)],
            F.lit(False).alias(EVENT),
        ),
    ]
    fields = [entry_field(e, types, plan.time) for e in plan.entries]
    if queries.isStreaming and not streaming:
        ev_side, q_side = sides
        return _run_on_events(
            ev_side, q_side, plan, reads, asked, [*queries.schema.fields, *fields]
        )
    both = sides[0].unionByName(sides[1], allowMissingColumns=True)
    if streaming:
        return _run_stream(both, plan, reads, asked, [*queries.schema.fields, *fields])
    keyed = [col(k) for k in plan.keys]
    spread = both.repartition(cores(events), *keyed) if keyed else both.repartition(1)
    ordered = spread.sortWithinPartitions(col(plan.time).asc_nulls_first())
    schema = StructType([*queries.schema.fields, *fields])
    return ordered.mapInArrow(_worker(plan, reads, asked), schema)


def _by_value(key: Column, own: DataType, target: DataType) -> Column:
    """A query's key in the events' key type, compared by value: a key that no value of that
    type equals (1.5 against integers, 257 against bytes) is null, which matches no event."""
    from pyspark.sql import functions as F

    if own == target:
        return key
    cast = key.try_cast(target)
    return F.when(cast.try_cast(own) == key, cast)


def _as_type(time: Column, own: DataType, target: DataType) -> Column:
    """A query's time in the events' time type (the same column where it is one already: a
    stream's watermark stays on it)."""
    return time if own == target else time.cast(target)


def _run_stream(
    both: DataFrame, plan: RollingPlan, reads: list[str], asked: dict[str, str], fields: list
) -> DataFrame:
    """Point-in-time frames on two streams: per group of keys
    (:func:`~windowagg.spark.state.grouped_with_state`) over the union of events and queries,
    the events later queries may reach and the queries still open kept as state, each query
    emitted once the watermark passes the end of its frames."""
    from pyspark.sql import functions as F

    def step(schema: pa.Schema) -> Step:
        return lambda carry, rows, wm: AtStream(plan, reads, asked, EVENT).advance(carry, rows, wm)

    ends = [f.end for f in plan.frames if f.kind == "range" and f.end is not None]

    def wake(carry: pa.Table, wm_ms: int) -> int:
        open_ = carry.filter(pc.invert(carry.column(EVENT)))
        if open_.num_rows:  # when the watermark passes the first open query's frames
            due = times_of(plan, open_).min() + max([0, *ends])
            return max(int(due // 1000), wm_ms)
        return wm_ms + 1  # events only: the watermark's next step lets go what it passed

    keys = [F.col(quoted(k)) for k in plan.keys]
    return grouped_with_state(both, keys, step, wake, fields)


#: the state store that ``transformWithStateInPandas`` (a stream of queries against a batch of
#: events) runs on
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def _need_rocksdb(events: DataFrame) -> None:
    """A stream of queries against a batch of events keeps the events as the initial state of
    Spark's ``transformWithStateInPandas``, which runs on the RocksDB state store alone: say
    so before any work, as Spark would only once the query starts."""
    conf = events.sparkSession.conf.get("spark.sql.streaming.stateStore.providerClass", None)
    if conf != ROCKSDB:
        raise ValueError(
            "a stream of queries against a batch DataFrame of events keeps the events as "
            "Spark's transformWithStateInPandas state, which needs the RocksDB state store: "
            f'spark.conf.set("spark.sql.streaming.stateStore.providerClass", "{ROCKSDB}") '
            "before the query first starts"
        )


def _run_on_events(
    events: DataFrame,
    queries: DataFrame,
    plan: RollingPlan,
    reads: list[str],
    asked: dict[str, str],
    fields: list,
) -> DataFrame:
    """A stream of queries against a batch of events: per group of keys (the same groups as
    :func:`~windowagg.spark.state.grouped_with_state`'s), the group's events are the initial
    state of a ``transformWithStateInPandas`` operator over the queries (taken once, when the
    query first starts, and kept in its checkpoint), and each micro-batch's queries are
    answered at once over them: every event is there already."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    keys = [F.col(quoted(k)) for k in plan.keys]
    ev, ev_schema, ev_flags = grouped(events.drop(EVENT), keys)
    qs, q_schema, q_flags = grouped(queries.drop(EVENT), keys)
    processor = _answer_on_events(
        plan, asked, (ev_schema, ev_flags, ev.columns), (q_schema, q_flags, qs.columns)
    )
    out = qs.groupBy(G).transformWithStateInPandas(
        processor,
        StructType(listed_fields(fields)),
        "Append",
        "None",
        initialState=ev.groupBy(G),
    )
    return unlisted(out, fields)


def _answer_on_events(plan: RollingPlan, asked: dict[str, str], events_side, queries_side):
    """The stateful processor of :func:`_run_on_events`: a group's events kept as Arrow
    tables (one list entry per chunk of the initial state), its queries answered by
    :func:`~windowagg.engine.rolling.at_stream.answered` over the events of their keys."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import BinaryType, StructField, StructType

    (ev_schema, ev_flags, ev_names), (q_schema, q_flags, q_names) = events_side, queries_side

    def named(frames: Iterable[pd.DataFrame], names: list[str]) -> Iterator[pd.DataFrame]:
        """The frames under their columns' names: pyspark hands the initial state's columns
        beyond the events' own under positional names (``_3``)."""
        for f in frames:
            f.columns = names
            yield f

    kept = StructType([StructField("events", BinaryType())])

    class AnswerOnEvents(StatefulProcessor):
        def init(self, handle) -> None:
            self.events = handle.getListState("events", kept)

        def handleInitialState(self, key, initialState, timerValues) -> None:
            part = state_rows(ev_schema, named([initialState], ev_names), ev_flags)
            if part is not None:
                self.events.appendValue((packed(part),))

        def handleInputRows(self, key, rows, timerValues):
            task_threads()
            queries = state_rows(q_schema, named(rows, q_names), q_flags)
            if queries is None:
                return
            parts = [unpacked(r[0]) for r in self.events.get()] if self.events.exists() else []
            events = pa.concat_tables(parts) if parts else ev_schema.empty_table()
            with engine_memory():
                events = of_keys(events, plan.keys, queries, plan.keys)
                out = answered(plan, events, queries, asked)
            yield listed({n: out.column(n) for n in out.column_names}).to_pandas(
                integer_object_nulls=True
            )

        def close(self) -> None:
            pass

    return AnswerOnEvents()


def _worker(plan: RollingPlan, reads: list[str], asked: dict[str, str]):
    def go(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_threads()
        stream = AtStream(plan, reads, asked, EVENT)
        for batch in batches:
            with engine_memory():
                out = stream.feed(batch)
            yield from out
        with engine_memory():
            out = stream.finish()
        yield from out

    return go
