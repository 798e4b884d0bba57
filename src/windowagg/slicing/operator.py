"""The window operator: general stream slicing (Scotty paper, Sections 5 to 8) for many
windows of different types over one out-of-order stream (docs/concepts.md).

A tuple passes the Stream Slicer and the Slice Manager (:mod:`.slices`), which keep slices and,
only when Figure 4 of the paper asks for them, tuples; watermarks go to the Window Manager
(:mod:`.manager`), which reports the windows they complete and updates those that late tuples
changed. Window results come from an aggregate store (:mod:`.stores`): ``lazy`` folds slices,
``eager`` answers range queries from a FiBA.

State stays bounded: after each watermark ``w``, slices and tuples that no window can need any
more (older than ``w - allowed_lateness`` minus the longest window, or before the earliest
session that may still grow) are released.

Complexity: an in-order tuple costs one comparison with the next edge plus one combine; an
out-of-order one a binary search and O(1) combines (O(log slices) more with the eager store),
or a recomputation of its slice for a non-commutative aggregation; a watermark costs the
windows it reports times their query (O(slices) lazy, O(log slices) eager).
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import numbers
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..aggregations import AggLike, resolve
from ..combined import Combined
from .batch import process_batch, to_floats
from .clock import Clock, Instant, Time, seconds
from .manager import WindowManager, WindowResult
from .slices import SliceManager
from .stores import STORES
from .vector import VectorSlices, serves
from .windows import (
    INF,
    ContextAwareWindow,
    ContextFreeWindow,
    EdgeContext,
    Session,
    Sliding,
    Window,
)

__all__ = ["WindowOperator", "WindowResult"]


class WindowOperator:
    """Many windows over one out-of-order stream, sharing one set of slices.

    Parameters
    ----------
    agg : str or aggregation
        A built-in name or any aggregation object (docs/concepts.md).
    aggs : dict, optional
        Several aggregations of the stream in one pass instead of ``agg``: output name ->
        aggregation (:class:`windowagg.combined.Combined`); each result's value is then a dict
        of their results.
    allowed_lateness : number or timedelta, default 0
        Tuples with ``t < watermark - allowed_lateness`` are dropped and counted in
        ``dropped``; later ones update windows already reported.
    store : {"eager", "lazy"}
        Where window results come from (see :mod:`windowagg.slicing.stores`).

    Notes
    -----
    Event times and watermarks are numbers, or datetimes (``datetime``, ``numpy.datetime64``,
    pandas timestamps, naive or timezone-aware; see :mod:`windowagg.slicing.clock`): then
    window sizes and lateness are seconds and time windows report datetime bounds.

    Complexity
    ----------
    See the module docstring: O(1) per in-order tuple, O(log) per out-of-order one with the
    eager store, per report O(log slices) (eager) or O(slices in the window) (lazy).
    """

    def __init__(
        self,
        agg: AggLike | None = None,
        allowed_lateness: float | dt.timedelta = 0,
        store: str = "eager",
        aggs: dict | None = None,
    ) -> None:
        if (agg is None) == (aggs is None):
            raise TypeError("give agg, or aggs={name: aggregation, ...} for several")
        if aggs is not None:
            agg = Combined(aggs)
        assert agg is not None  # one of the two, checked above
        self.agg = resolve(agg)
        lateness = seconds(allowed_lateness)
        if (
            isinstance(lateness, bool)
            or not isinstance(lateness, numbers.Real)
            or not float(lateness) >= 0
        ):
            raise ValueError(f"allowed_lateness must be a number >= 0, got {lateness!r}")
        if store not in STORES:
            raise ValueError(f"unknown store {store!r}; valid: {', '.join(STORES)}")
        self.allowed_lateness = cast(Time, lateness)  # a number, checked above
        self.store = store
        self.windows: list[Window] = []
        self._known: set[Window] = set()
        self.dropped = 0
        self.wm: Time = -INF
        self._seq = 0
        self._late: list = []  # times of tuples that arrived behind the watermark
        self._late_pos: int | None = None  # smallest position a count window saw change
        self.tuples: list = []  # (t, seq, x) in time order, kept for count windows only
        self.base = 0  # tuples released before tuples[0]
        self._sessions_from: Time = -INF  # no session starts before this time
        self.slices: SliceManager | None = None
        self._vector: VectorSlices | None = None  # the fast path, when it serves (vector.py)
        self._pending: tuple[list, list] = ([], [])  # tuples process() queued for it
        self._counting = False  # count windows: keep every tuple in self.tuples
        self.manager = WindowManager(self)
        self.clock = Clock()  # numbers, or datetimes as seconds since the epoch

    # -- set-up ------------------------------------------------------------------------------

    def add_window(self, window: Window) -> WindowOperator:
        """Add a window definition (before the first tuple). Returns the operator."""
        if not isinstance(window, Window):
            raise TypeError(f"not a window: {window!r} (use Tumbling, Sliding, Session, ...)")
        if self._seq:
            raise ValueError("add every window before the first tuple")
        if window in self._known:
            return self
        self._known.add(window)
        self.windows.append(window)
        self.manager.add_window(window)
        self.slices = None  # rebuilt on the first tuple, when every window is known
        return self

    def _build(self) -> None:
        if not self.windows:
            raise ValueError("add a window first (add_window)")
        time_windows = [w for w in self.windows if w.measure == "time"]
        contexts = [w for w in time_windows if isinstance(w, ContextAwareWindow)]
        commutative = bool(getattr(self.agg, "commutative", False))
        keep = bool(contexts) or not commutative  # Scotty paper, Figure 4
        sm = SliceManager(self.agg, STORES[self.store](self.agg), keep)
        sm.slicer.add_windows([w for w in time_windows if isinstance(w, ContextFreeWindow)])
        for w in time_windows:
            if isinstance(w, Session):
                sm.gap = w.gap if sm.gap is None else min(sm.gap, w.gap)
            elif isinstance(w, ContextAwareWindow):
                sm.contexts.append((w, EdgeContext()))
        self.slices = sm if time_windows else None
        self._counting = any(w.measure == "count" for w in self.windows)
        if serves(self.agg, self.windows):  # the compiled fast path (see vector.py)
            sliding = [w for w in self.windows if isinstance(w, Sliding)]  # all of them
            self._vector = VectorSlices(self.agg, sliding, sm.slicer.grids)
            self.slices = None

    # -- tuples ------------------------------------------------------------------------------

    def process(self, t: Instant, x: Any) -> None:
        """One tuple, in arrival order (may be out of order)."""
        self._process(self.clock.encode(t), x)

    def _process(self, t: Any, x: Any) -> None:
        """One tuple whose time the clock encoded."""
        if math.isinf(t):
            raise ValueError(f"event time must be finite, got {t!r}")
        if not self._seq:
            self._build()
        if t < self.wm - self.allowed_lateness:
            self.dropped += 1
            return
        seq = self._seq = self._seq + 1
        if t < self.wm:
            self._late.append(t)
        if self._vector is not None:
            self.agg.lift(x)  # a clear error now for a value the aggregation cannot take
            self._pending[0].append(t)
            self._pending[1].append(x)
            return
        if self.slices is not None:
            self.slices.add(t, x, seq)
        if self._counting:
            item = (t, seq, x)
            buf = self.tuples
            if not buf or buf[-1] <= item:
                buf.append(item)
            else:
                p = bisect.bisect_right(buf, item)
                buf.insert(p, item)
                pos = self.base + p
                self._late_pos = pos if self._late_pos is None else min(self._late_pos, pos)

    def _drain(self) -> None:
        """Hand the tuples that ``process`` queued to the fast path, as one batch."""
        ts, xs = self._pending
        if ts:
            self._pending = ([], [])
            assert self._vector is not None  # pending tuples are the fast path's
            self._vector.add(np.array(ts), to_floats(xs))

    def process_batch(self, times: npt.ArrayLike, values: npt.ArrayLike) -> None:
        """Many tuples (arrays, arrival order): the same result as a loop of ``process``."""

        process_batch(self, times, values)

    # -- watermarks --------------------------------------------------------------------------

    def watermark(self, w: Instant) -> list[WindowResult]:
        """Report every window that ends at or before ``w`` and was not reported, and an
        update for each reported window a late tuple changed since."""
        if not (isinstance(w, float) and math.isinf(w)):  # +-inf: any stream's
            w = self.clock.encode(w, "watermark")
        if not self._seq:
            if not self.windows:
                raise ValueError("add a window first (add_window)")
            self.wm = max(self.wm, w)
            return []
        prev = self.wm
        wm = max(prev, w)
        late = sorted(self._late)
        if self._vector is not None:
            self._drain()
            out = self._vector.report(prev, wm, late)
        else:
            out = self._report(prev, wm, late)
        self.wm = wm
        self._late = []
        self._late_pos = None
        self._release()
        if self.clock.kind in ("naive", "aware"):
            dec = self.clock.decode
            out = [
                r._replace(start=dec(cast(Time, r.start)), end=dec(cast(Time, r.end)))
                if r.window.measure == "time"
                else r
                for r in out
            ]
        return out

    def next_end(self) -> Instant | None:
        """A time at or before the end of every window not yet reported (None: nothing is
        pending): when to wake up next, for a stream processor's event-time timer."""
        if self._vector is not None:
            self._drain()
            if not len(self._vector.starts):
                return None
            first = self._vector.starts[0].item()
        elif self.slices is not None and self.slices.slices:
            first = self.slices.slices[0].t_min
        elif self._counting and self.tuples:
            first = self.tuples[0][0]
        else:
            return None
        base = max(self.wm, first)
        ends = []
        for w in self.windows:
            if isinstance(w, Sliding) and w.measure == "time":
                ends.append(((base - w.size) // w.slide + 1) * w.slide + w.size)
            elif isinstance(w, Session):
                ends.append(base + w.gap if base > first else first + w.gap)
            else:  # count and user windows: as soon as the watermark moves past the data
                ends.append(math.nextafter(base, INF))
        return self.clock.decode(min(ends))

    def _report(self, prev: Time, wm: Time, late: list) -> list[WindowResult]:
        """The Window Manager's reports, window definition by window definition."""
        out: list[WindowResult] = []
        m = self.manager
        sm = self.slices
        for win in self.windows:
            if win.measure == "count":  # a count window is Sliding
                out.extend(m.count(cast(Sliding, win), wm, self._late_pos))
            elif isinstance(win, Session):
                out.extend(m.dynamic(win, m.sessions(win, prev, late), prev, wm, late))
            elif isinstance(win, ContextAwareWindow):
                assert sm is not None  # time windows keep their slices
                ctx = next(c for w2, c in sm.contexts if w2 == win)
                lo = min(prev, late[0], ctx.low) if late else min(prev, ctx.low)
                ctx.low = INF
                out.extend(m.dynamic(win, m.edge_windows(ctx, lo), prev, wm, late))
            else:
                out.extend(m.context_free(win, prev, wm, late))
        return out

    def flush(self) -> list[WindowResult]:
        """A watermark at +infinity: every remaining window."""
        return self.watermark(INF)

    # -- bounded state -----------------------------------------------------------------------

    def _release(self) -> None:
        h = self.wm - self.allowed_lateness
        if h == -INF or h == INF:
            return
        if self._vector is not None:
            self._vector.release(h)
        sm = self.slices
        if sm is not None and sm.slices:
            slices = sm.slices
            keep_t = h  # context-free windows ending after h can still change
            for w in self.windows:
                if w.measure == "time" and isinstance(w, ContextFreeWindow):
                    keep_t = min(keep_t, h - w.length)
            k = bisect.bisect_left(slices, keep_t, key=lambda s: s.t_max)
            gaps = [w.gap for w in self.windows if isinstance(w, Session)]
            if gaps:  # back to the start of the largest-gap session that may still grow
                g = max(gaps)
                j = bisect.bisect_left(slices, h - g, key=lambda s: s.t_max)
                while 0 < j < len(slices) and slices[j].t_min - slices[j - 1].t_max <= g:
                    j -= 1
                k = min(k, j)
                # sessions begin at or after this slice; slices kept before it (for other
                # windows) hold only sessions that are final and reported
                self._sessions_from = min(slices[j].t_min, h) if j < len(slices) else h
            for _w, ctx in sm.contexts:  # back to the edge of the window holding h
                i = bisect.bisect_right(ctx.edges, h)
                if i:
                    k = min(k, bisect.bisect_left(sm.starts, ctx.edges[i - 1]))
                    del ctx.edges[: i - 1]
            sm.release_before(k)
        if sm is not None:  # reports of dynamic windows whose tuples are all released
            first = sm.slices[0].t_min if sm.slices else INF
            for rep in self.manager.reports.values():
                rep.prune(first)
        if self._counting and self.tuples:
            p = self.base + bisect.bisect_left(self.tuples, (h,))  # first position that moves
            need = p
            for w, nk in self.manager.next_count.items():
                size, slide = int(cast(Sliding, w).size), int(cast(Sliding, w).slide)
                first_open = max(0, (p - size) // slide + 1)  # first window ending after p
                need = min(need, min(first_open, nk) * slide)
            drop = need - self.base
            if drop > 0:
                del self.tuples[:drop]
                self.base = need

    # -- pickling ----------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        if self._vector is not None:
            self._drain()
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self.slices is not None:
            self.slices.slicer._lo, self.slices.slicer._hi = INF, -INF
