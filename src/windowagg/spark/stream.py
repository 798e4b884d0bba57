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

import numpy as np
import pandas as pd

from ..aggregations import Aggregation, Facts, facts
from ..engine.window_plan import WindowPlan
from .batch import K, T, internal_time, key_columns, key_names, quoted

V, WM = "__wa_v", "__wa_wm"


class SqlSum(Aggregation):
    """SQL's SUM: missing values ignored, and no value at all (null) when every value in the
    window is missing (windowagg's ``sum`` gives 0 there). Partial ``(sum, count)``."""

    name = "sql_sum"
    facts = Facts(partials=("s", "c"))
    identity = (0.0, 0)
    commutative = True
    invertible = True

    def lower_columns(self, cols):
        return np.where(cols["c"] > 0, cols["s"], np.nan)

    def lift(self, x):
        return (0.0, 0) if x is None or x != x else (float(x), 1)

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return p[0] if p[1] else None


def _operator(plan: WindowPlan) -> Any:
    """A window operator for one key, over the one entry."""
    from ..slicing import WindowOperator

    e = plan.entries[0]
    op = WindowOperator(SqlSum() if e.sql == "sum" else e.agg, allowed_lateness=plan.lateness,
                        store="eager")  # fmt: skip
    for w in plan.windows:
        op.add_window(w)
    return op


def _schema(plan: WindowPlan, df: Any) -> Any:
    """What the per-key function returns (times in microseconds; a constant key first when
    there is none)."""
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    fields = {f.name: f for f in df.schema.fields}
    e = plan.entries[0]
    value = LongType() if facts(e.agg).result == "count" else DoubleType()
    keys = [StructField(n, fields[k].dataType) for k, n in zip(plan.keys, key_names(plan))]
    return StructType([*(keys or [StructField(K, IntegerType())]),
                       StructField("window", StringType()), StructField("window_start", LongType()),
                       StructField("window_end", LongType()), StructField(e.name, value),
                       StructField("update", BooleanType())])  # fmt: skip


def _rows(plan: WindowPlan, key_values: tuple, results: list) -> pd.DataFrame:
    spec = {w: s for w, s in zip(plan.windows, plan.specs)}
    names = key_names(plan) or [K]
    out: dict = {k: [v] * len(results) for k, v in zip(names, key_values)}
    out["window"] = [spec[r.window] for r in results]
    out["window_start"] = np.array([r.start for r in results]).astype("int64")
    out["window_end"] = np.array([r.end for r in results]).astype("int64")
    out[plan.entries[0].name] = [np.nan if r.value is None else r.value for r in results]
    out["update"] = [r.update for r in results]
    return pd.DataFrame(out)


def _func(plan: WindowPlan):
    def run(key: tuple, frames: Any, state: Any) -> Any:
        op = pickle.loads(state.get[0]) if state.exists else _operator(plan)
        if not state.hasTimedOut:
            for pdf in frames:  # arrival order within the micro-batch
                if len(pdf):
                    op.process_batch(pdf[T].to_numpy(), pdf[V].to_numpy(dtype=float))
        wm_ms = state.getCurrentWatermarkMs()
        results = op.watermark(wm_ms * 1000) if wm_ms > 0 else []
        if results:
            yield _rows(plan, key, results)
        pending = op.next_end()
        if pending is None:
            state.remove()
            return
        state.update((pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL),))
        state.setTimeoutTimestamp(max(math.ceil(pending / 1000), wm_ms + 1))

    return run


def run_stream(df: Any, plan: WindowPlan) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import BinaryType, StructField, StructType

    if not plan.timestamp:
        raise TypeError(f"streaming needs a timestamp time column (withWatermark), got "
                        f"{plan.time!r} of numbers")  # fmt: skip
    if any(w.measure == "count" for w in plan.windows):
        raise ValueError("count windows are not supported on streams (positions shift with "
                         "every late event); use time windows")  # fmt: skip
    e = plan.entries[0]
    if len(plan.entries) > 1 or not facts(e.agg).scalar or e.column is None:
        raise NotImplementedError("on a streaming DataFrame, window_aggregate takes one "
                                  "aggregation with one number per window, over a column, for "
                                  "now; run several calls, or a batch DataFrame")  # fmt: skip
    delay = _watermark_delay_ms(df, plan.time)
    micros = internal_time(plan)  # a timestamp column: microseconds since the epoch
    shifted = F.timestamp_micros(micros + int(plan.lateness) + 1)
    keys = key_columns(plan) or [F.lit(0).alias(K)]
    base = df.select(*keys, micros.alias(T), F.col(quoted(e.column)).cast("double").alias(V),
                     shifted.alias(WM, metadata={"spark.watermarkDelayMs": delay}))  # fmt: skip
    state = StructType([StructField("operator", BinaryType())])
    out = base.groupBy(*(key_names(plan) or [K])).applyInPandasWithState(
        _func(plan),
        _schema(plan, df),
        state,
        "append",
        GroupStateTimeout.EventTimeTimeout,
    )
    bounds = [F.timestamp_micros(b).alias(b) for b in ("window_start", "window_end")]
    return out.select(*[F.col(n).alias(k) for k, n in zip(plan.keys, key_names(plan))],
                      "window", *bounds, e.name, "update")  # fmt: skip


def _watermark_delay_ms(df: Any, time: str) -> int:
    for f in df.schema.fields:
        if f.name == time and "spark.watermarkDelayMs" in (f.metadata or {}):
            return int(f.metadata["spark.watermarkDelayMs"])
    raise ValueError(f"a streaming DataFrame needs a watermark on {time!r}: "
                     f"df.withWatermark({time!r}, '1 minute')")  # fmt: skip
