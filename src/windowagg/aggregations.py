"""Aggregations as monoids: the protocol and the built-ins (docs/concepts.md).

An aggregation is any object with ``identity``, ``lift(x)``, ``combine(a, b)`` and ``lower(p)``,
plus the optional flags ``invertible`` (with ``inverse(a, b)``), ``commutative`` and
``selective``. This is the lift/combine/lower framework of Tangwongsan et al. (DABA paper,
Section 2.2): ``lift`` turns a raw input into a partial aggregate, ``combine`` is the associative
operator (``a`` is the older part, ``b`` the younger), ``lower`` turns a partial into the result.

Missing values: ``NaN`` and ``None`` count as the identity (as SQL NULL; :func:`lift`), so they
keep their place in a count-based window but do not change the result; they never reach an
aggregation's own ``lift``, a user's included.

Spark's aggregate functions are built-ins under Spark's names (:data:`SPARK_FUNCTIONS`;
docs/guides/spark-functions.md), and on tables they compute what Spark computes: the moments
(variances, skewness and kurtosis merged by Pébay's formulas, 2008), the percentiles, mode,
sets and lists, truth values, and the two-column ``max_by``/``min_by``/``corr``/``covar_*``
of ``(x, y)`` pairs.

Partial aggregates of the built-ins are immutable values (numbers, tuples, bytes), so algorithms
may share them freely and aggregators pickle.

Each built-in carries its own facts (:class:`Facts`, the class attribute ``facts``): its kernel
family and code in the compiled engine, its result for an empty window, the kind of its result,
whether it takes ``(arg, value)`` pairs, and the partial columns that slicing and Spark SQL
pre-aggregate. Everything else (the compiled engine's boundary, ``algorithm="auto"``, the Spark
planner, warmup, tests and benchmarks) reads them through :func:`facts`; adding a built-in is
its class and its record.
"""

from __future__ import annotations

import ast
import hashlib
import heapq
import math
import numbers
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

import datasketches
import numpy as np

__all__ = [
    "AGGREGATIONS",
    "COMBINE",
    "M4",
    "STATES",
    "AggLike",
    "Aggregation",
    "AggregationProtocol",
    "BloomFilter",
    "Facts",
    "Kernel",
    "aggregation",
    "facts",
    "resolve",
]

# --- the facts of an aggregation ---------------------------------------------------------------

#: the compiled families (windowagg.kernels.families): aggregations whose combine has the same
#: shape share one compiled family, told apart inside it by their code
SUMF, ADD, SELECT, XCOUNT, WELFORD = "sum", "add", "select", "xcount", "welford"
PRODUCT, MOMENTS, COMOMENTS = "product", "moments", "comoments"
#: the kinds of result: one number (float, or int where only ints went in and ``keeps_ints``),
#: a count (always an int), the arg of a pair, an estimate (a float), a truth value, a list, a
#: struct, a filter
RESULTS = ("number", "count", "arg", "estimate", "bool", "list", "struct", "filter")
#: the kinds of partial a slice keeps (the slicing fast path, :mod:`windowagg.slicing.vector`;
#: windows from partials, :mod:`windowagg.engine.window_partials`) and how two partials of one
#: kind combine: ``sum``, ``fsum`` (a sum in doubles) and ``count`` add up, ``min`` and ``max``
#: (of values, ``tmin``/``tmax`` of times) keep the extremum
COMBINE = {
    "sum": "sum",
    "fsum": "sum",
    "count": "sum",
    "min": "min",
    "max": "max",
    "tmin": "min",
    "tmax": "max",
}
#: the partials of a slice's state where a family keeps one (count first, then the family's
#: other fields in order: :mod:`windowagg.kernels.families`), as SQL aggregates of the entry's
#: column ``x`` and its pair's ``y`` (``~``: of ``y`` and ``x``): ``count``, ``avg`` and ``m2``
#: (squared deviations) of x, over the rows where y is not null when there is a y; ``m3``,
#: ``m4`` of x; ``c2``, the pair's summed co-deviations
STATES = {
    WELFORD: ("count", "avg", "m2"),
    MOMENTS: ("count", "avg", "m2", "m3", "m4"),
    COMOMENTS: ("count", "avg", "~avg", "c2", "m2", "~m2"),
}


class Kernel(NamedTuple):
    """Where an aggregation lives in the compiled engine: its family and its code there."""

    family: str
    code: int


