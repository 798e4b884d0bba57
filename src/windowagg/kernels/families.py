"""Aggregations as compiled families: partials are columns of a float64 array ``buf[W, i]``.

Aggregations that share the shape of their ``combine`` share one compiled family, so every
algorithm is compiled once per family (8 families), not once per aggregation (31); what
differs inside a family (lift and lower) is chosen by a small integer ``code`` per element,
outside the algorithms' inner loops.

=========  =====  =========================================================================
family     width  partial and aggregations
=========  =====  =========================================================================
SUM        1      (sum,): sum alone, the most common case, without a count column; count_if
ADD        2      (sum, count): count, mean, geomean (sum of logs), bool_and, bool_or
SELECT     3      (key, value, has): the larger key wins, ties to the older unless has = 2
                  (``last``); max (key x), min (-x), argmax/argmin (key +/-value, value =
                  arg), max_by/min_by (the same, has 2), first (key 0), last (key 0, has 2)
XCOUNT     2      (key, count): equal keys add counts; maxcount (x), mincount (-x)
WELFORD    3      (n, mean, M2), merged by Chan et al.'s formula: stddev, var_samp, var_pop,
                  stddev_pop
PRODUCT    2      (product, has): product
MOMENTS    5      (n, mean, M2, M3, M4), merged by Pebay's formulas: skewness, kurtosis
COMOMENTS  6      (n, mean x, mean y, C, M2x, M2y): covar_samp, covar_pop, corr (x is the arg
                  of an ``(x, y)`` pair, y its value)
=========  =====  =========================================================================

Every function has the same signature in every family, so the algorithms take them as
first-class arguments: ``lift(code, buf, i, x, arg)``, ``combine(d, di, a, ai, b, bi)``
(``d[:, di] = a[:, ai] (x) b[:, bi]``, operands may alias ``d``), ``identity(buf, i)``,
``lower(code, buf, i) -> float``, and ``inverse`` (like ``combine``; ADD and WELFORD only).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..aggregations import (
    ADD,
    COMOMENTS,
    MOMENTS,
    PRODUCT,
    SELECT,
    SUMF,
    WELFORD,
    XCOUNT,
    Aggregation,
    ArgMax,
    ArgMin,
    BoolAnd,
    BoolOr,
    Count,
    CountIf,
    CovarPop,
    CovarSamp,
    GeoMean,
    Last,
    Max,
    MaxBy,
    MaxCount,
    Mean,
    Min,
    MinBy,
    Skewness,
    StdDevPop,
    VarPop,
    VarSamp,
    facts,
)
from .jit import Dispatcher, inline


def _code(cls: type[Aggregation]) -> int:
    """A built-in's code inside its family, from its record (windowagg.aggregations)."""
    kernel = facts(cls).kernel
    assert kernel is not None, f"{cls.__name__} has no kernel"
    return kernel.code


# each aggregation's code inside its family, from its record (windowagg.aggregations)
COUNT = _code(Count)
MEAN = _code(Mean)
GEOMEAN = _code(GeoMean)
MAX = _code(Max)
MIN = _code(Min)
ARGMAX = _code(ArgMax)
ARGMIN = _code(ArgMin)
LAST = _code(Last)
MAXCOUNT = _code(MaxCount)
COUNT_IF = _code(CountIf)
BOOL_AND = _code(BoolAnd)
BOOL_OR = _code(BoolOr)
MAXBY = _code(MaxBy)
MINBY = _code(MinBy)
VAR_SAMP = _code(VarSamp)
VAR_POP = _code(VarPop)
STDDEV_POP = _code(StdDevPop)
SKEWNESS = _code(Skewness)
COVAR_SAMP = _code(CovarSamp)
COVAR_POP = _code(CovarPop)

# --- SUM ------------------------------------------------------------------------------------


