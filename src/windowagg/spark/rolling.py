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

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..engine.columns import times_of
from ..engine.memory import engine_memory
from ..engine.rolling.plan import RollingPlan
from ..engine.rolling.stream import DONE, RollingStream
from .plan import entry_field
from .sql import cores, quoted, task_threads
from .state import (
    Step,
    grouped_with_state,
    watermark_delay_ms,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
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


def _run_stream(df: DataFrame, plan: RollingPlan) -> DataFrame:
    """``rolling_aggregate`` on a stream: per group of keys
    (:func:`~windowagg.spark.state.grouped_with_state`), the rows a later frame can still hold
    kept as state, each row emitted once the watermark passes it, with its frames' values."""
    from pyspark.sql import functions as F

    if not plan.timestamp:
        raise TypeError(
            f"streaming needs a timestamp time column (withWatermark), got {plan.time!r} of numbers"
        )
    watermark_delay_ms(df, plan.time)  # a clear error without one

    def step(schema: pa.Schema) -> Step:
        return lambda carry, rows, wm: RollingStream(plan, schema.names, ordered=False).advance(
            carry, rows, wm
        )

    def wake(carry: pa.Table, wm_ms: int) -> int:
        waiting = times_of(plan, carry.filter(pc.invert(carry.column(DONE))))
        if len(waiting):  # when the watermark passes the first row still to answer
            return max(int(waiting.min() // 1000), wm_ms)
        return wm_ms + 1  # only rows later frames may hold: the watermark's next step

    keys = [F.col(quoted(k)) for k in plan.keys]
    return grouped_with_state(df, keys, step, wake, list(output_schema(df, plan).fields))
