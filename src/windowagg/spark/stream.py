"""Streaming ``window_aggregate``: ``applyInPandasWithState`` over :data:`GROUPS` groups of keys
(a hash of the keys), so that each micro-batch runs the engine once per group, for all the
group's keys at once, not once per key; a group's keys' open
slices' partials (or rows) kept as one binary state value (PySpark 4.3.0 breaks on array or
map state fields), and its windows answered by the stream engine
(:mod:`windowagg.engine.windows.stream`, the batch engine inside): every entry,
Spark's types, SQL's rules (a float column's NaN crosses beside it as a flag, since pandas
cannot tell NaN from null).

* Emission: each time a group runs (new rows, or its event-time timeout), every window of its
  keys that ends at or before Spark's current watermark and was not reported is reported; the
  timeout is set to the earliest end of a window still pending, so quiet keys still emit as
  the watermark passes.
* Lateness: Spark's stateful operator drops rows behind the watermark before they reach the
  function. windowagg hands it a copy of the event time shifted by ``allowed_lateness`` (plus
  one microsecond) and marked as the watermarked column, so Spark drops exactly the rows with
  ``t < watermark - allowed_lateness`` and counts them in the query's progress
  (``stateOperators[].numRowsDroppedByWatermark``); later rows change windows already
  reported, which are reported again with ``update = true`` (a session a late row extends or
  merges, under its new bounds).
* State: a group keeps, for each of its keys, the partials of the slices (the rows, where an
  entry has no SQL partial) of the windows a late row may still change (those ending after
  ``watermark - allowed_lateness``), the end up to which it reported and the number of groups
  (a checkpoint written with another is refused: its keys would fall in other groups); a
  window that ended before that is final, reported once, and never looked at again.
* Output: a call's windows cross to the JVM as one row of arrays, exploded in Spark SQL.
* Restarts: the state lives in Spark's state store and the output in an exactly-once sink, so a
  query restarted from its checkpoint neither loses nor repeats a window.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..engine.memory import engine_memory
from ..engine.windows.plan import WindowPlan
from ..engine.windows.stream import WindowStream
from .plan import arrow_schema, output_schema
from .sql import T, key_columns, key_names, quoted, task_threads, time_sql
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
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.state import GroupState

WM, K = "__wa_wm", "__wa_k"  # the watermarked time, no key's key
SPEC, START, END = "__wa_w", "__wa_ws", "__wa_we"  # the window's spec index and bounds


def _func(plan: WindowPlan, over: WindowPlan, schema: pa.Schema, flags: dict[str, str]):
    """The per-group function: the group's kept units and the new rows of its keys through the
    stream engine (:class:`windowagg.engine.windows.stream.WindowStream`)."""
    stream = None

    def run(
        key: tuple, frames: Iterable[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        nonlocal stream
        task_threads()
        if stream is None:
            stream = WindowStream(over, schema)
        units, reported = kept_state(state) or (None, -math.inf)
        rows = None if state.hasTimedOut else state_rows(schema, frames, flags)
        wm_ms = state.getCurrentWatermarkMs()
        wm = wm_ms * 1000 if wm_ms > 0 else -math.inf
        with engine_memory():
            step = stream.advance(units, rows, reported, wm)
        if step.out is not None:
            yield _crossing(plan, step.out).to_pandas(integer_object_nulls=True)
        if step.units is None:
            state.remove()
            return
        keep_state(state, (step.units, step.reported))
        if step.pending < math.inf:
            # fires once the watermark reaches the end (Spark: when it passes the timestamp)
            state.setTimeoutTimestamp(max(math.ceil(step.pending / 1000) - 1, wm_ms))
        else:  # every window reported: wake when the last may no longer change
            state.setTimeoutTimestamp(wm_ms + 1 + math.ceil(plan.lateness / 1000))

    return run


def _crossing(plan: WindowPlan, out: pa.Table) -> pa.Table:
    """The reported windows as :func:`listed` columns: the keys, each window's spec as its
    index, its bounds as microseconds."""

    arrays = {k: out.column(k) for k in key_names(plan)}
    arrays |= {
        SPEC: pc.index_in(out.column("window"), value_set=pa.array(plan.specs)),
        START: out.column("window_start").cast(pa.int64()),
        END: out.column("window_end").cast(pa.int64()),
    }
    for e in plan.entries:
        arrays[e.name] = out.column(e.name)
    arrays["update"] = out.column("update")
    return listed(arrays)


def run_stream(df: DataFrame, plan: WindowPlan) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import (
        BinaryType,
        BooleanType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        StructField,
        StructType,
    )

    if not plan.timestamp:
        raise TypeError(
            f"streaming needs a timestamp time column (withWatermark), got {plan.time!r} of numbers"
        )
    if any(w.measure == "count" for w in plan.windows):
        raise ValueError(
            "count windows are not supported on streams (positions shift with "
            "every late event); use time windows"
        )
    delay = watermark_delay_ms(df, plan.time)
    micros = F.expr(time_sql(plan))  # a timestamp column: microseconds since the epoch
    shifted = F.timestamp_micros(micros + int(plan.lateness) + 1)
    fields = {f.name: f for f in df.schema.fields}
    cols = sorted({c for e in plan.entries for c in e.inputs})
    names = {c: f"__wa_c{i}" for i, c in enumerate(cols)}
    flags = {
        names[c]: nan_flag(i)
        for i, c in enumerate(cols)
        if isinstance(fields[c].dataType, DoubleType | FloatType)
    }
    keys = key_columns(plan) or [F.lit(0).alias(K)]
    base = df.select(
        *keys,
        micros.alias(T),
        *[F.col(quoted(c)).alias(n) for c, n in names.items()],
        *[F.isnan(F.col(quoted(c))).alias(flags[n]) for c, n in names.items() if n in flags],
        shifted.alias(WM, metadata={"spark.watermarkDelayMs": delay}),
    )
    arrow = arrow_schema(df)

    knames = key_names(plan) or [K]
    kfields = [pa.field(n, arrow.field(k).type) for k, n in zip(plan.keys, knames)] or [
        pa.field(K, pa.int32())
    ]
    schema = pa.schema(
        [
            *kfields,
            pa.field(T, pa.int64()),
            *[pa.field(n, arrow.field(c).type) for c, n in names.items()],
        ]
    )
    entries = tuple(e.renamed(names) for e in plan.entries)
    over = replace(
        plan, time=T, keys=tuple(knames), entries=entries, bound=pa.timestamp("us", "UTC")
    )
    out_fields = output_schema(df, plan).fields
    nkeys = len(plan.keys)
    key_fields = [StructField(n, f.dataType) for n, f in zip(knames, out_fields[:nkeys])]
    listed_out = [
        *key_fields,
        StructField(SPEC, IntegerType()),
        StructField(START, LongType()),
        StructField(END, LongType()),
        *out_fields[nkeys + 3 :],
        StructField("update", BooleanType()),
    ]
    internal = StructType(listed_fields(listed_out))
    state = StructType([StructField("rows", BinaryType())])
    out = (
        base.select("*", group_of(knames))
        .groupBy(G)
        .applyInPandasWithState(
            _func(plan, over, schema, flags),
            internal,
            state,
            "append",
            GroupStateTimeout.EventTimeTimeout,
        )
    )
    out = unlisted(out, listed_out)
    specs = F.array(*[F.lit(x) for x in plan.specs])
    return out.select(
        *[F.col(n).alias(k) for k, n in zip(plan.keys, knames)],
        F.element_at(specs, F.col(SPEC) + 1).alias("window"),
        F.timestamp_micros(START).alias("window_start"),
        F.timestamp_micros(END).alias("window_end"),
        *[F.col(quoted(e.name)) for e in plan.entries],
        "update",
    )