@inline
def sum_lift(code, buf, i, x, arg):
    if code == COUNT_IF:
        buf[0, i] = 1.0 if x == x and x != 0.0 else 0.0
    else:
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
        if code == GEOMEAN:
            buf[0, i] = math.log(x)
        elif code in (BOOL_AND, BOOL_OR):
            buf[0, i] = 1.0 if x != 0.0 else 0.0
        else:
            buf[0, i] = x
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
    if code == BOOL_AND:
        return 1.0 if s == c else 0.0
    if code == BOOL_OR:
        return 1.0 if s > 0.0 else 0.0
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
    elif code == MAXBY:
        buf[0, i] = x
        buf[1, i] = arg
    elif code == MINBY:
        buf[0, i] = -x
        buf[1, i] = arg
    else:  # FIRST, LAST
        buf[0, i] = 0.0
        buf[1, i] = x
    buf[2, i] = 2.0 if code in (LAST, MAXBY, MINBY) else 1.0


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
    q = buf[2, i]
    if q < 0.0:
        q = 0.0
    if code in (VAR_POP, STDDEV_POP):
        if n < 1.0:
            return np.nan
        return q / n if code == VAR_POP else math.sqrt(q / n)
    if n < 2.0:
        return np.nan
    return q / (n - 1.0) if code == VAR_SAMP else math.sqrt(q / (n - 1.0))


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


# --- PRODUCT --------------------------------------------------------------------------------


@inline
def product_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = 1.0
        buf[1, i] = 0.0
    else:
        buf[0, i] = x
        buf[1, i] = 1.0


@inline
def product_combine(d, di, a, ai, b, bi):
    p = a[0, ai] * b[0, bi]
    h = a[1, ai] + b[1, bi]
    d[0, di] = p
    d[1, di] = h


@inline
def product_identity(buf, i):
    buf[0, i] = 1.0
    buf[1, i] = 0.0


@inline
def product_lower(code, buf, i):
    return buf[0, i] if buf[1, i] != 0.0 else np.nan


# --- MOMENTS --------------------------------------------------------------------------------


@inline
def moments_lift(code, buf, i, x, arg):
    if x != x:
        buf[0, i] = 0.0
        buf[1, i] = 0.0
    else:
        buf[0, i] = 1.0
        buf[1, i] = x
    buf[2, i] = 0.0
    buf[3, i] = 0.0
    buf[4, i] = 0.0


@inline
def moments_combine(d, di, a, ai, b, bi):
    na = a[0, ai]
    ma = a[1, ai]
    m2a = a[2, ai]
    m3a = a[3, ai]
    m4a = a[4, ai]
    nb = b[0, bi]
    mb = b[1, bi]
    m2b = b[2, bi]
    m3b = b[3, bi]
    m4b = b[4, bi]
    if na == 0.0:
        na = nb
        ma = mb
        m2a = m2b
        m3a = m3b
        m4a = m4b
    elif nb != 0.0:  # windowagg.aggregations.merge_moments
        n = na + nb
        dl = mb - ma
        dn = dl / n
        m4a = (
            m4a
            + m4b
            + dl * dn * dn * dn * na * nb * (na * na - na * nb + nb * nb)
            + 6.0 * dn * dn * (na * na * m2b + nb * nb * m2a)
            + 4.0 * dn * (na * m3b - nb * m3a)
        )
        m3a = m3a + m3b + dl * dn * dn * na * nb * (na - nb) + 3.0 * dn * (na * m2b - nb * m2a)
        m2a = m2a + m2b + dl * dn * na * nb
        ma = ma + dn * nb
        na = n
    d[0, di] = na
    d[1, di] = ma
    d[2, di] = m2a
    d[3, di] = m3a
    d[4, di] = m4a


@inline
def moments_identity(buf, i):
    for f in range(5):
        buf[f, i] = 0.0


@inline
def _divided(a, b):
    """``a / b`` by IEEE's rules, as Spark's doubles divide: +-inf or NaN where ``b`` is 0 (a
    spread whose powers underflow), where numba's division would raise."""
    if b == 0.0:
        return np.nan if a == 0.0 or a != a else math.copysign(np.inf, a) * math.copysign(1.0, b)
    return a / b