@dataclass(frozen=True)
class Facts:
    """What the library needs to know of an aggregation besides its monoid.

    ``kernel``: its compiled family and code (None: the Python reference only). ``sql``: it
    follows SQL's rules on tables under Spark's name, as Spark evaluates it; ``sql_type`` its
    result type's rule where that is not a double, the input's type (``keeps_type``) or its
    ``result`` kind's: ``"sum"`` (Spark's sum: long for integers, ``decimal(p + 10, s)``) or
    ``"avg"`` (``decimal(p + 4, s + 4)`` for decimals). ``empty``:
    the result for a window without values. ``result``: one of :data:`RESULTS`.
    ``keeps_ints``: int inputs give int results (of the values; of the args for ``arg``).
    ``pairs``: raw inputs are ``(arg, value)`` pairs. ``partials``: the partial columns a
    slice keeps for it (kinds of :data:`COMBINE`: ``sum`` and ``count`` of the values, ``min``
    and ``max``), read by the slicing fast path and by windows from partials; empty when the
    aggregation is not answered that way; ``lower_columns`` lowers them.
    ``sql_partials``: the SQL aggregates per slice a window merges from where they are not
    ``partials`` (its own name: count_if, bool_and, bool_or, product; ``max_by`` with the
    ordering column's extreme, ``max:by``; a family's state, :data:`STATES`); ``merged`` is
    the one or the other, empty where windows read the rows.
    ``columns``: how many columns an entry over a table names (2: ``(x, y)`` pairs, as
    ``max_by(x, y)`` or ``corr(x, y)``; arrays take the pairs themselves).
    ``frames``: how rolling frames and windows of a table answer it without a FIFO sweep of
    its partials: ``"quantile"`` (the nearest rank ``q``, by order statistics over the values'
    ranks), ``"distinct"`` (the exact number of distinct values, by a count per value) or
    ``"collect"`` (the frame's values themselves, sliced), O(log n), O(1) or the output's size
    per row whatever the frame; None: the sweep.
    ``fewest`` (SQL's rule): the fewest non-null values that give a result, fewer give null
    (the variances, moments, co-moments and the product; 0: any number does). ``zero_null``
    (SQL's rule): a NaN the kernel gives from a zero divisor, not from a NaN value, is null
    (skewness, kurtosis, corr). ``takes`` (SQL's rule): the column an entry names holds
    ``numbers``, ``booleans`` (count_if, bool_and, bool_or) or ``any`` type (count, first,
    last, min, max, mode, the collections, max_by and min_by). ``keeps_type`` (SQL's rule):
    the result is one of the input's values, in the input's type (min, max, first, last,
    percentile_approx, mode, max_by, min_by). ``orders`` (SQL's rule): which column it
    compares, so that it must be orderable: ``"value"`` (min, max, mode, collect_set) or
    ``"by"`` (the second column of max_by and min_by).
    """

    kernel: Kernel | None = None
    sql: bool = False
    sql_type: str = ""
    empty: Any = None
    result: str = "number"
    keeps_ints: bool = False
    pairs: bool = False
    partials: tuple[str, ...] = ()
    sql_partials: tuple[str, ...] = ()
    frames: str | None = None
    columns: int = 1
    fewest: int = 0
    zero_null: bool = False
    takes: str = "numbers"
    keeps_type: bool = False
    orders: str = ""

    @property
    def merged(self) -> tuple[str, ...]:
        """The SQL partials a window merges from (empty: it reads the rows)."""
        return self.sql_partials or self.partials

    @property
    def scalar(self) -> bool:
        """Whether the result is one number (an array output holds it as a float)."""
        return self.result in ("number", "count", "arg", "estimate", "bool")


#: the facts of an aggregation that declares none (a user's own): the Python reference only
UNKNOWN = Facts(result="value")


def facts(agg: object) -> Facts:
    """The facts of ``agg``: those its own class declares (a subclass that declares none, say a
    user's variant of ``sum``, is not taken for the built-in), else :data:`UNKNOWN`; of a class,
    those it declares."""
    return vars(agg if isinstance(agg, type) else type(agg)).get("facts", UNKNOWN)


@runtime_checkable
class AggregationProtocol(Protocol):
    """What every algorithm needs of an aggregation (flags default to False when absent)."""

    identity: Any

    def lift(self, x: Any) -> Any: ...
    def combine(self, a: Any, b: Any) -> Any: ...
    def lower(self, p: Any) -> Any: ...


#: an aggregation, or the name of a built-in (``"sum"``, ``"quantile(q=0.9)"``; :func:`parse`)
AggLike = str | AggregationProtocol


def name_of(agg: AggregationProtocol) -> str:
    """An aggregation's name for messages: its ``name``, else its repr (a user's own)."""
    return str(getattr(agg, "name", None) or repr(agg))


def check_values(agg: AggregationProtocol, values: np.ndarray) -> None:
    """A built-in's domain check of a float64 array (:meth:`Aggregation.check_values`); a user's
    own aggregation never runs compiled, so it has none."""
    if isinstance(agg, Aggregation):
        agg.check_values(values)


