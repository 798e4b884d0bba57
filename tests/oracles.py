"""Brute-force references the tests hold every algorithm to.

``direct(agg, window)`` computes a built-in aggregation straight from its definition in api.md
(with Python's ``statistics`` and ``sorted``), not through ``lift``/``combine``, so the
aggregation library is checked too. For aggregations without a direct definition (user-defined
ones, and the sketches, whose definition *is* their merge), it folds ``lift``/``combine`` over a
plain Python list: the recalculate-from-scratch baseline, independent of every algorithm.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from windowagg.aggregations import BloomFilter


def _present(window: list[Any]) -> list[Any]:
    return [x for x in window if not (x is None or (isinstance(x, float) and math.isnan(x)))]


def _pairs(window: list[Any]) -> list[tuple[Any, Any]]:
    return [p for p in window if p is not None and not (isinstance(p[1], float) and p[1] != p[1])]


def fold(agg: Any, window: list[Any]) -> Any:
    acc = agg.identity
    for x in window:
        acc = agg.combine(acc, agg.lift(x))
    return agg.lower(acc)


def direct(agg: Any, window: list[Any]) -> Any:
    name = getattr(agg, "name", None)
    xs = _present(window)
    if name == "sum":
        return sum(xs)
    if name == "count":
        return len(xs)
    if name == "mean":
        return statistics.fmean(xs) if xs else None
    if name == "stddev":
        return statistics.stdev(xs) if len(xs) >= 2 else None
    if name == "geomean":
        return statistics.geometric_mean(xs) if xs else None
    if name == "min":
        return min(xs) if xs else None
    if name == "max":
        return max(xs) if xs else None
    if name in ("argmin", "argmax"):
        ps = _pairs(window)
        if not ps:
            return None
        best = min(p[1] for p in ps) if name == "argmin" else max(p[1] for p in ps)
        return next(p[0] for p in ps if p[1] == best)  # ties go to the oldest
    if name == "mincount":
        return xs.count(min(xs)) if xs else 0
    if name == "maxcount":
        return xs.count(max(xs)) if xs else 0
    if name == "first":
        return xs[0] if xs else None
    if name == "last":
        return xs[-1] if xs else None
    if name == "m4":
        return (min(xs), max(xs), xs[0], xs[-1]) if xs else None
    if name == "collect":
        return list(xs)
    if name == "count_distinct":
        return len(set(xs))
    if name in ("median", "quantile"):
        if not xs:
            return None
        return sorted(xs)[max(0, math.ceil(agg.q * len(xs)) - 1)]
    return fold(agg, window)


def same(a: Any, b: Any, rel: float = 1e-7) -> bool:
    """Equality that forgives floating-point rounding (sums in another order)."""
    if isinstance(a, BloomFilter) or isinstance(b, BloomFilter):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return False
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y, rel) for x, y in zip(a, b))
    return a == b
