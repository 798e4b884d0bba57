"""Entries: one output column each (an aggregation over a column, in a frame or a window), and
what is known of it before any data: its SQL rule, its input columns and their types, its
result type (Spark's, for Spark's names). The rolling and the window front ends plan their
entries here.

Aggregations under Spark's names (:data:`windowagg.aggregations.SQL`;
docs/guides/spark-functions.md) follow SQL's rules, as Spark evaluates them: nulls are
skipped (a frame without a non-null value gives null; ``count`` and ``count_if`` give 0,
``collect_list`` and ``collect_set`` an empty list), NaN is a value (a sum, mean or moment
over it is NaN, it is the largest double for ``max``, ``min``, the percentiles and the ``y``
of ``max_by``/``min_by``), ``first`` and ``last`` take the frame's first and last row, null
or not (unless ``ignorenulls``), and results have Spark's types. Every other aggregation, the
user's own included, sees the frame's non-null values in time order; a NaN reaches the
``lift`` of one without a kernel (the user's own) as a float NaN (Arrow's and Spark's rule; a
pandas or numpy NaN is a null by the time it gets here).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from ..aggregations import AGGREGATIONS, AggregationProtocol, Evaluation, facts, name_of, resolve
from ..frames import Frame

__all__ = [
    "Entry",
    "check_entry",
    "check_keys",
    "evaluation_of",
    "is_timestamp",
    "names",
    "result_type",
    "whole_times",
]


@dataclass(frozen=True)
class Entry:
    """One output column: ``agg`` (resolved) over ``column`` in ``frame``; ``sql`` names the
    SQL rule it follows (one of :data:`windowagg.aggregations.SQL`), or is None for the
    library's own; ``evaluation`` how the engine evaluates it (by default its record's,
    :func:`evaluation_of`; windows from partials evaluate some entries otherwise, a count as
    the sum of the slices' counts)."""

    name: str
    agg: AggregationProtocol
    sql: str | None
    column: str | None
    frame: Frame | None  # None: a window's entry (the windows give the bounds)
    type: pa.DataType  # the result's pyarrow type
    counts: str | None = None  # rows that are partials: the column of their value counts
    states: tuple[str, ...] = ()  # rows that are partials: the columns of a family's state
    other: str | None = None  # a two-column aggregation's second column (y of max_by(x, y))
    wraps: bool = False  # an integer sum wraps as Java's longs do (Spark, ANSI off), not raise
    evaluation: Evaluation | None = None  # None: the record's (filled in on creation)

    def __post_init__(self) -> None:
        if self.evaluation is None:
            object.__setattr__(self, "evaluation", evaluation_of(self.agg, self.sql))

    @property
    def inputs(self) -> tuple[str, ...]:
        """The columns the entry reads."""
        return tuple(c for c in (self.column, self.other) if c is not None)

    def renamed(self, names: dict[str, str]) -> Entry:
        """The entry over columns renamed by ``names``."""
        return replace(
            self,
            column=names.get(self.column, self.column) if self.column else None,
            other=names.get(self.other, self.other) if self.other else None,
        )


def evaluation_of(agg: AggregationProtocol, sql: str | None) -> Evaluation:
    """How an entry of ``agg`` is evaluated: as its record says, unless the record claims SQL's
    rules for a class that is not the built-in of its name (a user's subclass of one): the
    sweep of its own partials."""
    f = facts(agg)
    return f.evaluation if sql is not None or not f.sql else Evaluation.SWEEP


def _sql_name(agg: AggregationProtocol) -> str | None:
    """The SQL rule of a built-in (not of a user's subclass: facts() reads the class's own)."""
    name = str(getattr(agg, "name", ""))
    return name if facts(agg).sql and AGGREGATIONS.get(name) is type(agg) else None


def result_type(
    entry_sql: str | None, agg: AggregationProtocol, value: pa.DataType, time: pa.DataType
) -> pa.DataType:
    """The pyarrow type of an entry's result: Spark's for the SQL aggregations (count long,
    sum of integers long, of ``decimal(p, s)`` ``decimal(min(38, p + 10), s)``, avg of a
    decimal ``decimal(min(38, p + 4), s + 4)``, min/max/first/last the input's type); for the
    others, the type the aggregation declares (``result_type``, a pyarrow type), else by what
    it gives (a count or a count's estimate long, an arg the time column's type, a list of the
    input's numbers, m4 a struct of doubles); a user's aggregation without ``result_type``
    gets the type of its result for the single value 1.0 (double if that fails)."""

    record = facts(agg)
    if entry_sql is not None:  # Spark's type, by the record's SQL rule
        if record.result == "count":
            return pa.int64()
        if record.keeps_type:
            return value
        if record.result == "bool":
            return pa.bool_()
        if record.result == "list":
            return pa.list_(value)
        if record.sql_type == "sum" and pa.types.is_integer(value):
            return pa.int64()
        if record.sql_type == "sum" and pa.types.is_decimal(value):
            return pa.decimal128(min(38, value.precision + 10), value.scale)
        if record.sql_type == "avg" and pa.types.is_decimal(value):
            return pa.decimal128(min(38, value.precision + 4), min(38, value.scale + 4))
        return pa.float64()
    declared = getattr(agg, "result_type", None)
    if declared is not None:
        if not isinstance(declared, pa.DataType):
            raise TypeError(
                f"aggregation {agg!r}: result_type must be a pyarrow DataType, got {declared!r}"
            )
        return declared
    kind = record.result
    if kind == "value":  # a user's aggregation that declares no type: its result for one value
        try:
            return pa.array([agg.lower(agg.lift(1.0))]).type
        except Exception:
            return pa.float64()
    if kind in ("count", "estimate"):  # an estimate of a count (hll), as Spark's is
        return pa.int64()
    if kind == "arg":
        return time
    if kind == "list":  # of the input's values
        numeric = pa.types.is_integer(value) or pa.types.is_floating(value)
        return pa.list_(value if numeric else pa.float64())
    if kind == "struct":
        return pa.struct([(f, pa.float64()) for f in ("min", "max", "first", "last")])
    if kind == "filter":
        raise ValueError(
            f"aggregation {name_of(agg)!r} gives a filter object, which has no "
            "column type; use it through sliding_aggregate or the window "
            "operator"
        )
    return pa.float64()


