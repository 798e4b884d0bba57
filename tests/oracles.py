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


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


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
    if name in ("argmin", "argmax", "min_by", "max_by"):
        ps = _pairs(window)
        if not ps:
            return None
        best = min(p[1] for p in ps) if name in ("argmin", "min_by") else max(p[1] for p in ps)
        ties = [p[0] for p in ps if p[1] == best]
        return ties[0] if name.startswith("arg") else ties[-1]  # the oldest; Spark's: youngest
    if name in ("covar_samp", "covar_pop", "corr"):
        ps = [p for p in _pairs(window) if not _missing(p[0])]
        n = len(ps)
        if n < (1 if name == "covar_pop" else 2):
            return None
        mx, my = sum(p[0] for p in ps) / n, sum(p[1] for p in ps) / n
        c = sum((p[0] - mx) * (p[1] - my) for p in ps)
        if name == "corr":
            q = sum((p[0] - mx) ** 2 for p in ps) * sum((p[1] - my) ** 2 for p in ps)
            return c / math.sqrt(q) if q else None
        return c / (n if name == "covar_pop" else n - 1)
    if name in ("var_samp", "var_pop", "stddev_pop"):
        if len(xs) < (2 if name == "var_samp" else 1):
            return None
        return {
            "var_samp": statistics.variance,
            "var_pop": statistics.pvariance,
            "stddev_pop": statistics.pstdev,
        }[name](xs)
    if name in ("skewness", "kurtosis"):
        if not xs:
            return None
        m = sum(xs) / len(xs)
        m2, m3, m4 = (sum((x - m) ** k for x in xs) for k in (2, 3, 4))
        if m2 == 0:
            return None
        n = len(xs)
        return math.sqrt(n) * m3 / m2**1.5 if name == "skewness" else n * m4 / m2**2 - 3
    if name == "product":
        return math.prod(xs) if xs else None
    if name == "count_if":
        return sum(1 for x in xs if x)
    if name in ("bool_and", "bool_or"):
        return None if not xs else all(xs) if name == "bool_and" else any(xs)
    if name == "mode":
        if not xs:
            return None
        top = max(xs.count(x) for x in xs)
        return min(x for x in xs if xs.count(x) == top)
    if name == "collect_list":
        return list(xs)
    if name == "collect_set":
        return sorted(set(xs))
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
    if name in ("quantile", "percentile_disc", "percentile_approx"):
        if not xs:
            return None
        q = agg.q if name == "quantile" else agg.p
        v = sorted(xs)[max(0, math.ceil(q * len(xs)) - 1)]
        return float(v) if name == "percentile_disc" else v
    if name in ("median", "percentile"):
        if not xs:
            return None
        s, pos = sorted(xs), (len(xs) - 1) * (0.5 if name == "median" else agg.p)
        lo, hi = math.floor(pos), math.ceil(pos)
        return float(s[lo]) + (s[hi] - s[lo]) * (pos - lo)
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
