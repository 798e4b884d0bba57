"""The one boundary between aggregations (Python values) and the compiled kernels (float64
arrays): which kernel serves an aggregation, raw inputs as arrays, kernel answers as the
Python reference returns them, and kernel partials as the reference's partials.

The kernels hold every value as a float64. A value they cannot hold exactly (a string or a
``Decimal`` for ``first``, an int beyond 2^53, a sum of ints that could pass 2^53) raises
:class:`NotHoldable`; the compiled objects (:class:`windowagg.fifo.compiled.CompiledFifo`,
:class:`windowagg.ooo.compiled_tree.CompiledTree`) then move their window to the Python
reference (``backend="auto"``) or refuse the value (``backend="compiled"``), so the default
backend always answers what the reference answers.

Layers: :mod:`windowagg.aggregations` and :mod:`windowagg.kernels` below, ``fifo``, ``ooo``
and ``arrays`` above, as siblings of each other. :mod:`.fifo_state` and :mod:`.btree_state`
hold the state arrays of the two kinds of kernel.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..aggregations import (
    ADD,
    COMOMENTS,
    MOMENTS,
    PRODUCT,
    SELECT,
    SUMF,
    WELFORD,
    XCOUNT,
    AggregationProtocol,
    Kernel,
    check_values,
    facts,
    is_missing,
    name_of,
)
from ..kernels import families as fam

__all__ = [
    "EXACT",
    "NotHoldable",
    "NotHoldableType",
    "kernel_for",
    "kernel_of",
    "python_result",
    "reference_partial",
    "to_arrays",
]

#: the largest magnitude up to which float64 holds every integer
EXACT = 2**53


class NotHoldable(ValueError):
    """A value the compiled kernels cannot hold exactly (float64)."""


class NotHoldableType(NotHoldable, TypeError):
    """A value of a type the compiled kernels cannot hold at all."""


def kernel_of(agg: AggregationProtocol) -> Kernel | None:
    """The compiled family and code of ``agg``, None when only the reference serves it."""
    return facts(agg).kernel


def kernel_for(agg: AggregationProtocol) -> Kernel:
    """The compiled family and code of ``agg``, which has a kernel (the caller checked)."""
    kernel = facts(agg).kernel
    if kernel is None:
        raise TypeError(f"{agg!r} has no compiled kernel")
    return kernel


def _holdable(x: Any) -> bool:
    if isinstance(x, float | np.floating):
        return True
    if isinstance(x, int | np.integer):
        return bool(-EXACT <= x <= EXACT)
    return False


def _float(x: Any) -> float:
    return math.nan if is_missing(x) else float(x)


def to_arrays(agg: AggregationProtocol, xs: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Raw inputs as float64 ``values`` (and ``args`` of ``(arg, value)`` pairs), and whether
    every one was an int. Each input is checked as ``lift`` checks it (the same errors as the
    reference), then that the kernels hold it exactly (else :class:`NotHoldable`)."""
    f = facts(agg)
    if isinstance(xs, np.ndarray) and not f.pairs and xs.dtype.kind in "fiub":
        ints = xs.dtype.kind in "iub"
        if ints and len(xs) and (xs.max() > EXACT or xs.min() < -EXACT):
            raise NotHoldable(
                f"compiled storage holds {name_of(agg)} values as float64 and cannot hold integers "
                "beyond 2^53 exactly; use backend='auto' or 'python'"
            )
        values = xs.astype(np.float64, copy=False)
        check_values(agg, values)
        return values, np.zeros(len(values)), ints
    items = xs if isinstance(xs, list | tuple) else list(xs)
    ints = True
    for x in items:
        if is_missing(x):
            continue
        agg.lift(x)  # the reference's own checks, so the errors are the same
        parts = x if f.pairs else (x,)
        if not all(_holdable(p) for p in parts):
            raise NotHoldable(
                f"compiled storage holds {name_of(agg)} values as float64 and cannot hold {x!r} "
                "exactly; use backend='auto' or 'python'"
            )
        ints = ints and all(isinstance(p, int | np.integer) for p in parts)
    if f.pairs:
        args = np.array([math.nan if is_missing(x) else _float(x[0]) for x in items], np.float64)
        values = np.array([math.nan if is_missing(x) else _float(x[1]) for x in items])
    else:
        values = np.array([_float(x) for x in items], np.float64)
        args = np.zeros(len(values))
    return values, args, ints


def sums_exact(agg: AggregationProtocol, largest: float, count: int) -> bool:
    """Whether sums of ``count`` ints of magnitude at most ``largest`` stay exact in float64
    (the families that add values: sum, and mean's sum)."""
    k = kernel_of(agg)
    return k is None or k.family not in (SUMF, ADD) or largest * count <= EXACT


def python_result(agg: AggregationProtocol, v: float, ints: bool) -> Any:
    """A kernel's lowered float as the Python reference returns it: the empty result for an
    empty window, an int for counts and where only ints went in (``keeps_ints``)."""
    f = facts(agg)
    if math.isnan(v):
        return f.empty
    if f.result == "count" or (ints and f.keeps_ints and v.is_integer()):
        return int(v)
    if f.result == "bool":
        return v != 0.0
    return v


def reference_partial(agg: AggregationProtocol, p: np.ndarray, ints: bool) -> Any:
    """A kernel partial (one column of a family's fields, see :mod:`windowagg.kernels.families`)
    as the reference's partial of ``agg``, exactly (ints as ints where only ints went in)."""

    family, code = kernel_for(agg)

    def num(v: float) -> Any:
        return int(v) if ints and float(v).is_integer() else float(v)

    if family == SUMF:
        return num(p[0])
    if family == ADD:
        if code == fam.COUNT:
            return int(p[1])
        return (float(p[0]) if code == fam.GEOMEAN else num(p[0]), int(p[1]))
    if family == SELECT:  # (key, value, has): the key is +/-x, or the value of an arg pair
        if p[2] == 0:
            return agg.identity
        if facts(agg).pairs:
            return (num(p[1]), num(-p[0] if code in (fam.ARGMIN, fam.MINBY) else p[0]))
        return num(p[1])
    if family == XCOUNT:
        if p[1] == 0:
            return agg.identity
        return (num(p[0] if code == fam.MAXCOUNT else -p[0]), int(p[1]))
    if family == WELFORD:
        return agg.identity if p[0] == 0 else (int(p[0]), float(p[1]), float(p[2]))
    if family == PRODUCT:
        return None if p[1] == 0 else float(p[0])
    if family in (MOMENTS, COMOMENTS):
        return agg.identity if p[0] == 0 else (int(p[0]), *(float(v) for v in p[1:]))
    raise AssertionError(f"no family {family!r}")
