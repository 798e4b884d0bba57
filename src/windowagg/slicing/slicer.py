"""The Stream Slicer (Scotty paper, Section 7, Algorithms 1 and 2): where slices begin.

Every edge of a context-free window starts a slice. Tumbling and sliding windows are grids of
edges (a sliding window is two tumbling grids, Section 7.1.2); query fusion (Section 7.3.2,
Algorithm 2) drops a grid whose edges another grid already has, so the per-slice cost depends
on the distinct grids, not on the number of queries. In-order tuples cost one comparison with
the cached next edge (Algorithm 1, line 7); only crossing an edge recomputes it. Unlike the
paper's loop over every passed edge, ``floor`` jumps straight to the last edge before the tuple,
so a silent gap in event time costs O(grids), and the slice after it starts at the right edge
(a slice spanning several windows after a gap was a fault of Scotty's implementation).
"""

from __future__ import annotations

import numpy as np

from .clock import Time
from .windows import INF, ContextFreeWindow, Sliding


def fuse(grids: list[tuple[Time, Time]]) -> list[tuple[Time, Time]]:
    """Algorithm 2's query fusion over all grids at once: drop every grid whose edges another
    grid has (grid a covers b when a's period divides b's and their offsets agree modulo it)."""
    unique = sorted(set(grids))
    if len(unique) < 2:
        return unique
    p = np.array([g[0] for g in unique])
    o = np.array([g[1] for g in unique])
    divides = (p[None, :] % p[:, None]) == 0  # [a, b]: p_a divides p_b
    agree = ((o[None, :] - o[:, None]) % p[:, None]) == 0
    covers = divides & agree
    np.fill_diagonal(covers, False)
    return [g for g, covered in zip(unique, covers.any(axis=0)) if not covered]


class StreamSlicer:
    """Edges of the context-free time windows: ``floor(t)`` is the start of t's slice."""

    def __init__(self) -> None:
        self.grids: list[tuple[Time, Time]] = []  # fused (period, offset) pairs
        self.others: list[ContextFreeWindow] = []  # user windows: asked directly
        self._lo, self._hi = INF, -INF  # cached [floor, next edge) of the last lookup

    def add_windows(self, windows: list[ContextFreeWindow]) -> None:
        """The context-free windows of an operator (a sliding window is two tumbling grids:
        its starts and its ends, Section 7.1.2)."""
        grids = list(self.grids)
        for w in windows:
            if isinstance(w, Sliding):
                grids += [(w.slide, 0), (w.slide, w.size % w.slide)]
            else:
                self.others.append(w)
        self.grids = fuse(grids)
        self._lo, self._hi = INF, -INF

    @property
    def empty(self) -> bool:
        return not self.grids and not self.others

    def floor(self, t: Time) -> float:
        """The largest edge ``<= t`` (``-inf`` without context-free windows)."""
        if self._lo <= t < self._hi:  # the common case: same slice as the last tuple
            return self._lo
        lo, hi = -INF, INF
        for p, o in self.grids:
            e = (t - o) // p * p + o  # as floors() below computes it, element by element
            lo = max(lo, e)
            hi = min(hi, e + p)
        for w in self.others:
            lo = max(lo, w.floor_edge(t))
            hi = min(hi, w.next_edge(t))
        self._lo, self._hi = lo, hi
        return lo
