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
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ..engine.memory import engine_memory
from ..engine.rolling.at import check_queries
from ..engine.rolling.at_stream import AtStream
from ..engine.rolling.plan import RollingPlan
from .plan import arrow_schema, entry_field
from .sql import cores, quoted, task_threads

if TYPE_CHECKING:
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

    if events.isStreaming or queries.isStreaming:
        raise ValueError("at= takes batch DataFrames (events and queries)")
    check_queries(plan, arrow_schema(events), arrow_schema(queries), at_time, at_keys)

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
            col(at_time).cast(types[plan.time]).alias(plan.time),
            *[col(c).alias(asked[c]) for c in queries.columns if asked[c] != placed.get(c)],
            F.lit(False).alias(EVENT),
        ),
    ]
    both = sides[0].unionByName(sides[1], allowMissingColumns=True)
    keyed = [col(k) for k in plan.keys]
    spread = both.repartition(cores(events), *keyed) if keyed else both.repartition(1)
    ordered = spread.sortWithinPartitions(col(plan.time).asc_nulls_first())
    fields = [entry_field(e, types, plan.time) for e in plan.entries]
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
