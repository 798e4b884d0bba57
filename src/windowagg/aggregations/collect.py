"""Aggregations over a window's values themselves (no kernel family): the values as a list,
the exact distinct count, Spark's ``mode``, ``collect_list`` and ``collect_set``."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from .protocol import Aggregation, is_missing
from .record import Evaluation, Facts


class Collect(Aggregation):
    """All non-missing values as a list in window order. Partials are tuples; the inverse drops
    the oldest part's prefix, so subtract-on-evict and SlickDeque (Inv) can serve it."""

    name = "collect"
    facts = Facts(empty=[], result="list", evaluation=Evaluation.VALUES)
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
    facts = Facts(empty=0, result="count", evaluation=Evaluation.DISTINCT)
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


class Mode(CountDistinct):
    """The most frequent value (Spark's ``mode(x, true)``: ties go to the smallest); partial:
    a count per value."""

    name = "mode"
    facts = Facts(
        sql=True,
        keeps_ints=True,
        takes="any",
        keeps_type=True,
        orders="value",
        evaluation=Evaluation.MODE,
    )

    def lower(self, p):
        if not p:
            return None
        top = max(p.values())
        return min(v for v, n in p.items() if n == top)


class CollectList(Collect):
    """Spark's ``collect_list``: the values in window order (time, then input order)."""

    name = "collect_list"
    facts = Facts(sql=True, empty=[], result="list", takes="any", evaluation=Evaluation.LIST)


class CollectSet(CountDistinct):
    """Spark's ``collect_set``: the distinct values, here in ascending order (Spark's order is
    its hash set's)."""

    name = "collect_set"
    facts = Facts(
        sql=True, empty=[], result="list", takes="any", orders="value", evaluation=Evaluation.SET
    )

    def lower(self, p):
        return sorted(p)
