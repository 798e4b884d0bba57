"""One record per algorithm: what it needs of an aggregation, whether it shares windows, its
options, whether it has compiled storage, and its paper. ``fifo()``, ``ooo()``,
``algorithm="auto"``, warmup, the CLI, the tests and the benchmarks read these records
(:data:`windowagg.fifo.ALGORITHMS`, :data:`windowagg.ooo.ALGORITHMS`); adding an algorithm is
its module and its record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .aggregations import AggregationProtocol, facts, flags

#: what an algorithm may need of an aggregation, and the test of it
NEEDS: dict[str, Callable[[Any], bool]] = {
    "": lambda agg: True,
    "invertible": lambda agg: flags(agg)[0],
    "invertible or selective": lambda agg: flags(agg)[0] or flags(agg)[2],
}


@dataclass(frozen=True)
class Algorithm:
    """An algorithm by name (see the module docstring); calling it builds the Python reference
    (``record(agg, **options)``), which raises ValueError, saying why, for an aggregation
    it cannot serve.

    ``order``: ``"fifo"`` (in-order: insert the youngest, evict the oldest) or ``"ooo"``
    (out-of-order, keyed by time). ``needs``: a key of :data:`NEEDS`. ``shares_windows``:
    answers the youngest ``r`` elements (FIFO ``query(last=r)``) or any time range (OOO) from
    the one structure, so several window sizes share it. ``options``: the keyword options of
    its constructor. ``compiled``: it has compiled storage for the aggregations with a kernel.
    """

    name: str
    order: str
    build: Callable[..., Any]
    paper: str
    needs: str = ""
    shares_windows: bool = False
    options: frozenset[str] = frozenset()
    compiled: bool = True

    def serves(self, agg: AggregationProtocol) -> bool:
        """Whether this algorithm can serve ``agg`` (a resolved aggregation)."""
        return NEEDS[self.needs](agg)

    def runs_compiled(self, agg: AggregationProtocol) -> bool:
        """Whether ``agg`` runs on this algorithm's compiled storage."""
        return self.compiled and facts(agg).kernel is not None

    def __call__(self, agg: AggregationProtocol, **options: Any) -> Any:
        return self.build(agg, **options)


#: (order, name) -> record, filled by :func:`registry` when ``windowagg.fifo`` and
#: ``windowagg.ooo`` are imported (before any of their objects exists)
_RECORDS: dict[tuple[str, str], Algorithm] = {}


def registry(*records: Algorithm) -> dict[str, Algorithm]:
    """The records by name; each is also found by :func:`record` from its order and name."""
    _RECORDS.update(((r.order, r.name), r) for r in records)
    return {r.name: r for r in records}


def record(order: str, name: str) -> Algorithm:
    """The record of an algorithm (what an aggregator object reads of its own algorithm)."""
    return _RECORDS[order, name]
