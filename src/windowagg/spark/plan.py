"""What ``window_aggregate`` needs to know before it touches data: the key columns, the time
column and its unit, the windows, the aggregation and the output schema; every user error is
raised here, before any work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..aggregations import Aggregation, Facts, facts, resolve
from ..durations import MICROS
from ..slicing import Session, Sliding, Window
from ..specs import canonical, windows_of


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


@dataclass
class Plan:
    keys: list[str]
    time: str
    value: str
    timestamp: bool  # the time column is a timestamp (else plain numbers)
    windows: list[Window]
    specs: list[str]
    agg: Any
    lateness: Any
    key_fields: list[Any]  # StructFields of the key columns

    @property
    def unit(self) -> float | None:
        return MICROS if self.timestamp else None

    @property
    def fast(self) -> bool:
        """Pre-aggregation per (key, slice) in Spark SQL, then the array fast path."""
        from ..slicing.vector import serves

        return serves(self.agg, self.windows)

    def operator(self) -> Any:
        """A window operator for one key."""
        from ..slicing import WindowOperator

        op = WindowOperator(self.agg, allowed_lateness=self.lateness, store="eager")
        for w in self.windows:
            op.add_window(w)
        return op

    def output_schema(self, internal: bool = False, update: bool = False) -> Any:
        from pyspark.sql.types import (
            BooleanType,
            DoubleType,
            LongType,
            StringType,
            StructField,
            StructType,
            TimestampType,
        )

        # plain numbers stay doubles; timestamps are microseconds inside the Python functions
        stamp = LongType() if internal else TimestampType()
        bound = stamp if self.timestamp else DoubleType()
        value = LongType() if facts(self.agg).result == "count" else DoubleType()
        fields = [*self.key_fields, StructField("window", StringType()),
                  StructField("window_start", bound), StructField("window_end", bound),
                  StructField("value", value)]  # fmt: skip
        if update:
            fields.append(StructField("update", BooleanType()))
        return StructType(fields)


def make_plan(df: Any, time: str, value: str, windows: Any, agg: Any, key: Any,
              allowed_lateness: Any) -> Plan:  # fmt: skip
    from pyspark.sql.types import NumericType, TimestampNTZType, TimestampType

    fields = {f.name: f for f in df.schema.fields}
    keys = [] if key is None else [key] if isinstance(key, str) else list(key)
    for name, role in [(time, "time"), (value, "value"), *((k, "key") for k in keys)]:
        if name not in fields:
            raise ValueError(f"no {role} column {name!r} (columns: {', '.join(fields)})")
    ttype = fields[time].dataType
    if isinstance(ttype, TimestampType | TimestampNTZType):
        timestamp = True
    elif isinstance(ttype, NumericType):
        timestamp = False
    else:
        raise TypeError(f"time column {time!r} must be a timestamp or a number, got "
                        f"{ttype.simpleString()}")  # fmt: skip
    if not isinstance(fields[value].dataType, NumericType):
        raise TypeError(f"value column {value!r} must be numeric, got "
                        f"{fields[value].dataType.simpleString()}")  # fmt: skip
    unit = MICROS if timestamp else None
    ws = windows_of(windows, unit)
    a = resolve(agg)
    if getattr(a, "name", None) == "sum":
        a = SqlSum()  # Spark's semantics: null when every value is null
    elif not facts(a).scalar:
        from ..aggregations import AGGREGATIONS

        scalar = sorted(n for n, make in AGGREGATIONS.items() if facts(make()).scalar)
        raise ValueError(f"aggregation {getattr(a, 'name', a)!r} does not give one number per "
                         f"window; in Spark use one of: {', '.join(scalar)}")  # fmt: skip
    if not isinstance(allowed_lateness, int | float) or allowed_lateness < 0:
        raise ValueError(f"allowed_lateness must be a number >= 0, got {allowed_lateness!r}")
    lateness = allowed_lateness * MICROS if timestamp else allowed_lateness
    for w in ws:
        if not isinstance(w, Sliding | Session):
            raise ValueError(f"window {w!r}: Spark runs tumbling, sliding, session and count "
                             "windows")  # fmt: skip
    return Plan(keys, time, value, timestamp, ws, [canonical(w, unit) for w in ws], a,
                lateness, [fields[k] for k in keys])  # fmt: skip