class Aggregation:
    """Base class of the built-in aggregations; user aggregations need not inherit from it."""

    name: str = "aggregation"
    identity: Any = None
    invertible: bool = False
    commutative: bool = False
    selective: bool = False

    def lift(self, x: Any) -> Any:
        raise NotImplementedError

    def combine(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def lower(self, p: Any) -> Any:
        return p

    def inverse(self, a: Any, b: Any) -> Any:
        raise TypeError(f"aggregation {self.name!r} is not invertible")

    def params(self) -> dict[str, Any]:
        """Constructor parameters (used for equality, repr and the compiled engine)."""
        return {}

    def check_values(self, values: np.ndarray) -> None:
        """Raise what ``lift`` raises for the first value of a float64 array outside the
        aggregation's domain (arrays skip ``lift`` on the compiled paths)."""

    def lower_columns(self, cols: dict[str, np.ndarray]) -> np.ndarray:
        """``lower`` over arrays of partials given as the columns of ``facts.partials`` (the
        windows of the slicing fast path and of Spark's pre-aggregation): NaN where the
        result is None. Only aggregations with partial columns define it."""
        raise NotImplementedError(f"{self.name} has no partial columns")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"aggregation({self.name!r}{', ' if args else ''}{args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params() == self.params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))


# --- input validation ------------------------------------------------------------------------


def is_missing(x: Any) -> bool:
    """NaN and None are missing values (SQL NULL)."""
    return x is None or (isinstance(x, numbers.Real | Decimal) and x != x)


def lift(agg: AggregationProtocol, x: Any) -> Any:
    """``agg.lift(x)``, or the identity where ``x`` is missing (None or NaN): a missing value
    never reaches an aggregation's own ``lift``, the user's included (SQL's rule: nulls are
    skipped; windowagg's: NaN is missing too)."""
    return agg.identity if is_missing(x) else agg.lift(x)


def _number(name: str, x: Any) -> Any:
    """Check that ``x`` is a real number (a ``Decimal`` included: exact arithmetic on the
    reference path); raise a TypeError naming the value otherwise."""
    if isinstance(x, numbers.Real | Decimal) and not isinstance(x, bool):
        return x
    if isinstance(x, bool):
        return int(x)
    raise TypeError(f"{name} needs a number, got {x!r} ({type(x).__name__})")


# --- sum-like (invertible, commutative) ------------------------------------------------------


class Sum(Aggregation):
    name = "sum"
    facts = Facts(
        Kernel(SUMF, 0), sql=True, sql_type="sum", empty=0, keeps_ints=True, partials=("sum",)
    )

    def lower_columns(self, cols):
        return cols["sum"]

    identity = 0
    invertible = True
    commutative = True

    def lift(self, x):
        return 0 if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        return a + b

    def inverse(self, a, b):
        return a - b


class Count(Aggregation):
    """Number of non-missing values."""

    name = "count"
    facts = Facts(
        Kernel(ADD, 1), sql=True, empty=0, result="count", partials=("count",), takes="any"
    )

    def lower_columns(self, cols):
        return cols["count"]

    identity = 0
    invertible = True
    commutative = True

    def lift(self, x):
        return 0 if is_missing(x) else 1

    def combine(self, a, b):
        return a + b

    def inverse(self, a, b):
        return a - b


class Mean(Aggregation):
    """Arithmetic mean; partial ``(sum, count)``."""

    name = "mean"
    facts = Facts(Kernel(ADD, 2), sql=True, sql_type="avg", partials=("sum", "count"))

    def lower_columns(self, cols):
        c = cols["count"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, cols["sum"] / np.maximum(c, 1), np.nan)

    identity = (0, 0)
    invertible = True
    commutative = True

    def lift(self, x):
        return (0, 0) if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return p[0] / p[1] if p[1] else None


class StdDev(Aggregation):
    """Sample standard deviation (n - 1); partial ``(n, mean, M2)`` merged by Chan et al.'s
    parallel formula, which stays accurate where the sum-of-squares form cancels."""

    name = "stddev"
    facts = Facts(Kernel(WELFORD, 0), sql=True, sql_partials=STATES[WELFORD], fewest=2)
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
    facts = Facts(Kernel(WELFORD, 1), sql=True, sql_partials=STATES[WELFORD], fewest=2)

    def lower(self, p):
        n, _, q = p
        return q / (n - 1) if n >= 2 else None


class VarPop(StdDev):
    """Population variance (n), Spark's ``var_pop``."""

    name = "var_pop"
    facts = Facts(Kernel(WELFORD, 2), sql=True, sql_partials=STATES[WELFORD], fewest=1)

    def lower(self, p):
        n, _, q = p
        return q / n if n >= 1 else None


class StdDevPop(StdDev):
    """Population standard deviation (n), Spark's ``stddev_pop``."""

    name = "stddev_pop"
    facts = Facts(Kernel(WELFORD, 3), sql=True, sql_partials=STATES[WELFORD], fewest=1)

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
        Kernel(MOMENTS, 0), sql=True, sql_partials=STATES[MOMENTS], fewest=1, zero_null=True
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
        Kernel(MOMENTS, 1), sql=True, sql_partials=STATES[MOMENTS], fewest=1, zero_null=True
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
    facts = Facts(Kernel(PRODUCT, 0), sql=True, fewest=1, sql_partials=("product",))
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else float(_number(self.name, x))

    def combine(self, a, b):
        return b if a is None else a if b is None else a * b


class CountIf(Aggregation):
    """How many values are true (Spark's ``count_if``)."""

    name = "count_if"
    facts = Facts(
        Kernel(SUMF, 1),
        sql=True,
        empty=0,
        result="count",
        takes="booleans",
        sql_partials=("count_if",),
    )
    identity = 0
    invertible = True
    commutative = True

    def lift(self, x):
        return 0 if is_missing(x) else int(bool(x))

    def combine(self, a, b):
        return a + b

    def inverse(self, a, b):
        return a - b


class BoolAnd(Aggregation):
    """Whether every value is true (Spark's ``bool_and`` and ``every``); partial ``(values,
    true values)``."""

    name = "bool_and"
    facts = Facts(
        Kernel(ADD, 4), sql=True, result="bool", takes="booleans", sql_partials=("bool_and",)
    )
    identity = (0, 0)
    invertible = True
    commutative = True

    def lift(self, x):
        return (0, 0) if is_missing(x) else (int(bool(x)), 1)

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return None if not p[1] else p[0] == p[1]


class BoolOr(BoolAnd):
    """Whether any value is true (Spark's ``bool_or``, ``some`` and ``any``)."""

    name = "bool_or"
    facts = Facts(
        Kernel(ADD, 5), sql=True, result="bool", takes="booleans", sql_partials=("bool_or",)
    )

    def lower(self, p):
        return None if not p[1] else p[0] > 0


class GeoMean(Aggregation):
    """Geometric mean exp(mean(log x)) of positive values; partial ``(sum of logs, count)``."""

    name = "geomean"
    facts = Facts(Kernel(ADD, 3))
    identity = (0.0, 0)
    invertible = True
    commutative = True

    def lift(self, x):
        if is_missing(x):
            return self.identity
        v = _number(self.name, x)
        if v <= 0:
            raise ValueError(f"geomean needs positive values, got {x!r}")
        return (math.log(v), 1)

    def check_values(self, values):
        bad = values <= 0
        if bad.any():
            self.lift(float(values[np.argmax(bad)]))  # raises lift's ValueError

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return math.exp(p[0] / p[1]) if p[1] else None


# --- max-like (selective) --------------------------------------------------------------------


class Min(Aggregation):
    name = "min"
    facts = Facts(
        Kernel(SELECT, 1),
        sql=True,
        keeps_ints=True,
        partials=("min",),
        takes="any",
        keeps_type=True,
        orders="value",
    )

    def lower_columns(self, cols):
        return cols["min"]

    identity = None
    commutative = True
    selective = True

    def lift(self, x):
        return None if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a <= b else b


class Max(Aggregation):
    name = "max"
    facts = Facts(
        Kernel(SELECT, 0),
        sql=True,
        keeps_ints=True,
        partials=("max",),
        takes="any",
        keeps_type=True,
        orders="value",
    )

    def lower_columns(self, cols):
        return cols["max"]

    identity = None
    commutative = True
    selective = True

    def lift(self, x):
        return None if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a >= b else b


def _pair(name: str, x: Any) -> tuple[Any, Any] | None:
    if is_missing(x):
        return None
    try:
        arg, value = x
    except (TypeError, ValueError):
        raise TypeError(f"{name} needs (arg, value) pairs, got {x!r}") from None
    return None if is_missing(value) else (arg, _number(name, value))


class ArgMin(Aggregation):
    """The arg of the smallest value among ``(arg, value)`` pairs; ties go to the oldest."""

    name = "argmin"
    facts = Facts(Kernel(SELECT, 3), result="arg", keeps_ints=True, pairs=True)
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a[1] <= b[1] else b

    def lower(self, p):
        return None if p is None else p[0]


class ArgMax(Aggregation):
    """The arg of the largest value among ``(arg, value)`` pairs; ties go to the oldest."""

    name = "argmax"
    facts = Facts(Kernel(SELECT, 2), result="arg", keeps_ints=True, pairs=True)
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a[1] >= b[1] else b

    def lower(self, p):
        return None if p is None else p[0]


class MaxBy(Aggregation):
    """Spark's ``max_by(x, y)``: the x of the largest y among ``(x, y)`` pairs (rows without a
    y skipped); ties go to the youngest, as Spark's rows in order give."""

    name = "max_by"
    facts = Facts(
        Kernel(SELECT, 6),
        sql=True,
        sql_partials=("max_by", "max:by"),
        result="arg",
        keeps_ints=True,
        pairs=True,
        columns=2,
        takes="any",
        keeps_type=True,
        orders="by",
    )
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return b if b[1] >= a[1] else a

    def lower(self, p):
        return None if p is None else p[0]


class MinBy(MaxBy):
    """Spark's ``min_by(x, y)``: the x of the smallest y; ties go to the youngest."""

    name = "min_by"
    facts = replace(MaxBy.facts, kernel=Kernel(SELECT, 7), sql_partials=("min_by", "min:by"))

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return b if b[1] <= a[1] else a


class MinCount(Aggregation):
    """How often the minimum occurs; partial ``(min, count)`` (DABA paper maxcount, mirrored)."""

    name = "mincount"
    facts = Facts(Kernel(XCOUNT, 1), empty=0, result="count")
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a[0] < b[0]:
            return a
        if b[0] < a[0]:
            return b
        return (a[0], a[1] + b[1])

    def lower(self, p):
        return 0 if p is None else p[1]


class MaxCount(Aggregation):
    """How often the maximum occurs; partial ``(max, count)`` (DABA paper, Section 2.2)."""

    name = "maxcount"
    facts = Facts(Kernel(XCOUNT, 0), empty=0, result="count")
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a[0] > b[0]:
            return a
        if b[0] > a[0]:
            return b
        return (a[0], a[1] + b[1])

    def lower(self, p):
        return 0 if p is None else p[1]


class _Missing:
    """The identity of ``first``/``last``: distinct from every value, None included."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self):
        return (_Missing, ())

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class First(Aggregation):
    """The oldest non-missing value. On tables, Spark's ``first``: the frame's first row, null
    or not, or with ``ignorenulls=True`` its first non-null value."""

    name = "first"
    facts = Facts(Kernel(SELECT, 4), sql=True, keeps_ints=True, takes="any", keeps_type=True)
    identity = MISSING
    selective = True

    def __init__(self, ignorenulls: bool = False):
        if not isinstance(ignorenulls, bool):
            raise ValueError(f"{self.name} needs ignorenulls True or False, got {ignorenulls!r}")
        self.ignorenulls = ignorenulls

    def params(self):
        return {"ignorenulls": True} if self.ignorenulls else {}

    def lift(self, x):
        return MISSING if is_missing(x) else x

    def combine(self, a, b):
        return b if a is MISSING else a

    def lower(self, p):
        return None if p is MISSING else p


class Last(First):
    """The youngest non-missing value. On tables, Spark's ``last``: the frame's last row, null
    or not, or with ``ignorenulls=True`` its last non-null value."""

    name = "last"
    facts = Facts(Kernel(SELECT, 5), sql=True, keeps_ints=True, takes="any", keeps_type=True)

    def lift(self, x):
        return MISSING if is_missing(x) else x

    def combine(self, a, b):
        return a if b is MISSING else b

    def lower(self, p):
        return None if p is MISSING else p


class M4(NamedTuple):
    """Result of the ``m4`` aggregation (min, max, first, last) used for line-chart reduction."""

    min: Any
    max: Any
    first: Any
    last: Any


class M4Agg(Aggregation):
    name = "m4"
    facts = Facts(result="struct")
    identity = None

    def lift(self, x):
        if is_missing(x):
            return None
        v = _number(self.name, x)
        return (v, v, v, v)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (min(a[0], b[0]), max(a[1], b[1]), a[2], b[3])

    def lower(self, p):
        return None if p is None else M4(*p)


# --- holistic and sketches ---------------------------------------------------------------------


class Collect(Aggregation):
    """All non-missing values as a list in window order. Partials are tuples; the inverse drops
    the oldest part's prefix, so subtract-on-evict and SlickDeque (Inv) can serve it."""

    name = "collect"
    facts = Facts(empty=[], result="list", frames="collect")
    identity = ()
    invertible = True

    def lift(self, x):
        return () if is_missing(x) else (x,)

    def combine(self, a, b):
        return a + b if a and b else (a or b)

    def inverse(self, a, b):
        return a[len(b) :]

    def lower(self, p):
        return list(p)


class CountDistinct(Aggregation):
    """The number of distinct non-missing values (SQL's ``count(DISTINCT x)``). Partials map
    each value to how often it occurs, so the inverse removes the oldest part's occurrences
    and subtract-on-evict and SlickDeque (Inv) can serve it."""

    name = "count_distinct"
    facts = Facts(empty=0, result="count", frames="distinct")
    identity: Any = MappingProxyType({})
    invertible = True
    commutative = True

    def lift(self, x):
        return self.identity if is_missing(x) else MappingProxyType({x: 1})

    def combine(self, a, b):
        if not a or not b:
            return a or b
        out = dict(a)
        for x, n in b.items():
            out[x] = out.get(x, 0) + n
        return MappingProxyType(out)

    def inverse(self, a, b):
        out = dict(a)
        for x, n in b.items():
            left = out[x] - n
            if left:
                out[x] = left
            else:
                del out[x]
        return MappingProxyType(out)

    def lower(self, p):
        return len(p)


def _remove_sorted(a: tuple, b: tuple) -> tuple:
    """Multiset difference of sorted tuples ``a - b`` (``b`` must be contained in ``a``)."""
    out = []
    j = 0
    for x in a:
        if j < len(b) and x == b[j]:
            j += 1
        else:
            out.append(x)
    return tuple(out)


def _fraction(name: str, label: str, p: Any, low_open: bool = False) -> float:
    if (
        isinstance(p, bool)
        or not isinstance(p, numbers.Real)
        or not 0 <= float(p) <= 1
        or (low_open and p == 0)
    ):
        bounds = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name} needs {label} in {bounds}, got {label}={p!r}")
    return float(p)


