"""Bulk eviction and bulk insertion (Tangwongsan, Hirzel, Schneider, PVLDB 2023, Sections 4-5).

``bulk_evict(t)`` removes every entry with time <= t in three steps (Section 4):

1. **boundary search**: climb the left spine from the left finger to the lowest node whose
   subtree straddles ``t``, then walk down cutting off, at each level, the entries <= t and the
   children left of them. Cut-off subtrees are dropped whole, never walked (their size is known
   from the position-aware counts). If the cut reaches the right spine, the root is replaced by
   the highest remaining node of arity > 1 (*make node root* / *make child root*).
   For each level the search records the triple (node, ancestor, neighbour): the neighbour is
   the next node to the right on the same level, which need not be a sibling, and the ancestor
   their least common ancestor, whose first entry separates them.
2. **pass up**: bottom-up along the boundary, an underflowing node either takes
   ``nodeDeficit`` entries and children from its neighbour through the ancestor (*move*,
   Figure 2) or is merged into the neighbour, eliminating the empty chain between it and the
   ancestor (*merge*, Figure 3). Above the boundary at most one entry is missing, which the
   ordinary rebalancing repairs (amortized O(1), FiBA paper Lemma 9).
3. **pass down** the new left spine: spine flags, the left finger, left aggregates.

Time (Theorem 1): amortized O(log m) for m evicted entries, worst case O(log n).

``bulk_insert(pairs)`` inserts time-ordered pairs in three steps (Section 5):

1. **insertion-site search**: the first site by finger search, every later one from the
   previous site (up to their least common ancestor and down). Entries whose time is present
   are combined into place (old then new) and leave a *recomputation event*; the others become
   *treelets* for their leaf.
2. **pass up, level by level**: each target node interleaves its treelets (the merge step of
   merge sort) and, when it overflows, is cut by *bulkSplit* (Claim 1: pieces of arity
   MIN_ARITY + 1 and a last one of MIN_ARITY .. 2 MIN_ARITY); the entries between pieces become
   the next level's treelets, already in time order. Nodes whose subtree changed are
   recomputed on their level, bottom-up.
3. **pass down** the spines that changed.

Time (Theorem 3): amortized O(log d + m (1 + log(d / m))).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from .node import UP, Node

Treelet = tuple[Any, Any, Node | None]  # (time, value, child to its right)


if TYPE_CHECKING:  # a mixin of the B-tree: the type checker sees the tree's own members
    from .tree import BTreeAggregator as _Tree
else:
    _Tree = object


class BulkOperations(_Tree):
    root: Node
    left_finger: Node
    right_finger: Node
    min_arity: int
    max_arity: int
    fingers: bool

    # -- bulk eviction --------------------------------------------------------------------

    def _bulk_evict(self, t: Any) -> int:
        before = len(self)
        if not self.left_finger.times or t < self.left_finger.times[0]:
            return 0
        if not t < self.right_finger.times[-1]:
            self._clear()
            return before

        # Step 1: boundary search (climb the left spine, then cut on the way down)
        top = self.left_finger if self.fingers else self.root
        while top.parent is not None and not t < top.parent.times[0]:
            top = top.parent
        boundary = self._cut(top, t)
        parent_of_top = top.parent
        top_was_root = parent_of_top is None
        if top_was_root:
            self._collapse_root()  # make node root / make child root
            # the boundary below the new root (empty if the cut stopped above it)
            boundary = boundary[boundary.index(self.root) :] if self.root in boundary else []
        triples = self._neighbours(boundary, parent_of_top)

        # Step 2: pass up the boundary, then ordinary rebalancing above it
        k = len(boundary) - 1
        while k >= 0 and boundary[k] is not self.root:
            node = boundary[k]
            anc, nb = triples[k]
            deficit = self.min_arity - node.arity
            if deficit <= 0:
                self._repair(node)
                k -= 1
            elif deficit <= nb.arity - self.min_arity:
                self._move_batch(node, anc, nb, deficit)
                k -= 1
            else:
                self._merge_into_neighbour(node, anc, nb)
                k = boundary.index(anc) if anc in boundary else -1
        hitright = False
        top2 = self.root
        if not top_was_root:
            assert parent_of_top is not None  # the top was not the root: it had a parent
            top2, _, hitright = self._rebalance_for_evict(parent_of_top, None)
        if self._collapse_root():
            top2, hitright = self.root, True

        # Step 3: pass down the new left spine (flags, finger), then repair aggregates
        self._mark_left_spine(top2)
        self._repair_aggs(top2, True, hitright or top2 is self.root)
        return before - len(self)

    def _collapse_root(self) -> bool:
        """Replace a root of arity 1 by its only child, as often as needed."""
        collapsed = False
        while self.root.children is not None and len(self.root.children) == 1:
            self._height_decrease()
            collapsed = True
        return collapsed

    @staticmethod
    def _cut(top: Node, t: Any) -> list[Node]:
        """Drop the entries <= t, and the subtrees left of them, from ``top`` down; return the
        nodes that lost their left part, top to bottom (the boundary)."""
        boundary = []
        node = top
        while True:
            i = bisect.bisect_right(node.times, t)
            exact = i > 0 and node.times[i - 1] == t
            if i:
                del node.times[:i], node.values[:i]
                if node.children is not None:
                    del node.children[:i]  # dropped whole: never walked
            boundary.append(node)
            if node.children is None or exact:  # an exact match leaves the child intact
                return boundary
            node = node.children[0]

    @staticmethod
    def _neighbours(boundary: list[Node], parent_of_top: Node | None) -> list[Any]:
        """For each boundary node: (ancestor, neighbour), computed top-down along two chains."""
        triples: list[Any] = []
        anc: Node | None
        nb: Node | None
        if parent_of_top is not None and boundary[0].parent is parent_of_top:
            anc, nb = parent_of_top, parent_of_top.kids[1]
        else:
            anc = nb = None
        for node in boundary:
            triples.append((anc, nb))
            if node.children is None:
                break
            if len(node.children) >= 2:
                anc, nb = node, node.children[1]
            elif nb is not None:
                nb = nb.kids[0]
        return triples

    def _move_batch(self, node: Node, anc: Node, nb: Node, k: int) -> None:
        """Figure 2: rotate the ancestor's separator and the neighbour's first ``k - 1``
        entries (and first ``k`` children) into ``node``; the neighbour's ``k``-th entry
        becomes the separator."""
        node.times += [anc.times[0], *nb.times[: k - 1]]
        node.values += [anc.values[0], *nb.values[: k - 1]]
        anc.times[0], anc.values[0] = nb.times[k - 1], nb.values[k - 1]
        del nb.times[:k], nb.values[:k]
        if node.children is not None:
            moved = nb.kids[:k]
            del nb.kids[:k]
            node.children += moved
            node.adopt(moved)
        self._repair(node)
        self._repair(nb)

    def _merge_into_neighbour(self, node: Node, anc: Node, nb: Node) -> None:
        """Figure 3: what is left of ``node``, the separator and the neighbour become one node;
        the empty chain from ``node`` up to the ancestor disappears with it."""
        nb.times[0:0] = [*node.times, anc.times[0]]
        nb.values[0:0] = [*node.values, anc.values[0]]
        if node.children is not None:
            assert nb.children is not None  # a neighbour is on the node's level
            nb.children[0:0] = node.children
            nb.adopt(node.children)
        assert anc.children is not None  # an ancestor is an inner node
        del anc.times[0], anc.values[0], anc.children[0]
        self._repair(nb)
        n = nb.parent
        while n is not anc:  # the neighbour's chain up to the ancestor changed too
            assert n is not None  # the ancestor is above the neighbour
            self._repair(n)
            n = n.parent

    def _mark_left_spine(self, start: Node) -> None:
        """Spine flags and the left finger along the leftmost path below ``start``."""
        node = start
        while node.children is not None:
            node = node.children[0]
            node.left_spine = True
        self.left_finger = node
        if self.root.children is None:
            self.right_finger = self.root

    # -- bulk insertion -------------------------------------------------------------------

    def _bulk_insert(self, pairs: list[tuple[Any, Any]]) -> None:
        combine = self.agg.combine
        targets: dict[int, tuple[Node, list[Treelet]]] = {}  # this level's, in time order
        dirty: dict[int, dict[int, Node]] = {}  # level -> nodes to recompute

        # Step 1: insertion-site search
        node, level = self._first_site(pairs[0][0])
        for t, v in pairs:
            node, level = self._climb_to(node, level, t)
            node, level, i, found = self._descend_level(node, level, t)
            if found:
                node.values[i] = combine(node.values[i], v)  # old (x) new
                dirty.setdefault(level, {})[id(node)] = node
            else:
                targets.setdefault(id(node), (node, []))[1].append((t, v, None))

        # Step 2: pass up, level by level
        top_left: Node | None = None
        top_right: Node | None = None
        root_touched = False
        hitleft = hitright = False
        level = 0
        while targets or any(lv >= level for lv in dirty):
            next_targets: dict[int, tuple[Node, list[Treelet]]] = {}
            todo = list(targets.values()) + [
                (n, []) for key, n in dirty.pop(level, {}).items() if key not in targets
            ]
            for node, treelets in todo:
                was_left, was_right = node.left_spine, node.right_spine
                if treelets:
                    self._interleave(node, treelets)
                if node.arity > self.max_arity:
                    if node.parent is None:
                        self._height_increase()
                        hitleft = hitright = True
                    pieces, promoted = self._split(node)
                    parent = node.parent
                    assert parent is not None  # the tree grew a root above it first
                    for p in pieces:
                        p.parent = parent
                        self._repair(p)
                    up = [(t, v, piece) for (t, v), piece in zip(promoted, pieces[1:])]
                    next_targets.setdefault(id(parent), (parent, []))[1].extend(up)
                else:
                    self._repair(node)
                    parent = node.parent
                    if parent is not None and self._kind(node) == UP:
                        dirty.setdefault(level + 1, {})[id(parent)] = parent
                if node.parent is None:
                    root_touched = True
                if was_left:
                    top_left, hitleft = node, True
                if was_right:
                    top_right, hitright = node, True
            targets = next_targets
            level += 1

        # Step 3: pass down the spines that changed
        if root_touched:
            top_left = top_right = self.root
        if hitleft and top_left is not None:
            self._pass_down(top_left, 0)
        if hitright and top_right is not None:
            self._pass_down(top_right, -1)

    def _first_site(self, t: Any) -> tuple[Node, int]:
        """Where the first search starts, and its level above the leaves (leaves are 0): the
        root for the classic tree, else the lowest spine node over ``t`` (finger search)."""
        if not self.fingers:
            node, height = self.root, 0
            while node.children is not None:
                node, height = node.children[0], height + 1
            return self.root, height
        left, right, level = self.left_finger, self.right_finger, 0
        while left.parent is not None:
            if t < left.parent.times[0]:
                return left, level
            if right.up.times[-1] < t:
                return right, level
            left, right, level = left.up, right.up, level + 1
        return self.root, level

    @staticmethod
    def _climb_to(node: Node, level: int, t: Any) -> tuple[Node, int]:
        """Climb from ``node`` to the lowest ancestor whose range holds ``t``. A bound that a
        node inherits from its parent is unknown here, except on the spines (unbounded)."""
        while node.parent is not None:
            p = node.parent
            i = p.child_index(node)
            lower_ok = p.times[i - 1] < t if i > 0 else node.left_spine
            upper_ok = t < p.times[i] if i < len(p.times) else node.right_spine
            if lower_ok and upper_ok:
                break
            node, level = p, level + 1
        return node, level

    @staticmethod
    def _descend_level(node: Node, level: int, t: Any) -> tuple[Node, int, int, bool]:
        while True:
            i = bisect.bisect_left(node.times, t)
            if i < len(node.times) and node.times[i] == t:
                return node, level, i, True
            if node.children is None:
                return node, level, i, False
            node, level = node.children[i], level - 1

    @staticmethod
    def _interleave(node: Node, treelets: list[Treelet]) -> None:
        """Merge the node's entries (and children) with time-ordered treelets (Figure 6)."""
        times, values, kids = node.times, node.values, node.children or []
        nt: list[Any] = []
        nv: list[Any] = []
        nk = None if node.children is None else [kids[0]]
        i = 0
        for t, v, child in treelets:
            while i < len(times) and times[i] < t:
                nt.append(times[i])
                nv.append(values[i])
                if nk is not None:
                    nk.append(kids[i + 1])
                i += 1
            nt.append(t)
            nv.append(v)
            if nk is not None:
                assert child is not None  # an inner node's treelets carry subtrees
                nk.append(child)
                child.parent = node
        nt += times[i:]
        nv += values[i:]
        if nk is not None:
            nk += kids[i + 1 :]
        node.times, node.values, node.children = nt, nv, nk

    def _pass_down(self, node: Node, side: int) -> None:
        self._repair(node)
        while node.children is not None:
            node = node.children[side]
            self._repair(node)
