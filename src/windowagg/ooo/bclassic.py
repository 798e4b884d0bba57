"""The classic B-tree augmented with aggregates (FiBA paper, Section 3.1, Figure 1): the
baseline FiBA is measured against.

Every node stores the up-aggregate of its subtree, so ``query()`` reads the root, and every
insert or evict searches from the root and repairs aggregates on the whole path back up.
Time (Theorem 3): query O(1), insert and evict O(log n), also for in-order streams.
Space: O(n / MIN_ARITY) nodes.
"""

from __future__ import annotations

from typing import Any

from .bulk import BulkOperations
from .node import UP, Node
from .range_query import RangeQuery
from .tree import BTreeAggregator


class ClassicBTree(BulkOperations, RangeQuery, BTreeAggregator):
    name = "bclassic"
    fingers = False

    def _kind(self, node: Node) -> str:
        return UP

    def _search(self, t: Any) -> tuple[Node, int, bool]:
        return self._descend(self.root, t)

    def _repair_aggs(self, top: Node, hitleft: bool, hitright: bool) -> None:
        self._repair(top)
        while top.parent is not None:  # repaired to the root: the O(log n) of Theorem 3
            top = top.parent
            self._repair(top)

    def _query_all(self) -> Any:
        return self.root.agg

    def __len__(self) -> int:
        return self.root.count
