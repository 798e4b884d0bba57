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

from typing import Any

import numpy as np

from .windows import INF, ContextFreeWindow, Sliding


def _covers(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Every edge of grid b is an edge of grid a (grids are (period, offset))."""
    (pa, oa), (pb, ob) = a, b
    return pb % pa == 0 and (ob - oa) % pa == 0


class StreamSlicer:
    """Edges of the context-free time windows: ``floor(t)`` is the start of t's slice."""

    def __init__(self) -> None:
        self.grids: list[tuple[float, float]] = []  # fused (period, offset) pairs
        self.others: list[ContextFreeWindow] = []  # user windows: asked directly
        self._lo, self._hi = INF, -INF  # cached [floor, next edge) of the last lookup

    def add_window(self, w: ContextFreeWindow) -> None:
        if isinstance(w, Sliding):
            for grid in ((w.slide, 0), (w.slide, w.size % w.slide)):
                if any(_covers(g, grid) for g in self.grids):
                    continue  # Algorithm 2, line 13: all its edges are there already
                self.grids = [g for g in self.grids if not _covers(grid, g)] + [grid]
        else:
            self.others.append(w)
        self._lo, self._hi = INF, -INF

    @property
    def empty(self) -> bool:
        return not self.grids and not self.others

    def floor(self, t: Any) -> float:
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


def floors(slicer: StreamSlicer, times: np.ndarray) -> np.ndarray:
    """``slicer.floor`` of many times at once (grids only)."""
    out = np.full(times.shape, -INF)
    for p, o in slicer.grids:
        np.maximum(out, (times - o) // p * p + o, out=out)
    return out
