"""What ``window_aggregate`` and ``rolling_aggregate`` need to know on Spark before they touch
data: the engine's plan (:mod:`windowagg.engine.windows.plan`, every user error raised there,
before any Spark job) against the DataFrame's schema as Arrow sees it, and each output
column's Spark type."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from ..aggregations import facts
from ..engine.entries import Entry
from ..engine.rolling.plan import RollingPlan, plan_rolling
from ..engine.windows.plan import WindowPlan, plan_windows
from ..slicing import Window

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructField, StructType

#: a plan of either front end
Plan = TypeVar("Plan", WindowPlan, RollingPlan)


def arrow_schema(df: DataFrame) -> pa.Schema:
    """The DataFrame's schema as the Arrow batches of ``mapInArrow`` carry it."""
    from pyspark.sql.pandas.types import to_arrow_schema

    tz = df.sparkSession.conf.get("spark.sql.session.timeZone")
    return to_arrow_schema(df.schema, timezone=tz)


def entry_field(e: Entry, types: dict[str, DataType], time: str) -> StructField:
    """An entry's output field in Spark's types: the input column's own type where the result
    is one of its values (min, max, first, last, mode, max_by, ...), an array of it for
    collect_list and collect_set (never null), the time column's for an arg (argmin, argmax),
    else the engine's type; a count is never null."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import ArrayType, StructField

    record = facts(e.agg)
    column = e.column or ""  # a result that is one of the values has a column
    if e.sql is not None and record.keeps_type:
        t = types[column]
    elif e.sql is not None and record.result == "list":
        return StructField(e.name, ArrayType(types[column], False), False)
    elif e.sql is None and record.result == "arg" and getattr(e.agg, "result_type", None) is None:
        t = types[time]
    else:
        t = from_arrow_type(e.type, prefer_timestamp_ntz=False)
    return StructField(e.name, t, e.sql is None or not record.never_null)


def make_plan(
    df: DataFrame,
    *,
    time: str,
    windows: str | Window | Iterable[str | Window],
    aggs: Mapping[str, tuple],
    key: str | Iterable[str] | None,
    allowed_lateness: float,
) -> WindowPlan:
    """The windows' plan over ``df``'s schema, under the session's SQL rules."""
    plan = plan_windows(
        arrow_schema(df),
        time=time,
        windows=windows,
        aggs=aggs,
        key=key,
        allowed_lateness=allowed_lateness,
    )
    return with_session_rules(df, plan)


def make_rolling_plan(
    df: DataFrame,
    *,
    time: str,
    key: str | Iterable[str] | None,
    aggs: Mapping[str, tuple],
    order_by: str | Iterable[str] | None,
    onto_events: bool = True,
) -> RollingPlan:
    """The rolling frames' plan over ``df``'s schema, under the session's SQL rules
    (``onto_events``: as :func:`~windowagg.engine.rolling.plan.plan_rolling` has it)."""
    plan = plan_rolling(
        arrow_schema(df),
        time=time,
        key=key,
        aggs=aggs,
        order_by=order_by,
        onto_events=onto_events,
    )
    return with_session_rules(df, plan)


def with_session_rules(df: DataFrame, plan: Plan) -> Plan:
    """The plan under the session's SQL rules: with ``spark.sql.ansi.enabled`` off, integer sums
    wrap as Java's longs do; on (Spark 4's default), they raise, as the engine does by
    default."""

    ansi = str(df.sparkSession.conf.get("spark.sql.ansi.enabled", "true")).lower() == "true"
    if ansi:
        return plan
    return replace(plan, entries=tuple(replace(e, wraps=True) for e in plan.entries))


def output_schema(df: DataFrame, plan: WindowPlan) -> StructType:
    """The key columns, ``window``, ``window_start``, ``window_end`` (the time column's
    timestamp type; longs for integer times, exactly, where every window's edges are whole;
    doubles for other numbers), then one column per entry."""
    from pyspark.sql.types import (
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    fields = {f.name: f for f in df.schema.fields}
    types = {n: f.dataType for n, f in fields.items()}
    bound = (
        TimestampType()
        if plan.timestamp
        else LongType()
        if pa.types.is_integer(plan.bound)
        else DoubleType()
    )
    out = [fields[k] for k in plan.keys]
    out += [
        StructField("window", StringType(), False),
        StructField("window_start", bound),
        StructField("window_end", bound),
    ]
    out += [entry_field(e, types, plan.time) for e in plan.entries]
    return StructType(out)
