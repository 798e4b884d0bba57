"""The Slice Manager (Scotty paper, Section 8, Algorithms 3 to 6): slices, and the tuples in
them when the workload needs them.

Slices partition event time. A tuple at ``t`` belongs to the slice that starts at its *key*
``max(floor(t), session_start(t))``: ``floor`` is the last edge of a context-free or
context-aware window at or before ``t`` (a fixed separator, Section 7.1.3) and
``session_start`` is the first tuple of t's session under the smallest gap (a flexible
separator; both at once: a combined one). Sessions of larger gaps are unions of these slices
(Section 6.1, observation 5), read off the slices' first and last times.

Out-of-order tuples follow the session cases of Section 6.2 (Figure 9), which never split a
slice: a tuple inside a session or at its end updates one slice (Case 1.1, 1.2); one before a
session's first tuple moves that session's flexible edge back (Case 1.3, Algorithm 6); one that
closes the gap between two sessions fuses their boundary slices (Case 2, Algorithm 5); one far
from both forms a new slice in the gap (Case 3). All of them reduce to: place the tuple by its
key, then *rekey* the slice after it. Moving a session start never touches a fixed edge, so
tumbling and sliding windows keep their boundaries (a fault of Scotty's implementation).

Tuples are kept only where Figure 4 says they are needed: a non-commutative aggregation
(an out-of-order tuple in the middle of a slice means recomputing it in order) or a
context-aware window other than sessions (a new edge inside a slice splits it).
"""

from __future__ import annotations

import bisect
from typing import Any

from ..aggregations import AggregationProtocol, fold, lift
from .clock import Time
from .slicer import StreamSlicer
from .windows import INF, EdgeContext


class Slice:
    """A slice: its start (its key), first and last tuple times, tuple count and partial
    aggregate, and its tuples ``(t, seq, x)`` in time order when they are kept."""

    __slots__ = ("n", "partial", "start", "t_max", "t_min", "tuples")

    def __init__(self, start: Time, t: Time, partial: Any, tuples: list | None) -> None:
        self.start = start
        self.t_min = self.t_max = t
        self.n = 1
        self.partial = partial
        self.tuples = tuples