class _Sorted(Aggregation):
    """The window's values as a sorted tuple (holistic; combine is a linear merge), lowered by
    :meth:`pick` to an order statistic."""

    facts = Facts(frames="quantile")
    identity = ()
    invertible = True
    commutative = True

    def lift(self, x):
        return () if is_missing(x) else (_number(self.name, x),)

    def combine(self, a, b):
        if not a or not b:
            return a or b
        if a[-1] <= b[0]:
            return a + b
        return tuple(heapq.merge(a, b))

    def inverse(self, a, b):
        return _remove_sorted(a, b)

    def lower(self, p):
        return self.pick(p) if p else None

    def pick(self, p: tuple) -> Any:
        raise NotImplementedError


class Quantile(_Sorted):
    """Nearest-rank quantile: the ceil(q * n)-th smallest value (1-based), 0 < q <= 1, in
    the values' own type. windowagg's name; Spark's are ``percentile_disc`` (a double) and
    ``percentile_approx`` (the values' type), which give the same value."""

    name = "quantile"
    facts = Facts(frames="quantile")

    def __init__(self, q: float = 0.5):
        self.q = _fraction("quantile", "q", q, low_open=True)

    def params(self):
        return {"q": self.q}

    def pick(self, p):
        return p[max(0, math.ceil(self.q * len(p)) - 1)]


