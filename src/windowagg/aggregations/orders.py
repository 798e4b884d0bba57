"""Order statistics (no kernel family; the table engine answers them by compiled order
statistics over the values' ranks): the nearest-rank quantile, Spark's ``percentile``,
``median``, ``percentile_disc`` and ``percentile_approx``."""

from __future__ import annotations

import heapq
import math
import numbers
from typing import Any

from .protocol import Aggregation, _number, is_missing
from .record import Evaluation, Facts


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

    facts = Facts(evaluation=Evaluation.QUANTILE)
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
    facts = Facts(evaluation=Evaluation.QUANTILE)

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
    facts = Facts(sql=True, evaluation=Evaluation.NEAREST_RANK)

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
    facts = Facts(sql=True, evaluation=Evaluation.NEAREST_RANK, keeps_ints=True, keeps_type=True)

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
    facts = Facts(sql=True, evaluation=Evaluation.PERCENTILE)

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
    facts = Facts(sql=True, evaluation=Evaluation.PERCENTILE)

    def __init__(self):
        super().__init__(0.5)

    def params(self):
        return {}
