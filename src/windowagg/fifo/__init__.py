"""In-order (FIFO) sliding-window aggregators: one module per algorithm (docs/guides/algorithms.md).

``windowagg.fifo(name, agg, **options)`` builds any of them by name.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, resolve
from ..algorithm import Algorithm, registry
from .base import FifoAggregator
from .bint import BInt
from .compiled import CompiledFifo
from .daba import Daba
from .daba_lite import DabaLite
from .flatfat import FlatFat
from .flatfit import FlatFit
from .recalc import Recalc
from .slickdeque import SlickDequeInv, SlickDequeNonInv, slickdeque
from .soe import SubtractOnEvict
from .two_stacks import TwoStacks
from .two_stacks_lite import TwoStacksLite

__all__ = [
    "ALGORITHMS",
    "BInt",
    "Daba",
    "DabaLite",
    "FifoAggregator",
    "FlatFat",
    "FlatFit",
    "Recalc",
    "SlickDequeInv",
    "SlickDequeNonInv",
    "SubtractOnEvict",
    "TwoStacks",
    "TwoStacksLite",
    "fifo",
    "serves",
]

#: algorithm name -> its record (windowagg.algorithm.Algorithm); calling one builds the reference
ALGORITHMS: dict[str, Algorithm] = registry(
    Algorithm("recalc", "fifo", Recalc, "DABA paper §8.1", shares_windows=True),
    Algorithm("soe", "fifo", SubtractOnEvict, "SlickDeque paper §2.2", needs="invertible"),
    Algorithm("two_stacks", "fifo", TwoStacks, "DABA paper §3, Thm. 3"),
    Algorithm("two_stacks_lite", "fifo", TwoStacksLite, "DABA paper §4, Thm. 7"),
    Algorithm("daba", "fifo", Daba, "DABA paper §5, Thm. 10"),
    Algorithm("daba_lite", "fifo", DabaLite, "DABA paper §6, Thm. 13"),
    Algorithm(
        "flatfat",
        "fifo",
        FlatFat,
        "Reactive Aggregator (FlatFAT)",
        shares_windows=True,
        options=frozenset({"capacity"}),
    ),
    Algorithm("bint", "fifo", BInt, "B-Int", shares_windows=True),
    Algorithm("flatfit", "fifo", FlatFit, "FlatFIT", shares_windows=True),
    Algorithm(
        "slickdeque",
        "fifo",
        slickdeque,
        "SlickDeque paper §3.2",
        needs="invertible or selective",
        shares_windows=True,
        options=frozenset({"ranges"}),
    ),
)

BACKENDS = ("auto", "python", "compiled")


def serves(algorithm: str, agg: AggLike) -> bool:
    """Whether ``algorithm`` can serve ``agg`` (its record's ``needs``: subtract-on-evict needs
    an inverse, SlickDeque an inverse or selectivity; the others serve any aggregation)."""
    return ALGORITHMS[algorithm].serves(resolve(agg))


def fifo(algorithm: str, agg: AggLike, *, backend: str = "auto", **options: Any) -> FifoAggregator:
    """Build the in-order sliding-window aggregator called ``algorithm`` over ``agg``.

    Parameters
    ----------
    algorithm : str
        One of ``recalc, soe, two_stacks, two_stacks_lite, daba, daba_lite, flatfat, bint,
        flatfit, slickdeque``.
    agg : str or aggregation
        A built-in aggregation name or any object with ``identity/lift/combine/lower``.
    backend : {"auto", "python", "compiled"}
        ``auto`` uses compiled storage for the aggregations whose record names a kernel (sum,
        count, mean, stddev, geomean, min, max, argmin, argmax, mincount, maxcount, first,
        last) and the Python reference otherwise; a value the kernels cannot hold exactly (a
        string for ``first``, a ``Decimal``, an int beyond 2^53) moves the window to the
        reference, so ``auto`` answers what ``python`` answers. ``python`` forces the
        reference; ``compiled`` requires compiled storage and raises ``ValueError`` for such a
        value. Compiled objects add ``insert_many``/``evict_many``, which stay in compiled code
        for a whole batch (single calls pay a few microseconds of dispatch).
    **options
        ``ranges=[r, ...]`` for slickdeque (the ``r`` of ``query(last=r)``), ``capacity`` for
        flatfat (initial leaves).

    Raises
    ------
    ValueError
        Unknown algorithm or backend, or an aggregation the algorithm cannot serve.
    TypeError
        An option the algorithm does not take.

    Complexity
    ----------
    O(1) to build (flatfat: O(capacity)).
    """
    try:
        record = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        valid = ", ".join(ALGORITHMS)
        raise ValueError(f"unknown FIFO algorithm {algorithm!r}; valid names: {valid}") from None
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    unknown = set(options) - record.options
    if unknown:
        raise TypeError(f"{algorithm} takes no option(s) {', '.join(sorted(unknown))}")
    reference = record(resolve(agg), **options)  # validates the pairing, whatever the backend
    if backend == "python":
        return reference
    if not record.runs_compiled(reference.agg) or options.get("capacity"):
        if backend == "compiled":
            raise ValueError(
                f"backend='compiled' serves the built-in numeric aggregations; "
                f"{reference.agg!r} runs on backend='python'"
            )
        return reference

    return CompiledFifo(  # type: ignore[return-value]  # the same interface, compiled storage
        algorithm, reference.agg, options.get("ranges"), fallback=backend == "auto"
    )