class PercentileDisc(_Sorted):
    """Spark's ``percentile_disc(p)``: the smallest value whose cumulative distribution is at
    least ``p`` (the ceil(p * n)-th smallest, the first for p = 0), as a double."""

    name = "percentile_disc"
    facts = Facts(sql=True, frames="quantile")

    def __init__(self, p: float = 0.5):
        self.p = _fraction(self.name, "p", p)

    def params(self):
        return {"p": self.p}

    def pick(self, p):
        return float(p[max(0, math.ceil(self.p * len(p)) - 1)])


class PercentileApprox(PercentileDisc):
    """Spark's ``percentile_approx(p)`` and ``approx_percentile(p)``, exactly: the
    ceil(p * n)-th smallest value (what Spark's estimate converges to, and gives while a group
    holds fewer values than its accuracy), in the values' own type. ``accuracy`` is taken for
    Spark's signature and does not change the answer."""

    name = "percentile_approx"
    facts = Facts(sql=True, frames="quantile", keeps_ints=True, keeps_type=True)

    def __init__(self, p: float = 0.5, accuracy: int = 10000):
        super().__init__(p)
        if isinstance(accuracy, bool) or not isinstance(accuracy, numbers.Integral) or accuracy < 1:
            raise ValueError(f"{self.name} needs a positive integer accuracy, got {accuracy!r}")
        self.accuracy = int(accuracy)

    def params(self):
        return {"p": self.p, "accuracy": self.accuracy}

    def pick(self, p):
        return p[max(0, math.ceil(self.p * len(p)) - 1)]


