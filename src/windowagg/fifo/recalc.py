"""Recalculate-from-scratch: the baseline of every SWAG paper (DABA paper, Section 8.1).

A FIFO queue of partials; each query folds the window with ``combine``.
Time: insert and evict O(1), query O(n) invocations of the operator. Space: n partials.
Serves any aggregation and any ``query(last=r)``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..aggregations import AggLike, fold
from .base import FifoAggregator


class Recalc(FifoAggregator):
    name = "recalc"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._q: deque[Any] = deque()

    def _push(self, p: Any) -> None:
        self._q.append(p)

    def _pop(self) -> None:
        self._q.popleft()

    def _aggregate(self) -> Any:
        return fold(self.agg, self._q)

    def _aggregate_last(self, r: int) -> Any:
        # walk back from the young end, keeping the older part on the left
        acc = self.agg.identity
        for i in range(len(self._q) - 1, len(self._q) - 1 - r, -1):
            acc = self.agg.combine(self._q[i], acc)
        return acc

    def check_invariants(self) -> None:
        assert len(self._q) == self._n
