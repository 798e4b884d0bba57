"""SlickDeque (Shein, Chrysanthis, Labrinidis, EDBT 2018), both variants, with the multi-query
form: answers for several ranges (``ranges=[...]``, the youngest ``r`` elements) from one
structure.

* **SlickDeque (Inv)** (Algorithm 1, Fig. 8): a running answer per range; each insert combines
  the new partial into every answer and removes, with the inverse, the partial that leaves that
  range. Exactly two operator invocations per range per slide. Needs ``invertible``.
* **SlickDeque (Non-Inv)** (Algorithm 2, Fig. 9): a deque of ``(pos, val)`` nodes; an arriving
  partial pops every tail node it dominates (``combine(tail, new)`` is ``new``), and the answer
  for a range is the value of the first node inside it. Fewer than two invocations per slide
  amortized, worst case n. Needs ``selective``. The first node in a range is found by binary
  search over the positions (the paper's Answer Loop walks; :meth:`query_ranges` walks once for
  all ranges, longest first, as the paper does).

Here the window is dynamic (any interleaving of insert and evict), as for every FIFO
aggregator in this package. Space: Inv n partials plus one answer per range; Non-Inv at most n
nodes.
"""

from __future__ import annotations

import bisect
from itertools import pairwise
from typing import Any

from ..aggregations import AggLike, approx_equal, flags, fold, inverse_of, resolve
from ._deque import IndexedDeque
from .base import FifoAggregator


def _ranges(ranges: Any) -> tuple[int, ...]:
    if ranges is None:
        return ()
    out = []
    for r in ranges:
        if isinstance(r, bool) or not isinstance(r, int) or r < 1:
            raise ValueError(f"slickdeque ranges must be integers >= 1, got {r!r}")
        out.append(r)
    return tuple(sorted(set(out), reverse=True))


def check_range(ranges: tuple[int, ...], r: int) -> int:
    """SlickDeque answers ``query(last=r)`` for the ranges it was built with only."""
    if r not in ranges:
        raise ValueError(
            f"slickdeque answers query(last=r) only for the ranges it was built with "
            f"{sorted(ranges)}; got r={r!r} (pass ranges=[...] to windowagg.fifo)"
        )
    return r


class _SlickDequeBase(FifoAggregator):
    name = "slickdeque"

    def __init__(self, agg: AggLike, ranges: Any = None) -> None:
        super().__init__(agg)
        self.ranges = _ranges(ranges)

    def _check_last(self, last: Any) -> int:
        return check_range(self.ranges, super()._check_last(last))

    def query_ranges(self) -> dict[int, Any]:
        """Lowered answers for every range of ``ranges``, in one pass."""
        lower = self.agg.lower
        return {r: lower(p) for r, p in self._answers().items()}

    def _answers(self) -> dict[int, Any]:
        raise NotImplementedError


class SlickDequeInv(_SlickDequeBase):
    """SlickDeque (Inv): running answers updated by combine and inverse (Algorithm 1)."""

    variant = "inv"

    def __init__(self, agg: AggLike, ranges: Any = None) -> None:
        super().__init__(agg, ranges)
        self._partials = IndexedDeque()
        self._inverse = inverse_of(self.agg)
        self._all = self.agg.identity
        self._ans = {r: self.agg.identity for r in self.ranges}

    def _push(self, p: Any) -> None:
        d, combine, inverse = self._partials, self.agg.combine, self._inverse
        d.push_back(p)
        self._all = combine(self._all, p)
        for r in self.ranges:  # line 24: ans = ans (+) newPartial (-) expiring
            ans = combine(self._ans[r], p)
            leaving = d.end - 1 - r
            if leaving >= d.front:
                ans = inverse(ans, d[leaving])
            self._ans[r] = ans

    def _pop(self) -> None:
        d, identity, inverse = self._partials, self.agg.identity, self._inverse
        oldest = d.pop_front()
        n = len(d)
        self._all = inverse(self._all, oldest) if n else identity
        for r in self.ranges:
            if n < r:  # the oldest element was among the youngest r
                self._ans[r] = inverse(self._ans[r], oldest) if n else identity

    def _aggregate(self) -> Any:
        return self._all

    def _aggregate_last(self, r: int) -> Any:
        return self._ans[r]

    def _answers(self) -> dict[int, Any]:
        return {r: (self._all if r >= self._n else self._ans[r]) for r in self.ranges}

    def check_invariants(self) -> None:
        d, agg = self._partials, self.agg
        assert len(d) == self._n
        values = list(d.range(d.front, d.end))
        assert approx_equal(self._all, fold(agg, values)), "running answer of the window"
        for r in self.ranges:
            want = fold(agg, values[-r:]) if values else agg.identity
            assert approx_equal(self._ans[r], want), f"running answer of range {r}"


