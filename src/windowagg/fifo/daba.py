"""DABA, the De-Amortized Banker's Aggregator (DABA paper, Section 5; pseudocode lines 1-33).

One deque of ``(val, agg)`` pairs with six pointers F <= L <= R <= A <= B <= E. The sublists
l_F (left part), l_L and l_A aggregate to the right end of their range, l_R and l_B from their
left end. Every insert and evict calls ``fixup``, which does one step of the incremental
reversal: singleton, flip, shift or shrink (lines 21-33).
Time (Theorem 10): at most 1 operator invocation per query, 4 per insert, 3 per evict; on
average 2.5 per insert and 1.5 per evict; worst-case O(1). Space: 2n partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal
from ._deque import IndexedDeque
from .base import FifoAggregator


class Daba(FifoAggregator):
    name = "daba"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._vals = IndexedDeque()  # the val fields
        self._aggs = IndexedDeque()  # the agg fields (same positions)
        # F and E are the deques' front and end
        self._l = self._r = self._a = self._b = 0

    # the helpers Pi_p of lines 1-10
    def _pi_f(self) -> Any:
        return self.agg.identity if self._aggs.front == self._b else self._aggs[self._aggs.front]

    def _pi_b(self) -> Any:
        e = self._aggs.end
        return self.agg.identity if self._b == e else self._aggs[e - 1]

    def _pi_l(self) -> Any:
        return self.agg.identity if self._l == self._r else self._aggs[self._l]

    def _pi_r(self) -> Any:
        return self.agg.identity if self._r == self._a else self._aggs[self._a - 1]

    def _pi_a(self) -> Any:
        return self.agg.identity if self._a == self._b else self._aggs[self._a]

    def _aggregate(self) -> Any:
        return self.agg.combine(self._pi_f(), self._pi_b())  # line 12

    def _push(self, p: Any) -> None:
        self._aggs.push_back(self.agg.combine(self._pi_b(), p))  # line 14
        self._vals.push_back(p)
        self._fixup()

    def _pop(self) -> None:
        self._vals.pop_front()  # lines 18-19
        self._aggs.pop_front()
        self._fixup()

    def _fixup(self) -> None:
        aggs, combine = self._aggs, self.agg.combine
        f, e = aggs.front, aggs.end
        if f == self._b:  # singleton, line 23
            self._b = self._a = self._r = self._l = e
            return
        if self._l == self._b:  # flip, line 26
            self._l, self._a, self._b = f, e, e
        if self._l == self._r:  # shift, line 28
            self._a += 1
            self._r += 1
            self._l += 1
        else:  # shrink, lines 30-33
            aggs[self._l] = combine(combine(self._pi_l(), self._pi_r()), self._pi_a())
            self._l += 1
            aggs[self._a - 1] = combine(self._vals[self._a - 1], self._pi_a())
            self._a -= 1

    def check_invariants(self) -> None:
        agg, vals, aggs = self.agg, self._vals, self._aggs
        f, e = aggs.front, aggs.end
        l, r, a, b = self._l, self._r, self._a, self._b
        assert (vals.front, vals.end) == (f, e) and e - f == self._n
        assert f <= l <= r <= a <= b <= e, "pointer order F <= L <= R <= A <= B <= E"
        size_f, size_b = b - f, e - b
        assert (size_f == 0 and size_b == 0) or (
            (r - l) + (a - r) + (b - a) + 1 == size_f - size_b and r - l == a - r
        ), "size invariants"

        def suffixes(lo: int, hi: int, upto: int) -> None:  # [lo, hi): *(i).agg = v_i..v_{upto-1}
            acc = agg.identity
            for i in range(upto - 1, lo - 1, -1):
                acc = agg.combine(vals[i], acc)
                if i < hi:
                    assert approx_equal(aggs[i], acc), f"suffix aggregate at {i}"

        def prefixes(lo: int, hi: int) -> None:  # [lo, hi): *(i).agg = v_lo..v_i
            acc = agg.identity
            for i in range(lo, hi):
                acc = agg.combine(acc, vals[i])
                assert approx_equal(aggs[i], acc), f"prefix aggregate at {i}"

        suffixes(f, l, b)  # the left-most part of l_F
        suffixes(l, r, r)  # l_L
        prefixes(r, a)  # l_R
        suffixes(a, b, b)  # l_A
        prefixes(b, e)  # l_B
