"""DABA Lite (DABA paper, Section 6; pseudocode lines 1-34).

DABA without the val fields of left-aggregated sublists: one deque of partials, pointers
F <= L <= R <= A <= B <= E, and two extra partials ``aggRA`` (product of l_R and l_A, valid
when L != R) and ``aggB`` (product of l_B). l_R and l_B hold plain values; l_F's left part,
l_L and l_A hold suffix products.
Time (Theorem 13): at most 1 operator invocation per query, 3 per insert, 2 per evict; on
average 2 per insert and 1 per evict; worst-case O(1). Space: n + 2 partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal
from ._deque import IndexedDeque
from .base import FifoAggregator


class DabaLite(FifoAggregator):
    name = "daba_lite"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._d = IndexedDeque()  # F and E are the deque's front and end
        self._l = self._r = self._a = self._b = 0
        self._agg_ra = self.agg.identity
        self._agg_b = self.agg.identity

    # the helpers Pi_p of lines 1-6
    def _pi_f(self) -> Any:
        return self.agg.identity if self._d.front == self._b else self._d[self._d.front]

    def _pi_l(self) -> Any:
        return self.agg.identity if self._l == self._r else self._d[self._l]

    def _pi_a(self) -> Any:
        return self.agg.identity if self._a == self._b else self._d[self._a]

    def _aggregate(self) -> Any:
        return self.agg.combine(self._pi_f(), self._agg_b)  # line 8

    def _push(self, p: Any) -> None:
        self._d.push_back(p)  # lines 10-12
        self._agg_b = self.agg.combine(self._agg_b, p)
        self._fixup()

    def _pop(self) -> None:
        self._d.pop_front()  # lines 15-16
        self._fixup()

    def _fixup(self) -> None:
        d, combine, identity = self._d, self.agg.combine, self.agg.identity
        f, e = d.front, d.end
        if f == self._b:  # singleton, lines 20-22
            self._b = self._a = self._r = self._l = e
            self._agg_ra = identity
            self._agg_b = identity
            return
        if self._l == self._b:  # flip, lines 25-27
            self._l, self._a, self._b = f, e, e
            self._agg_ra = self._agg_b
            self._agg_b = identity
        if self._l == self._r:  # shift, line 29
            self._a += 1
            self._r += 1
            self._l += 1
        else:  # shrink, lines 31-34
            d[self._l] = combine(self._pi_l(), self._agg_ra)
            self._l += 1
            d[self._a - 1] = combine(d[self._a - 1], self._pi_a())
            self._a -= 1

    def check_invariants(self) -> None:
        # Sublists aggregated to the left keep no plain values (the point of Lite), so their
        # suffix products are checked through query results; here the pointers, the size
        # invariants, aggB against l_B and aggRA against l_R and l_A.
        agg, d = self.agg, self._d
        f, e = d.front, d.end
        l, r, a, b = self._l, self._r, self._a, self._b
        assert e - f == self._n
        assert f <= l <= r <= a <= b <= e, "pointer order F <= L <= R <= A <= B <= E"
        size_f, size_b = b - f, e - b
        assert (size_f == 0 and size_b == 0) or (
            (r - l) + (a - r) + (b - a) + 1 == size_f - size_b and r - l == a - r
        ), "size invariants"
        acc = agg.identity
        for p in d.range(b, e):
            acc = agg.combine(acc, p)
        assert approx_equal(acc, self._agg_b), "aggB = product of l_B"
        if l != r:
            acc = agg.identity
            for p in d.range(r, a):
                acc = agg.combine(acc, p)
            acc = agg.combine(acc, self._pi_a())
            assert approx_equal(acc, self._agg_ra), "aggRA = product of l_R and l_A"
