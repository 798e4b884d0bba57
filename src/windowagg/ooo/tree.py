"""The B-tree core shared by ``bclassic`` and ``fiba``: single insert and evict with
after-the-fact rebalancing by split, merge and move (FiBA paper, Section 3.1 and Figures 7-8:
``rebalanceForInsert``, ``rebalanceForEvict``, ``evictInner``), with MAX_ARITY = 2 MIN_ARITY.

Where to search, which kind of aggregate a node stores and how aggregates are repaired after a
change are the hooks ``_search``, ``_kind`` and ``_repair_aggs``: the classic tree
(:mod:`.bclassic`) searches from the root and repairs up-aggregates to the root; FiBA
(:mod:`.fingers`) searches from the fingers and repairs position-aware aggregates.
"""

from __future__ import annotations

import bisect
import itertools
import numbers
from typing import Any

from ..aggregations import AggLike, approx_equal
from .base import OooAggregator
from .node import UP, Node, local_aggregate, piece_arities, split_into


class BTreeAggregator(OooAggregator):
    """Abstract B-tree aggregator; see :class:`ClassicBTree` and :class:`FiBA`."""

    def __init__(self, agg: AggLike, min_arity: int = 4) -> None:
        super().__init__(agg)
        if isinstance(min_arity, bool) or not isinstance(min_arity, numbers.Integral):
            raise ValueError(f"min_arity must be an integer >= 2, got {min_arity!r}")
        if min_arity < 2:
            raise ValueError(f"min_arity must be an integer >= 2, got {min_arity!r}")
        self.min_arity: int = int(min_arity)
        self.max_arity: int = 2 * self.min_arity
        self._clear()

    def _clear(self) -> None:
        self.root = Node([], [])
        self.root.agg = self.agg.identity
        self.left_finger = self.right_finger = self.root

    # -- hooks ----------------------------------------------------------------------------

    def _kind(self, node: Node) -> str:
        raise NotImplementedError

    def _search(self, t: Any) -> tuple[Node, int, bool]:
        """The node holding ``t`` (and its index) or the leaf where ``t`` belongs."""
        raise NotImplementedError

    def _repair_aggs(self, top: Node, hitleft: bool, hitright: bool) -> None:
        """Repair every aggregate made stale by a change whose rebalancing topped out at
        ``top`` (``top`` itself included)."""
        raise NotImplementedError

    # -- node-local helpers -------------------------------------------------------------------

    def _repair(self, node: Node) -> None:
        node.agg, node.count = local_aggregate(
            node, self._kind(node), self.agg.combine, self.agg.identity
        )

    def _repair_if_up(self, node: Node) -> None:
        if self._kind(node) == UP:
            self._repair(node)

    @staticmethod
    def _descend(node: Node, t: Any) -> tuple[Node, int, bool]:
        """Classic top-down search from ``node``."""
        while True:
            i = bisect.bisect_left(node.times, t)
            if i < len(node.times) and node.times[i] == t:
                return node, i, True
            if node.children is None:
                return node, i, False
            node = node.children[i]

    # -- structural operations ----------------------------------------------------------------

    def _height_increase(self) -> None:
        old = self.root
        self.root = Node([], [], [old])
        old.left_spine = old.right_spine = True  # the only child is on both spines

    def _height_decrease(self) -> Node:
        child = self.root.kids[0]
        child.parent = None
        child.left_spine = child.right_spine = False
        self.root = child
        return child

    def _split(self, node: Node) -> tuple[list[Node], list[tuple[Any, Any]]]:
        """Cut an overflowing node into valid pieces (bulk paper, Claim 1); fix spine flags,
        the right finger and the pieces' aggregates. The caller attaches the pieces and the
        promoted entries to the parent."""
        left, right = node.left_spine, node.right_spine
        was_finger = node is self.right_finger
        pieces, promoted = split_into(node, piece_arities(node.arity, self.min_arity))
        for p in pieces:
            p.left_spine = p.right_spine = False
        pieces[0].left_spine = left
        pieces[-1].right_spine = right
        if was_finger:
            self.right_finger = pieces[-1]
        return pieces, promoted

    def _attach(self, node: Node, pieces: list[Node], promoted: list[tuple[Any, Any]]) -> None:
        """Insert the pieces after ``node`` in its parent, separated by the promoted entries."""
        parent = node.parent
        assert parent is not None
        i = parent.child_index(node)
        parent.times[i:i] = [t for t, _ in promoted]
        parent.values[i:i] = [v for _, v in promoted]
        parent.kids[i + 1 : i + 1] = pieces[1:]
        parent.adopt(pieces[1:])
        for p in pieces:
            self._repair(p)

    def _merge(self, parent: Node, i: int) -> Node:
        """Merge children ``i`` and ``i + 1`` of ``parent`` with the separator between them
        into child ``i``; return it."""
        assert parent.children is not None  # a parent is an inner node
        left, right = parent.children[i], parent.children[i + 1]
        left.times += [parent.times[i], *right.times]
        left.values += [parent.values[i], *right.values]
        if right.children is not None:
            left.kids.extend(right.children)
            left.adopt(right.children)
        del parent.times[i], parent.values[i], parent.children[i + 1]
        left.right_spine = right.right_spine
        if right is self.right_finger:
            self.right_finger = left
        self._repair(left)
        return left

    def _move(self, parent: Node, i: int, j: int) -> None:
        """Move one entry (and one child) from sibling ``j`` into its neighbour ``i``,
        rotating through the separator in ``parent``."""
        node, sib = parent.kids[i], parent.kids[j]
        if j == i + 1:
            node.times.append(parent.times[i])
            node.values.append(parent.values[i])
            parent.times[i], parent.values[i] = sib.times.pop(0), sib.values.pop(0)
            if sib.children is not None:
                c = sib.children.pop(0)
                node.kids.append(c)
                c.parent = node
        else:
            node.times.insert(0, parent.times[j])
            node.values.insert(0, parent.values[j])
            parent.times[j], parent.values[j] = sib.times.pop(), sib.values.pop()
            if sib.children is not None:
                c = sib.children.pop()
                node.kids.insert(0, c)
                c.parent = node
        self._repair(node)
        self._repair(sib)

    # -- rebalancing (FiBA paper, Figure 7) ---------------------------------------------------

    def _rebalance_for_insert(self, node: Node) -> tuple[Node, bool, bool]:
        hitleft, hitright = node.left_spine, node.right_spine
        while node.arity > self.max_arity:
            if node.parent is None:
                self._height_increase()
                hitleft = hitright = True
            pieces, promoted = self._split(node)
            self._attach(node, pieces, promoted)
            node = node.up
            hitleft = hitleft or node.left_spine
            hitright = hitright or node.right_spine
        return node, hitleft, hitright

    def _rebalance_for_evict(self, node: Node, to_repair: Node | None) -> tuple[Node, bool, bool]:
        hitleft, hitright = node.left_spine, node.right_spine
        if node is to_repair:
            self._repair_if_up(node)
        while node.parent is not None and node.arity < self.min_arity:
            parent = node.parent
            i = parent.child_index(node)
            j = i + 1 if i + 1 < len(parent.kids) else i - 1
            sibling = parent.kids[j]
            hitleft = hitleft or sibling.left_spine
            hitright = hitright or sibling.right_spine
            if sibling.arity <= self.min_arity:
                merged = self._merge(parent, min(i, j))
                if parent.parent is None and parent.arity == 1:
                    node = self._height_decrease()
                    hitleft = hitright = True
                    assert node is merged
                else:
                    node = parent
            else:
                self._move(parent, i, j)
                node = parent
            if node is to_repair:
                self._repair_if_up(node)
            hitleft = hitleft or node.left_spine
            hitright = hitright or node.right_spine
        return node, hitleft, hitright

    # -- the operations -------------------------------------------------------------------

    def _insert(self, t: Any, p: Any) -> None:
        node, i, found = self._search(t)
        if found:
            node.values[i] = self.agg.combine(node.values[i], p)  # old (x) new
            self._repair_aggs(node, node.left_spine, node.right_spine)
            return
        node.times.insert(i, t)
        node.values.insert(i, p)
        self._repair_aggs(*self._rebalance_for_insert(node))

    def _evict(self, t: Any) -> bool:
        node, i, found = self._search(t)
        if not found:
            return False
        if node.children is None:
            del node.times[i], node.values[i]
            top, hitleft, hitright = self._rebalance_for_evict(node, None)
        else:
            top, hitleft, hitright = self._evict_inner(node, i)
        self._repair_aggs(top, hitleft, hitright)
        return True

    def _evict_inner(self, node: Node, i: int) -> tuple[Node, bool, bool]:
        """Evict entry ``i`` of an inner node by overwriting it with its neighbour from a leaf
        (FiBA paper, Figure 8)."""
        left, right = node.kids[i], node.kids[i + 1]
        if right.arity > self.min_arity:
            leaf = right
            while leaf.children is not None:
                leaf = leaf.children[0]
            t, v = leaf.times.pop(0), leaf.values.pop(0)
        else:
            leaf = left
            while leaf.children is not None:
                leaf = leaf.children[-1]
            t, v = leaf.times.pop(), leaf.values.pop()
        node.times[i], node.values[i] = t, v
        top, hitleft, hitright = self._rebalance_for_evict(leaf, node)
        if self._is_strict_descendant(top, node):
            while top is not node:  # repair the path up to the overwritten node
                self._repair(top)
                top = top.up
                hitleft = hitleft or top.left_spine
                hitright = hitright or top.right_spine
        return top, hitleft, hitright

    @staticmethod
    def _is_strict_descendant(node: Node, ancestor: Node) -> bool:
        n = node.parent
        while n is not None:
            if n is ancestor:
                return True
            n = n.parent
        return False

    # -- reading --------------------------------------------------------------------------

    def oldest(self) -> Any:
        return self.left_finger.times[0] if len(self) else None

    def youngest(self) -> Any:
        return self.right_finger.times[-1] if len(self) else None

    def items(self) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []

        def walk(node: Node) -> None:
            for k in range(len(node.times) + 1):
                if node.children is not None:
                    walk(node.children[k])
                if k < len(node.times):
                    out.append((node.times[k], node.values[k]))

        walk(self.root)
        return out

    # -- invariants -----------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Height, order, arity, parent pointers, spine flags, fingers, and every node's
        aggregate and count recomputed from scratch for its kind."""
        agg = self.agg
        root = self.root
        assert root.parent is None, "the root has no parent"
        assert not root.left_spine and not root.right_spine, "the root is not a spine node"
        leaf_depths: set[int] = set()

        def walk(node: Node, depth: int, lo: Any, hi: Any, on_left: bool, on_right: bool) -> None:
            times = node.times
            assert all(a < b for a, b in itertools.pairwise(times)), "times inside a node increase"
            assert len(node.values) == len(times)
            if times:
                assert lo is None or lo < times[0], "order against the left separator"
                assert hi is None or times[-1] < hi, "order against the right separator"
            if node is not root:
                assert self.min_arity <= node.arity <= self.max_arity, f"arity {node.arity}"
                assert node.left_spine == on_left and node.right_spine == on_right, "spine flags"
            else:
                assert node.arity <= self.max_arity and (node.leaf or node.arity >= 2)
            if node.children is None:
                leaf_depths.add(depth)
            else:
                assert len(node.children) == node.arity
                for k, c in enumerate(node.children):
                    assert c.parent is node, "parent pointer"
                    walk(
                        c,
                        depth + 1,
                        times[k - 1] if k > 0 else lo,
                        times[k] if k < len(times) else hi,
                        (node is root or on_left) and k == 0,
                        (node is root or on_right) and k == len(node.children) - 1,
                    )
            # the stored aggregate, recomputed from the children's (already checked) ones
            want_agg, want_count = local_aggregate(
                node, self._kind(node), agg.combine, agg.identity
            )
            assert approx_equal(node.agg, want_agg), f"{self._kind(node)} aggregate at {times}"
            assert node.count == want_count, f"count at {times}"

        walk(root, 0, None, None, False, False)
        assert len(leaf_depths) <= 1, "all leaves at the same depth"
        leftmost = rightmost = root
        while leftmost.children is not None:
            leftmost = leftmost.children[0]
        while rightmost.children is not None:
            rightmost = rightmost.children[-1]
        assert self.left_finger is leftmost and self.right_finger is rightmost, "fingers"
        entries = self.items()
        assert len(entries) == len(self), "len() matches the entries"
