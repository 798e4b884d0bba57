"""The out-of-order sliding-window aggregation ADT (FiBA paper, Section 2, Definition 1, with
the range query of "Query Sharing" and the bulk operations of the 2023 paper, Section 3.1).

Subclasses work on partial aggregates: ``_insert(t, p)``, ``_evict(t)``, ``_bulk_evict(t)``,
``_bulk_insert(pairs)``, ``_query(t_from, t_to)``. This class lifts, lowers and checks every
argument before anything changes, so a bad call leaves the window as it was.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from ..aggregations import AggLike, lift, resolve

__all__ = ["OooAggregator"]


class OooAggregator:
    """Out-of-order sliding-window aggregator keyed by time (docs/guides/algorithms.md)."""

    name: str = "ooo"

    def __init__(self, agg: AggLike) -> None:
        self.agg = resolve(agg)
        self._time_ref: Any = None  # the first time seen: later times must compare with it

    # -- argument checks ------------------------------------------------------------------

    def _check_time(self, t: Any) -> Any:
        if t is None:
            raise TypeError("time must not be None")
        if isinstance(t, numbers.Real) and not isinstance(t, bool) and t != t:
            raise ValueError(f"time must not be NaN, got {t!r}")
        ref = self._time_ref
        if ref is None:
            try:
                t < t  # noqa: B015  (a totally ordered value compares with itself)
            except TypeError:
                raise TypeError(f"time {t!r} ({type(t).__name__}) is not orderable") from None
            self._time_ref = t
            return t
        try:
            t < ref  # noqa: B015
            ref < t  # noqa: B015
        except TypeError:
            raise TypeError(
                f"time {t!r} ({type(t).__name__}) does not compare with the window's times "
                f"(like {ref!r}, {type(ref).__name__})"
            ) from None
        return t

    # -- the public interface -------------------------------------------------------------

    def insert(self, t: Any, x: Any) -> None:
        """Add ``x`` at time ``t``; if ``t`` is present its partial becomes ``old (x) lift(x)``."""
        t = self._check_time(t)
        self._insert(t, lift(self.agg, x))

    def evict(self, t: Any) -> bool:
        """Remove the entry at exactly ``t``; False if there is none."""
        if not len(self):
            return False
        return self._evict(self._check_time(t))

    def bulk_evict(self, t: Any) -> int:
        """Remove every entry with time ``<= t``; return how many were removed."""
        if not len(self):
            return 0
        return self._bulk_evict(self._check_time(t))

    def bulk_insert(self, items: Iterable[tuple[Any, Any]]) -> None:
        """Insert ``(t, x)`` pairs with strictly increasing ``t``: the same result as inserting
        them one by one. Raises ``ValueError`` (times not strictly increasing) or ``TypeError``
        (a time that does not compare) before changing anything."""
        pairs = []
        prev = None
        for k, item in enumerate(items):
            try:
                t, x = item
            except (TypeError, ValueError):
                raise TypeError(f"bulk_insert needs (t, x) pairs, got {item!r}") from None
            t = self._check_time(t)
            if k and not prev < t:
                raise ValueError(
                    f"bulk_insert needs strictly increasing times; {t!r} follows {prev!r} "
                    f"(item {k})"
                )
            pairs.append((t, self._bulk_value(x)))
            prev = t
        if pairs:
            self._bulk_insert(pairs)

    def query(self, t_from: Any = None, t_to: Any = None) -> Any:
        """Lowered aggregate of all entries, or of those with ``t_from <= t <= t_to`` (either
        bound may be None: unbounded), in time order."""
        return self.agg.lower(self.query_partial(t_from, t_to))

    def query_partial(self, t_from: Any = None, t_to: Any = None) -> Any:
        """Like :meth:`query` but returns the partial aggregate."""
        if t_from is None and t_to is None:
            return self._query_all()
        if not len(self):
            return self.agg.identity
        if t_from is not None:
            t_from = self._check_time(t_from)
        if t_to is not None:
            t_to = self._check_time(t_to)
        if t_from is not None and t_to is not None and t_to < t_from:
            return self.agg.identity
        return self._query(t_from, t_to)

    def oldest(self) -> Any:
        """The smallest time in the window, None when empty."""
        raise NotImplementedError

    def youngest(self) -> Any:
        """The largest time in the window, None when empty."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def items(self) -> list[tuple[Any, Any]]:
        """``(t, partial)`` pairs in time order (for tests and debugging; O(n))."""
        raise NotImplementedError

    def check_invariants(self) -> None:
        """Assert the data structure's invariants (tests call this after every operation)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.agg!r}, len={len(self)})"

    # -- for subclasses -------------------------------------------------------------------

    def _insert(self, t: Any, p: Any) -> None:
        raise NotImplementedError

    def _evict(self, t: Any) -> bool:
        raise NotImplementedError

    def _bulk_evict(self, t: Any) -> int:
        raise NotImplementedError

    def _bulk_value(self, x: Any) -> Any:
        """What ``bulk_insert`` passes on for a raw input (the partial, checked on the way)."""
        return lift(self.agg, x)

    def _bulk_insert(self, pairs: list[tuple[Any, Any]]) -> None:
        for t, p in pairs:
            self._insert(t, p)

    def _query_all(self) -> Any:
        raise NotImplementedError

    def _query(self, t_from: Any, t_to: Any) -> Any:
        raise NotImplementedError
