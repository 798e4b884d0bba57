"""FlatFAT, the Reactive Aggregator's flat fixed-size aggregation tree (Tangwongsan et al.,
PVLDB 2015; surveyed in the DABA paper Section 8.1 and the SlickDeque paper Section 2.2, Fig. 4).

A perfect binary tree stored flat in an array: leaves ``cap .. 2*cap-1`` form a circular
buffer of partials, every internal node ``i`` holds ``combine(t[2i], t[2i+1])``. Insert writes
the leaf after the youngest and repairs its path to the root; evict writes the identity into the
oldest leaf and repairs its path. Leaves outside the window hold the identity, so when the
window does not wrap around the buffer the root is the answer; otherwise the answer is two
range products. The capacity doubles when full and halves below a quarter.
Time: insert and evict O(log n) (amortized, with resizing), query O(1) unwrapped and
O(log n) wrapped or for ``query(last=r)``. Space: 2 * cap <= 4n partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal
from .base import FifoAggregator


class FlatFat(FifoAggregator):
    name = "flatfat"

    def __init__(self, agg: AggLike, capacity: int = 1) -> None:
        super().__init__(agg)
        self._front = 0  # absolute position of the oldest element
        self._build(max(1, 1 << max(0, int(capacity) - 1).bit_length()), [])

    def _build(self, cap: int, values: list[Any]) -> None:
        """Rebuild the tree with capacity ``cap`` (a power of two) holding ``values``."""
        identity = self.agg.identity
        self._cap = cap
        t = [identity] * (2 * cap)
        for k, v in enumerate(values):
            t[cap + (self._front + k) % cap] = v
        for i in range(cap - 1, 0, -1):
            t[i] = self.agg.combine(t[2 * i], t[2 * i + 1])
        self._t = t

    def _window(self) -> list[Any]:
        cap, t = self._cap, self._t
        return [t[cap + (self._front + k) % cap] for k in range(self._n)]

    def _update(self, leaf: int, p: Any) -> None:
        t, combine = self._t, self.agg.combine
        i = self._cap + leaf
        t[i] = p
        i >>= 1
        while i:
            t[i] = combine(t[2 * i], t[2 * i + 1])
            i >>= 1

    def _push(self, p: Any) -> None:
        if self._n == self._cap:
            self._build(2 * self._cap, self._window())
        self._update((self._front + self._n) % self._cap, p)

    def _pop(self) -> None:
        self._update(self._front % self._cap, self.agg.identity)
        self._front += 1
        if self._cap > 1 and 4 * (self._n - 1) < self._cap:
            values = self._window()[: self._n - 1]
            self._build(self._cap // 2, values)

    def _range(self, lo: int, hi: int) -> Any:
        """Product of leaves ``lo <= i < hi`` in order, bottom-up with two accumulators."""
        t, combine = self._t, self.agg.combine
        left = right = self.agg.identity
        lo += self._cap
        hi += self._cap
        while lo < hi:
            if lo & 1:
                left = combine(left, t[lo])
                lo += 1
            if hi & 1:
                hi -= 1
                right = combine(t[hi], right)
            lo >>= 1
            hi >>= 1
        return combine(left, right)

    def _span(self, start: int, count: int) -> Any:
        """Product of ``count`` elements from absolute position ``start``."""
        cap = self._cap
        lo = start % cap
        if lo + count <= cap:
            return self._range(lo, lo + count)
        return self.agg.combine(self._range(lo, cap), self._range(0, lo + count - cap))

    def _aggregate(self) -> Any:
        if self._front % self._cap + self._n <= self._cap:
            return self._t[1]  # not wrapped: every other leaf is the identity
        return self._span(self._front, self._n)

    def _aggregate_last(self, r: int) -> Any:
        return self._span(self._front + self._n - r, r)

    def check_invariants(self) -> None:
        cap, t, agg = self._cap, self._t, self.agg
        assert cap >= 1 and cap & (cap - 1) == 0 and self._n <= cap
        live = {(self._front + k) % cap for k in range(self._n)}
        for leaf in range(cap):
            if leaf not in live:
                assert t[cap + leaf] == agg.identity, "leaf outside the window is not identity"
        for i in range(cap - 1, 0, -1):
            assert approx_equal(t[i], agg.combine(t[2 * i], t[2 * i + 1])), f"node {i} stale"
