"""Two-Stacks Lite (DABA paper, Section 4; pseudocode lines 1-18).

One deque of partials with pointers F <= B <= E and one extra partial ``aggB``. The front
sublist [F, B) holds suffix aggregates up to B (``*(F+i) = v_i ... v_{B-F-1}``), the back
sublist [B, E) holds plain values, and ``aggB`` their product. Evict flips in place when the
front sublist is empty.
Time (Theorem 7): query and insert exactly one invocation; evict amortized one, worst case n.
Space: n + 1 partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal
from ._deque import IndexedDeque
from .base import FifoAggregator


class TwoStacksLite(FifoAggregator):
    name = "two_stacks_lite"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._d = IndexedDeque()
        self._b = 0  # pointer B; F and E are the deque's front and end
        self._agg_b = self.agg.identity

    def _pi_front(self) -> Any:
        return self.agg.identity if self._d.front == self._b else self._d[self._d.front]

    def _aggregate(self) -> Any:
        return self.agg.combine(self._pi_front(), self._agg_b)  # line 4

    def _push(self, p: Any) -> None:
        self._d.push_back(p)  # lines 6-8
        self._agg_b = self.agg.combine(self._agg_b, p)

    def _pop(self) -> None:
        d = self._d
        if d.front == self._b and self._b != d.end:  # flip, lines 10-16
            i = d.end - 1
            while i != d.front:
                i -= 1
                d[i] = self.agg.combine(d[i], d[i + 1])
            self._b = d.end
            self._agg_b = self.agg.identity
        d.pop_front()  # lines 17-18

    def check_invariants(self) -> None:
        # The front sublist keeps no plain values (that is the point of Lite), so its suffix
        # products are checked through the queries of the differential tests; here: pointers,
        # size, and aggB against the back sublist's values.
        agg, d = self.agg, self._d
        assert d.front <= self._b <= d.end and len(d) == self._n
        acc = agg.identity
        for p in d.range(self._b, d.end):
            acc = agg.combine(acc, p)
        assert approx_equal(acc, self._agg_b), "aggB out of date"
