"""``rolling_aggregate`` on Spark: per-row window functions computed by the local engine
(:mod:`windowagg.engine.rolling.table`) inside each Python worker.

The rows are hash-partitioned by key (one partition per core) and sorted within each partition
by time and order only (``sortWithinPartitions``; Spark's own window operator sorts by key,
then time, a comparison sort that costs several times the radix sort of one timestamp column),
then streamed through ``mapInArrow``: Arrow batches in and out, every key's recent rows carried
from one round to the next (:class:`~windowagg.engine.rolling.stream.RollingStream`), so a
worker holds the frames of its keys, not their rows, and a skewed key is not loaded whole.
Spark's built-in evaluation recomputes a bounded frame for every row
(``SlidingWindowFunctionFrame``: O(rows x rows per frame)); here each row enters and leaves a
FIFO window once, whatever the frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..engine.columns import times_of
from ..engine.memory import engine_memory
from ..engine.rolling.plan import RollingPlan
from ..engine.rolling.stream import DONE, RollingStream
from .plan import arrow_schema, entry_field
from .sql import cores, quoted, task_threads
from .state import (
    G,
    group_of,
    keep_state,
    kept_state,
    listed,
    listed_fields,
    nan_flag,
    state_rows,
    unlisted,
    watermark_delay_ms,
)

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.streaming.state import GroupState
    from pyspark.sql.types import StructType


def output_schema(df: DataFrame, plan: RollingPlan) -> StructType:
    """The input's schema plus one field per entry (:func:`~windowagg.spark.plan.entry_field`)."""
    from pyspark.sql.types import StructType

    types = {f.name: f.dataType for f in df.schema.fields}
    fields = [entry_field(e, types, plan.time) for e in plan.entries]
    return StructType([*df.schema.fields, *fields])


def _worker(plan: RollingPlan, columns: list[str]):
    def go(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_threads()
        stream = RollingStream(plan, columns)
        for batch in batches:
            with engine_memory():
                out = stream.feed(batch)
            yield from out
        with engine_memory():
            out = stream.finish()
        yield from out

    return go


def run_rolling(df: DataFrame, plan: RollingPlan) -> DataFrame:
    """Every row of ``df`` with the plan's frames (Spark's batch or Structured Streaming)."""
    from pyspark.sql import functions as F

    if df.isStreaming:
        ahead = [e.name for e in plan.entries if e.frame is not None and e.frame.looks_forward]
        if ahead:
            raise ValueError(
                f"aggs {ahead}: a frame that looks forward cannot be answered on a "
                "stream (rows would wait for rows that have not arrived); use "
                "frames ending at 0 or before, like range:1h or rows:100"
            )
        return _run_stream(df, plan)
    schema = output_schema(df, plan)

    def col(name: str) -> Column:
        return F.col(quoted(name))

    keyed = [col(k) for k in plan.keys]
    spread = df.repartition(cores(df), *keyed) if keyed else df.repartition(1)
    # by time (then order) only, keys interleaved: a radix sort on one timestamp column
    ordered = spread.sortWithinPartitions(
        *[col(c).asc_nulls_first() for c in [plan.time, *plan.order_by]]
    )
    return ordered.mapInArrow(_worker(plan, list(df.columns)), schema)


def _stream_func(plan: RollingPlan, schema: pa.Schema, flags: dict):
    """The per-group function of a stream: the group's keys' kept rows and the new ones; every
    row behind the watermark answered once, with its frames' values."""

    def run(
        key: tuple, frames: Iterable[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        task_threads()
        carry = kept_state(state)
        rows = None if state.hasTimedOut else state_rows(schema, frames, flags)
        wm_ms = state.getCurrentWatermarkMs()
        wm = wm_ms * 1000 if wm_ms > 0 else -math.inf
        with engine_memory():
            out, carry = RollingStream(plan, schema.names, ordered=False).advance(carry, rows, wm)
        if out:
            table = pa.Table.from_batches(out)
            yield listed({n: table.column(n) for n in table.column_names}).to_pandas(
                integer_object_nulls=True
            )
        if carry is None or not carry.num_rows:
            state.remove()
            return
        keep_state(state, carry)
        waiting = times_of(plan, carry.filter(pc.invert(carry.column(DONE))))
        if len(waiting):  # wake when the watermark passes the first row still to answer
            state.setTimeoutTimestamp(max(int(waiting.min() // 1000), wm_ms))
        else:  # only rows later frames may hold: wake with the watermark's next step
            state.setTimeoutTimestamp(wm_ms + 1)

    return run


def _run_stream(df: DataFrame, plan: RollingPlan) -> DataFrame:
    """``rolling_aggregate`` on a stream: ``applyInPandasWithState`` per group of keys
    (:func:`~windowagg.spark.stream.group_of`), the rows a later frame can still hold kept as
    state, each row emitted once the watermark passes it."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import BinaryType, DoubleType, FloatType, StructField, StructType

    if not plan.timestamp:
        raise TypeError(
            f"streaming needs a timestamp time column (withWatermark), got {plan.time!r} of numbers"
        )
    watermark_delay_ms(df, plan.time)  # a clear error without one
    schema = arrow_schema(df)
    floats = [f.name for f in df.schema.fields if isinstance(f.dataType, DoubleType | FloatType)]
    flags = {c: nan_flag(i) for i, c in enumerate(floats)}
    keys = [F.col(quoted(k)) for k in plan.keys] or [F.lit(0)]
    base = df.select(
        *[F.col(quoted(c)) for c in df.columns],
        *[F.isnan(F.col(quoted(c))).alias(flags[c]) for c in floats],
        group_of(keys),
    )
    fields = list(output_schema(df, plan).fields)
    out = base.groupBy(G).applyInPandasWithState(
        _stream_func(plan, schema, flags),
        StructType(listed_fields(fields)),
        StructType([StructField("rows", BinaryType())]),
        "append",
        GroupStateTimeout.EventTimeTimeout,
    )
    return unlisted(out, fields)
