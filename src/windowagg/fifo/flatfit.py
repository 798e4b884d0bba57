"""FlatFIT, the flat and fast index traverser (Shein, Chrysanthis, Labrinidis, EDBT 2017;
SlickDeque paper Section 2.2; DABA paper Sections 7 and 8.1).

Two arrays indexed by stream position: ``partials[i]`` holds the product of positions
``i <= k < pointers[i]``. A query walks from its first position along the pointers to the end,
pushing the positions it visits on a stack (the paper's *Positions*), then pops them, combining
right to left, and leaves each visited position holding the product up to the end with its
pointer at the end: later queries jump over the whole stretch (path compression).
Evict only drops the oldest position. As in the DABA paper's experiments, the arrays grow and
shrink with the window (here: a chunked deque), so windows may change size.
Time: insert and evict O(1); query amortized O(1) per slide, worst case O(n); ``query(last=r)``
works the same from position ``end - r``. Space: n partials, n pointers and the stack.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike
from ._deque import IndexedDeque
from .base import FifoAggregator


class FlatFit(FifoAggregator):
    name = "flatfit"

    def __init__(self, agg: AggLike) -> None:
        super().__init__(agg)
        self._partials = IndexedDeque()
        self._pointers = IndexedDeque()
        self._stack: list[int] = []  # reused across queries, empty between them

    def _push(self, p: Any) -> None:
        self._pointers.push_back(self._partials.end + 1)
        self._partials.push_back(p)

    def _pop(self) -> None:
        self._partials.pop_front()
        self._pointers.pop_front()

    def _walk(self, start: int) -> Any:
        partials, pointers, stack = self._partials, self._pointers, self._stack
        end = partials.end
        i = start
        while i < end:
            stack.append(i)
            i = pointers[i]
        if not stack:
            return self.agg.identity
        j = stack.pop()  # the last stretch already ends at the end
        acc = partials[j]
        combine = self.agg.combine
        while stack:
            j = stack.pop()
            acc = combine(partials[j], acc)
            partials[j] = acc
            pointers[j] = end
        return acc

    def _aggregate(self) -> Any:
        return self._walk(self._partials.front)

    def _aggregate_last(self, r: int) -> Any:
        return self._walk(self._partials.end - r)

    def check_invariants(self) -> None:
        partials, pointers = self._partials, self._pointers
        assert len(partials) == len(pointers) == self._n and not self._stack
        assert pointers.front == partials.front and pointers.end == partials.end
        for i in range(partials.front, partials.end):
            assert i < pointers[i] <= partials.end, f"pointer of position {i} out of range"
