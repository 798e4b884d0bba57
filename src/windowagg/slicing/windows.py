"""Window types and the interface for users' own (Scotty paper, Section 5.4.2 and Section 4).

Two families, after the paper's window-type characteristic (Section 4.4):

* **Context-free** windows (:class:`ContextFreeWindow`) know all their edges up front:
  ``next_edge(t)`` (the paper's ``getNextEdge``) drives on-the-fly slicing,
  ``floor_edge(t)`` places out-of-order tuples that fall where no slice exists yet, and
  ``windows_overlapping(lo, hi)`` replaces the paper's ``triggerWin``: the Window Manager asks
  only about stretches of time that hold tuples, so a silent gap of a year costs nothing.
  :class:`Tumbling`, :class:`Sliding` and :class:`FixedBand` are written on it.
* **Context-aware** windows (:class:`ContextAwareWindow`) derive their edges from the data: the
  operator tells the window of every event through ``notify(context, t, x)``, and the window
  adds, moves or removes edges on the :class:`EdgeContext`. Its windows are the stretches
  between consecutive edges. :class:`Punctuation` is written on it. :class:`Session` is
  context-aware too, but the operator handles it with the paper's dedicated session cases
  (Section 6.2, Algorithms 4 to 6), which never need the tuples.

Time windows are half-open ``[start, end)``. Count windows (``measure="count"``) count positions
in event-time order. Window objects are values: equal, hashable and picklable when their
parameters are.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

INF = math.inf


def _positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    if math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def _measure(measure: str) -> str:
    if measure not in ("time", "count"):
        raise ValueError(f"measure must be 'time' or 'count', got {measure!r}")
    return measure


class Window:
    """Base of every window type."""

    measure: str = "time"

    @property
    def context_aware(self) -> bool:
        return False


class ContextFreeWindow(Window):
    """A window type whose edges are known in advance (subclass and implement three methods).

    ``next_edge(t)``: the smallest edge (start or end of any window) ``> t``, ``inf`` if none.
    ``floor_edge(t)``: the largest edge ``<= t``, ``-inf`` if none.
    ``windows_overlapping(lo, hi)``: every window ``(start, end)`` with ``start <= hi`` and
    ``end > lo``, in order of ``end``.
    ``length``: an upper bound on ``end - start`` (state older than it is released).
    """

    length: float = INF

    def next_edge(self, t: float) -> float:
        raise NotImplementedError

    def floor_edge(self, t: float) -> float:
        raise NotImplementedError

    def windows_overlapping(self, lo: float, hi: float) -> Iterator[tuple[float, float]]:
        raise NotImplementedError


@dataclass(frozen=True)
class Sliding(ContextFreeWindow):
    """Windows ``[k * slide, k * slide + size)`` for every integer ``k``; with
    ``measure="count"``, positions in event-time order instead of times."""

    size: float
    slide: float
    measure: str = "time"

    def __post_init__(self) -> None:
        _positive("size", self.size)
        _positive("slide", self.slide)
        _measure(self.measure)
        if self.measure == "count" and not (
            float(self.size).is_integer() and float(self.slide).is_integer()
        ):
            raise ValueError(f"count windows need whole sizes, got {self.size}/{self.slide}")

    @property
    def length(self) -> float:  # type: ignore[override]  # the base's field, derived here
        return self.size

    # edges: starts k * slide, ends k * slide + size (two tumbling grids, Section 7.1.2)
    def next_edge(self, t: float) -> float:
        s, z = self.slide, self.size
        start = (math.floor(t / s) + 1) * s
        end = (math.floor((t - z) / s) + 1) * s + z
        if end <= t:  # rounding of t / s
            end += s
        return min(start, end)

    def floor_edge(self, t: float) -> float:
        s, z = self.slide, self.size
        start = math.floor(t / s) * s
        if start > t:
            start -= s
        end = math.floor((t - z) / s) * s + z
        if end > t:
            end -= s
        return max(start, end)

    def windows_overlapping(self, lo: float, hi: float) -> Iterator[tuple[float, float]]:
        s, z = self.slide, self.size
        k = math.floor((lo - z) / s) + 1  # first k with k * s + z > lo
        while k * s + z <= lo:
            k += 1
        while (k - 1) * s + z > lo:
            k -= 1
        while k * s <= hi:
            yield k * s, k * s + z
            k += 1

    def spec(self) -> str:
        return _spec("sliding", self.measure, self.size, self.slide)


class Tumbling(Sliding):
    """Windows ``[k * size, (k + 1) * size)``: a sliding window whose slide is its size."""

    def __init__(self, size: float, measure: str = "time") -> None:
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "slide", size)
        object.__setattr__(self, "measure", measure)
        self.__post_init__()

    def __repr__(self) -> str:
        return f"Tumbling(size={self.size!r}, measure={self.measure!r})"

    def __reduce__(self):
        return (Tumbling, (self.size, self.measure))

    def spec(self) -> str:
        return _spec("tumbling", self.measure, self.size)


def _spec(kind: str, measure: str, *numbers: float) -> str:
    prefix = "count-" if measure == "count" else ""
    text = "/".join(str(int(n)) if float(n).is_integer() else str(n) for n in numbers)
    return f"{prefix}{kind}:{text}"


@dataclass(frozen=True)
class FixedBand(ContextFreeWindow):
    """One window ``[start, start + length)``: the simplest context-free window, an example of
    the interface."""

    start: float
    length: float

    def __post_init__(self) -> None:
        if isinstance(self.start, bool) or not isinstance(self.start, int | float):
            raise ValueError(f"start must be a number, got {self.start!r}")
        _positive("length", self.length)

    def next_edge(self, t: float) -> float:
        for e in (self.start, self.start + self.length):
            if e > t:
                return e
        return INF

    def floor_edge(self, t: float) -> float:
        for e in (self.start + self.length, self.start):
            if e <= t:
                return e
        return -INF

    def windows_overlapping(self, lo: float, hi: float) -> Iterator[tuple[float, float]]:
        if self.start <= hi and self.start + self.length > lo:
            yield self.start, self.start + self.length

    def spec(self) -> str:
        return f"band:{self.start}+{self.length}"


@dataclass(frozen=True)
class Session(Window):
    """Sessions ``[first_t, last_t + gap)``: events whose times differ by at most ``gap`` (in
    time order) share a session."""

    gap: float

    def __post_init__(self) -> None:
        _positive("gap", self.gap)

    @property
    def context_aware(self) -> bool:
        return True

    def spec(self) -> str:
        return _spec("session", "time", self.gap)


class EdgeContext:
    """What a context-aware window sees and changes: its sorted window edges."""

    def __init__(self) -> None:
        self.edges: list[float] = []
        self.added: list[float] = []
        self.removed: list[float] = []
        self.low = INF  # the earliest edge changed since the last watermark

    def add_edge(self, t: float) -> None:
        """A window edge at ``t`` (a new window starts there)."""
        i = bisect.bisect_left(self.edges, t)
        if i == len(self.edges) or self.edges[i] != t:
            self.edges.insert(i, t)
            self.added.append(t)
            self.low = min(self.low, t)

    def remove_edge(self, t: float) -> None:
        """Remove the edge at ``t``: the windows on both sides of it become one."""
        i = bisect.bisect_left(self.edges, t)
        if i < len(self.edges) and self.edges[i] == t:
            del self.edges[i]
            self.removed.append(t)
            self.low = min(self.low, t)

    def move_edge(self, old: float, new: float) -> None:
        self.remove_edge(old)
        self.add_edge(new)


class ContextAwareWindow(Window):
    """A window type whose edges depend on the data (subclass and implement ``notify``).

    ``notify(context, t, x)`` is called for every event the operator incorporates, in arrival
    order (out-of-order events included); it may call ``context.add_edge``,
    ``context.move_edge`` and ``context.remove_edge``. The windows are ``[e_i, e_(i+1))``
    between consecutive edges; the last one stays open. Changing edges may split slices, so
    the operator keeps the tuples when such a window is present (Scotty paper, Figure 4).
    """

    @property
    def context_aware(self) -> bool:
        return True

    def notify(self, context: EdgeContext, t: float, x: Any) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Punctuation(ContextAwareWindow):
    """Punctuation-delimited windows: an event whose value equals ``marker`` starts a new
    window at its time (and belongs to it). A late punctuation splits the window it lands in."""

    marker: Any

    def notify(self, context: EdgeContext, t: float, x: Any) -> None:
        if x == self.marker:
            context.add_edge(t)

    def spec(self) -> str:
        return f"punctuation:{self.marker!r}"