def interpolate(low: Any, high: Any, position: float) -> float:
    """Spark's ``percentile`` between the values at ranks floor and ceil of ``position``
    (0-based, ``(n - 1) * p``): ``low + (position - floor) * (high - low)``, rounded as Spark
    rounds it."""
    lo, hi = math.floor(position), math.ceil(position)
    if lo == hi or low == high:
        return float(low)
    return float(low) + (position - lo) * (float(high) - float(low))


class Percentile(_Sorted):
    """Spark's ``percentile(p)``: linear interpolation between the two values around rank
    ``(n - 1) * p`` (0-based), a double."""

    name = "percentile"
    facts = Facts(sql=True, frames="quantile")

    def __init__(self, p: float = 0.5):
        self.p = _fraction(self.name, "p", p)

    def params(self):
        return {"p": self.p}

    def pick(self, p):
        pos = (len(p) - 1) * self.p
        return interpolate(p[math.floor(pos)], p[math.ceil(pos)], pos)


class Median(Percentile):
    """Spark's ``median``: ``percentile(0.5)``, the mean of the two middle values for an even
    count."""

    name = "median"
    facts = Facts(sql=True, frames="quantile")

    def __init__(self):
        super().__init__(0.5)

    def params(self):
        return {}


class Mode(CountDistinct):
    """The most frequent value (Spark's ``mode(x, true)``: ties go to the smallest); partial:
    a count per value."""

    name = "mode"
    facts = Facts(sql=True, keeps_ints=True, takes="any", keeps_type=True, orders="value")

    def lower(self, p):
        if not p:
            return None
        top = max(p.values())
        return min(v for v, n in p.items() if n == top)


class CollectList(Collect):
    """Spark's ``collect_list``: the values in window order (time, then input order)."""

    name = "collect_list"
    facts = Facts(sql=True, empty=[], result="list", frames="collect", takes="any")


class CollectSet(CountDistinct):
    """Spark's ``collect_set``: the distinct values, here in ascending order (Spark's order is
    its hash set's)."""

    name = "collect_set"
    facts = Facts(sql=True, empty=[], result="list", takes="any", orders="value")

    def lower(self, p):
        return sorted(p)


