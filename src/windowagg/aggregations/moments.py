"""Moments, co-moments and the product, the kernel families ``welford``, ``moments``,
``comoments`` and ``product`` (:mod:`windowagg.kernels.families`): the variances and standard
deviations, skewness and kurtosis (merged by Pébay's formulas, 2008), covariances and the
correlation of ``(x, y)`` pairs, the product."""

from __future__ import annotations

import math
from typing import Any

from .protocol import Aggregation, _number, is_missing
from .record import (
    COMOMENTS,
    MOMENTS,
    PRODUCT,
    STATES,
    WELFORD,
    Evaluation,
    Facts,
    Kernel,
    Need,
    PartialKind,
)


class StdDev(Aggregation):
    """Sample standard deviation (n - 1); partial ``(n, mean, M2)`` merged by Chan et al.'s
    parallel formula, which stays accurate where the sum-of-squares form cancels."""

    name = "stddev"
    facts = Facts(
        Kernel(WELFORD, 0),
        sql=True,
        sql_partials=STATES[WELFORD],
        fewest=2,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )
    identity = (0, 0.0, 0.0)
    invertible = True
    commutative = True

    def lift(self, x):
        return self.identity if is_missing(x) else (1, float(_number(self.name, x)), 0.0)

    def combine(self, a, b):
        na, ma, qa = a
        nb, mb, qb = b
        if na == 0:
            return b
        if nb == 0:
            return a
        n = na + nb
        delta = mb - ma
        return (n, ma + delta * nb / n, qa + qb + delta * delta * na * nb / n)

    def inverse(self, a, b):
        n, m, q = a
        nb, mb, qb = b
        if nb == 0:
            return a
        nc = n - nb
        if nc == 0:
            return self.identity
        mc = (n * m - nb * mb) / nc
        delta = mb - mc
        t = delta * delta * nc * nb / n
        qc = q - qb - t
        # the subtraction cancels: what is left below its rounding error is zero spread
        return (nc, mc, qc if qc > 1e-12 * (q + qb + t) else 0.0)

    def lower(self, p):
        n, _, q = p
        return math.sqrt(q / (n - 1)) if n >= 2 else None


class VarSamp(StdDev):
    """Sample variance (n - 1), Spark's ``var_samp`` and ``variance``: Chan et al.'s partial."""

    name = "var_samp"
    facts = Facts(
        Kernel(WELFORD, 1),
        sql=True,
        sql_partials=STATES[WELFORD],
        fewest=2,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )

    def lower(self, p):
        n, _, q = p
        return q / (n - 1) if n >= 2 else None


class VarPop(StdDev):
    """Population variance (n), Spark's ``var_pop``."""

    name = "var_pop"
    facts = Facts(
        Kernel(WELFORD, 2),
        sql=True,
        sql_partials=STATES[WELFORD],
        fewest=1,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )

    def lower(self, p):
        n, _, q = p
        return q / n if n >= 1 else None


class StdDevPop(StdDev):
    """Population standard deviation (n), Spark's ``stddev_pop``."""

    name = "stddev_pop"
    facts = Facts(
        Kernel(WELFORD, 3),
        sql=True,
        sql_partials=STATES[WELFORD],
        fewest=1,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )

    def lower(self, p):
        n, _, q = p
        return math.sqrt(q / n) if n >= 1 else None


def merge_moments(a: tuple, b: tuple) -> tuple:
    """Two partials ``(n, mean, M2, M3, M4)`` of central moments merged exactly as one
    (Pébay, "Formulas for robust, one-pass parallel computation of covariances and arbitrary-
    order statistical moments", 2008, Eq. 3.1)."""
    na, ma, m2a, m3a, m4a = a
    nb, mb, m2b, m3b, m4b = b
    if na == 0:
        return b
    if nb == 0:
        return a
    n = na + nb
    d = mb - ma
    dn = d / n
    m2 = m2a + m2b + d * dn * na * nb
    m3 = m3a + m3b + d * dn * dn * na * nb * (na - nb) + 3 * dn * (na * m2b - nb * m2a)
    m4 = (
        m4a
        + m4b
        + d * dn * dn * dn * na * nb * (na * na - na * nb + nb * nb)
        + 6 * dn * dn * (na * na * m2b + nb * nb * m2a)
        + 4 * dn * (na * m3b - nb * m3a)
    )
    return (n, ma + dn * nb, m2, m3, m4)


