"""Out-of-order sliding-window aggregators (docs/guides/algorithms.md).

``windowagg.ooo(name, agg, **options)`` builds ``fiba`` (finger B-tree), ``bclassic`` (classic
augmented B-tree) or ``recalc`` (sorted baseline) by name.
"""

from __future__ import annotations

from typing import Any

from ..aggregations import AggLike, resolve
from ..algorithm import Algorithm, registry
from .base import OooAggregator
from .bclassic import ClassicBTree
from .compiled_tree import CompiledTree
from .fiba import FiBA
from .recalc import SortedRecalc
from .timewindow import TimeWindow

__all__ = [
    "ALGORITHMS",
    "ClassicBTree",
    "FiBA",
    "OooAggregator",
    "SortedRecalc",
    "TimeWindow",
    "ooo",
]

#: algorithm name -> its record (windowagg.algorithm.Algorithm); calling one builds the reference
ALGORITHMS: dict[str, Algorithm] = registry(
    Algorithm(
        "fiba",
        "ooo",
        FiBA,
        "FiBA paper §3-4; bulk paper §4",
        shares_windows=True,
        options=frozenset({"min_arity"}),
    ),
    Algorithm(
        "bclassic",
        "ooo",
        ClassicBTree,
        "FiBA paper §3 (classic augmented B-tree)",
        shares_windows=True,
        options=frozenset({"min_arity"}),
    ),
    Algorithm(
        "recalc", "ooo", SortedRecalc, "sorted baseline", shares_windows=True, compiled=False
    ),
)
BACKENDS = ("auto", "python", "compiled")


def ooo(algorithm: str, agg: AggLike, *, backend: str = "auto", **options: Any) -> OooAggregator:
    """Build the out-of-order sliding-window aggregator called ``algorithm`` over ``agg``.

    Parameters
    ----------
    algorithm : str
        ``fiba``, ``bclassic`` or ``recalc``.
    agg : str or aggregation
        A built-in aggregation name or any object with ``identity/lift/combine/lower``.
    backend : {"auto", "python", "compiled"}
        ``auto`` uses compiled storage (:class:`CompiledTree`) for fiba and bclassic over the
        aggregations whose record names a kernel (sum, count, mean, stddev, geomean, min, max,
        argmin, argmax, mincount, maxcount, first, last) and the Python reference otherwise;
        a time or value compiled storage cannot hold exactly moves the window to the
        reference, so ``auto`` answers what ``python`` answers. ``python`` forces the
        reference; ``compiled`` requires compiled storage and raises for such a time or value.
        Compiled storage holds times as float64 (numbers it holds exactly, and datetimes) and
        adds ``insert_many``, ``evict_many`` and ``query_many``; the reference takes any
        totally ordered times.
    **options
        ``min_arity`` (fiba, bclassic): any integer >= 2, default 4; MAX_ARITY = 2 MIN_ARITY.

    Raises
    ------
    ValueError
        Unknown algorithm or backend, a bad ``min_arity``, or ``backend="compiled"`` for recalc
        or an aggregation without a kernel.
    TypeError
        An option the algorithm does not take.

    Complexity
    ----------
    O(1).
    """
    try:
        record = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        valid = ", ".join(ALGORITHMS)
        raise ValueError(
            f"unknown out-of-order algorithm {algorithm!r}; valid names: {valid}"
        ) from None
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    unknown = set(options) - record.options
    if unknown:
        raise TypeError(f"{algorithm} takes no option(s) {', '.join(sorted(unknown))}")
    reference = record(resolve(agg), **options)  # validates the options, whatever the backend
    if backend == "python":
        return reference
    if not record.runs_compiled(reference.agg):
        if backend == "compiled":
            raise ValueError(
                "backend='compiled' serves fiba and bclassic over the built-in numeric "
                f"aggregations; {algorithm} over {reference.agg!r} runs on backend='python'"
            )
        return reference

    return CompiledTree(algorithm, reference.agg, reference.min_arity, fallback=backend == "auto")
