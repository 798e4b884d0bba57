"""B-tree nodes and their node-local operations (FiBA paper, Sections 3.1 and 3.3; bulk paper,
Section 3.2 and Figures 2-6).

A node of arity ``a`` holds ``a - 1`` timed entries (``times``, ``values``: partial aggregates)
and, unless it is a leaf, ``a`` children. Each node stores one partial aggregate ``agg`` whose
kind depends on its position (FiBA paper, Figure 2; bulk paper, Section 3.2):

* ``UP``: the whole subtree, ``c0 v0 c1 ... v_{a-2} c_{a-1}`` (non-spine nodes; every node of
  the classic augmented B-tree);
* ``INNER``: ``v0 c1 v1 ... c_{a-2} v_{a-2}``, without the outer children (FiBA's root);
* ``LEFT``: ``v0 c1 ... v_{a-2} c_{a-1}`` then the parent's left aggregate unless the parent is
  the root (non-root nodes on the left spine);
* ``RIGHT``: the parent's right aggregate unless the parent is the root, then
  ``c0 v0 c1 ... v_{a-2}`` (non-root nodes on the right spine).

``count`` follows the same scheme for the number of entries, so the window's size, and how many
entries a bulk eviction removed, are known without walking evicted subtrees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

UP, INNER, LEFT, RIGHT = "up", "inner", "left", "right"


class Node:
    __slots__ = (
        "agg",
        "children",
        "count",
        "left_spine",
        "parent",
        "right_spine",
        "times",
        "values",
    )

    def __init__(
        self,
        times: list[Any],
        values: list[Any],
        children: list[Node] | None = None,
        parent: Node | None = None,
    ) -> None:
        self.times = times
        self.values = values
        self.children = children
        self.parent = parent
        self.agg: Any = None  # the partial aggregate of the subtree
        self.count = 0
        self.left_spine = False
        self.right_spine = False
        if children is not None:
            for c in children:
                c.parent = self

    @property
    def leaf(self) -> bool:
        return self.children is None

    @property
    def kids(self) -> list[Node]:
        """The children of an inner node (asking a leaf is a bug)."""
        assert self.children is not None, "a leaf has no children"
        return self.children

    @property
    def up(self) -> Node:
        """The parent of a node below the root (asking the root is a bug)."""
        assert self.parent is not None, "the root has no parent"
        return self.parent

    @property
    def arity(self) -> int:
        return len(self.times) + 1

    def child_index(self, child: Node) -> int:
        for i, c in enumerate(self.kids):
            if c is child:
                return i
        raise ValueError("not a child of this node")

    def adopt(self, children: list[Node]) -> None:
        for c in children:
            c.parent = self

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        kind = "leaf" if self.leaf else f"{len(self.children or ())} children"
        return f"Node({self.times}, {kind})"


def fold1(combine: Callable[[Any, Any], Any], identity: Any, parts: list[Any]) -> Any:
    """Combine ``parts`` left to right without a leading identity (exact operator counts)."""
    if not parts:
        return identity
    acc = parts[0]
    for p in parts[1:]:
        acc = combine(acc, p)
    return acc


def local_aggregate(node: Node, kind: str, combine: Callable, identity: Any) -> tuple[Any, int]:
    """The partial aggregate and entry count ``node`` stores for its ``kind``, from its own
    entries, its children's stored aggregates and (spines) its parent's."""
    vals = node.values
    kids = node.children
    parts: list[Any] = []
    count = len(vals)
    if kids is None:
        parts.extend(vals)
    else:
        first = 0 if kind in (UP, RIGHT) else 1  # LEFT and INNER leave out c0
        last = len(kids) if kind in (UP, LEFT) else len(kids) - 1  # RIGHT, INNER leave out c_a-1
        for i in range(len(kids)):
            if first <= i < last:
                parts.append(kids[i].agg)
                count += kids[i].count
            if i < len(vals):
                parts.append(vals[i])
    parent = node.parent
    if kind == LEFT and parent is not None and parent.parent is not None:
        parts.append(parent.agg)
        count += parent.count
    elif kind == RIGHT and parent is not None and parent.parent is not None:
        parts.insert(0, parent.agg)
        count += parent.count
    return fold1(combine, identity, parts), count


def piece_arities(arity: int, min_arity: int) -> list[int]:
    """How bulkSplit cuts an overflowing node (bulk paper, Claim 1): pieces of arity
    ``min_arity + 1`` and a last one between ``min_arity`` and ``2 * min_arity``."""
    mu = min_arity
    k, r = divmod(arity, mu + 1)
    if r == mu:
        return [mu + 1] * k + [mu]
    return [mu + 1] * (k - 1) + [mu + 1 + r]


def split_into(node: Node, arities: list[int]) -> tuple[list[Node], list[tuple[Any, Any]]]:
    """Cut ``node`` into nodes of the given arities (the first piece reuses ``node``); return the
    pieces and the entries between them, which move up to the parent."""
    times, values, kids = node.times, node.values, node.children
    pieces: list[Node] = []
    promoted: list[tuple[Any, Any]] = []
    start = 0  # index of the first entry of the current piece
    for k, a in enumerate(arities):
        stop = start + a - 1
        piece_kids = None if kids is None else kids[start : stop + 1]
        if k == 0:
            piece = node
            piece.times, piece.values = times[start:stop], values[start:stop]
            piece.children = piece_kids
        else:
            piece = Node(times[start:stop], values[start:stop], piece_kids)
        if piece_kids is not None:
            piece.adopt(piece_kids)
        pieces.append(piece)
        if k < len(arities) - 1:
            promoted.append((times[stop], values[stop]))
        start = stop + 1
    return pieces, promoted
