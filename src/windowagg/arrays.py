"""Arrays in, arrays out: ``sliding_aggregate`` (api.md section 4).

Validates the input, picks an algorithm and runs the whole stream inside one compiled call
(:mod:`windowagg.kernels`); aggregations without a kernel run through the Python reference.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .aggregations import Aggregation, resolve
from .fifo import ALGORITHMS as FIFO_ALGORITHMS
from .fifo.compiled import SHARING, FifoState, capacity_for, compiled_family
from .ooo import ALGORITHMS as OOO_ALGORITHMS

__all__ = ["sliding_aggregate"]

COUNT, TIME = 0, 1  # the driver's modes


def sliding_aggregate(
    values: Any,
    *,
    size: Any,
    agg: Any = "sum",
    times: Any = None,
    algorithm: str = "auto",
) -> np.ndarray:
    """Aggregate a sliding window ending at every element.

    Parameters
    ----------
    values : array_like
        One value per element, in arrival order. NaN is a missing value.
    size : number or list of numbers
        Count-based (``times`` None): the window holds the last ``size`` elements. Time-based:
        after element ``i``, with ``now = max(times[:i+1])``, the window holds every arrived
        element with ``now - size < t <= now`` (in time order; equal times in arrival order).
        A list answers several sizes from one shared structure.
    agg : str or aggregation
        Compiled for sum, count, mean, stddev, geomean, min, max, argmin, argmax (the arg is
        the element's time, or its index), mincount, maxcount, first, last; any other
        aggregation runs through the Python reference.
    times : array_like, optional
        Event times (numbers or datetime64; then ``size`` may be a timedelta64), same length
        as ``values``; may be out of order.
    algorithm : str
        ``auto`` or any name of :data:`windowagg.FIFO_ALGORITHMS` or
        :data:`windowagg.OOO_ALGORITHMS` that can serve the input.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64 for one size, ``(n, len(size))`` for a list. Empty windows give 0 for
        sum, count, mincount and maxcount and NaN otherwise.

    Raises
    ------
    ValueError
        Ragged arrays, ``size <= 0``, non-numeric values or times, or an algorithm that cannot
        serve the input; all checked before any work.

    Complexity
    ----------
    O(n) for the FIFO algorithms on count windows and in-order times (O(n log n) for
    flatfat and bint, O(n * size) for recalc); O(n log d) for fiba on out-of-order times.
    """
    agg = resolve(agg)
    vals = _numeric("values", values)
    sizes, many = _sizes(size, times is not None)
    n = len(vals)
    t = None
    if times is not None:
        t, sizes = _times(times, n, sizes)
    in_order = t is None or bool(np.all(t[1:] >= t[:-1]))
    algorithm = _choose(algorithm, agg, many, in_order, t is not None)
    family = compiled_family(agg)
    if (algorithm in OOO_ALGORITHMS and algorithm not in FIFO_ALGORITHMS) or not in_order:
        return _ooo_python(algorithm, agg, vals, t, sizes, many)
    if family is None:
        return _fifo_python(algorithm, agg, vals, t, sizes, many)
    fam, code = family
    if agg.name == "geomean" and np.any(vals <= 0):
        agg.lift(float(vals[np.argmax(vals <= 0)]))  # geomean's own ValueError
    args = np.arange(n, dtype=np.float64) if t is None else t
    width = max(1, int(max(sizes))) if t is None else _max_window(t, max(sizes))
    state = FifoState(algorithm, fam, capacity_for(width + 1), tuple(int(s) for s in sizes)
                      if algorithm == "slickdeque" and t is None else ())  # fmt: skip
    out = np.empty((n, len(sizes) if many else 1))
    mode = COUNT if t is None else TIME
    if many:
        state.run(mode, values=vals, args=args, times=t, sizes=np.asarray(sizes, float), out=out,
                  code=code)  # fmt: skip
    else:
        state.run(mode, values=vals, args=args, times=t, size=int(sizes[0]) if t is None else 0,
                  tsize=float(sizes[0]), out=out, code=code)  # fmt: skip
    return out if many else out[:, 0]


def _btree(algorithm, family, agg, vals, t, sizes, many) -> np.ndarray:
    """FiBA (or the classic tree) compiled: insert, bulk evict, query per element."""
    from .ooo.compiled import BTreeState

    fam, code = family
    if agg.name == "geomean" and np.any(vals <= 0):
        agg.lift(float(vals[np.argmax(vals <= 0)]))
    if t is None:  # a count window is a time window over the positions
        t = np.arange(len(vals), dtype=np.float64)
    state = BTreeState(fam, 4, classic=algorithm == "bclassic", nodes=1024)
    out = np.empty((len(vals), len(sizes)))
    state.slide(code, vals, t, t, np.asarray(sizes, float), out)
    return out if many else out[:, 0]


def _numeric(label: str, xs: Any) -> np.ndarray:
    arr = np.asarray(xs)
    if arr.ndim != 1:
        raise ValueError(f"{label} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{label} must be numeric, got dtype {arr.dtype}"
            + (f" (first element {arr[0]!r})" if len(arr) else "")
        )
    return arr.astype(np.float64, copy=False)


def _sizes(size: Any, timed: bool) -> tuple[list[float], bool]:
    many = isinstance(size, list | tuple | np.ndarray)
    items = list(size) if many else [size]
    if many and not items:
        raise ValueError("size must not be an empty list")
    out = []
    for s in items:
        if isinstance(s, np.timedelta64):
            s = s / np.timedelta64(1, "ns")
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not s > 0:
            raise ValueError(f"size must be a positive number, got {s!r}")
        if not timed and not float(s).is_integer():
            raise ValueError(f"a count-based size must be an integer, got {s!r}")
        out.append(float(s))
    return out, many


def _times(times: Any, n: int, sizes: list[float]) -> tuple[np.ndarray, list[float]]:
    arr = np.asarray(times)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"times must have one element per value: {arr.shape} vs ({n},)")
    if arr.dtype.kind == "M":  # datetime64: nanoseconds since the first event
        ns = arr.astype("datetime64[ns]").astype(np.int64)
        if len(ns) and ns.min() < -(2**62):
            raise ValueError("times must not contain NaT")
        base = ns.min() if len(ns) else 0
        return (ns - base).astype(np.float64), sizes
    t = _numeric("times", arr)
    if np.isnan(t).any():
        raise ValueError(
            f"times must not contain NaN (first at index {int(np.argmax(np.isnan(t)))})"
        )
    return t, sizes


def _max_window(t: np.ndarray, span: float) -> int:
    """The largest number of elements an in-order time window of ``span`` holds."""
    if not len(t):
        return 1
    lo = np.searchsorted(t, t - span, side="right")
    return int((np.arange(1, len(t) + 1) - lo).max())


def _choose(algorithm: str, agg: Any, many: bool, in_order: bool, timed: bool) -> str:
    family = compiled_family(agg)
    invertible = bool(getattr(agg, "invertible", False))
    selective = bool(getattr(agg, "selective", False))
    if algorithm == "auto":
        if not in_order:
            return "fiba"
        if many:
            if not timed and (invertible or selective):
                return "slickdeque"
            return "flatfit"
        return "two_stacks_lite" if family is not None else "daba_lite"
    if algorithm not in FIFO_ALGORITHMS and algorithm not in OOO_ALGORITHMS:
        valid = ", ".join(["auto", *FIFO_ALGORITHMS, *(a for a in OOO_ALGORITHMS if a != "recalc")])
        raise ValueError(f"unknown algorithm {algorithm!r}; valid names: {valid}")
    if algorithm in ("fiba", "bclassic") or (algorithm == "recalc" and not in_order):
        return algorithm  # out-of-order aggregators serve every input (recalc: the sorted one)
    if not in_order:
        raise ValueError(
            f"{algorithm} is an in-order (FIFO) algorithm and these times are out of order; "
            "use fiba, bclassic or recalc"
        )
    if many and algorithm not in SHARING:
        raise ValueError(
            f"{algorithm} cannot answer several window sizes from one structure; use one of "
            f"{', '.join(sorted(SHARING))} or fiba"
        )
    if many and timed and algorithm == "slickdeque":
        raise ValueError(
            "slickdeque answers fixed ranges of elements; several time spans need flatfit, "
            "bint, flatfat, recalc or fiba"
        )
    if algorithm != "slickdeque":
        FIFO_ALGORITHMS[algorithm](agg)  # raises for an invalid pairing (soe without inverse)
    elif not (invertible or selective):
        raise ValueError(
            f"slickdeque needs an invertible or a selective aggregation; {agg!r} is neither"
        )
    return algorithm


def _lower_array(agg: Any, results: list[Any]) -> np.ndarray:
    out = np.empty(len(results))
    for i, r in enumerate(results):
        out[i] = np.nan if r is None else float(r)
    return out


def _fifo_python(algorithm, agg, vals, t, sizes, many) -> np.ndarray:
    """The Python reference for aggregations without a kernel (FIFO, in-order)."""
    from .fifo import fifo

    if not isinstance(agg, Aggregation) or agg.name in ("collect", "bloom", "m4", "hll"):
        raise ValueError(f"sliding_aggregate returns numbers; {agg!r} does not lower to one")
    largest = max(sizes)
    options = {"ranges": [int(s) for s in sizes]} if algorithm == "slickdeque" else {}
    w = fifo(algorithm, agg, backend="python", **options)
    rows = []
    window_times: list[float] = []
    pairs = agg.name in ("argmin", "argmax")
    for i, x in enumerate(vals):
        w.insert(((i if t is None else t[i]), x) if pairs else x)
        if t is None:
            while len(w) > largest:
                w.evict()
            rs = [int(s) for s in sizes]
        else:
            window_times.append(t[i])
            while window_times and window_times[0] <= t[i] - largest:
                window_times.pop(0)
                w.evict()
            rs = [sum(1 for tt in window_times if tt > t[i] - s) for s in sizes]
        if many:
            rows.append([w.query(last=r) if r < len(w) else w.query() for r in rs])
        else:
            rows.append([w.query()])
    return _rows(agg, rows, many)


def _rows(agg: Any, rows: list[list[Any]], many: bool) -> np.ndarray:
    out = np.array([[np.nan if r is None else float(r) for r in row] for row in rows], float)
    out = out.reshape(len(rows), -1)
    return out if many else out[:, 0]


def _ooo_python(algorithm, agg, vals, t, sizes, many) -> np.ndarray:
    """Out-of-order times: a time window over an out-of-order aggregator."""
    from .ooo import TimeWindow, ooo

    if not isinstance(agg, Aggregation) or agg.name in ("collect", "bloom", "m4", "hll"):
        raise ValueError(f"sliding_aggregate returns numbers; {agg!r} does not lower to one")
    name = algorithm if algorithm in OOO_ALGORITHMS else "fiba"
    if t is None:  # a count window is a time window over the positions
        t = np.arange(len(vals), dtype=np.float64)
    tw = TimeWindow(ooo(name, agg, backend="python"), max(sizes))
    rows = []
    pairs = agg.name in ("argmin", "argmax")
    for i in range(len(vals)):
        x = (t[i], vals[i]) if pairs else vals[i]
        tw.insert(t[i], x)
        now = tw.now
        if many:
            rows.append([tw.aggregator.query(np.nextafter(now - s, np.inf), now) for s in sizes])
        else:
            rows.append([tw.query()])
    return _rows(agg, rows, many)
