"""Out-of-order sliding-window aggregators (api.md section 3).

``windowagg.ooo(name, agg, **options)`` builds ``fiba`` (finger B-tree), ``bclassic`` (classic
augmented B-tree) or ``recalc`` (sorted baseline) by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..aggregations import resolve
from .base import OooAggregator
from .bclassic import ClassicBTree
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

ALGORITHMS: dict[str, Callable[..., OooAggregator]] = {
    "fiba": FiBA,
    "bclassic": ClassicBTree,
    "recalc": SortedRecalc,
}

_OPTIONS = {"fiba": {"min_arity"}, "bclassic": {"min_arity"}, "recalc": set()}
BACKENDS = ("auto", "python")


def ooo(algorithm: str, agg: Any, *, backend: str = "auto", **options: Any) -> OooAggregator:
    """Build the out-of-order sliding-window aggregator called ``algorithm`` over ``agg``.

    Parameters
    ----------
    algorithm : str
        ``fiba``, ``bclassic`` or ``recalc``.
    agg : str or aggregation
        A built-in aggregation name or any object with ``identity/lift/combine/lower``.
    backend : {"auto", "python"}
        As for :func:`windowagg.fifo`.
    **options
        ``min_arity`` (fiba, bclassic): any integer >= 2, default 4; MAX_ARITY = 2 MIN_ARITY.

    Raises
    ------
    ValueError
        Unknown algorithm or backend, or a bad ``min_arity``.
    TypeError
        An option the algorithm does not take.

    Complexity
    ----------
    O(1).
    """
    try:
        factory = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        valid = ", ".join(ALGORITHMS)
        raise ValueError(
            f"unknown out-of-order algorithm {algorithm!r}; valid names: {valid}"
        ) from None
    if backend not in BACKENDS:
        if backend == "compiled":
            raise ValueError(
                "backend='compiled' is not available in this version; use 'auto' or 'python'"
            )
        raise ValueError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    unknown = set(options) - _OPTIONS[algorithm]
    if unknown:
        raise TypeError(f"{algorithm} takes no option(s) {', '.join(sorted(unknown))}")
    return factory(resolve(agg), **options)
