"""Batch ``window_aggregate``: per key, the window operator over the key's events
(``groupBy(key).applyInPandas``).

For sum, count, mean, min and max over tumbling and sliding windows, Spark SQL first reduces
each (key, slice) to one row (the slice is the last window edge at or before the event, over the
fused edge grids of the slicer), so what crosses into Python is one row per slice, not per event;
those rows are then hash-partitioned by key into one partition per core, and the operator's
array fast path answers every window of every key of a partition in one Python call
(``mapInArrow``: Arrow in and out, without pandas, and one output batch per partition, since
each batch has a fixed conversion cost).
Everything else runs the operator over the key's events in time order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..slicing.slicer import StreamSlicer
from ..slicing.vector import COLUMNS, VectorSlices
from .plan import Plan

T, V, S, K = "__wa_t", "__wa_v", "__wa_s", "__wa_k"  # internal column names


def internal_time(plan: Plan) -> Any:
    """The time column as numbers: microseconds since the epoch for timestamps."""
    from pyspark.sql import functions as F

    col = F.col(plan.time)
    if plan.timestamp:
        return F.unix_micros(col.cast("timestamp"))
    return col.cast("double")


def _rows(plan: Plan, key_values: tuple, results: list, bounds: Any = None) -> pd.DataFrame:
    """Output rows; ``bounds(start, end)`` maps count-window positions to event times."""
    spec = {w: s for w, s in zip(plan.windows, plan.specs)}
    names = plan.keys or [K]
    out = {k: [v] * len(results) for k, v in zip(names, key_values)}
    starts, ends = [], []
    for r in results:
        a, b = (r.start, r.end) if r.window.measure == "time" else bounds(r.start, r.end)
        starts.append(a)
        ends.append(b)
    out["window"] = [spec[r.window] for r in results]
    out["window_start"] = starts
    out["window_end"] = ends
    out["value"] = [np.nan if r.value is None else r.value for r in results]
    frame = pd.DataFrame(out)
    if plan.timestamp:
        frame["window_start"] = frame["window_start"].astype("int64")
        frame["window_end"] = frame["window_end"].astype("int64")
    return frame


def _general(plan: Plan):
    def run(key_values: tuple, pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(T, kind="stable")
        t = pdf[T].to_numpy()
        op = plan.operator()
        op.process_batch(t, pdf[V].to_numpy(dtype=float))
        results = op.flush()
        return _rows(plan, key_values, results, lambda a, b: (t[a], t[b - 1]))

    return run


def _sliced(plan: Plan, grids: list, keys: list[str]):
    """mapInArrow over a partition clustered by key: the (key, slice) partials of every key of
    the partition, answered one key at a time by the operator's array fast path, and written
    back as one Arrow batch (many small batches each cost a conversion)."""
    cols = COLUMNS[plan.agg.name]
    windows = list(plan.windows)
    count = plan.agg.name == "count"
    as_partial = {  # Spark's partial columns as VectorSlices.merge takes them
        "s": lambda x: np.nan_to_num(x.astype(float), nan=0.0),  # the sum of no values
        "c": lambda x: x.astype(np.int64),
        "m": lambda x: x.astype(float),
    }

    def go(batches: Any) -> Any:
        import pyarrow as pa

        full = [b for b in batches if b.num_rows]
        if not full:  # a partition no key hashed to
            return
        table = pa.Table.from_batches(full)
        groups = (table.select(keys).append_column("__i", pa.array(np.arange(table.num_rows)))
                  .group_by(keys, use_threads=False).aggregate([("__i", "list")]))  # fmt: skip
        lists = groups.column("__i_list").combine_chunks()
        offsets, rows = lists.offsets.to_numpy(), lists.values.to_numpy()
        stype = np.int64 if plan.timestamp else float
        slices = table.column(S).to_numpy().astype(stype)
        part = {c: as_partial[c](table.column(c).to_numpy(zero_copy_only=False)) for c in cols}
        out: list[list] = [[], [], [], [], []]
        for g in range(len(offsets) - 1):
            idx = rows[offsets[g] : offsets[g + 1]]
            idx = idx[np.argsort(slices[idx], kind="stable")]
            vs = VectorSlices(plan.agg.name, windows, grids)
            tuples = np.zeros(len(idx), np.int64)  # tuple counts serve late updates: none here
            vs.merge(slices[idx], tuples, {c: part[c][idx] for c in cols})
            d, a, b, v, _u = vs.report_arrays(-math.inf, math.inf, [])
            for acc, x in zip(out, (np.full(len(d), idx[0]), d.astype(np.int64), a, b, v)):
                acc.append(x)
        at, d, a, b, v = (np.concatenate(x) for x in out)
        a, b = a.astype(stype), b.astype(stype)
        value = (pa.array(v.astype(np.int64)) if count
                 else pa.array(v, mask=np.isnan(v)))  # fmt: skip
        arrays = [table.column(k).take(pa.array(at)) for k in keys]
        arrays += [pa.array(plan.specs).take(pa.array(d)), pa.array(a), pa.array(b), value]
        yield from pa.Table.from_arrays(
            arrays, names=[*keys, "window", "window_start", "window_end", "value"]
        ).to_batches()

    return go


def slice_expr(grids: list) -> Any:
    """The slice of an event in Spark SQL: the largest edge of any grid at or before it."""
    from pyspark.sql import functions as F

    def floor(p, o):
        if float(p).is_integer() and float(o).is_integer():  # exact on integer times
            shifted = F.col(T) - F.lit(int(o))
            return shifted - F.pmod(shifted, F.lit(int(p))) + F.lit(int(o))
        return F.floor((F.col(T) - o) / p) * p + o

    floors = [floor(p, o) for p, o in grids]
    return floors[0] if len(floors) == 1 else F.greatest(*floors)


def _cores(df: Any) -> int:
    """Partitions for the Python stage: one per core (Spark's default parallelism). The
    partials are small (a row per key and slice), and every Python task has a fixed cost."""
    try:
        return max(1, int(df.sparkSession.sparkContext.defaultParallelism))
    except Exception:  # a session without a SparkContext (Spark Connect)
        return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))


def run_batch(df: Any, plan: Plan) -> Any:
    from pyspark.sql import functions as F

    keys = plan.keys or [K]
    base = df.select(*[F.col(k) for k in plan.keys], internal_time(plan).alias(T),
                     F.col(plan.value).cast("double").alias(V))  # fmt: skip
    base = base.where(F.col(T).isNotNull())
    if not plan.keys:
        base = base.withColumn(K, F.lit(0))
    schema = plan.output_schema(internal=True)
    if not plan.keys:
        from pyspark.sql.types import IntegerType, StructField, StructType

        schema = StructType([StructField(K, IntegerType()), *schema.fields])
    if plan.fast:  # per (key, slice) partials, then a partition per core by key, then Python
        slicer = StreamSlicer()
        slicer.add_windows(plan.windows)
        partials = {"s": F.sum(V), "c": F.count(V), "m": F.min(V) if plan.agg.name == "min"
                    else F.max(V)}  # fmt: skip
        pre = (
            base.withColumn(S, slice_expr(slicer.grids))
            .groupBy(*keys, S)
            .agg(*[partials[c].alias(c) for c in COLUMNS[plan.agg.name]])
        )  # only the partials the aggregation needs
        pre = pre.repartition(_cores(df), *keys)
        out = pre.mapInArrow(_sliced(plan, slicer.grids, keys), schema)
    else:
        out = base.groupBy(*keys).applyInPandas(_general(plan), schema)
    if not plan.keys:
        out = out.drop(K)
    return finish(out, plan)


def finish(out: Any, plan: Plan) -> Any:
    """Window bounds back to the time column's type."""
    from pyspark.sql import functions as F

    if plan.timestamp:
        out = out.withColumn("window_start", F.timestamp_micros("window_start"))
        out = out.withColumn("window_end", F.timestamp_micros("window_end"))
    return out