class SliceManager:
    def __init__(self, agg: AggregationProtocol, store: Any, keep_tuples: bool) -> None:
        self.agg = agg
        self.store = store
        self.keep = keep_tuples
        self.commutative = bool(getattr(agg, "commutative", False))
        self.slicer = StreamSlicer()
        self.gap: float | None = None  # the smallest session gap (session fusion, 7.3.1)
        self.contexts: list[tuple[Any, EdgeContext]] = []  # context-aware windows
        self.starts: list[Time] = []
        self.slices: list[Slice] = []

    # -- keys --------------------------------------------------------------------------------

    def floor(self, t: Time) -> Time:
        """The last fixed or context-aware edge at or before t."""
        f = self.slicer.floor(t) if not self.slicer.empty else -INF
        for _w, ctx in self.contexts:
            i = bisect.bisect_right(ctx.edges, t)
            if i:
                f = max(f, ctx.edges[i - 1])
        return f

    def _key_after(self, j: int, t: Time) -> Time:
        """The key of a tuple at t whose predecessor in time is the last tuple of slice j
        (j = -1: none): the same slice, a new fixed slice, or a new session."""
        c = self.floor(t)
        if j >= 0:
            prev = self.slices[j]
            if self.gap is None or t - prev.t_max <= self.gap:  # same session (or none)
                return prev.start if c <= prev.t_max else c
        return c if self.gap is None else max(c, t)

    # -- changes -----------------------------------------------------------------------------

    def add(self, t: Time, x: Any, seq: int) -> None:
        """Incorporate one tuple (any order)."""
        lifted = lift(self.agg, x)
        if self.contexts:
            self._notify(t, x)
        starts, slices = self.starts, self.slices
        i = bisect.bisect_right(starts, t) - 1
        if i >= 0 and slices[i].t_min <= t <= slices[i].t_max:  # inside a slice: Case 1.1
            self._add_to(i, t, x, seq, lifted)
        else:
            j = i if i >= 0 and slices[i].t_max < t else i - 1  # the slice of the predecessor
            key = self._key_after(j, t)
            k = bisect.bisect_left(starts, key)
            if k < len(starts) and starts[k] == key:
                self._add_to(k, t, x, seq, lifted)
            else:
                s = Slice(key, t, lifted, [(t, seq, x)] if self.keep else None)
                starts.insert(k, key)
                slices.insert(k, s)
                self.store.put(key, None, lifted)
            i = k
        if i + 1 < len(slices):
            self._rekey(i + 1)  # Cases 1.3 and 2: the next slice may join t's session

    def _add_to(self, i: int, t: Time, x: Any, seq: int, lifted: Any) -> None:
        s = self.slices[i]
        agg = self.agg
        if s.tuples is not None:
            bisect.insort(s.tuples, (t, seq, x))
        s.n += 1
        if t >= s.t_max:  # at the young end (equal times: arrival order)
            s.t_max = t
            s.partial = agg.combine(s.partial, lifted)
            self.store.put(s.start, s.start, s.partial, lifted)
            return
        if t < s.t_min:  # at the old end: still exact for any aggregation
            s.t_min = t
            s.partial = agg.combine(lifted, s.partial)
        elif self.commutative:
            s.partial = agg.combine(s.partial, lifted)
        else:  # in the middle, order matters: recompute from the tuples
            assert s.tuples is not None  # kept whenever order matters
            s.partial = fold(agg, (lift(agg, v) for _t, _s, v in s.tuples))
        self.store.put(s.start, s.start, s.partial)

    def _rekey(self, k: int) -> None:
        """Give slice k the key of its first tuple again: merge it into slice k - 1 (a fused
        session, Algorithm 5) or move its start (an extended session, Algorithm 6)."""
        s = self.slices[k]
        key = self._key_after(k - 1, s.t_min)
        if k > 0 and key == self.starts[k - 1]:
            self._merge_next(k - 1)
        elif key != s.start:
            old = s.start
            s.start = self.starts[k] = key
            self.store.put(key, old, s.partial)

    def _merge_next(self, j: int) -> None:
        a, b = self.slices[j], self.slices[j + 1]
        a.partial = self.agg.combine(a.partial, b.partial)
        a.t_max = b.t_max
        a.n += b.n
        if a.tuples is not None and b.tuples is not None:  # both kept, or neither
            a.tuples.extend(b.tuples)
        del self.slices[j + 1], self.starts[j + 1]
        self.store.drop(b.start)
        self.store.put(a.start, a.start, a.partial)

    def _notify(self, t: Time, x: Any) -> None:
        """Tell the context-aware windows of a tuple; apply the edges they add or remove."""
        for w, ctx in self.contexts:
            w.notify(ctx, t, x)
            added, removed = ctx.added, ctx.removed
            ctx.added, ctx.removed = [], []
            for e in added:
                self._split_at(e)
            for e in removed:
                k = bisect.bisect_left(self.starts, e)
                if k < len(self.starts) and self.starts[k] == e:
                    self._rekey(k)

    def _split_at(self, e: Time) -> None:
        """A new edge at e: the slice holding tuples on both sides of it splits (from its
        tuples), or moves its start when all its tuples lie after e."""
        i = bisect.bisect_left(self.starts, e) - 1
        if i < 0 or self.slices[i].t_max < e:
            return
        s = self.slices[i]
        if s.t_min >= e:  # all its tuples lie after the edge: its key changes
            self._rekey(i)
            return
        assert s.tuples is not None  # a slice is split only where its tuples are kept
        cut = bisect.bisect_left(s.tuples, (e,))
        left, right = s.tuples[:cut], s.tuples[cut:]
        agg = self.agg
        s.tuples, s.n, s.t_max = left, len(left), left[-1][0]
        s.partial = fold(agg, (lift(agg, v) for _t, _s, v in left))
        self.store.put(s.start, s.start, s.partial)
        r = Slice(e, right[0][0], fold(agg, (lift(agg, v) for _t, _s, v in right)), right)
        r.t_max, r.n = right[-1][0], len(right)
        self.starts.insert(i + 1, e)
        self.slices.insert(i + 1, r)
        self.store.put(e, None, r.partial)
        self._rekey(i + 1)  # its first tuple may start a session after the edge

    def release_before(self, k: int) -> None:
        """Forget slices 0..k-1 (no window can need them any more)."""
        if k <= 0:
            return
        last = self.starts[k - 1]
        del self.starts[:k], self.slices[:k]
        self.store.release(last)

    # -- reading -----------------------------------------------------------------------------

    def range(self, lo: Time, hi: Time) -> tuple[int, int]:
        """Indexes i..j-1 of the slices starting in [lo, hi)."""
        return bisect.bisect_left(self.starts, lo), bisect.bisect_left(self.starts, hi)

    def aggregate(self, lo: Time, hi: Time) -> Any:
        """The partial aggregate of the window [lo, hi)."""
        i, j = self.range(lo, hi)
        return self.store.query(self.slices, i, j)
