"""Two-Stacks (DABA paper, Section 3; pseudocode lines 1-14).

A front stack F and a back stack B of ``(val, agg)`` pairs. F aggregates towards its bottom
(``F[i].agg = v_i ... v_{|F|-1}``), B towards its top (``B[i].agg = v_|F| ... v_i``).
Insert pushes onto B; evict pops from F after a *flip* that moves B onto F when F is empty.
Time (Theorem 3): query and insert exactly one operator invocation; evict amortized one,
worst case n. Space: 2n partials.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, approx_equal
from .base import FifoAggregator


class TwoStacks(FifoAggregator):
    name = "two_stacks"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        # Python lists as stacks: the top is the last item. F's top is the oldest element.
        self._front: list[tuple[Any, Any]] = []
        self._back: list[tuple[Any, Any]] = []

    def _pi_front(self) -> Any:
        return self._front[-1][1] if self._front else self.agg.identity

    def _pi_back(self) -> Any:
        return self._back[-1][1] if self._back else self.agg.identity

    def _aggregate(self) -> Any:
        return self.agg.combine(self._pi_front(), self._pi_back())  # line 6

    def _push(self, p: Any) -> None:
        self._back.append((p, self.agg.combine(self._pi_back(), p)))  # line 8

    def _pop(self) -> None:
        if not self._front:  # flip, lines 10-13
            back = self._back
            while back:
                val = back.pop()[0]
                self._front.append((val, self.agg.combine(val, self._pi_front())))
        self._front.pop()

    def check_invariants(self) -> None:
        agg = self.agg
        assert len(self._front) + len(self._back) == self._n
        acc = agg.identity
        for val, a in self._front:  # from the bottom (youngest of F) to the top (oldest)
            acc = agg.combine(val, acc)
            assert approx_equal(a, acc), "front stack aggregate out of date"
        acc = agg.identity
        for val, a in self._back:
            acc = agg.combine(acc, val)
            assert approx_equal(a, acc), "back stack aggregate out of date"
