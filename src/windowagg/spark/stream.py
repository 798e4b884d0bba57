"""Streaming ``window_aggregate``: ``applyInPandasWithState`` with each key's window operator
pickled into one binary state value (PySpark 4.3.0 breaks on array or map state fields).

* Emission: each time a key runs (new rows, or its event-time timeout), the operator gets
  Spark's current watermark and returns the windows it completes; the timeout is set to the
  earliest end of a window still pending, so quiet keys still emit as the watermark passes.
* Lateness: Spark's stateful operator drops rows behind the watermark before they reach the
  function. windowagg hands it a copy of the event time shifted by ``allowed_lateness`` (plus
  one microsecond) and marked as the watermarked column, so Spark drops exactly the rows with
  ``t < watermark - allowed_lateness`` (the operator's own rule) and counts them in the query's
  progress (``stateOperators[].numRowsDroppedByWatermark``); later rows reach the operator and
  produce ``update = true`` rows for windows already emitted.
* Restarts: the state lives in Spark's state store and the output in an exactly-once sink, so a
  query restarted from its checkpoint neither loses nor repeats a window.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

from .batch import (
    K,
    T,
    V,
    _rows,
    finish,
    internal_schema,
    internal_time,
    key_columns,
    key_names,
    quoted,
)
from .plan import Plan

WM = "__wa_wm"


def _func(plan: Plan):
    def run(key: tuple, frames: Any, state: Any) -> Any:
        op = pickle.loads(state.get[0]) if state.exists else plan.operator()
        if not state.hasTimedOut:
            for pdf in frames:  # arrival order within the micro-batch
                if len(pdf):
                    op.process_batch(pdf[T].to_numpy(), pdf[V].to_numpy(dtype=float))
        wm_ms = state.getCurrentWatermarkMs()
        results = op.watermark(wm_ms * 1000) if wm_ms > 0 else []
        if results:
            frame = _rows(plan, key, results)
            frame["update"] = [r.update for r in results]
            yield frame
        pending = op.next_end()
        if pending is None:
            state.remove()
            return
        state.update((pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL),))
        state.setTimeoutTimestamp(max(math.ceil(pending / 1000), wm_ms + 1))

    return run


def run_stream(df: Any, plan: Plan) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import BinaryType, StructField, StructType

    if not plan.timestamp:
        raise TypeError(f"streaming needs a timestamp time column (withWatermark), got "
                        f"{plan.time!r} of numbers")  # fmt: skip
    if any(w.measure == "count" for w in plan.windows):
        raise ValueError("count windows are not supported on streams (positions shift with "
                         "every late event); use time windows")  # fmt: skip
    delay = _watermark_delay_ms(df, plan.time)
    micros = internal_time(plan)  # a timestamp column: microseconds since the epoch
    shifted = F.timestamp_micros(micros + int(plan.lateness) + 1)
    base = df.select(*key_columns(plan), micros.alias(T),
                     F.col(quoted(plan.value)).cast("double").alias(V),
                     shifted.alias(WM, metadata={"spark.watermarkDelayMs": delay}))  # fmt: skip
    state = StructType([StructField("operator", BinaryType())])
    out = base.groupBy(*key_names(plan)).applyInPandasWithState(
        _func(plan),
        internal_schema(plan, update=True),
        state,
        "append",
        GroupStateTimeout.EventTimeTimeout,
    )
    if not plan.keys:
        out = out.drop(K)
    return finish(out, plan)


def _watermark_delay_ms(df: Any, time: str) -> int:
    for f in df.schema.fields:
        if f.name == time and "spark.watermarkDelayMs" in (f.metadata or {}):
            return int(f.metadata["spark.watermarkDelayMs"])
    raise ValueError(f"a streaming DataFrame needs a watermark on {time!r}: "
                     f"df.withWatermark({time!r}, '1 minute')")  # fmt: skip