def _hash_bytes(x: Any) -> bytes:
    """A stable encoding (the same in every process) of a value for hashing."""
    if isinstance(x, bytes):
        return b"b" + x
    if isinstance(x, str):
        return b"s" + x.encode()
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        f = float(x)
        if f.is_integer() and abs(f) < 2**63:
            return b"i" + struct.pack("<q", int(f))
        return b"f" + struct.pack("<d", f)
    return b"r" + repr(x).encode()


@dataclass(frozen=True, repr=False)
class BloomFilter:
    """Result of the ``bloom`` aggregation: supports ``x in filter`` (no false negatives)."""

    bits: int
    nbits: int
    hashes: int

    def _positions(self, x: Any) -> list[int]:
        return _bloom_positions(x, self.nbits, self.hashes)

    def __contains__(self, x: Any) -> bool:
        return all(self.bits >> i & 1 for i in self._positions(x))

    def __len__(self) -> int:
        """Number of bits set."""
        return self.bits.bit_count()

    def __repr__(self) -> str:
        return f"BloomFilter(nbits={self.nbits}, hashes={self.hashes}, set={len(self)})"


def _bloom_positions(x: Any, nbits: int, hashes: int) -> list[int]:
    digest = hashlib.blake2b(_hash_bytes(x), digest_size=16).digest()
    h1, h2 = struct.unpack("<QQ", digest)
    h2 |= 1
    return [(h1 + i * h2) % nbits for i in range(hashes)]


class Bloom(Aggregation):
    """Bloom filter over the window's values (``bits`` bits, ``hashes`` hash functions, double
    hashing on BLAKE2b). Partial: the bit set as an int; combine is bitwise or."""

    name = "bloom"
    facts = Facts(result="filter")
    identity = 0
    commutative = True

    def __init__(self, bits: int = 2**14, hashes: int = 4):
        for label, v in (("bits", bits), ("hashes", hashes)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"bloom needs a positive integer {label}, got {label}={v!r}")
        self.bits = int(bits)
        self.hashes = int(hashes)

    def params(self):
        return {"bits": self.bits, "hashes": self.hashes}

    def lift(self, x):
        if is_missing(x):
            return 0
        out = 0
        for i in _bloom_positions(x, self.bits, self.hashes):
            out |= 1 << i
        return out

    def combine(self, a, b):
        return a | b

    def lower(self, p):
        return None if p == 0 else BloomFilter(p, self.bits, self.hashes)


class HyperLogLog(Aggregation):
    """Distinct count estimate with Apache DataSketches' HLL sketch (``lg_k`` = log2 of the
    number of buckets). Partials are serialized compact sketches (bytes): immutable and
    picklable; the identity is ``b""``. Rolling frames and windows of tables count exactly
    instead (a count per value costs O(1) per row there, less than merging sketches)."""

    name = "hll"
    facts = Facts(empty=0.0, result="estimate", frames="distinct")
    identity = b""
    commutative = True

    def __init__(self, lg_k: int = 12):
        if isinstance(lg_k, bool) or not isinstance(lg_k, numbers.Integral) or not 4 <= lg_k <= 21:
            raise ValueError(f"hll needs an integer lg_k in [4, 21], got lg_k={lg_k!r}")
        self.lg_k = int(lg_k)

    def params(self):
        return {"lg_k": self.lg_k}

    def lift(self, x):
        if is_missing(x):
            return b""
        s = datasketches.hll_sketch(self.lg_k)
        if isinstance(x, numbers.Real) and not isinstance(x, bool):
            f = float(x)
            s.update(int(f) if f.is_integer() and abs(f) < 2**63 else f)
        elif isinstance(x, str | bytes | int):
            s.update(x)
        else:
            s.update(repr(x))
        return s.serialize_compact()

    def combine(self, a, b):
        if not a:
            return b
        if not b:
            return a
        u = datasketches.hll_union(self.lg_k)
        u.update(datasketches.hll_sketch.deserialize(a))
        u.update(datasketches.hll_sketch.deserialize(b))
        return u.get_result().serialize_compact()

    def lower(self, p):
        return 0.0 if not p else datasketches.hll_sketch.deserialize(p).get_estimate()


# --- registry --------------------------------------------------------------------------------

AGGREGATIONS: dict[str, Callable[..., Aggregation]] = {
    cls.name: cls
    for cls in (
        Sum,
        Count,
        Mean,
        StdDev,
        GeoMean,
        Min,
        Max,
        ArgMin,
        ArgMax,
        MinCount,
        MaxCount,
        First,
        Last,
        M4Agg,
        Collect,
        CountDistinct,
        Bloom,
        Median,
        Quantile,
        HyperLogLog,
        VarSamp,
        VarPop,
        StdDevPop,
        Skewness,
        Kurtosis,
        CovarSamp,
        CovarPop,
        Corr,
        Product,
        CountIf,
        BoolAnd,
        BoolOr,
        MaxBy,
        MinBy,
        Percentile,
        PercentileDisc,
        PercentileApprox,
        Mode,
        CollectList,
        CollectSet,
    )
}


