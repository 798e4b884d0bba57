"""Aggregate stores: how window results come out of slice partials (Scotty paper, Section 5.2,
"Aggregate Store"; FiBA paper, Section 4, range queries for window sharing).

* ``lazy``: the slices in time order; a window's result folds the partials of its slices on
  demand, O(slices in the window) per window.
* ``eager``: the slice partials also live in a FiBA keyed by slice start; a window is one range
  query, O(log slices), and an out-of-order change to a slice is one evict and one insert,
  amortized O(log d). This is the combination the FiBA paper proposes for general slicing.

Both see the same calls from the Slice Manager: ``put`` (a slice's partial is new or changed),
``drop`` (a slice is gone), ``release(t)`` (every slice starting at or before ``t`` is gone),
and ``query(slices, i, j)`` for the slices ``i..j-1`` of the manager's ordered list.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggregationProtocol, fold
from ..ooo import ooo
from .clock import Time


class LazyStore:
    name = "lazy"

    def __init__(self, agg: AggregationProtocol) -> None:
        self.agg = agg

    def put(self, start: Time, old_start: Time | None, partial: Any, appended: Any = None) -> None:
        pass  # the partials live in the slices themselves

    def drop(self, start: Time) -> None:
        pass

    def release(self, t: Time) -> None:
        pass

    def query(self, slices: list, i: int, j: int) -> Any:
        return fold(self.agg, (s.partial for s in slices[i:j]))


class EagerStore:
    name = "eager"

    def __init__(self, agg: AggregationProtocol) -> None:
        self.agg = agg
        self.tree = ooo("fiba", agg, backend="python")

    def put(self, start: Time, old_start: Time | None, partial: Any, appended: Any = None) -> None:
        """Slice ``old_start`` (None: a new slice) now starts at ``start`` and holds
        ``partial``; ``appended``, when given, is what was combined at its young end (one
        insert into the FiBA instead of an evict and an insert)."""
        tree = self.tree
        if appended is not None and old_start == start:
            tree._insert(start, appended)
            return
        if old_start is not None:
            tree._evict(old_start)
        tree._insert(start, partial)

    def drop(self, start: Time) -> None:
        self.tree._evict(start)

    def release(self, t: Time) -> None:
        if len(self.tree):
            self.tree._bulk_evict(t)

    def query(self, slices: list, i: int, j: int) -> Any:
        if i >= j:
            return self.agg.identity
        return self.tree.query_partial(slices[i].start, slices[j - 1].start)


STORES = {"lazy": LazyStore, "eager": EagerStore}
