"""FiBA, the finger B-tree aggregator (FiBA paper, Sections 3.2-3.3, Figures 2 and 7).

Three ideas break the O(log n) barrier of the classic tree:

* **fingers** to the leftmost and rightmost leaves, with parent pointers: a search climbs the
  two spines in lockstep from the fingers to the lowest node whose subtree holds ``t``, then
  descends: O(log d) for out-of-order distance d from the nearer end;
* **after-the-fact rebalancing** with MAX_ARITY = 2 MIN_ARITY (:mod:`.tree`): amortized O(1);
* **position-aware partial aggregates** (:mod:`.node`): up-aggregates off the spines, the inner
  aggregate at the root, left and right aggregates on the spines. ``repairAggs`` (Figure 7,
  lines 23-39) repairs up-aggregates to the first spine node or the root, then walks down the
  spines that changed to the fingers, so repairs cost no more than search and rebalance.

``query()`` combines left finger, root and right finger: at most two operator invocations.
Time (Theorem 5): insert and evict amortized O(log d), worst case O(log n); in-order streams
amortized O(1). Space: O(n / MIN_ARITY) nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .node import INNER, LEFT, RIGHT, UP, Node

if TYPE_CHECKING:  # a mixin of the B-tree: the type checker sees the tree's own members
    from .tree import BTreeAggregator as _Tree
else:
    _Tree = object


class FingerSearchAndRepair(_Tree):
    """The parts of FiBA that differ from the classic tree: kinds, search and repair."""

    root: Node
    left_finger: Node
    right_finger: Node
    fingers = True

    def _kind(self, node: Node) -> str:
        if node.parent is None:
            return INNER
        if node.left_spine:
            return LEFT
        if node.right_spine:
            return RIGHT
        return UP

    def _search(self, t: Any) -> tuple[Node, int, bool]:
        left, right = self.left_finger, self.right_finger
        top = self.root
        while left.parent is not None:  # both fingers are at the same depth
            if t < left.parent.times[0]:  # t lies in left's subtree range
                top = left
                break
            if right.up.times[-1] < t:
                top = right
                break
            left, right = left.up, right.up
        return self._descend(top, t)

    def _repair_aggs(self, top: Node, hitleft: bool, hitright: bool) -> None:
        repair = self._repair
        repair(top)
        while self._kind(top) == UP:  # lines 24-27: up to the first spine node or the root
            top = top.up
            repair(top)
        is_root = top.parent is None
        if top.left_spine or (is_root and hitleft):  # lines 30-34: down the left spine
            node = top
            while node.children is not None:
                node = node.children[0]
                repair(node)
        if top.right_spine or (is_root and hitright):  # lines 35-39: down the right spine
            node = top
            while node.children is not None:
                node = node.children[-1]
                repair(node)

    def _query_all(self) -> Any:
        root = self.root
        if root.children is None:
            return root.agg
        combine = self.agg.combine
        return combine(combine(self.left_finger.agg, root.agg), self.right_finger.agg)

    def __len__(self) -> int:
        root = self.root
        if root.children is None:
            return root.count
        return self.left_finger.count + root.count + self.right_finger.count
