"""A plain-list model of the out-of-order window for the tests."""

from __future__ import annotations

from typing import Any

from tests.oracles import direct


class Model:
    """Entries ``time -> raw values in arrival order``; an insert at a present time appends."""

    def __init__(self, agg: Any) -> None:
        self.agg = agg
        self.entries: dict[Any, list[Any]] = {}

    def insert(self, t: Any, x: Any) -> None:
        self.entries.setdefault(t, []).append(x)

    def evict(self, t: Any) -> bool:
        return self.entries.pop(t, None) is not None

    def bulk_evict(self, t: Any) -> int:
        gone = [k for k in self.entries if k <= t]
        for k in gone:
            del self.entries[k]
        return len(gone)

    def query(self, lo: Any = None, hi: Any = None) -> Any:
        xs = [
            x
            for k in sorted(self.entries)
            if (lo is None or lo <= k) and (hi is None or k <= hi)
            for x in self.entries[k]
        ]
        return direct(self.agg, xs)

    def __len__(self) -> int:
        return len(self.entries)