def _is_numeric(t: pa.DataType) -> bool:
    return (
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_decimal(t)
        or pa.types.is_boolean(t)
    )


def _is_orderable(t: pa.DataType) -> bool:
    return (
        _is_numeric(t)
        or pa.types.is_temporal(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
    )


def check_entry(
    name: str, agg: AggregationProtocol, column: Any, fields: dict
) -> tuple[AggregationProtocol, str | None, str | None, str | None, pa.DataType]:
    """One entry's aggregation (resolved), SQL rule, column (None: rows, ``count(*)``), second
    column (two-column aggregations: ``(x, y)``; else None) and input type, checked against the
    columns (``fields``: name -> pyarrow type)."""

    agg = resolve(agg)
    sql = _sql_name(agg)
    label = getattr(agg, "name", agg)
    other = None
    if facts(agg).columns == 2:
        if not isinstance(column, tuple | list) or len(column) != 2:
            raise ValueError(
                f"aggs[{name!r}]: {label} takes two columns, as a pair like "
                f"({label!r}, ('x', 'y')); got {column!r}"
            )
        column, other = column
    if column in (None, "*"):
        if sql is None or not facts(agg).rows:
            raise ValueError(f"aggs[{name!r}]: only count takes no column (rows)")
        column = None
    for c in (column, other):
        if c is not None and (not isinstance(c, str) or c not in fields):
            raise ValueError(f"aggs[{name!r}]: no column {c!r} (columns: {', '.join(fields)})")
    vtype = pa.int64() if column is None else fields[column]
    checks = [(column, vtype)] if other is None else [(column, vtype), (other, fields[other])]
    for c, t in checks:
        takes = facts(agg).takes
        if takes == "booleans" and not pa.types.is_boolean(t):
            raise TypeError(f"aggs[{name!r}]: {sql} needs a boolean column, {c!r} is {t}")
        orders = facts(agg).orders
        ordered = (orders == "value" and c == column) or (orders == "by" and c == other)
        if ordered and not _is_orderable(t):
            raise TypeError(f"aggs[{name!r}]: {sql} needs an orderable column, {c!r} is {t}")
        if takes == "numbers" and not _is_numeric(t):
            raise TypeError(f"aggs[{name!r}]: {label!r} needs a numeric column, {c!r} is {t}")
    return agg, sql, column, other, vtype


def is_timestamp(time: str, ttype: pa.DataType, purpose: str) -> bool:
    """Whether the time column holds timestamps or dates (microseconds inside), else plain
    numbers; anything else is an error that says what the time is for."""

    if pa.types.is_timestamp(ttype) or pa.types.is_date(ttype):
        return True
    if pa.types.is_integer(ttype) or pa.types.is_floating(ttype) or pa.types.is_decimal(ttype):
        return False
    raise TypeError(
        f"time column {time!r} must be a timestamp, a date or a number to {purpose}, got {ttype}"
    )


def whole_times(ttype: pa.DataType) -> bool:
    """Whether a time column holds whole numbers (integers, timestamps, dates): its frames'
    bounds are then whole numbers too (:func:`windowagg.frames.whole`)."""
    return pa.types.is_integer(ttype) or pa.types.is_timestamp(ttype) or pa.types.is_date(ttype)


def check_keys(fields: dict[str, pa.DataType], keys: tuple[str, ...]) -> None:
    """Raise, before any work, for a key column that cannot key rows: a list, map or struct
    (keys are compared and ordered as whole values: numbers, strings, binary, booleans,
    dates, times and decimals)."""
    for k in keys:
        if pa.types.is_nested(fields[k]):
            raise TypeError(
                f"key column {k!r} holds {fields[k]}: a key is a number, string, binary, "
                "boolean, date, timestamp or decimal (cast or flatten a nested key first)"
            )


def names(value: str | Iterable[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, str | Iterable):
        raise TypeError(f"{what} must be a column name or a list of them, got {value!r}")
    names = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"{what} must be a column name or a list of them, got {value!r}")
    return names
