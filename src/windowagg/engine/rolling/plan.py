"""What ``rolling_aggregate`` needs to know before it touches data, on every table it runs on
(pandas, Arrow, Spark's Arrow batches): the key, time and order columns, every entry's
aggregation, column, frame and result type (:mod:`..entries`, which also says the SQL rules
that Spark's names follow). Every user error is raised here, before any work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa

from ...aggregations import Evaluation
from ...durations import unit_of
from ...frames import Frame, FrameError, frame, whole
from ..entries import (
    Entry,
    check_entry,
    check_keys,
    is_timestamp,
    names,
    result_type,
    whole_times,
)

__all__ = ["RollingPlan", "plan_rolling"]


@dataclass(frozen=True)
class RollingPlan:
    keys: tuple[str, ...]
    time: str
    order_by: tuple[str, ...]
    timestamp: bool  # times are timestamps (microseconds inside), else plain numbers
    entries: tuple[Entry, ...]

    @cached_property
    def frames(self) -> list[Frame]:
        """The distinct frames, each found once however many entries share it."""
        return list(dict.fromkeys(e.frame for e in self.entries if e.frame is not None))

    @cached_property
    def inputs(self) -> frozenset[str]:
        """The columns the entries read."""
        return frozenset(c for e in self.entries for c in e.inputs)

    @cached_property
    def reads_times(self) -> bool:
        """Whether an evaluation reads the time column: where an entry reads it, where the
        FIFO sweep serves an entry (an ``arg`` result is the time of its row), or where no
        entry reads any column (the queries' times then take the column's type from it)."""
        swept = any(e.evaluation is Evaluation.SWEEP for e in self.entries)
        return self.time in self.inputs or swept or not self.inputs

    @property
    def looks_forward(self) -> bool:
        return any(e.frame is not None and e.frame.looks_forward for e in self.entries)


def plan_rolling(
    schema: pa.Schema,
    *,
    time: str,
    key: str | Iterable[str] | None,
    aggs: Mapping[str, tuple],
    order_by: str | Iterable[str] | None,
    onto_events: bool = True,
) -> RollingPlan:
    """Check everything against ``schema`` (a ``pyarrow.Schema``) and plan the entries.
    ``onto_events``: the outputs go onto this table, so none may take one of its columns'
    names (false with ``at=``: they go onto the query table, which
    :func:`~windowagg.engine.rolling.at.check_queries` checks)."""
    fields = {f.name: f.type for f in schema}
    keys, order = names(key, "key"), names(order_by, "order_by")
    if not isinstance(time, str):
        raise TypeError(f"time must be a column name, got {time!r}")
    roles = [(time, "time"), *((k, "key") for k in keys), *((o, "order_by") for o in order)]
    for name, role in roles:
        if name not in fields:
            raise ValueError(f"no {role} column {name!r} (columns: {', '.join(fields)})")
    check_keys(fields, keys)
    ttype = fields[time]
    timestamp = is_timestamp(time, ttype, "order rows and measure range frames")
    if not isinstance(aggs, dict) or not aggs:
        raise TypeError(
            "aggs must be a non-empty dict: output name -> (aggregation, column, "
            "frame), like {'sum_1h': ('sum', 'amount', 'range:1h')}"
        )
    taken = set(fields) if onto_events else set()
    entries = []
    for name, spec in aggs.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"output names are non-empty strings, got {name!r}")
        if name in taken:
            raise ValueError(f"output column {name!r} already exists")
        taken.add(name)
        if not isinstance(spec, tuple | list) or len(spec) != 3:
            raise TypeError(f"aggs[{name!r}] must be (aggregation, column, frame), got {spec!r}")
        agg, column, text = spec
        agg, sql, column, other, vtype = check_entry(name, agg, column, fields)
        try:
            fr = frame(text, unit_of(ttype))
        except FrameError as e:
            raise FrameError(f"aggs[{name!r}]: {e}") from None
        if whole_times(ttype):
            fr = whole(fr)
        entries.append(
            Entry(name, agg, sql, column, fr, result_type(sql, agg, vtype, ttype), other=other)
        )
    return RollingPlan(keys, time, order, timestamp, tuple(entries))
