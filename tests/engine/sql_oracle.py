"""SQL window functions by their definition, row by row in plain Python: the frame of every row
found by scanning its key (RANGE / ROWS BETWEEN, peers included), then the aggregate folded
from the frame's values with SQL's rules as Spark applies them (nulls skipped, NaN a value and
the largest double, first/last the frame's first/last row, stddev null below two values)."""

from __future__ import annotations

import math
import statistics
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tests.oracles import direct


def _order_key(x: Any) -> tuple:
    """Ascending, nulls first, NaN after every number (Spark's order)."""
    if x is None:
        return (0, 0)
    if isinstance(x, float) and math.isnan(x):
        return (2, 0)
    return (1, x)


def _is_nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _max_key(x: Any) -> tuple:
    return (1, 0) if _is_nan(x) else (0, x)


def sql_aggregate(name: str, values: list[Any], agg: Any = None) -> Any:
    if name == "first":
        return values[0] if values else None
    if name == "last":
        return values[-1] if values else None
    xs = [v for v in values if v is not None]
    if name == "count":
        return len(xs)
    if name not in ("sum", "mean", "min", "max", "stddev"):  # the library's own: non-null values
        return direct(agg, xs)
    if not xs:
        return None
    if name == "max":
        return max(xs, key=_max_key)
    if name == "min":
        return min(xs, key=_max_key)
    if name == "stddev" and len(xs) < 2:  # null below two values, NaN or not
        return None
    if any(_is_nan(v) for v in xs):
        return math.nan
    if name == "sum":
        return sum(xs, Decimal(0) if isinstance(xs[0], Decimal) else 0)
    if name == "mean":
        if isinstance(xs[0], Decimal):  # Spark: avg of decimal(p, s) has scale s + 4, half up
            exact = sum(xs) / len(xs)
            return exact.quantize(Decimal(1).scaleb(xs[0].as_tuple().exponent - 4), ROUND_HALF_UP)
        return sum(xs) / len(xs)
    return None if len(xs) < 2 else statistics.stdev(xs)


def frames(rows: list[dict], keys: list[str], time: str, order: list[str], frame: Any) -> list:
    """For every row (in the order of ``rows``), the rows of its frame, in frame order."""
    order_of = sorted(
        range(len(rows)),
        key=lambda i: (
            tuple(_order_key(rows[i][k]) for k in keys),
            _order_key(rows[i][time]),
            tuple(_order_key(rows[i][o]) for o in order),
        ),
    )
    out = []
    for i in range(len(rows)):
        group = [
            j
            for j in order_of
            if all(_order_key(rows[j][k]) == _order_key(rows[i][k]) for k in keys)
        ]
        me = group.index(i)

        def t(j):
            x = rows[j][time]
            return -math.inf if x is None else math.inf if _is_nan(x) else x

        picked = []
        for r, j in enumerate(group):
            if frame.kind == "range":
                ok = (frame.start is None or t(j) >= t(i) + frame.start) and (
                    frame.end is None or t(j) <= t(i) + frame.end
                )
            else:
                ok = (frame.start is None or r >= me + frame.start) and (
                    frame.end is None or r <= me + frame.end
                )
            if ok:
                picked.append(j)
        out.append(picked)
    return out
