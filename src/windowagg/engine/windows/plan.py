"""What ``window_aggregate`` needs to know before it touches data, on every table it runs on
(pandas, Arrow, Spark's Arrow batches): the key and time columns, the windows, and every
entry's aggregation, column and result type. Every user error is raised here, before any work.

The entries follow the same rules and get the same types as rolling frames'
(:mod:`windowagg.engine.rolling.plan`): SQL's for the aggregations Spark also has (nulls
skipped, NaN a value, Spark's result types), and for every other aggregation, the user's own
included, its result over the window's non-null values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from ...durations import MICROS, unit_of
from ...slicing import Session, Sliding, Window
from ...specs import canonical, windows_of
from ..columns import EXACT
from ..entries import Entry, check_entry, check_keys, is_timestamp, names, result_type

__all__ = ["OUTPUT", "WindowPlan", "beyond_doubles", "plan_windows"]

#: the columns every output has between the keys and the entries
OUTPUT = ("window", "window_start", "window_end")


@dataclass(frozen=True)
class WindowPlan:
    keys: tuple[str, ...]
    time: str
    timestamp: bool  # times are timestamps or dates (in ``unit``), else plain numbers
    windows: tuple[Sliding | Session, ...]  # tumbling and count windows are Sliding
    specs: tuple[str, ...]  # each window's canonical spec, as the output's ``window`` says it
    entries: tuple[Entry, ...]  # ``frame`` is None: each window's bounds are the frame
    bound: pa.DataType = None  # window_start and window_end: the time column's type (a
    # timestamp's own unit; dates as timestamp[us]; int64 for integers, float64 otherwise)
    lateness: float = 0.0  # streaming: in the time column's internal unit
    order_by: tuple[str, ...] = ()
    spans: tuple[str, str] | None = None  # rows that are partials: their first and last time
    positions: str | None = None  # partials of count windows: the column of their row counts

    time_unit: int | None = MICROS  # how many time units one second is (timestamps)

    @property
    def unit(self) -> float | None:
        return self.time_unit if self.timestamp else None


def beyond_doubles(plan: WindowPlan) -> bool:
    """Whether whole-number times have a window whose edges doubles would round (a size,
    slide or gap above 2**52): its edges are then computed in integers."""
    if not (pa.types.is_integer(plan.bound) or pa.types.is_timestamp(plan.bound)):
        return False
    return any(abs(x) > EXACT for w in plan.windows for x in _sizes(w))


def _sizes(w: Sliding | Session) -> tuple[float, ...]:
    return (w.gap,) if isinstance(w, Session) else (w.size, w.slide)


def _whole(w: Sliding | Session) -> bool:
    """Whether a window's edges over whole-number times are whole numbers too."""
    return all(float(x).is_integer() for x in _sizes(w))


def plan_windows(
    schema: pa.Schema,
    *,
    time: str,
    windows: str | Window | Iterable[str | Window],
    aggs: Mapping[str, tuple],
    key: str | Iterable[str] | None = None,
    allowed_lateness: float = 0,
) -> WindowPlan:
    """Check everything against ``schema`` (a ``pyarrow.Schema``) and plan the entries:
    ``aggs`` maps an output name to ``(aggregation, column)`` (``count`` takes ``None`` or
    ``"*"``: rows)."""

    fields = {f.name: f.type for f in schema}
    keys = names(key, "key")
    if not isinstance(time, str):
        raise TypeError(f"time must be a column name, got {time!r}")
    for name, role in [(time, "time"), *((k, "key") for k in keys)]:
        if name not in fields:
            raise ValueError(f"no {role} column {name!r} (columns: {', '.join(fields)})")
    check_keys(fields, keys)
    ttype = fields[time]
    timestamp = is_timestamp(time, ttype, "place rows in windows")
    unit = unit_of(ttype)
    ws: list[Sliding | Session] = []
    for w in windows_of(windows, unit):
        if not isinstance(w, Sliding | Session):
            raise ValueError(
                f"window {w!r}: window_aggregate runs tumbling, sliding, session and count windows"
            )
        ws.append(w)
    if not isinstance(aggs, dict) or not aggs:
        raise TypeError(
            "aggs must be a non-empty dict: output name -> (aggregation, column), "
            "like {'fare': ('sum', 'fare'), 'trips': ('count', '*')}"
        )
    taken = {*keys, *OUTPUT}
    entries = []
    for name, spec in aggs.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"output names are non-empty strings, got {name!r}")
        if name in taken:
            raise ValueError(
                f"output column {name!r} is taken (by a key, another entry or {', '.join(OUTPUT)})"
            )
        taken.add(name)
        if not isinstance(spec, tuple | list) or len(spec) != 2:
            raise TypeError(f"aggs[{name!r}] must be (aggregation, column), got {spec!r}")
        agg, column = spec
        agg, sql, column, other, vtype = check_entry(name, agg, column, fields)
        entries.append(
            Entry(name, agg, sql, column, None, result_type(sql, agg, vtype, ttype), other=other)
        )
    if not isinstance(allowed_lateness, int | float) or allowed_lateness < 0:
        raise ValueError(f"allowed_lateness must be a number >= 0, got {allowed_lateness!r}")
    lateness = allowed_lateness * unit if unit is not None else allowed_lateness
    specs = tuple(canonical(w, unit) for w in ws)
    bound = (
        ttype
        if pa.types.is_timestamp(ttype)
        else pa.timestamp("us")
        if timestamp
        else pa.int64()
        if pa.types.is_integer(ttype) and all(_whole(w) for w in ws)
        else pa.float64()
    )
    return WindowPlan(
        keys,
        time,
        timestamp,
        tuple(ws),
        specs,
        tuple(entries),
        bound,
        lateness,
        time_unit=unit if unit is not None else MICROS,
    )
