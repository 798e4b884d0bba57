"""``rolling_aggregate`` on Spark: per-row window functions computed by the local engine
(:mod:`windowagg.engine.rolling_table`) inside each Python worker.

The rows are hash-partitioned by key (one partition per core) and sorted within each partition
by time and order only (``sortWithinPartitions``; Spark's own window operator sorts by key,
then time, a comparison sort that costs several times the radix sort of one timestamp column),
then streamed through ``mapInArrow``: Arrow batches in and out, every key's recent rows carried
from one round to the next (:class:`~windowagg.engine.rolling_stream.RollingStream`), so a
worker holds the frames of its keys, not their rows, and a skewed key is not loaded whole.
Spark's built-in evaluation recomputes a bounded frame for every row
(``SlidingWindowFunctionFrame``: O(rows x rows per frame)); here each row enters and leaves a
FIFO window once, whatever the frame.
"""

from __future__ import annotations

from typing import Any

from ..engine.rolling_plan import RollingPlan, plan_rolling
from .batch import cores, quoted
from .plan import arrow_schema, entry_field


def output_schema(df: Any, plan: RollingPlan) -> Any:
    """The input's schema plus one field per entry (:func:`~windowagg.spark.plan.entry_field`)."""
    from pyspark.sql.types import StructType

    types = {f.name: f.dataType for f in df.schema.fields}
    fields = [entry_field(e, types, plan.time) for e in plan.entries]
    return StructType([*df.schema.fields, *fields])


def _worker(plan: RollingPlan, columns: list[str]):
    def go(batches: Any) -> Any:
        from ..engine.memory import engine_memory
        from ..engine.rolling_stream import RollingStream

        stream = RollingStream(plan, columns)
        for batch in batches:
            with engine_memory():
                out = stream.feed(batch)
            yield from out
        with engine_memory():
            out = stream.finish()
        yield from out

    return go


def run_rolling(df: Any, *, time: str, key: Any, aggs: dict, order_by: Any) -> Any:
    from pyspark.sql import functions as F

    plan = plan_rolling(arrow_schema(df), time=time, key=key, aggs=aggs, order_by=order_by)
    if df.isStreaming:
        ahead = [e.name for e in plan.entries if e.frame.looks_forward]
        if ahead:
            raise ValueError(f"aggs {ahead}: a frame that looks forward cannot be answered on a "
                             "stream (rows would wait for rows that have not arrived); use "
                             "frames ending at 0 or before, like range:1h or rows:100")  # fmt: skip
        raise NotImplementedError("rolling_aggregate on a streaming DataFrame is not supported "
                                  "yet; run it on a batch DataFrame")  # fmt: skip
    schema = output_schema(df, plan)

    def col(name: str) -> Any:
        return F.col(quoted(name))

    keyed = [col(k) for k in plan.keys]
    spread = df.repartition(cores(df), *keyed) if keyed else df.repartition(1)
    # by time (then order) only, keys interleaved: a radix sort on one timestamp column
    ordered = spread.sortWithinPartitions(*[col(c).asc_nulls_first()
                                            for c in [time, *plan.order_by]])  # fmt: skip
    return ordered.mapInArrow(_worker(plan, list(df.columns)), schema)
