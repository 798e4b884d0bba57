"""The sorted baseline for out-of-order windows: times and partials in two sorted lists.

Insert and evict find their place by binary search and shift the lists (O(log n) comparisons,
O(n) moves); every query folds its range. Time: insert/evict O(n), query O(n) operator
invocations; bulk_evict O(n) moves. Space: n partials. Serves any aggregation.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..aggregations import AggLike, fold
from .base import OooAggregator


class SortedRecalc(OooAggregator):
    name = "recalc"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._times: list[Any] = []
        self._vals: list[Any] = []

    def _insert(self, t: Any, p: Any) -> None:
        i = bisect.bisect_left(self._times, t)
        if i < len(self._times) and self._times[i] == t:
            self._vals[i] = self.agg.combine(self._vals[i], p)
        else:
            self._times.insert(i, t)
            self._vals.insert(i, p)

    def _evict(self, t: Any) -> bool:
        i = bisect.bisect_left(self._times, t)
        if i < len(self._times) and self._times[i] == t:
            del self._times[i]
            del self._vals[i]
            return True
        return False

    def _bulk_evict(self, t: Any) -> int:
        i = bisect.bisect_right(self._times, t)
        del self._times[:i]
        del self._vals[:i]
        return i

    def _query_all(self) -> Any:
        return fold(self.agg, self._vals)

    def _query(self, t_from: Any, t_to: Any) -> Any:
        lo = 0 if t_from is None else bisect.bisect_left(self._times, t_from)
        hi = len(self._times) if t_to is None else bisect.bisect_right(self._times, t_to)
        return fold(self.agg, self._vals[lo:hi])

    def oldest(self) -> Any:
        return self._times[0] if self._times else None

    def youngest(self) -> Any:
        return self._times[-1] if self._times else None

    def __len__(self) -> int:
        return len(self._times)

    def items(self) -> list[tuple[Any, Any]]:
        return list(zip(self._times, self._vals))

    def check_invariants(self) -> None:
        assert len(self._times) == len(self._vals)
        assert all(a < b for a, b in zip(self._times, self._times[1:])), "times increase"