#: Spark SQL's names for the built-ins (names are also taken in any case)
ALIASES = {
    "avg": "mean",
    "stddev_samp": "stddev",
    "std": "stddev",
    "variance": "var_samp",
    "approx_count_distinct": "hll",
    "countdistinct": "count_distinct",
    "approx_percentile": "percentile_approx",
    "every": "bool_and",
    "some": "bool_or",
    "any": "bool_or",
    "any_value": "first",
    "first_value": "first",
    "last_value": "last",
}


#: the built-ins that follow SQL's rules on tables, as Spark evaluates them, under Spark's names
#: (their records say ``sql``)
SQL = tuple(name for name, cls in AGGREGATIONS.items() if facts(cls).sql)
#: Spark's aggregate functions windowagg accepts under Spark's name, each with the built-in it
#: resolves to; on tables each computes what Spark computes (docs/guides/spark-functions.md)
SPARK_FUNCTIONS = {
    **{n: n for n in SQL},
    **{
        n: ALIASES[n]
        for n in (
            "avg",
            "stddev_samp",
            "std",
            "variance",
            "approx_percentile",
            "every",
            "some",
            "any",
            "any_value",
            "first_value",
            "last_value",
        )
    },
}


def aggregation(name: str, **params: Any) -> Aggregation:
    """Return the built-in aggregation called ``name`` (or one of Spark's names for it, in any
    case: ``avg``, ``stddev_samp``, ``approx_count_distinct``), built with ``params``.

    Raises ``ValueError`` for an unknown name (listing the valid ones) or bad parameters.
    """
    if isinstance(name, str):
        name = ALIASES.get(name.strip().lower(), name.strip().lower())
    try:
        factory = AGGREGATIONS[name]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(AGGREGATIONS))
        raise ValueError(f"unknown aggregation {name!r}; valid names: {valid}") from None
    try:
        return factory(**params)
    except TypeError as e:
        raise ValueError(f"bad parameters for aggregation {name!r}: {e}") from None


def parse(text: str) -> Aggregation:
    """A built-in from its text: a name, or a name with parameters by keyword,
    ``"quantile(q=0.95)"`` (values are Python literals)."""

    name, paren, rest = text.partition("(")
    if not paren:
        return aggregation(name)
    if not rest.rstrip().endswith(")"):
        raise ValueError(f"bad aggregation {text!r}: use name(param=value, ...)")
    try:
        call = ast.parse(f"f({rest.rstrip()[:-1]})", mode="eval").body
        if not isinstance(call, ast.Call):  # a closing parenthesis inside: "q(x) + (y)"
            raise ValueError(text)
        params = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, ValueError):
        raise ValueError(
            f"bad aggregation {text!r}: use name(param=value, ...) with literal values"
        ) from None
    if call.args or None in params:
        raise ValueError(
            f"bad aggregation {text!r}: give parameters by name, like quantile(q=0.95)"
        )
    return aggregation(name, **{str(k): v for k, v in params.items()})


def resolve(agg: AggLike) -> AggregationProtocol:
    """Turn a name (:func:`parse`) into a built-in aggregation; check that any other object
    is one."""
    if isinstance(agg, str):
        return parse(agg)
    missing = [m for m in ("identity", "lift", "combine", "lower") if not hasattr(agg, m)]
    if missing:
        raise TypeError(
            f"{agg!r} is not an aggregation: it lacks {', '.join(missing)} "
            "(see windowagg.aggregations.AggregationProtocol)"
        )
    return agg


def flags(agg: AggregationProtocol) -> tuple[bool, bool, bool]:
    """``(invertible, commutative, selective)`` of any aggregation, missing flags False."""
    return (
        bool(getattr(agg, "invertible", False)),
        bool(getattr(agg, "commutative", False)),
        bool(getattr(agg, "selective", False)),
    )


def inverse_of(agg: AggregationProtocol) -> Callable[[Any, Any], Any]:
    """``agg.inverse``, of an aggregation whose ``invertible`` flag is set (a TypeError else)."""
    inverse = getattr(agg, "inverse", None)
    if not flags(agg)[0] or not callable(inverse):
        raise TypeError(f"aggregation {name_of(agg)!r} is not invertible")
    return inverse


def fold(agg: AggregationProtocol, partials: Iterable[Any]) -> Any:
    """Combine partials in order, starting from the identity."""
    acc = agg.identity
    for p in partials:
        acc = agg.combine(acc, p)
    return acc


def approx_equal(a: Any, b: Any, rel: float = 1e-9, abs_tol: float = 1e-9) -> bool:
    """Equality of partials or results that forgives floating-point reassociation."""
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, numbers.Real) and isinstance(b, numbers.Real)):
            return False
        if a != a or b != b:
            return a != a and b != b
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(approx_equal(x, y, rel, abs_tol) for x, y in zip(a, b))
    return a == b
