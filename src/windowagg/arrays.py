"""Arrays in, arrays out: ``sliding_aggregate`` (docs/guides/local-tables.md).

Validates the input, picks an algorithm from the records (:data:`windowagg.fifo.ALGORITHMS`,
:data:`windowagg.ooo.ALGORITHMS`) and runs the whole stream inside one compiled call: a FIFO
driver for in-order input, the compiled FiBA (or classic B-tree) for out-of-order input and
for ``algorithm="fiba" | "bclassic"``. Aggregations without a kernel run through the Python
reference, with the same output.

Input policy (the same on every path): values are numbers, with NaN or None missing; times are
numbers (finite), ``datetime64`` or timezone-aware timestamps (no NaT); with datetime times a
``size`` is a duration (``numpy.timedelta64``, ``datetime.timedelta`` or a string such as
``"10s"``), never a bare number.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TypeAlias, cast, overload

import numpy as np
import numpy.typing as npt

from .aggregations import AggLike, AggregationProtocol, check_values, facts, is_missing, resolve
from .combined import Combined
from .durations import SpecError
from .durations import duration as parse
from .fifo import ALGORITHMS as FIFO_ALGORITHMS
from .fifo import fifo
from .kernels.layout import COUNT, TIME
from .ooo import ALGORITHMS as OOO_ALGORITHMS
from .ooo import TimeWindow, ooo
from .slicing.clock import naive_utc
from .storage import kernel_for, kernel_of
from .storage.btree_state import BTreeState
from .storage.fifo_state import FifoState, capacity_for

__all__ = ["sliding_aggregate"]

#: a window's size: a number (elements, or the times' unit) or a duration
Size: TypeAlias = float | str | _dt.timedelta | np.timedelta64
#: one size, or several answered from one shared structure
Sizes: TypeAlias = Size | Sequence[Size] | np.ndarray


@overload
def sliding_aggregate(
    values: npt.ArrayLike,
    *,
    size: Sizes,
    agg: AggLike = "sum",
    times: npt.ArrayLike | None = None,
    algorithm: str = "auto",
    aggs: None = None,
) -> np.ndarray: ...


@overload
def sliding_aggregate(
    values: npt.ArrayLike,
    *,
    size: Sizes,
    agg: AggLike = "sum",
    times: npt.ArrayLike | None = None,
    algorithm: str = "auto",
    aggs: Mapping[str, AggLike],
) -> dict[str, np.ndarray]: ...


def sliding_aggregate(
    values: npt.ArrayLike,
    *,
    size: Sizes,
    agg: AggLike = "sum",
    times: npt.ArrayLike | None = None,
    algorithm: str = "auto",
    aggs: Mapping[str, AggLike] | None = None,
) -> np.ndarray | dict[str, np.ndarray]:
    """Aggregate a sliding window ending at every element.

    Parameters
    ----------
    values : array_like
        One number per element, in arrival order. NaN and None are missing values.
    size : number, duration, or list of them
        Count-based (``times`` None): the window holds the last ``size`` elements. Time-based:
        after element ``i``, with ``now = max(times[:i+1])``, the window holds every arrived
        element with ``now - size < t <= now`` (in time order; equal times in arrival order).
        With datetime times, a duration (``numpy.timedelta64``, ``datetime.timedelta`` or a
        string such as ``"10s"``). A list answers several sizes from one shared structure.
    agg : str or aggregation
        Compiled for sum, count, mean, stddev, geomean, min, max, argmin, argmax (the arg is
        the element's time, or its index), mincount, maxcount, first, last; any other
        aggregation whose result is one number runs through the Python reference.
    times : array_like, optional
        Event times, same length as ``values``: finite numbers, ``datetime64`` or
        timezone-aware timestamps (a pandas Series or index); may be out of order.
    algorithm : str
        ``auto`` or any name of :data:`windowagg.FIFO_ALGORITHMS` or
        :data:`windowagg.OOO_ALGORITHMS` that can serve the input.
    aggs : dict, optional
        Several aggregations instead of ``agg``: output name -> aggregation; the result is a
        dict of arrays. Each compiled aggregation runs its own compiled pass (faster than one
        pass of their product through Python); the others share one pass of their product
        (:class:`windowagg.combined.Combined`).

    Returns
    -------
    numpy.ndarray, or a dict of them for ``aggs``
        ``(n,)`` for one size, ``(n, len(size))`` for a list: float64, or ``datetime64[ns]``
        for argmin and argmax over datetime times. Empty windows give 0 for sum, count,
        mincount and maxcount and NaN (NaT) otherwise.

    Raises
    ------
    ValueError
        Ragged arrays, ``size <= 0``, non-numeric values, NaN, infinite or NaT times, a bare
        number as the size of datetime times, or an algorithm that cannot serve the input; all
        checked before any work.

    Complexity
    ----------
    O(n) for the FIFO algorithms on count windows and in-order times (O(n log n) for
    flatfat and bint, O(n * size) for recalc); O(n log d) for fiba on out-of-order times
    (d: how far out of order).
    """
    if aggs is not None:
        return _several(values, size, times, algorithm, aggs)
    agg = resolve(agg)
    _check_scalar(agg)
    vals = _values(values)
    t, base = (None, None) if times is None else _times(times, len(vals))
    sizes, many = _sizes(size, t is not None, base is not None)
    in_order = t is None or bool(np.all(t[1:] >= t[:-1]))
    algorithm = _choose(algorithm, agg, many, in_order, t is not None)
    kernel = kernel_of(agg)
    if kernel is not None:
        check_values(agg, vals)
    if not len(vals):
        out = np.empty((0, len(sizes)))
    elif algorithm in OOO_ALGORITHMS and (algorithm not in FIFO_ALGORITHMS or not in_order):
        if kernel is not None and OOO_ALGORITHMS[algorithm].compiled:
            out = _btree(algorithm, agg, vals, t, sizes)
        else:
            out = _rows(_ooo_rows(algorithm, agg, vals, t, sizes), len(sizes), agg)
    elif kernel is not None:
        out = _fifo_compiled(algorithm, agg, vals, t, sizes, many)
    else:
        out = _rows(_fifo_rows(algorithm, agg, vals, t, sizes), len(sizes), agg)
    if base is not None and facts(agg).result == "arg":  # the arg is the element's time
        out = _to_datetime(out, base)
    return out if many else out[:, 0]


def _several(values, size, times, algorithm, aggs) -> dict[str, np.ndarray]:
    """``sliding_aggregate`` of every entry of ``aggs``: compiled ones one pass each, the rest
    one pass of their product."""

    if not isinstance(aggs, dict) or not aggs:
        raise ValueError("aggs must be a non-empty dict: output name -> aggregation")
    parts = {n: resolve(a) for n, a in aggs.items()}
    for n, a in parts.items():
        _check_scalar(a, f"aggs[{n!r}]: ")
    rest = {n: a for n, a in parts.items() if kernel_of(a) is None}
    out = {
        n: sliding_aggregate(values, size=size, agg=a, times=times, algorithm=algorithm)
        for n, a in parts.items()
        if n not in rest
    }
    if rest:
        both = _product(values, size, times, algorithm, Combined(rest))
        out.update(both)
    return {n: out[n] for n in parts}


def _product(values, size, times, algorithm, agg: Combined) -> dict[str, np.ndarray]:
    """One Python pass of a product aggregation, split into one array per part."""
    vals = _values(values)
    t, base = (None, None) if times is None else _times(times, len(vals))
    sizes, many = _sizes(size, t is not None, base is not None)
    in_order = t is None or bool(np.all(t[1:] >= t[:-1]))
    algorithm = _choose(algorithm, agg.parts[0], many, in_order, t is not None)
    run = (
        _ooo_rows
        if algorithm in OOO_ALGORITHMS and (algorithm not in FIFO_ALGORITHMS or not in_order)
        else _fifo_rows
    )
    # the product's results: a dict of the parts' results, or None for an empty window
    results = cast(list[list[dict[str, object] | None]], run(algorithm, agg, vals, t, sizes))
    out = {}
    for name in agg.names:
        col = np.array(
            [[np.nan if r is None or r[name] is None else r[name] for r in row] for row in results],
            dtype=np.float64,
        ).reshape(len(vals), len(sizes))
        out[name] = col if many else col[:, 0]
    return out


def _fifo_compiled(algorithm, agg, vals, t, sizes, many) -> np.ndarray:
    """A FIFO driver over the whole stream (count windows, or in-order times)."""
    fam, code = kernel_for(agg)
    n = len(vals)
    args = np.arange(n, dtype=np.float64) if t is None else t
    width = max(1, int(max(sizes))) if t is None else _max_window(t, max(sizes))
    ranges = tuple(int(s) for s in sizes) if algorithm == "slickdeque" and t is None else ()
    state = FifoState(algorithm, fam, capacity_for(width + 1), ranges)
    out = np.empty((n, len(sizes)))
    mode = COUNT if t is None else TIME
    if many:
        state.run(
            mode,
            values=vals,
            args=args,
            times=t,
            sizes=np.asarray(sizes, float),
            out=out,
            code=code,
        )
    else:
        state.run(
            mode,
            values=vals,
            args=args,
            times=t,
            size=int(sizes[0]) if t is None else 0,
            tsize=float(sizes[0]),
            out=out,
            code=code,
        )
    return out


def _btree(algorithm, agg, vals, t, sizes) -> np.ndarray:
    """FiBA (or the classic tree) compiled: insert, bulk evict, query per element."""
    fam, code = kernel_for(agg)
    if t is None:  # a count window is a time window over the positions
        t = np.arange(len(vals), dtype=np.float64)
    state = BTreeState(fam, 4, classic=algorithm == "bclassic", nodes=1024)
    out = np.empty((len(vals), len(sizes)))
    state.slide(code, vals, t, t, np.asarray(sizes, float), out)
    return out


# --- the input policy ------------------------------------------------------------------------


def _values(xs: npt.ArrayLike) -> np.ndarray:
    arr = np.asarray(xs)
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64, copy=False)
    if arr.dtype.kind == "O":  # numbers with None (or NaN) for missing values
        out = np.empty(len(arr))
        for i, x in enumerate(arr):
            if is_missing(x):
                out[i] = np.nan
            elif isinstance(x, numbers.Real | Decimal) and not isinstance(x, bool):
                out[i] = float(x)
            else:
                raise ValueError(
                    f"values must be numeric (None or NaN for missing), got {x!r} "
                    f"({type(x).__name__}) at index {i}"
                )
        return out
    raise ValueError(
        f"values must be numeric, got dtype {arr.dtype}"
        + (f" (first element {arr[0]!r})" if len(arr) else "")
    )


def _times(times: npt.ArrayLike, n: int) -> tuple[np.ndarray, np.datetime64 | None]:
    """Times as float64 (datetimes: nanoseconds since the earliest, which is returned too)."""
    utc = naive_utc(times)  # tz-aware pandas
    if utc is not None:
        times = utc
    arr = np.asarray(times)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(f"times must have one element per value: {arr.shape} vs ({n},)")
    if arr.dtype.kind == "O" and len(arr) and isinstance(arr[0], _dt.datetime):
        if any(getattr(x, "tzinfo", None) is not None for x in arr):
            arr = np.array([x.astimezone(_dt.UTC).replace(tzinfo=None) for x in arr])
        arr = arr.astype("datetime64[ns]")
    if arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise ValueError(
                f"times must not contain NaT (first at index {int(np.argmax(np.isnat(arr)))})"
            )
        ns = arr.astype("datetime64[ns]")
        base = ns.min() if len(ns) else np.datetime64(0, "ns")
        return (ns - base).astype(np.int64).astype(np.float64), base
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"times must be numbers, datetime64 or timezone-aware timestamps, got dtype "
            f"{arr.dtype}" + (f" (first element {arr[0]!r})" if len(arr) else "")
        )
    t = arr.astype(np.float64, copy=False)
    bad = ~np.isfinite(t)
    if bad.any():
        i = int(np.argmax(bad))
        what = "NaN" if np.isnan(t[i]) else "infinite times"
        raise ValueError(f"times must not contain {what} (first at index {i})")
    return t, None


def _sizes(size: Sizes, timed: bool, datetimes: bool) -> tuple[list[float], bool]:
    many = isinstance(size, list | tuple | np.ndarray)
    items: list[object] = list(size) if isinstance(size, list | tuple | np.ndarray) else [size]
    if many and not items:
        raise ValueError("size must not be an empty list")
    return [_size(s, timed, datetimes) for s in items], many


def _size(s: object, timed: bool, datetimes: bool) -> float:
    duration = isinstance(s, np.timedelta64 | _dt.timedelta | str)
    if datetimes and not duration:
        raise ValueError(
            f"times are datetimes, so size must be a duration (numpy.timedelta64, "
            f"datetime.timedelta or a string such as '10s'), got {s!r}"
        )
    if duration and not datetimes:
        raise ValueError(
            f"size {s!r} is a duration, but the times are plain numbers (or absent): give a number"
        )
    if isinstance(s, str):
        try:
            s = parse(s, 1e9)  # nanoseconds
        except SpecError as e:
            raise ValueError(f"size: {e}") from None
    elif isinstance(s, np.timedelta64 | _dt.timedelta):
        s = np.timedelta64(s) / np.timedelta64(1, "ns")
    if isinstance(s, bool) or not isinstance(s, numbers.Real) or not float(s) > 0:
        raise ValueError(f"size must be a positive number, got {s!r}")
    if not timed and not float(s).is_integer():
        raise ValueError(f"a count-based size must be an integer, got {s!r}")
    return float(s)


def _to_datetime(out: np.ndarray, base: np.datetime64) -> np.ndarray:
    """Nanoseconds since ``base`` as datetime64[ns] (NaN: NaT)."""
    nat = np.isnan(out)
    ns = np.where(nat, 0, np.rint(out)).astype(np.int64)
    res = base + ns.astype("timedelta64[ns]")
    res[nat] = np.datetime64("NaT")
    return res


def _max_window(t: np.ndarray, span: float) -> int:
    """The largest number of elements an in-order time window of ``span`` holds."""
    lo = np.searchsorted(t, t - span, side="right")
    return int((np.arange(1, len(t) + 1) - lo).max()) if len(t) else 1


def _choose(
    algorithm: str, agg: AggregationProtocol, many: bool, in_order: bool, timed: bool
) -> str:
    """The algorithm ``auto`` stands for, or the one named, checked against the input."""
    fifo, ooo = FIFO_ALGORITHMS, OOO_ALGORITHMS
    if algorithm == "auto":
        if not in_order:
            return "fiba"
        if many:
            return "slickdeque" if not timed and fifo["slickdeque"].serves(agg) else "flatfit"
        return "two_stacks_lite" if kernel_of(agg) is not None else "daba_lite"
    if algorithm not in fifo and algorithm not in ooo:
        valid = ", ".join(["auto", *fifo, *(a for a in ooo if a not in fifo)])
        raise ValueError(f"unknown algorithm {algorithm!r}; valid names: {valid}")
    if algorithm not in fifo or (algorithm in ooo and not in_order):
        return algorithm  # out-of-order aggregators serve every input (recalc: the sorted one)
    if not in_order:
        ooo_names = ", ".join(ooo)
        raise ValueError(
            f"{algorithm} is an in-order (FIFO) algorithm and these times are out "
            f"of order; use {ooo_names}"
        )
    record = fifo[algorithm]
    if many and not record.shares_windows:
        sharing = ", ".join(sorted(a for a, r in fifo.items() if r.shares_windows))
        raise ValueError(
            f"{algorithm} cannot answer several window sizes from one structure; "
            f"use one of {sharing} or fiba"
        )
    if many and timed and algorithm == "slickdeque":
        raise ValueError(
            "slickdeque answers fixed ranges of elements; several time spans need flatfit, "
            "bint, flatfat, recalc or fiba"
        )
    record(agg, **({"ranges": [1]} if algorithm == "slickdeque" else {}))  # raises for an
    return algorithm  # aggregation it cannot serve (soe without inverse), saying why


def _check_scalar(agg: AggregationProtocol, where: str = "") -> None:
    """A built-in that lowers to something else than a number (a list, a struct, a filter) is
    refused before any work; a user's aggregation is taken, and each result checked
    (:func:`_number`)."""
    if facts(agg).result != "value" and not facts(agg).scalar:
        raise ValueError(
            f"{where}sliding_aggregate returns numbers; {agg!r} lowers to a "
            f"{facts(agg).result}: use the window operator or a table function"
        )


def _number(r: object, agg: AggregationProtocol) -> float:
    """A lowered result as a float (None: NaN); anything else names what ``lower`` gave."""
    if r is None:
        return np.nan
    if isinstance(r, numbers.Real | Decimal | np.number):
        return float(r)
    raise TypeError(
        f"sliding_aggregate returns numbers: {getattr(agg, 'name', agg)!r}.lower "
        f"returned {r!r} ({type(r).__name__}); make lower return a number, or None "
        "for no value"
    )


def _rows(rows: list[list[object]], k: int, agg: AggregationProtocol) -> np.ndarray:
    """Each element's results (``_fifo_rows``, ``_ooo_rows``) as an ``(n, k)`` float array."""
    out = np.array([[_number(r, agg) for r in row] for row in rows], dtype=np.float64)
    return out.reshape(len(rows), k)


def _fifo_rows(algorithm, agg, vals, t, sizes) -> list[list[object]]:
    """The Python reference for aggregations without a kernel (FIFO, in-order): each element's
    results, one per size."""

    largest = max(sizes)
    options = {"ranges": [int(s) for s in sizes]} if algorithm == "slickdeque" else {}
    w = fifo(algorithm, agg, backend="python", **options)
    rows: list[list[object]] = []
    window_times: list[float] = []
    pairs = facts(agg).pairs
    many = len(sizes) > 1
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
    return rows


def _ooo_rows(algorithm, agg, vals, t, sizes) -> list[list[object]]:
    """Out-of-order times over the Python reference of an out-of-order aggregator: each
    element's results, one per size."""

    if t is None:  # a count window is a time window over the positions
        t = np.arange(len(vals), dtype=np.float64)
    tw = TimeWindow(ooo(algorithm, agg, backend="python"), max(sizes))
    rows: list[list[object]] = []
    pairs = facts(agg).pairs
    for i in range(len(vals)):
        tw.insert(t[i], (t[i], vals[i]) if pairs else vals[i])
        now = tw.now
        if len(sizes) > 1:
            rows.append([tw.aggregator.query(np.nextafter(now - s, np.inf), now) for s in sizes])
        else:
            rows.append([tw.query()])
    return rows
