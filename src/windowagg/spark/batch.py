"""Batch ``window_aggregate``: per key, the window operator over the key's events
(``groupBy(key).applyInPandas``).

For sum, count, mean, min and max over tumbling and sliding windows, Spark SQL first reduces
each (key, slice) to one row (the slice is the last window edge at or before the event, over the
fused edge grids of the slicer), so what crosses into Python is one row per slice, not per event;
those rows are then hash-partitioned by key into one partition per core, and the operator's
array fast path answers every window of every key of a partition in one Python call
(``mapInArrow``: Arrow in and out, without pandas, and one output batch per partition, since
each batch has a fixed conversion cost; window bounds leave Python as timestamps). The query is
built in as few DataFrame steps as possible, its expressions as SQL text: each step costs the
driver a round trip and an analysis of the plan, which was a fifth of the time on small inputs.
Everything else runs the operator over the key's events in time order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..aggregations import facts
from ..slicing.slicer import StreamSlicer
from ..slicing.vector import VectorSlices
from .plan import Plan

T, V, S, K = "__wa_t", "__wa_v", "__wa_s", "__wa_k"  # internal column names


def quoted(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def time_sql(plan: Plan) -> str:
    """The time column as numbers, in Spark SQL: microseconds since the epoch for
    timestamps."""
    col = quoted(plan.time)
    if plan.timestamp:
        return f"unix_micros(CAST({col} AS TIMESTAMP))"
    return f"CAST({col} AS DOUBLE)"


def internal_time(plan: Plan) -> Any:
    from pyspark.sql import functions as F

    return F.expr(time_sql(plan))


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
    back as one Arrow table in the output's final types (many small batches, or a conversion
    step in Spark, each cost more than the work). Events without a time have no slice (null):
    they are dropped, as on the general path."""
    cols = facts(plan.agg).partials
    windows = list(plan.windows)
    count = facts(plan.agg).result == "count"
    as_partial = {  # Spark's partial columns as VectorSlices.merge takes them
        "s": lambda x: np.nan_to_num(x.astype(float), nan=0.0),  # the sum of no values
        "c": lambda x: x.astype(np.int64),
        "min": lambda x: x.astype(float),
        "max": lambda x: x.astype(float),
    }

    def go(batches: Any) -> Any:
        import pyarrow as pa

        full = [b for b in batches if b.num_rows]
        if not full:  # a partition no key hashed to
            return
        table = pa.Table.from_batches(full)
        if table.column(S).null_count:
            table = table.filter(table.column(S).is_valid())
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
            vs = VectorSlices(plan.agg, windows, grids)
            tuples = np.zeros(len(idx), np.int64)  # tuple counts serve late updates: none here
            vs.merge(slices[idx], tuples, {c: part[c][idx] for c in cols})
            d, a, b, v, _u = vs.report_arrays(-math.inf, math.inf, [])
            for acc, x in zip(out, (np.full(len(d), idx[0]), d.astype(np.int64), a, b, v)):
                acc.append(x)
        at, d, a, b, v = (np.concatenate(x) for x in out)
        bound = pa.timestamp("us", tz="UTC") if plan.timestamp else pa.float64()
        value = (pa.array(v.astype(np.int64)) if count
                 else pa.array(v, mask=np.isnan(v)))  # fmt: skip
        arrays = [table.column(k).take(pa.array(at)) for k in keys[: len(plan.keys)]]
        arrays += [pa.array(plan.specs).take(pa.array(d)), pa.array(a.astype(stype)).cast(bound),
                   pa.array(b.astype(stype)).cast(bound), value]  # fmt: skip
        yield from pa.Table.from_arrays(
            arrays, names=[*plan.keys, "window", "window_start", "window_end", "value"]
        ).to_batches()

    return go


def slice_sql(grids: list, t: str) -> str:
    """The slice of an event in Spark SQL (``t``: its time): the largest edge of any grid at
    or before it."""

    def floor(p, o):
        if float(p).is_integer() and float(o).is_integer():  # exact on integer times
            p, o = int(p), int(o)
            return f"(({t} - {o}) - pmod({t} - {o}, {p}) + {o})"
        p, o = (f"CAST({float(x)!r} AS DOUBLE)" for x in (p, o))
        return f"(floor(({t} - {o}) / {p}) * {p} + {o})"

    floors = [floor(p, o) for p, o in grids]
    return floors[0] if len(floors) == 1 else f"greatest({', '.join(floors)})"


def cores(df: Any) -> int:
    """Partitions for a Python stage: one per core (Spark's default parallelism); every
    Python task has a fixed cost (window_aggregate's partials and rolling_aggregate's rows)."""
    try:
        return max(1, int(df.sparkSession.sparkContext.defaultParallelism))
    except Exception:  # a session without a SparkContext (Spark Connect)
        return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions"))


def key_names(plan: Plan) -> list[str]:
    """Internal names of the key columns (PySpark's mapped and grouped Python functions cannot
    take input columns whose names hold a dot); the output has the user's names."""
    return [f"{K}{i}" for i in range(len(plan.keys))] or [K]


def key_columns(plan: Plan) -> list[Any]:
    """The key columns under their internal names; a constant key when there is none."""
    from pyspark.sql import functions as F

    cols = [F.col(quoted(k)).alias(n) for k, n in zip(plan.keys, key_names(plan))]
    return cols or [F.lit(0).alias(K)]


def internal_schema(plan: Plan, update: bool = False) -> Any:
    """What the per-key Python functions return: the constant key first when there is none."""
    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = plan.output_schema(internal=True, update=update)
    if not plan.keys:
        schema = StructType([StructField(K, IntegerType()), *schema.fields])
    return schema


def _partials(df: Any, plan: Plan, grids: list) -> Any:
    """The (key, slice) partials in Spark SQL, straight from the input: one groupBy over
    expressions (every DataFrame step costs the driver an analysis of the plan)."""
    from pyspark.sql import functions as F

    value = f"CAST({quoted(plan.value)} AS DOUBLE)"
    fn = {"s": "sum", "c": "count", "min": "min", "max": "max"}
    return df.groupBy(*key_columns(plan), F.expr(slice_sql(grids, time_sql(plan))).alias(S)).agg(
        *[F.expr(f"{fn[c]}({value})").alias(c) for c in facts(plan.agg).partials]
    )  # only the partials the aggregation needs


def run_batch(df: Any, plan: Plan) -> Any:
    from pyspark.sql import functions as F

    if plan.fast:  # per (key, slice) partials, then a partition per core by key, then Python
        slicer = StreamSlicer()
        slicer.add_windows(plan.windows)
        keys = key_names(plan)
        pre = _partials(df, plan, slicer.grids).repartition(cores(df), *keys)
        return pre.mapInArrow(_sliced(plan, slicer.grids, keys), plan.output_schema())
    base = df.select(*key_columns(plan), internal_time(plan).alias(T),
                     F.col(quoted(plan.value)).cast("double").alias(V))  # fmt: skip
    base = base.where(F.col(T).isNotNull())
    out = base.groupBy(*key_names(plan)).applyInPandas(_general(plan), internal_schema(plan))
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
