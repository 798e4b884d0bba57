"""Range queries for window sharing (FiBA paper, Section 4, Figure 10).

``query(t_from, t_to)`` searches both ends, finds their least common ancestor, and recurses from
there. A recursive call receives ``None`` for a bound when the neighbouring separator in the
parent already lies inside the range, meaning "everything on that side": a call with both
bounds ``None`` on a node that stores its up-aggregate returns it without recursing, so the
recursion follows at most two chains, one towards each end of the range. Nodes that lack an
up-aggregate (spines, root) are on those chains.
Time (Theorem 7): O(log d_from + log d_to + log n_sub).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from .node import UP, Node

if TYPE_CHECKING:  # a mixin of the B-tree: the type checker sees the tree's own members
    from .tree import BTreeAggregator as _Tree
else:
    _Tree = object


class RangeQuery(_Tree):
    root: Node

    def _query(self, t_from: Any, t_to: Any) -> Any:
        if t_from is None:
            top = self._lowest_containing(self.left_finger, t_to)
        else:
            node_from = self._search(t_from)[0]
            top = self.root if t_to is None else self._lowest_containing(node_from, t_to)
        return self._query_rec(top, t_from, t_to)

    def _lowest_containing(self, node: Node, t_to: Any) -> Node:
        """The lowest ancestor of ``node`` (which holds or would hold ``t_from``) whose
        subtree range also holds ``t_to``: the least common ancestor of the two ends."""
        if t_to is None:
            return self.root
        cand = node
        while node.parent is not None and not node.right_spine:
            parent = node.parent
            i = parent.child_index(node)
            if i < len(parent.times):
                if t_to < parent.times[i]:
                    return cand
                cand = parent
            node = parent
        return cand

    def _query_rec(self, node: Node, lo: Any, hi: Any) -> Any:
        """Product of the entries of ``node``'s subtree within ``[lo, hi]``; a ``None`` bound
        means the subtree lies entirely inside the range on that side."""
        if lo is None and hi is None and self._kind(node) == UP:
            return node.agg
        combine = self.agg.combine
        times, values, kids = node.times, node.values, node.children
        first = 0 if lo is None else bisect.bisect_left(times, lo)
        last = len(times) if hi is None else bisect.bisect_right(times, hi)
        parts = []
        # children first..last and entries first..last-1 can meet the range
        for k in range(first, last + 1):
            if kids is not None:
                child_lo = lo if k == first else None  # separator k-1 lies inside the range
                child_hi = hi if k == last else None
                if k == first and lo is not None and k > 0 and times[k - 1] >= lo:
                    child_lo = None
                parts.append(self._query_rec(kids[k], child_lo, child_hi))
            if k < last:
                parts.append(values[k])
        acc = None
        for p in parts:
            acc = p if acc is None else combine(acc, p)
        return self.agg.identity if acc is None else acc