class SlickDequeNonInv(_SlickDequeBase):
    """SlickDeque (Non-Inv): a deque of undominated partials (Algorithm 2)."""

    variant = "noninv"

    def __init__(self, agg: AggLike, ranges: Any = None) -> None:
        super().__init__(agg, ranges)
        self._pos: list[int] = []  # node positions, increasing; live nodes from _head on
        self._val: list[Any] = []
        self._head = 0
        self._front = 0  # absolute position of the oldest element in the window

    def _dominated(self, old: Any, new: Any) -> bool:
        """Whether ``old`` can never again be an answer once ``new`` has arrived (line 16)."""
        res = self.agg.combine(old, new)
        return res is new or (res is not old and res == new)

    def _push(self, p: Any) -> None:
        pos, val = self._pos, self._val
        while len(pos) > self._head and self._dominated(val[-1], p):  # lines 16-18
            pos.pop()
            val.pop()
        pos.append(self._front + self._n)  # line 19
        val.append(p)

    def _pop(self) -> None:
        if len(self._pos) > self._head and self._pos[self._head] == self._front:  # line 13
            self._val[self._head] = None
            self._head += 1
            if self._head > 32 and 2 * self._head > len(self._pos):
                del self._pos[: self._head]
                del self._val[: self._head]
                self._head = 0
        self._front += 1

    def _first_from(self, start: int, lo: int) -> Any:
        i = bisect.bisect_left(self._pos, start, lo)
        return (self._val[i], i) if i < len(self._pos) else (self.agg.identity, i)

    def _aggregate(self) -> Any:
        return self._val[self._head] if len(self._pos) > self._head else self.agg.identity

    def _aggregate_last(self, r: int) -> Any:
        return self._first_from(self._front + self._n - r, self._head)[0]

    def _answers(self) -> dict[int, Any]:
        # the Answer Loop: longest range first, each search continuing where the last stopped
        out, i, end = {}, self._head, self._front + self._n
        for r in self.ranges:
            out[r], i = self._first_from(end - min(r, self._n), i)
        return out

    def check_invariants(self) -> None:
        pos = self._pos[self._head :]
        end = self._front + self._n
        assert len(pos) == len(self._val) - self._head and len(pos) <= self._n
        assert all(a < b for a, b in pairwise(pos)), "node positions increase"
        assert all(self._front <= p < end for p in pos), "nodes lie inside the window"
        if self._n:
            assert pos and pos[-1] == end - 1, "the youngest element is always a node"
        vals = self._val[self._head :]
        for a, b in pairwise(vals):
            assert not self._dominated(a, b), "a dominated node was kept"


def slickdeque(agg: AggLike, ranges: Any = None) -> _SlickDequeBase:
    """SlickDeque (Inv) for invertible aggregations, (Non-Inv) for selective ones."""

    agg = resolve(agg)
    invertible, _, selective = flags(agg)
    if invertible:
        return SlickDequeInv(agg, ranges)
    if selective:
        return SlickDequeNonInv(agg, ranges)
    raise ValueError(
        f"slickdeque needs an invertible aggregation (SlickDeque Inv) or a selective one "
        f"(SlickDeque Non-Inv); {agg!r} is neither. Use daba_lite or two_stacks_lite instead."
    )
