"""A time-based sliding window over any out-of-order aggregator, written once.

``TimeWindow(aggregator, size)`` keeps the entries with ``now - size < t <= now``, where ``now``
is the largest time seen: each insert advances ``now`` and evicts what fell out with one
``bulk_evict`` (FiBA's bulk paper, Section 4: amortized O(log m) for m evicted entries). An
event already older than the window is not inserted (it could never be reported).
This is the semantics of ``windowagg.sliding_aggregate`` with ``times``
(docs/guides/local-tables.md).
"""

from __future__ import annotations

from typing import Any

from .base import OooAggregator


class TimeWindow:
    """The last ``size`` time units of an out-of-order stream."""

    def __init__(self, aggregator: OooAggregator, size: Any) -> None:
        if not size > 0:
            raise ValueError(f"size must be positive, got {size!r}")
        self.aggregator = aggregator
        self.size = size
        self.now: Any = None
        self.dropped = 0  # events that arrived already out of the window

    def insert(self, t: Any, x: Any) -> bool:
        """Add an event; return False (and count it in ``dropped``) when it is too old."""
        w = self.aggregator
        if self.now is not None and not self.now - self.size < t:
            w._check_time(t)
            self.dropped += 1
            return False
        w.insert(t, x)
        if self.now is None or self.now < t:
            self.now = t
            w.bulk_evict(t - self.size)
        return True

    def query(self) -> Any:
        return self.aggregator.query()

    def __len__(self) -> int:
        return len(self.aggregator)
