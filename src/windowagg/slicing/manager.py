"""The Window Manager (Scotty paper, Section 5.3, step 3, and Section 5.4.2 ``triggerWin``):
final aggregation from slices at each watermark, and updates for windows that late tuples
changed after they were reported.

* Context-free time windows: every window with ``end`` in (previous watermark, watermark] that
  holds a tuple, found from the slices (or, when cheaper, the grid of a sliding window), so
  silent gaps cost nothing; windows are half-open, so none is reported before the watermark
  passes its end, and a window ending exactly at the first watermark is not lost (a fault of
  Scotty's implementation). A late tuple marks the reported windows that contain it.
* Dynamic windows (sessions, context-aware windows): windows are read off the slices (or the
  edges); one that overlaps an earlier report under other bounds replaces it (``update``).
* Count windows: positions in event-time order over the kept tuples; reported once complete and
  once the watermark has passed the time of its last tuple; a late tuple marks every reported
  window from its position on.
"""

from __future__ import annotations

import bisect
from typing import Any, NamedTuple

from ..aggregations import fold, lift
from .clock import Instant, Time
from .windows import INF, Session, Sliding, Window


class WindowResult(NamedTuple):
    """One reported window: the window object, its bounds, its value, and whether it revises
    an earlier report."""

    window: Window
    start: Instant
    end: Instant
    value: Any  # what the aggregation lowers to
    update: bool = False


class DynamicReports:
    """The reports of one session or context-aware window: sorted, non-overlapping bounds."""

    def __init__(self) -> None:
        self.bounds: list[tuple[Time, Time]] = []

    def classify(self, a: Time, b: Time, changed: bool) -> bool | None:
        """None: reported before and unchanged; else the update flag (and record it)."""
        bounds = self.bounds
        i = bisect.bisect_left(bounds, (a, -INF))
        if i < len(bounds) and bounds[i] == (a, b):
            return True if changed else None
        lo = bisect.bisect_left(bounds, (a, -INF))
        while lo > 0 and bounds[lo - 1][1] > a:
            lo -= 1
        hi = lo
        while hi < len(bounds) and bounds[hi][0] < b:
            hi += 1
        update = hi > lo
        bounds[lo:hi] = [(a, b)]
        return update

    def prune(self, h: Time) -> None:
        """Forget reports that end at or before h (their tuples are released: final)."""
        k = 0
        while k < len(self.bounds) and self.bounds[k][1] <= h:
            k += 1
        del self.bounds[:k]


def _any_in(sorted_times: list[Time], a: Time, b: Time) -> bool:
    i = bisect.bisect_left(sorted_times, a)
    return i < len(sorted_times) and sorted_times[i] < b


class WindowManager:
    def __init__(self, op: Any) -> None:
        self.op = op
        self.reports: dict[Window, DynamicReports] = {}
        self.next_count: dict[Window, int] = {}

    def add_window(self, w: Window) -> None:
        if w.measure == "count":
            self.next_count[w] = 0
        elif w.context_aware:
            self.reports[w] = DynamicReports()

    # -- the three kinds ----------------------------------------------------------------------

    def _result(self, w: Window, a: Time, b: Time, update: bool) -> WindowResult:
        agg = self.op.agg
        return WindowResult(w, a, b, agg.lower(self.op.slices.aggregate(a, b)), update)

    def context_free(self, w: Any, prev: Time, wm: Time, late: list) -> list[WindowResult]:
        sm = self.op.slices
        out = []
        seen = set()
        for t in late:  # windows that ended before the previous watermark and hold a late
            for a, b in w.windows_overlapping(t, t):  # tuple: updates, or new if they were
                if b <= prev and (a, b) not in seen:  # empty until now
                    seen.add((a, b))
                    i, j = sm.range(a, b)
                    held = sum(s.n for s in sm.slices[i:j])
                    fresh = bisect.bisect_left(late, b) - bisect.bisect_left(late, a)
                    out.append(self._result(w, a, b, held > fresh))
        lo = prev - w.length
        i, j = sm.range(lo, wm)
        if i == j:
            return out
        found: dict[Any, Any] = {}
        if isinstance(w, Sliding) and (wm - max(prev, sm.slices[i].t_min)) / w.slide < j - i:
            first = max(prev, sm.slices[i].t_min)  # the grid is shorter than the slice list
            for a, b in w.windows_overlapping(first, wm):
                if prev < b <= wm:
                    k, m = sm.range(a, b)
                    if k < m:
                        found[(b, a)] = None
        else:
            for s in sm.slices[i:j]:
                for a, b in w.windows_overlapping(s.t_min, s.t_max):
                    if prev < b <= wm:
                        found[(b, a)] = None
        for b, a in sorted(found):
            out.append(self._result(w, a, b, False))
        return out

    def dynamic(
        self, w: Any, windows: list, prev: Time, wm: Time, late_sorted: list
    ) -> list[WindowResult]:
        reps = self.reports[w]
        out = []
        for a, b in windows:
            changed = _any_in(late_sorted, a, b)
            if b > wm:  # not yet complete
                continue
            update = reps.classify(a, b, changed)
            if update is not None:
                out.append(self._result(w, a, b, update))
        return out

    def sessions(self, w: Session, prev: Time, late_sorted: list) -> list[tuple[Time, Time]]:
        """Sessions of gap w.gap that may be unreported or changed: from the session holding
        the earliest late tuple (or ending after the previous watermark) on."""
        sm = self.op.slices
        slices, gap = sm.slices, w.gap
        if not slices:
            return []
        anchor = prev - gap
        if late_sorted:
            anchor = min(anchor, late_sorted[0])
        k = max(0, bisect.bisect_right(sm.starts, anchor) - 1)
        first = bisect.bisect_left(slices, self.op._sessions_from, key=lambda s: s.t_min)
        while k > first and slices[k].t_min - slices[k - 1].t_max <= gap:
            k -= 1
        k = max(k, first)
        if k >= len(slices):
            return []
        out = []
        a, last = slices[k].t_min, slices[k].t_max
        for s in slices[k + 1 :]:
            if s.t_min - last > gap:
                out.append((a, last + gap))
                a = s.t_min
            last = s.t_max
        out.append((a, last + gap))
        return out

    def edge_windows(self, ctx: Any, lo: Time) -> list[tuple[Time, Time]]:
        """Windows [e_i, e_(i+1)) of a context-aware window ending after lo and holding tuples."""
        edges = ctx.edges
        sm = self.op.slices
        i = max(0, bisect.bisect_left(edges, lo) - 1)
        out = []
        for a, b in zip(edges[i:], edges[i + 1 :]):
            k, m = sm.range(a, b)
            if k < m and b >= lo:
                out.append((a, b))
        return out

    def count(self, w: Sliding, wm: Time, late_pos: int | None) -> list[WindowResult]:
        op = self.op
        buf, base = op.tuples, op.base
        agg = op.agg
        size, slide = int(w.size), int(w.slide)

        def result(k: int, update: bool) -> WindowResult:
            a = k * slide
            part = fold(agg, (lift(agg, x) for _t, _s, x in buf[a - base : a + size - base]))
            return WindowResult(w, a, a + size, agg.lower(part), update)

        out: list[WindowResult] = []
        nk = self.next_count[w]
        if late_pos is not None:  # reported windows that end after the late tuple's position
            k = max(0, (late_pos - size) // slide + 1)
            out.extend(result(q, True) for q in range(k, nk))
        total = base + len(buf)
        while nk * slide + size <= total and buf[nk * slide + size - 1 - base][0] < wm:
            out.append(result(nk, False))
            nk += 1
        self.next_count[w] = nk
        return out
