"""Batch ``window_aggregate``: the local window engine (:mod:`windowagg.engine.windows.table`)
inside Spark's Python workers, over partitions of rows hash-partitioned by key (one per core).

When every entry merges from SQL partials (sum, count, mean, min, max, count_if, bool_and,
bool_or, product, max_by, min_by, the variances and standard deviations, over tumbling, sliding
and session windows, or over count windows alone; :mod:`windowagg.engine.windows.partials`),
Spark SQL first reduces each (key, slice) to one row holding every entry's partials in Spark's
own types (the slice is the last window edge at or before the event, over the fused edge grids
of the slicer, with a grid of the session gap's period for sessions; for count windows a run
of rows numbered per key in time order), in one aggregate, so what crosses into Python is one
row per slice, not per event (one tumbling count window needs no Python stage: its runs are its
windows); the engine answers every window of every key of a partition from
them in one call (``mapInArrow``: Arrow in and out). Otherwise (first/last, percentiles,
moments beyond the variance, the library's aggregations and the user's own, count windows
beside time windows) the rows
themselves go to the workers, sorted by key and time within each partition, and the engine
answers each key once its rows have all arrived, with every entry in the same pass.
The query is built in as few DataFrame steps as possible, its expressions as SQL text: each
step costs the driver a round trip and an analysis of the plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa

from ..aggregations import COMBINE, PartialKind
from ..engine.columns import segments, times_of
from ..engine.memory import engine_memory
from ..engine.windows.partials import Partial, counted, grids, mergeable, over_partials, partials
from ..engine.windows.plan import WindowPlan
from ..engine.windows.stream import WindowStream
from ..engine.windows.table import grain, window_table
from ..engine.windows.table import output_schema as arrow_output_schema
from ..slicing import Sliding
from .plan import output_schema
from .sql import R, S, T, cores, key_columns, key_names, quoted, task_threads, time_sql

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


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


#: a family's state's fields that Spark's own moments give
_MOMENTS = (PartialKind.AVG, PartialKind.M2, PartialKind.M3, PartialKind.M4)


def spark_call(fn: str, column: str | None, other: str | None = None) -> Column:
    """Spark's own aggregate ``fn`` (a name of :data:`windowagg.aggregations.SQL`, each
    Spark's too, or a partial's kind: ``fsum``, a slice's sum in doubles, or a field of its
    state, :data:`windowagg.aggregations.STATES`) of ``column`` (None: the rows),
    ``other`` its second argument (a state's: the pair's y, whose nulls leave x out)."""
    from pyspark.sql import functions as F

    if column is None:
        return F.count(F.lit(1))
    x = quoted(column)
    if fn == PartialKind.PRODUCT:  # a DataFrame function only
        return F.product(F.col(x))
    if fn == PartialKind.FSUM:
        return F.expr(f"sum(CAST({x} AS DOUBLE))")
    if fn in _MOMENTS:  # a state's field: Spark's own moments, unscaled
        xd = f"CAST({x} AS DOUBLE)"
        if other is not None:
            xd = f"CASE WHEN {quoted(other)} IS NOT NULL THEN {xd} END"
        n, v = f"count({xd})", f"var_pop({xd})"
        return F.expr(
            {
                PartialKind.AVG: f"avg({xd})",
                PartialKind.M2: f"{v} * {n}",
                PartialKind.M3: f"coalesce(skewness({xd}) * {n} * power({v}, 1.5), 0D)",  # 0: m2 0
                PartialKind.M4: f"coalesce((kurtosis({xd}) + 3D) * {n} * {v} * {v}, 0D)",
            }[PartialKind(fn)]
        )
    if fn == PartialKind.C2:
        y = quoted(other or "")
        return F.expr(f"covar_pop({x}, {y}) * count({x}, {y})")
    return F.expr(f"{fn}({x}{'' if other is None else ', ' + quoted(other)})")


def _partials_query(df: DataFrame, plan: WindowPlan, grids: list) -> DataFrame:
    """The (key, slice) partials of every entry in Spark SQL, straight from the input: one
    groupBy over expressions (every DataFrame step costs the driver an analysis of the plan)."""
    from pyspark.sql import functions as F

    def call(p: Partial) -> Column:
        if p.fn in (PartialKind.TMIN, PartialKind.TMAX):  # a slice's first and last time,
            extreme = COMBINE[p.fn]  # converted once per slice
            return F.expr(time_sql(plan, f"{extreme}({quoted(plan.time)})"))
        return spark_call(p.fn, p.column, p.other)

    aggs = [call(p).alias(p.name) for p in partials(plan)]

    if counted(plan):  # runs of g rows of each key in time order
        return (
            _ranked(df, plan, grain(plan.windows)).groupBy(*key_columns(plan), F.col(S)).agg(*aggs)
        )
    return df.groupBy(*key_columns(plan), F.expr(slice_sql(grids, time_sql(plan))).alias(S)).agg(
        *aggs
    )


def _tumbling_rows(df: DataFrame, plan: WindowPlan) -> DataFrame | None:
    """One tumbling count window of SQL-merged entries, answered in Spark SQL alone: each run
    of ``size`` rows of a key (its rows numbered in time order) is a window, its bounds the
    times of its first and last row; the last, incomplete run is in no window. None where the
    call needs more (several windows, sliding ones: windows of several runs)."""
    from pyspark.sql import functions as F

    w = plan.windows[0]
    if len(plan.windows) > 1 or not isinstance(w, Sliding) or w.measure != "count":
        return None  # several windows, or a window of time
    if w.size != w.slide:  # sliding: windows of several runs
        return None
    schema = output_schema(df, plan)
    t = quoted(plan.time)
    cols = [spark_call(e.sql or "", e.column, e.other) for e in plan.entries]
    bounds = [F.expr(f"min({t})"), F.expr(f"max({t})")]
    out = (
        _ranked(df, plan, int(w.size))
        .groupBy(*key_columns(plan), F.col(S))
        .agg(
            F.count(F.lit(1)).alias(R),
            *[c.alias(f"__wa_e{i}") for i, c in enumerate(bounds + cols)],
        )
    )
    named = [F.col(n).alias(k) for n, k in zip(key_names(plan), plan.keys)]
    named += [F.lit(plan.specs[0]).alias("window")]
    named += [
        F.col(f"__wa_e{i}").cast(f.dataType).alias(f.name)
        for i, f in enumerate(schema.fields[len(plan.keys) + 1 :])
    ]
    return out.where(F.col(R) == int(w.size)).select(*named)


def _ranked(df: DataFrame, plan: WindowPlan, g: int) -> DataFrame:
    """The rows with a time, each with its run of ``g`` rows of its key in time order (column
    ``S``); nulls and NaN times are in no window."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    t = F.col(quoted(plan.time))  # itself: no converted copy to shuffle and sort
    order = Window.partitionBy(*[F.col(quoted(k)) for k in plan.keys]).orderBy(t)
    floating = isinstance(df.schema[plan.time].dataType, DoubleType | FloatType)
    rows = df.where(t.isNotNull() & ~F.isnan(t) if floating else t.isNotNull())
    return rows.withColumn(S, F.floor((F.row_number().over(order) - 1) / g))