class Skewness(Aggregation):
    """Skewness ``sqrt(n) * M3 / M2^1.5`` (Spark's ``skewness``; None where M2 is 0); partial
    ``(n, mean, M2, M3, M4)`` merged by :func:`merge_moments`."""

    name = "skewness"
    facts = Facts(
        Kernel(MOMENTS, 0),
        sql=True,
        sql_partials=STATES[MOMENTS],
        fewest=1,
        zero_null=True,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )
    identity = (0, 0.0, 0.0, 0.0, 0.0)
    commutative = True

    def lift(self, x):
        return self.identity if is_missing(x) else (1, float(_number(self.name, x)), 0.0, 0.0, 0.0)

    def combine(self, a, b):
        return merge_moments(a, b)

    def lower(self, p):
        n, _, m2, m3, _ = p
        return None if n == 0 or m2 == 0 else math.sqrt(n) * m3 / math.sqrt(m2 * m2 * m2)


class Kurtosis(Skewness):
    """Excess kurtosis ``n * M4 / M2^2 - 3`` (Spark's ``kurtosis``; None where M2 is 0)."""

    name = "kurtosis"
    facts = Facts(
        Kernel(MOMENTS, 1),
        sql=True,
        sql_partials=STATES[MOMENTS],
        fewest=1,
        zero_null=True,
        evaluation=Evaluation.MOMENTS,
        infinity_nan=True,
    )

    def lower(self, p):
        n, _, m2, _, m4 = p
        return None if n == 0 or m2 == 0 else n * m4 / (m2 * m2) - 3.0


def _xy(name: str, x: Any) -> tuple[float, float] | None:
    """An ``(x, y)`` pair of numbers, None where either is missing (SQL skips the row)."""
    if is_missing(x):
        return None
    try:
        a, b = x
    except (TypeError, ValueError):
        raise TypeError(f"{name} needs (x, y) pairs, got {x!r}") from None
    if is_missing(a) or is_missing(b):
        return None
    return float(_number(name, a)), float(_number(name, b))


class CovarSamp(Aggregation):
    """Sample covariance of ``(x, y)`` pairs (Spark's ``covar_samp``): partial ``(n, mean x,
    mean y, C, M2x, M2y)``, co-moments merged as Welford's (Pébay 2008, Eq. 3.2)."""

    name = "covar_samp"
    facts = Facts(
        Kernel(COMOMENTS, 0),
        sql=True,
        sql_partials=STATES[COMOMENTS],
        evaluation=Evaluation.COMOMENTS,
        pairs=True,
        columns=2,
        fewest=2,
    )
    identity = (0, 0.0, 0.0, 0.0, 0.0, 0.0)
    commutative = True

    def lift(self, x):
        xy = _xy(self.name, x)
        return self.identity if xy is None else (1, xy[0], xy[1], 0.0, 0.0, 0.0)

    def combine(self, a, b):
        na, xa, ya, ca, qxa, qya = a
        nb, xb, yb, cb, qxb, qyb = b
        if na == 0:
            return b
        if nb == 0:
            return a
        n = na + nb
        dx, dy = xb - xa, yb - ya
        f = na * nb / n
        return (
            n,
            xa + dx * nb / n,
            ya + dy * nb / n,
            ca + cb + dx * dy * f,
            qxa + qxb + dx * dx * f,
            qya + qyb + dy * dy * f,
        )

    def lower(self, p):
        n, c = p[0], p[3]
        return c / (n - 1) if n >= 2 else None


class CovarPop(CovarSamp):
    """Population covariance of ``(x, y)`` pairs (Spark's ``covar_pop``)."""

    name = "covar_pop"
    facts = Facts(
        Kernel(COMOMENTS, 1),
        sql=True,
        sql_partials=STATES[COMOMENTS],
        evaluation=Evaluation.COMOMENTS,
        pairs=True,
        columns=2,
        fewest=1,
    )

    def lower(self, p):
        return p[3] / p[0] if p[0] >= 1 else None


class Corr(CovarSamp):
    """Pearson's correlation of ``(x, y)`` pairs (Spark's ``corr``; None for fewer than two
    pairs or where either spread is 0)."""

    name = "corr"
    facts = Facts(
        Kernel(COMOMENTS, 2),
        sql=True,
        sql_partials=STATES[COMOMENTS],
        evaluation=Evaluation.COMOMENTS,
        pairs=True,
        columns=2,
        fewest=2,
        zero_null=True,
    )

    def lower(self, p):
        n, _, _, c, qx, qy = p
        return c / math.sqrt(qx * qy) if n >= 2 and qx * qy != 0 else None


class Product(Aggregation):
    """The product of the values (Spark's ``product``, a double)."""

    name = "product"
    facts = Facts(
        Kernel(PRODUCT, 0),
        sql=True,
        fewest=1,
        sql_partials=(Need(PartialKind.PRODUCT),),
        evaluation=Evaluation.MOMENTS,
    )
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else float(_number(self.name, x))

    def combine(self, a, b):
        return b if a is None else a if b is None else a * b
