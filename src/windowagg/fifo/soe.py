"""Subtract-on-evict (Panes (Inv), R-Int; DABA paper Section 8.1, SlickDeque paper Section 2.2).

Keeps the running product of the window: insert combines the new value on the right, evict
removes the oldest value with the aggregation's left inverse ``inverse(agg, oldest)``.
Time: one operator invocation per insert and per evict, none per query. Space: n partials
(the values to subtract later) plus one. Requires an invertible aggregation.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..aggregations import AggLike, flags, inverse_of
from .base import FifoAggregator


class SubtractOnEvict(FifoAggregator):
    name = "soe"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        if not flags(self.agg)[0]:
            raise ValueError(
                f"soe (subtract-on-evict) needs an invertible aggregation; {self.agg!r} is not "
                "(it has no inverse). Use two_stacks_lite or daba_lite instead."
            )
        self._inverse = inverse_of(self.agg)
        self._q: deque[Any] = deque()
        self._agg = self.agg.identity

    def _push(self, p: Any) -> None:
        self._q.append(p)
        self._agg = self.agg.combine(self._agg, p)

    def _pop(self) -> None:
        oldest = self._q.popleft()
        self._agg = self._inverse(self._agg, oldest) if self._q else self.agg.identity

    def _aggregate(self) -> Any:
        return self._agg

    def check_invariants(self) -> None:
        assert len(self._q) == self._n
