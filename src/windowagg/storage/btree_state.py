"""The state arrays of a compiled B-tree (FiBA and the classic augmented B-tree): the node pool
in numpy arrays, the work in :func:`windowagg.kernels.btree.btree_run` (numba, imported lazily).

Used by :class:`windowagg.ooo.compiled_tree.CompiledTree` and :func:`windowagg.sliding_aggregate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..kernels.families import FAMILIES
from ..kernels.layout import CLASSIC, LEAF, LF, MU, NEXT, OP_ROUND, RF, ROOT
from ..kernels.specialize import btree


class BTreeState:
    """The arrays of one compiled B-tree aggregator (see :mod:`windowagg.kernels.btree`)."""

    def __init__(self, family: str, min_arity: int = 4, classic: bool = False, nodes: int = 64):
        self.family = family
        self.width = FAMILIES[family].width
        self.identity = FAMILIES[family].identity_partial
        self.ma = 2 * min_arity
        self.meta = np.zeros(8, np.int64)
        self.meta[NEXT] = 1  # node 0 is the root
        self.meta[MU] = min_arity
        self.meta[CLASSIC] = 1 if classic else 0
        self.tmp = np.repeat(self.identity[:, None], 8, axis=1)
        self.work = tuple(np.zeros(128, np.int64) for _ in range(3))  # boundary, ancestors, ...
        self._allocate(nodes)
        self.fl[0] = LEAF
        self.p[0] = -1
        self.a[:, 0] = self.identity

    def _allocate(self, n: int) -> None:
        ma, w = self.ma, self.width
        self.n = n
        self.t = np.zeros((n, ma))
        self.v = np.zeros((w, n * ma))
        self.c = np.zeros((n, ma + 1), np.int32)  # node ids and counts fit 32 bits: a
        self.a = np.zeros((w, n))  # tree of 2^31 entries would need 100 GB of nodes
        self.k = np.zeros(n, np.int32)
        self.ne = np.zeros(n, np.int32)
        self.p = np.zeros(n, np.int32)
        self.fl = np.zeros(n, np.int8)
        self.free = np.zeros(n, np.int32)

    def grow(self) -> None:
        """Double the node pool, keeping every node where it is."""
        old = (self.t, self.v, self.c, self.a, self.k, self.ne, self.p, self.fl, self.free)
        n = self.n
        self._allocate(2 * n)
        new: Any  # each pool array, and its contents before the growth
        prev: Any
        for new, prev in zip(
            (self.t, self.v, self.c, self.a, self.k, self.ne, self.p, self.fl, self.free), old
        ):
            if new.ndim == 2 and new is self.v:
                new[:, : n * self.ma] = prev
            elif new.ndim == 2 and new is self.a:
                new[:, :n] = prev
            else:
                new[:n] = prev

    @property
    def arrays(self) -> tuple:
        return (
            self.t,
            self.v,
            self.c,
            self.a,
            self.k,
            self.ne,
            self.p,
            self.fl,
            self.free,
            self.meta,
            self.tmp,
            *self.work,
        )

    def bytes_per_entry(self, entries: int) -> float:
        """Memory of the nodes in use (not the pool's spare capacity) per window entry."""
        used = int(self.meta[NEXT])
        arrays = (self.t, self.v, self.c, self.a, self.k, self.ne, self.p, self.fl, self.free)
        per_node = sum(a.nbytes for a in arrays) / self.n
        return used * per_node / max(1, entries)

    def _until_done(self, call) -> None:
        """Call a driver from element 0 on, growing the pool whenever it stops for room."""
        start = 0
        while True:
            start = call(start)
            if start < 0:
                return
            self.grow()

    def run(self, code: int, ops, a, b, c, out) -> None:
        """``btree_run`` (see there for the operations) over the arrays; ``out`` has a row per
        operation."""

        run = btree(self.family).btree_run
        self._until_done(lambda start: run(*self.arrays, code, ops, a, b, c, out, start))

    def rounds(self, code: int, evict_to, times, values, out) -> None:
        """Rounds of insert, bulk evict (everything up to ``evict_to[r]``), query (the FiBA
        paper's experiments); ``out`` gets one answer per round."""
        ops = np.full(len(times), OP_ROUND, np.int8)
        self.run(code, ops, times, values, evict_to, out.reshape(-1, 1))

    def slide(self, code: int, values, args, times, sizes, out) -> None:
        """Time windows of ``sizes`` over (possibly out-of-order) ``times``: ``btree_slide``,
        which compiles only what this needs."""

        slide = btree(self.family).btree_slide
        clock = np.array([-np.inf])
        self._until_done(
            lambda start: slide(*self.arrays, code, times, values, args, sizes, out, start, clock)
        )

    def size(self) -> int:
        """Entries in the tree (the kernel's ``_size``)."""
        r, lf, rf = int(self.meta[ROOT]), int(self.meta[LF]), int(self.meta[RF])
        if self.meta[CLASSIC] == 1 or self.fl[r] & LEAF:
            return int(self.k[r])
        return int(self.k[lf] + self.k[r] + self.k[rf])
