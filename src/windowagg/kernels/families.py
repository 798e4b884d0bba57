"""Aggregations as compiled families: partials are columns of a float64 array ``buf[W, i]``.

Aggregations that share the shape of their ``combine`` share one compiled family, so every
algorithm is compiled once per family (4 families), not once per aggregation (13); what
differs inside a family (lift and lower) is chosen by a small integer ``code`` per element,
outside the algorithms' inner loops.

=========  =====  =========================================================================
family     width  partial and aggregations
=========  =====  =========================================================================
SUM        1      (sum,): sum alone, the most common case, without a count column
ADD        2      (sum, count): count, mean, geomean (sum of logs)
SELECT     3      (key, value, has): the larger key wins, ties to the older unless has = 2
                  (``last``); max (key x), min (-x), argmax/argmin (key +/-value, value =
                  arg), first (key 0), last (key 0, has 2)
XCOUNT     2      (key, count): equal keys add counts; maxcount (x), mincount (-x)
WELFORD    3      (n, mean, M2), merged by Chan et al.'s formula: stddev
=========  =====  =========================================================================

Every function has the same signature in every family, so the algorithms take them as
first-class arguments: ``lift(code, buf, i, x, arg)``, ``combine(d, di, a, ai, b, bi)``
(``d[:, di] = a[:, ai] (x) b[:, bi]``, operands may alias ``d``), ``identity(buf, i)``,
``lower(code, buf, i) -> float``, and ``inverse`` (like ``combine``; ADD and WELFORD only).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..aggregations import (
    ADD,
    SELECT,
    SUMF,
    WELFORD,
    XCOUNT,
    ArgMax,
    ArgMin,
    Count,
    GeoMean,
    Last,
    Max,
    MaxCount,
    Mean,
    Min,
)
from .jit import inline

# each aggregation's code inside its family, from its record (windowagg.aggregations)
COUNT = Count.facts.kernel.code
MEAN = Mean.facts.kernel.code
GEOMEAN = GeoMean.facts.kernel.code
MAX = Max.facts.kernel.code
MIN = Min.facts.kernel.code
ARGMAX = ArgMax.facts.kernel.code
ARGMIN = ArgMin.facts.kernel.code
LAST = Last.facts.kernel.code
MAXCOUNT = MaxCount.facts.kernel.code

# --- SUM ------------------------------------------------------------------------------------


@inline
def sum_lift(code, buf, i, x, arg):
    buf[0, i] = 0.0 if x != x else x


@inline
def sum_combine(d, di, a, ai, b, bi):
    d[0, di] = a[0, ai] + b[0, bi]


@inline
def sum_inverse(d, di, a, ai, b, bi):
    d[0, di] = a[0, ai] - b[0, bi]


@inline
def sum_identity(buf, i):
    buf[0, i] = 0.0


@inline
def sum_lower(code, buf, i):
    return buf[0, i]


# --- ADD ------------------------------------------------------------------------------------


@inline
def add_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = 0.0
        buf[1, i] = 0.0
    else:
        buf[0, i] = math.log(x) if code == GEOMEAN else x
        buf[1, i] = 1.0


@inline
def add_combine(d, di, a, ai, b, bi):
    s = a[0, ai] + b[0, bi]
    c = a[1, ai] + b[1, bi]
    d[0, di] = s
    d[1, di] = c


@inline
def add_identity(buf, i):
    buf[0, i] = 0.0
    buf[1, i] = 0.0


@inline
def add_lower(code, buf, i):
    s = buf[0, i]
    c = buf[1, i]
    if code == COUNT:
        return c
    if c == 0.0:
        return np.nan
    if code == MEAN:
        return s / c
    return math.exp(s / c)


@inline
def add_inverse(d, di, a, ai, b, bi):
    s = a[0, ai] - b[0, bi]
    c = a[1, ai] - b[1, bi]
    d[0, di] = s
    d[1, di] = c


# --- SELECT ---------------------------------------------------------------------------------


@inline
def select_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = -np.inf
        buf[1, i] = np.nan
        buf[2, i] = 0.0
        return
    if code == MAX:
        buf[0, i] = x
        buf[1, i] = x
    elif code == MIN:
        buf[0, i] = -x
        buf[1, i] = x
    elif code == ARGMAX:
        buf[0, i] = x
        buf[1, i] = arg
    elif code == ARGMIN:
        buf[0, i] = -x
        buf[1, i] = arg
    else:  # FIRST, LAST
        buf[0, i] = 0.0
        buf[1, i] = x
    buf[2, i] = 2.0 if code == LAST else 1.0


@inline
def select_combine(d, di, a, ai, b, bi):
    k0 = a[0, ai]
    v0 = a[1, ai]
    h0 = a[2, ai]
    k1 = b[0, bi]
    v1 = b[1, bi]
    h1 = b[2, bi]
    if h1 != 0.0 and (h0 == 0.0 or k1 > k0 or (k1 == k0 and h1 == 2.0)):
        k0 = k1
        v0 = v1
        h0 = h1
    d[0, di] = k0
    d[1, di] = v0
    d[2, di] = h0


@inline
def select_identity(buf, i):
    buf[0, i] = -np.inf
    buf[1, i] = np.nan
    buf[2, i] = 0.0


@inline
def select_lower(code, buf, i):
    return buf[1, i] if buf[2, i] != 0.0 else np.nan


# --- XCOUNT ---------------------------------------------------------------------------------


@inline
def xcount_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = -np.inf
        buf[1, i] = 0.0
    else:
        buf[0, i] = x if code == MAXCOUNT else -x
        buf[1, i] = 1.0


@inline
def xcount_combine(d, di, a, ai, b, bi):
    k0 = a[0, ai]
    c0 = a[1, ai]
    k1 = b[0, bi]
    c1 = b[1, bi]
    if k1 > k0:
        k0 = k1
        c0 = c1
    elif k1 == k0:
        c0 = c0 + c1
    d[0, di] = k0
    d[1, di] = c0


@inline
def xcount_identity(buf, i):
    buf[0, i] = -np.inf
    buf[1, i] = 0.0


@inline
def xcount_lower(code, buf, i):
    return buf[1, i]


# --- WELFORD --------------------------------------------------------------------------------


@inline
def welford_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = 0.0
        buf[1, i] = 0.0
    else:
        buf[0, i] = 1.0
        buf[1, i] = x
    buf[2, i] = 0.0


@inline
def welford_combine(d, di, a, ai, b, bi):
    na = a[0, ai]
    ma = a[1, ai]
    qa = a[2, ai]
    nb = b[0, bi]
    mb = b[1, bi]
    qb = b[2, bi]
    if na == 0.0:
        na = nb
        ma = mb
        qa = qb
    elif nb != 0.0:
        n = na + nb
        delta = mb - ma
        ma = ma + delta * nb / n
        qa = qa + qb + delta * delta * na * nb / n
        na = n
    d[0, di] = na
    d[1, di] = ma
    d[2, di] = qa


@inline
def welford_identity(buf, i):
    buf[0, i] = 0.0
    buf[1, i] = 0.0
    buf[2, i] = 0.0


@inline
def welford_lower(code, buf, i):
    n = buf[0, i]
    if n < 2.0:
        return np.nan
    q = buf[2, i]
    return math.sqrt(q / (n - 1.0)) if q > 0.0 else 0.0


@inline
def welford_inverse(d, di, a, ai, b, bi):
    n = a[0, ai]
    m = a[1, ai]
    q = a[2, ai]
    nb = b[0, bi]
    mb = b[1, bi]
    qb = b[2, bi]
    if nb != 0.0:
        nc = n - nb
        if nc <= 0.0:
            n = 0.0
            m = 0.0
            q = 0.0
        else:
            mc = (n * m - nb * mb) / nc
            delta = mb - mc
            t = delta * delta * nc * nb / n
            qc = q - qb - t
            q = qc if qc > 1e-12 * (q + qb + t) else 0.0  # cancellation below rounding: zero
            n = nc
            m = mc
    d[0, di] = n
    d[1, di] = m
    d[2, di] = q


@inline
def no_inverse(d, di, a, ai, b, bi):
    pass  # never called: algorithms that need an inverse refuse these families up front


class Family(NamedTuple):
    """One family's functions, its partial's width and the identity partial field by field
    (what ``identity`` writes), and whether it has an inverse."""

    lift: Any
    combine: Any
    identity: Any
    lower: Any
    inverse: Any
    width: int
    empty: tuple[float, ...]
    invertible: bool


FAMILIES = {
    SUMF: Family(sum_lift, sum_combine, sum_identity, sum_lower, sum_inverse, 1, (0.0,), True),
    ADD: Family(add_lift, add_combine, add_identity, add_lower, add_inverse, 2, (0.0, 0.0), True),
    SELECT: Family(select_lift, select_combine, select_identity, select_lower, no_inverse, 3,
                   (-np.inf, np.nan, 0.0), False),
    XCOUNT: Family(xcount_lift, xcount_combine, xcount_identity, xcount_lower, no_inverse, 2,
                   (-np.inf, 0.0), False),
    WELFORD: Family(welford_lift, welford_combine, welford_identity, welford_lower,
                    welford_inverse, 3, (0.0, 0.0, 0.0), True),
}  # fmt: skip
