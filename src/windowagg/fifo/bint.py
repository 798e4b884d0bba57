"""B-Int, base intervals (Arasu and Widom, VLDB 2004; DABA paper Section 8.1, SlickDeque paper
Section 2.2, Fig. 5).

Level ``l`` keeps the products of the aligned dyadic intervals ``[j * 2**l, (j+1) * 2**l)`` of
absolute stream positions, each in a circular array of ``cap >> l`` slots. An interval's product
is computed once, when its last position arrives, from the two halves one level down. Evict only
advances the front: intervals that reach before it are never read again. A query covers its range
greedily, left to right, by the largest aligned intervals inside it.
Time: insert amortized O(1) (fewer than two operator invocations on average), evict O(1)
(amortized, with resizing), query and ``query(last=r)`` O(log n). Space: about 2 * cap partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal, fold
from .base import FifoAggregator


class BInt(FifoAggregator):
    name = "bint"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._front = 0
        self._build(1, [])

    def _build(self, cap: int, values: list[Any]) -> None:
        """Recompute every level for capacity ``cap`` (a power of two) from the window."""
        self._cap = cap
        self._top = cap.bit_length() - 1  # the highest level has intervals of length cap
        self._levels = [[self.agg.identity] * (cap >> lv) for lv in range(self._top + 1)]
        end = self._front
        for v in values:
            self._levels[0][end % cap] = v
            end += 1
            self._complete(end - 1)

    def _complete(self, p: int, low: int = 0) -> None:
        """Compute the intervals whose last position is ``p`` on levels above ``low``,
        skipping intervals that reach before the front (they cannot be read)."""
        combine, levels, cap = self.agg.combine, self._levels, self._cap
        lv = 1
        while lv <= self._top and (p + 1) & ((1 << lv) - 1) == 0:
            j = p >> lv
            if j << lv >= self._front:
                below = levels[lv - 1]
                size_below = cap >> (lv - 1)
                levels[lv][j % (cap >> lv)] = combine(
                    below[(2 * j) % size_below], below[(2 * j + 1) % size_below]
                )
            lv += 1

    def _push(self, p: Any) -> None:
        if self._n == self._cap:
            self._build(2 * self._cap, self._window())
        pos = self._front + self._n
        self._levels[0][pos % self._cap] = p
        self._complete(pos)

    def _pop(self) -> None:
        self._front += 1
        if self._cap > 1 and 4 * (self._n - 1) < self._cap:
            self._build(self._cap // 2, self._window()[: self._n - 1])

    def _window(self) -> list[Any]:
        level0, cap = self._levels[0], self._cap
        return [level0[(self._front + k) % cap] for k in range(self._n)]

    def _cover(self, start: int, stop: int) -> Any:
        """Product of positions ``start <= i < stop`` from maximal aligned intervals."""
        combine, levels, cap = self.agg.combine, self._levels, self._cap
        acc = self.agg.identity
        i = start
        while i < stop:
            lv = self._top if i == 0 else min(self._top, (i & -i).bit_length() - 1)
            while i + (1 << lv) > stop:
                lv -= 1
            acc = combine(acc, levels[lv][(i >> lv) % (cap >> lv)])
            i += 1 << lv
        return acc

    def _aggregate(self) -> Any:
        return self._cover(self._front, self._front + self._n)

    def _aggregate_last(self, r: int) -> Any:
        end = self._front + self._n
        return self._cover(end - r, end)

    def check_invariants(self) -> None:
        cap, agg = self._cap, self.agg
        assert cap & (cap - 1) == 0 and self._n <= cap
        values = self._window()
        end = self._front + self._n
        for lv in range(1, self._top + 1):
            size = 1 << lv
            first = -(-self._front // size)  # first interval starting at or after the front
            for j in range(first, end // size):
                expect = fold(agg, values[j * size - self._front : (j + 1) * size - self._front])
                got = self._levels[lv][j % (cap >> lv)]
                assert approx_equal(got, expect), f"level {lv} interval {j} stale"