@inline
def moments_lower(code, buf, i):
    n = buf[0, i]
    m2 = buf[2, i]
    if n == 0.0 or m2 == 0.0:
        return np.nan
    if code == SKEWNESS:
        return _divided(math.sqrt(n) * buf[3, i], math.sqrt(m2 * m2 * m2))
    return _divided(n * buf[4, i], m2 * m2) - 3.0


# --- COMOMENTS ------------------------------------------------------------------------------


@inline
def comoments_lift(code, buf, i, x, arg):
    if x != x or arg != arg:
        buf[0, i] = 0.0
        buf[1, i] = 0.0
        buf[2, i] = 0.0
    else:
        buf[0, i] = 1.0
        buf[1, i] = arg
        buf[2, i] = x
    buf[3, i] = 0.0
    buf[4, i] = 0.0
    buf[5, i] = 0.0


@inline
def comoments_combine(d, di, a, ai, b, bi):
    na = a[0, ai]
    xa = a[1, ai]
    ya = a[2, ai]
    ca = a[3, ai]
    qxa = a[4, ai]
    qya = a[5, ai]
    nb = b[0, bi]
    if na == 0.0:
        na = nb
        xa = b[1, bi]
        ya = b[2, bi]
        ca = b[3, bi]
        qxa = b[4, bi]
        qya = b[5, bi]
    elif nb != 0.0:
        n = na + nb
        dx = b[1, bi] - xa
        dy = b[2, bi] - ya
        f = na * nb / n
        ca = ca + b[3, bi] + dx * dy * f
        qxa = qxa + b[4, bi] + dx * dx * f
        qya = qya + b[5, bi] + dy * dy * f
        xa = xa + dx * nb / n
        ya = ya + dy * nb / n
        na = n
    d[0, di] = na
    d[1, di] = xa
    d[2, di] = ya
    d[3, di] = ca
    d[4, di] = qxa
    d[5, di] = qya


@inline
def comoments_identity(buf, i):
    for f in range(6):
        buf[f, i] = 0.0


@inline
def comoments_lower(code, buf, i):
    n = buf[0, i]
    c = buf[3, i]
    if code == COVAR_POP:
        return c / n if n >= 1.0 else np.nan
    if n < 2.0:
        return np.nan
    if code == COVAR_SAMP:
        return c / (n - 1.0)
    q = buf[4, i] * buf[5, i]
    return c / math.sqrt(q) if q != 0.0 else np.nan


@inline
def no_inverse(d, di, a, ai, b, bi):
    pass  # never called: algorithms that need an inverse refuse these families up front


class Family(NamedTuple):
    """One family's functions, its partial's width, and whether it has an inverse. The identity
    partial has one home, the ``identity`` kernel; :attr:`identity_partial` is what it writes."""

    lift: Dispatcher
    combine: Dispatcher
    identity: Dispatcher
    lower: Dispatcher
    inverse: Dispatcher
    width: int
    invertible: bool

    @property
    def identity_partial(self) -> np.ndarray:
        """The identity partial field by field, as the ``identity`` kernel writes it (run here as
        plain Python: nothing to compile)."""
        buf = np.empty((self.width, 1))
        self.identity.py_func(buf, 0)
        return buf[:, 0].copy()


FAMILIES = {
    SUMF: Family(sum_lift, sum_combine, sum_identity, sum_lower, sum_inverse, 1, True),
    ADD: Family(add_lift, add_combine, add_identity, add_lower, add_inverse, 2, True),
    SELECT: Family(
        select_lift, select_combine, select_identity, select_lower, no_inverse, 3, False
    ),
    XCOUNT: Family(
        xcount_lift, xcount_combine, xcount_identity, xcount_lower, no_inverse, 2, False
    ),
    WELFORD: Family(
        welford_lift, welford_combine, welford_identity, welford_lower, welford_inverse, 3, True
    ),
    PRODUCT: Family(
        product_lift, product_combine, product_identity, product_lower, no_inverse, 2, False
    ),
    MOMENTS: Family(
        moments_lift, moments_combine, moments_identity, moments_lower, no_inverse, 5, False
    ),
    COMOMENTS: Family(
        comoments_lift, comoments_combine, comoments_identity, comoments_lower, no_inverse, 6, False
    ),
}
