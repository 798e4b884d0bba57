"""Sum-like aggregations (invertible, commutative), the kernel families ``sum`` and ``add``
(:mod:`windowagg.kernels.families`): sum, count, mean, count_if, bool_and, bool_or and the
geometric mean."""

from __future__ import annotations

import math

import numpy as np

from .protocol import Aggregation, _number, is_missing
from .record import ADD, SUMF, Evaluation, Facts, Kernel, Need, PartialKind


class Sum(Aggregation):
    name = "sum"
    facts = Facts(
        Kernel(SUMF, 0),
        sql=True,
        sql_type="sum",
        empty=0,
        keeps_ints=True,
        partials=(PartialKind.SUM,),
        evaluation=Evaluation.SUM,
    )

    def lower_columns(self, cols):
        return cols[PartialKind.SUM]

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
        Kernel(ADD, 1),
        sql=True,
        empty=0,
        result="count",
        partials=(PartialKind.COUNT,),
        evaluation=Evaluation.COUNT,
        takes="any",
        rows=True,
        never_null=True,
    )

    def lower_columns(self, cols):
        return cols[PartialKind.COUNT]

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
    facts = Facts(
        Kernel(ADD, 2),
        sql=True,
        sql_type="avg",
        partials=(PartialKind.SUM, PartialKind.COUNT),
        evaluation=Evaluation.MEAN,
    )

    def lower_columns(self, cols):
        c = cols[PartialKind.COUNT]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, cols[PartialKind.SUM] / np.maximum(c, 1), np.nan)

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


class CountIf(Aggregation):
    """How many values are true (Spark's ``count_if``)."""

    name = "count_if"
    facts = Facts(
        Kernel(SUMF, 1),
        sql=True,
        empty=0,
        result="count",
        takes="booleans",
        sql_partials=(Need(PartialKind.COUNT_IF),),
        evaluation=Evaluation.COUNT_TRUE,
        never_null=True,
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
        Kernel(ADD, 4),
        sql=True,
        result="bool",
        takes="booleans",
        sql_partials=(Need(PartialKind.BOOL_AND),),
        evaluation=Evaluation.EVERY,
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
        Kernel(ADD, 5),
        sql=True,
        result="bool",
        takes="booleans",
        sql_partials=(Need(PartialKind.BOOL_OR),),
        evaluation=Evaluation.SOME,
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
