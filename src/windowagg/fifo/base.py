"""The FIFO sliding-window aggregation ADT (DABA paper, Section 2.1) shared by all algorithms.

Subclasses work on partial aggregates only: ``_push(p)`` appends a lifted value, ``_pop()``
removes the oldest, ``_aggregate()`` returns the product of the whole window and, for window
sharing, ``_aggregate_last(r)`` that of the youngest ``r`` elements. This base class lifts,
lowers, counts and checks arguments once for all of them.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

from ..aggregations import AggLike, lift, resolve
from ..algorithm import record
from ..errors import EmptyWindowError

__all__ = ["FifoAggregator"]


def check_last(name: str, shares_windows: bool, last: Any) -> int:
    """The ``r`` of ``query(last=r)``, checked: window sharing only, an integer >= 0."""
    if not shares_windows:
        raise ValueError(
            f"{name} does not support query(last=r); window sharing needs one of "
            "recalc, flatfat, bint, flatfit, slickdeque"
        )
    if isinstance(last, bool) or not isinstance(last, numbers.Integral) or last < 0:
        raise ValueError(f"query(last=r) needs an integer r >= 0, got {last!r}")
    return int(last)


class FifoAggregator:
    """In-order (FIFO) sliding-window aggregator over any aggregation
    (docs/guides/algorithms.md)."""

    name: ClassVar[str] = "fifo"

    @property
    def shares_windows(self) -> bool:
        """Whether ``query(last=r)`` is supported (window sharing): the algorithm's record."""
        return record("fifo", self.name).shares_windows

    def __init__(self, agg: AggLike) -> None:
        self.agg = resolve(agg)
        self._n = 0

    # -- the public interface -------------------------------------------------------------

    def insert(self, x: Any) -> None:
        """Append raw input ``x`` as the youngest element."""
        p = lift(self.agg, x)
        self._push(p)
        self._n += 1

    def insert_many(self, xs: Any) -> None:
        """Append many raw inputs, oldest first (a loop here; one compiled loop in compiled
        storage)."""
        for x in xs:
            self.insert(x)

    def evict_many(self, k: int) -> None:
        """Remove the ``k`` oldest elements."""
        if k > self._n:
            raise EmptyWindowError(f"evict_many({k}) on a {self.name} window of {self._n}")
        for _ in range(k):
            self.evict()

    def evict(self) -> None:
        """Remove the oldest element; ``EmptyWindowError`` when the window is empty."""
        if self._n == 0:
            raise EmptyWindowError(f"evict() on an empty {self.name} window")
        self._pop()
        self._n -= 1

    def query(self, last: int | None = None) -> Any:
        """Lowered aggregate of the window (or of its youngest ``last`` elements)."""
        return self.agg.lower(self.query_partial(last))

    def query_partial(self, last: int | None = None) -> Any:
        """Like :meth:`query` but returns the partial aggregate (not lowered)."""
        if last is None:
            return self._aggregate()
        r = self._check_last(last)
        if r >= self._n:
            return self._aggregate()
        if r == 0:
            return self.agg.identity
        return self._aggregate_last(r)

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.agg!r}, len={self._n})"

    def check_invariants(self) -> None:
        """Assert the algorithm's invariants (tests call this after every operation)."""

    # -- for subclasses -------------------------------------------------------------------

    def _check_last(self, last: Any) -> int:
        return check_last(self.name, self.shares_windows, last)

    def _push(self, p: Any) -> None:
        raise NotImplementedError

    def _pop(self) -> None:
        raise NotImplementedError

    def _aggregate(self) -> Any:
        raise NotImplementedError

    def _aggregate_last(self, r: int) -> Any:
        """Product of the youngest ``r`` elements, ``0 < r < len(self)``."""
        raise NotImplementedError