#: rows a Python worker gathers before it answers the keys that have all arrived; a key with
#: more rows than this is answered as a stream, in pieces of about this many rows
CHUNK = 1 << 17


def _engine(plan: WindowPlan, over: WindowPlan | None, by_key: bool, chunk: int = CHUNK):
    """mapInArrow: the engine over a partition. ``by_key``: the rows arrive sorted by key
    and time, and each key is answered once the next key starts (a partition's rows are never
    held whole, only the key being read); a key of more than ``chunk`` rows goes through the
    stream engine instead (:class:`windowagg.engine.windows.stream.WindowStream`, the watermark
    at each piece's last time), which holds only its open windows' rows. Else (partials: one
    row per slice) the partition at once. Rows without a time belong to no window."""
    run = plan if over is None else over
    streamable = by_key and all(w.measure == "time" for w in plan.windows)

    def go(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_threads()

        def answer(table: pa.Table) -> list[pa.RecordBatch]:
            with engine_memory():
                return window_table(plan, table, over).to_batches()

        big = None  # the key being streamed, which continues past the rows gathered
        pending: list = []
        rows = 0
        for b in batches:
            if not b.num_rows:
                continue
            pending.append(b)
            rows += b.num_rows
            if not by_key or rows < chunk:
                continue
            table = pa.Table.from_batches(pending).combine_chunks()
            seg = segments(run, table)
            if big is not None:  # its rows head the table, up to the next key if one began
                yield from big.feed(table.slice(0, seg[1]), final=len(seg) > 2)
                if len(seg) == 2:
                    pending, rows = [], 0
                    continue
                big, table, seg = None, table.slice(seg[1]), seg[1:] - seg[1]
            last = int(seg[-2])  # the key still arriving
            if last:
                yield from answer(table.slice(0, last))
                table = table.slice(last)
            if streamable and table.num_rows >= chunk:
                big = _Big(plan, run, table.schema)
                yield from big.feed(table, final=False)
                pending, rows = [], 0
            else:
                pending, rows = table.to_batches(), table.num_rows
        if not pending:
            if big is not None:
                yield from big.feed(None, final=True)
            return
        table = pa.Table.from_batches(pending).combine_chunks()
        if big is not None:
            seg = segments(run, table)
            yield from big.feed(table.slice(0, seg[1]), final=True)
            table = table.slice(seg[1])
        if table.num_rows:
            yield from answer(table)

    return go


class _Big:
    """One key's rows in time order, piece by piece, through the stream engine; its windows
    as the batch engine gives them (no ``update`` column: nothing arrives late)."""

    def __init__(self, plan: WindowPlan, run: WindowPlan, schema: pa.Schema):
        self.run = replace(run, lateness=0.0)
        self.stream = WindowStream(self.run, schema)
        self.out = arrow_output_schema(plan, [schema.field(k) for k in run.keys])
        self.units, self.reported = None, -float("inf")

    def feed(self, rows: pa.Table | None, final: bool) -> list[pa.RecordBatch]:
        wm = float("inf") if final or rows is None else float(times_of(self.run, rows)[-1])
        with engine_memory():
            step = self.stream.advance(self.units, rows, self.reported, wm)
        self.units, self.reported = step.units, step.reported
        if step.out is None:
            return []
        out = step.out.drop_columns(["update"]).rename_columns(self.out.names)
        return out.cast(self.out).to_batches()


def _spread(df: DataFrame, plan: WindowPlan) -> DataFrame:
    """The rows in a partition per core by key (one partition without keys)."""
    keys = key_names(plan)
    return df.repartition(cores(df), *keys) if keys else df.repartition(1)


def partials_by_key(df: DataFrame, plan: WindowPlan) -> DataFrame:
    """What the Python stage of a plan of SQL-merged entries reads: the (key, slice) partials
    in a partition per core by key (count windows' partials are clustered by key already, by
    their row numbers)."""

    pre = _partials_query(df, plan, grids(plan))
    return pre if counted(plan) else _spread(pre, plan)


def run_batch(df: DataFrame, plan: WindowPlan) -> DataFrame:
    from pyspark.sql import functions as F

    schema = output_schema(df, plan)
    keys = key_names(plan)
    if mergeable(plan):  # per (key, slice) partials, then a partition per core by key
        whole = _tumbling_rows(df, plan)
        if whole is not None:
            return whole
        over = over_partials(plan, S, tuple(keys))
        return partials_by_key(df, plan).mapInArrow(_engine(plan, over, by_key=False), schema)
    cols = sorted({c for e in plan.entries for c in e.inputs} - {plan.time})
    names = {c: f"__wa_c{i}" for i, c in enumerate(cols)}
    base = df.select(
        *key_columns(plan),
        F.col(quoted(plan.time)).alias(T),
        *[F.col(quoted(c)).alias(n) for c, n in names.items()],
    )
    names[plan.time] = T
    entries = tuple(e.renamed(names) for e in plan.entries)
    over = replace(plan, time=T, keys=tuple(keys), entries=entries)
    ordered = _spread(base, plan).sortWithinPartitions(*keys, T)
    return ordered.mapInArrow(_engine(plan, over, by_key=True), schema)
