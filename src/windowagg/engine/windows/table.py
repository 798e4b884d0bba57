"""Window aggregates over an Arrow table (one engine for pandas, Arrow and Spark's workers):
every window of a :class:`~windowagg.engine.windows.plan.WindowPlan` that holds a row, per key,
with every entry's value.

Rows sorted by key, then time, form one segment per key. Each window is a range of a key's
rows ``[lo, hi)``, found once per window spec whatever the number of entries
(:func:`window_bounds`): time windows ``[start, end)`` with two pointers
(:func:`windowagg.kernels.bounds.sliding_windows`), sessions (Scotty, Section 4: a new session
where the gap to the previous row exceeds the session gap) by one difference, count windows by
arithmetic. Within a key both bounds only move forward with the window's start, so the windows
of a spec are frames given by their bounds, and the rolling engine's rules answer them
(:func:`windowagg.engine.evaluate.evaluate`): SQL's for sum, count, mean, min, max,
stddev, first and last (exact integer and decimal sums, NaN a value, Spark's types), a FIFO
sweep (each row enters and leaves once) for every other aggregation, the user's own included.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ...aggregations import facts
from ...kernels.bounds import (
    session_windows,
    sliding_windows,
    sliding_windows_int,
    whole_in_place,
)
from ...slicing import Session, Sliding
from .. import parallel
from ..columns import EXACT, arrange, as_ints, limits, take, times_of
from ..entries import Entry
from ..evaluate import evaluate
from ..keys import span_of
from ..memory import empty
from ..stages import stage
from ..sweep import FrameBounds
from .plan import WindowPlan, beyond_doubles
from .slices import slice_partials

__all__ = ["WindowBounds", "grain", "output_schema", "window_bounds", "window_table"]


#: an empty array, for bounds read for the last time
_NONE = np.empty(0, np.int64)


class WindowBounds(NamedTuple):
    """The windows of one spec, key by key: each one's start and end (times; for count
    windows the times of its first and last row; ``end`` None: ``start + size``) and its rows
    ``[lo, hi)``."""

    start: np.ndarray
    end: np.ndarray | None
    lo: np.ndarray
    hi: np.ndarray
    size: float = 0.0

    def ends(self) -> np.ndarray:
        if self.end is not None:
            return self.end
        return np.add(self.start, self.size, out=empty(len(self.start)))


def _finite(times: np.ndarray, seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's rows with a time (null times sort first, NaN last as +inf)."""
    s, e = seg[:-1], seg[1:]
    null = np.r_[0, np.cumsum(times == limits(times)[0])]
    nan = np.r_[0, np.cumsum(times == np.inf)]
    first = s + null[e] - null[s]
    return first, np.maximum(first, e - (nan[e] - nan[s]))


@stage("windows")
def window_bounds(
    w: Sliding | Session,
    times: np.ndarray,
    seg: np.ndarray,
    spans: tuple[np.ndarray, np.ndarray] | None = None,
    positions: np.ndarray | None = None,
    g: int = 1,
) -> WindowBounds:
    """Every window of ``w`` that holds a row, key by key, in order of start. ``spans``: rows
    that are slices, their first and last times; ``positions``: slices of count windows,
    their row counts (each holds ``g`` rows, :func:`grain`, a key's last one up to that)."""
    if isinstance(w, Session):
        first, last = (times, times) if spans is None else spans
        return _sessions(w.gap, first, last, seg)
    if w.measure == "count":
        return _counted(int(w.size), int(w.slide), times, seg, spans, positions, g)

    none = np.empty(0, np.int64)
    size, slide = _grid(w, times, seg)
    lims = limits(times)

    whole = times.dtype == np.int64  # int64 times: each end clamped apart from its start

    def windows(part, count_only, start, end, lo, hi) -> int:
        if whole:
            args = (times, part, size, slide, lims, count_only, start, end, lo, hi)
            return sliding_windows_int(*args)
        limit = float(EXACT * slide)
        return sliding_windows(times, part, size, slide, limit, count_only, start, lo, hi)

    pieces = parallel.parts(seg)  # parts of the keys on both cores: counted, then made
    nothing = np.empty(0, times.dtype)
    counts = parallel.on_cores(
        lambda part: windows(part, True, nothing, nothing, none, none), pieces
    )
    if min(counts, default=0) < 0:
        raise ValueError(
            f"window {w!r}: a slide of {w.slide} is below the resolution of these float "
            "times (more than 2**52 slides from zero); use an integer or timestamp time "
            "column, or a longer slide"
        )
    at = np.r_[0, np.cumsum(counts)].astype(np.int64)
    m = int(at[-1])
    _fits(m, w)
    start, lo, hi = empty(m, times.dtype), empty(m, np.int64), empty(m, np.int64)
    end = empty(m, np.int64) if whole else nothing

    def make(j: int) -> None:
        a, b = at[j], at[j + 1]
        windows(pieces[j], False, start[a:b], end[a:b], lo[a:b], hi[a:b])

    parallel.on_cores(make, list(range(len(pieces))))
    return WindowBounds(start, end if whole else None, lo, hi, size)


def _sessions(gap: float, first: np.ndarray, last: np.ndarray, seg: np.ndarray) -> WindowBounds:
    """Sessions ``[first time, last time + gap)``: rows whose times differ by at most ``gap``
    (in time order) share one; a row's times run from ``first`` to ``last`` (a slice), and
    the next row joins its session when it starts at most ``gap`` after the row's last."""
    none = np.empty(0, np.int64)
    whole = first.dtype == np.int64
    if whole and not float(gap).is_integer():
        raise ValueError(
            f"session gap {gap} is finer than the time column's whole numbers: give a whole "
            "number of its units"
        )
    args = (int(gap) if whole else float(gap), limits(first))
    nothing = np.empty(0, first.dtype)
    pieces = parallel.parts(seg)  # parts of the keys on the cores: counted, then made
    counts = parallel.on_cores(
        lambda part: session_windows(first, last, part, *args, True, nothing, nothing, none, none),
        pieces,
    )
    at = np.r_[0, np.cumsum(counts)].astype(np.int64)
    m = int(at[-1])
    start, end = empty(m, first.dtype), empty(m, first.dtype)
    lo, hi = empty(m, np.int64), empty(m, np.int64)

    def make(j: int) -> None:
        a, b = at[j], at[j + 1]
        got = (start[a:b], end[a:b], lo[a:b], hi[a:b])
        session_windows(first, last, pieces[j], *args, False, *got)

    parallel.on_cores(make, list(range(len(pieces))))
    return WindowBounds(start, end, lo, hi)


#: the bytes a window takes at the least (its start, its rows' bounds, its row of output)
WINDOW_BYTES = 256


def _memory() -> int:
    """This machine's memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _fits(m: int, w: Sliding) -> None:
    """Refuse, before the windows are made, more windows than the machine holds."""
    if m * WINDOW_BYTES > _memory():
        raise MemoryError(
            f"window {w!r} makes {m:,} windows over these rows, more than this machine's "
            "memory holds: give a longer slide, or fewer rows"
        )


def _grid(w: Sliding, times: np.ndarray, seg: np.ndarray) -> tuple[int | float, int | float]:
    """A time window's size and slide in the times' type, checked before any window is made:
    whole numbers over int64 times, and at most as many windows as the machine holds."""
    size: int | float
    slide: int | float
    if times.dtype == np.int64:
        if not (float(w.size).is_integer() and float(w.slide).is_integer()):
            raise ValueError(
                f"window {w!r}: its size and slide must be whole numbers of the time "
                "column's unit over these times"
            )
        size, slide = int(w.size), int(w.slide)
    else:
        size, slide = float(w.size), float(w.slide)
    per = -(-size // slide)  # windows each row lies in, at most
    if len(times) * per * WINDOW_BYTES > _memory():  # then a closer look: keys and span
        lo, hi, count, _ = span_of(times, limits(times)[0])
        span = (int(hi) - int(lo)) // slide + 1 if count else 0
        _fits(int(min(count * per, (len(seg) - 1) * (span + per))), w)
    return size, slide


def grain(windows: Iterable[Sliding | Session]) -> int:
    """The rows per slice of count windows: the greatest common divisor of their sizes and
    slides (a window is then a run of whole slices)."""

    return math.gcd(
        *[
            int(x)
            for w in windows
            if isinstance(w, Sliding) and w.measure == "count"
            for x in (w.size, w.slide)
        ]
    )


def _counted(
    size: int,
    slide: int,
    times: np.ndarray,
    seg: np.ndarray,
    spans: tuple[np.ndarray, np.ndarray] | None = None,
    positions: np.ndarray | None = None,
    g: int = 1,
) -> WindowBounds:
    """Count windows: positions ``[k * slide, k * slide + size)`` of each key's rows in time
    order, the complete ones; start and end are the times of the first and last row. Over
    slices of ``g`` rows each (``positions``: their counts), a window is ``size / g`` slices."""
    first, last = _finite(times, seg)
    if positions is None:
        n = last - first
    else:  # every slice of a key holds g rows but its last
        at = np.r_[0, np.cumsum(positions)]
        n = at[last] - at[first]
    per = np.where(n >= size, (n - size) // slide + 1, 0)
    key = np.repeat(np.arange(len(per)), per)
    k = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    lo = first[key] + k * (slide // g)
    hi = lo + size // g
    a, b = (times, times) if spans is None else spans
    return WindowBounds(a[lo], b[hi - 1], lo, hi)


def _never_null(e: Entry) -> bool:
    """Whether an entry's result is never null (SQL's rule of its record: a count)."""
    return e.sql is not None and facts(e.agg).never_null


def output_schema(plan: WindowPlan, key_fields: list[pa.Field]) -> pa.Schema:
    """The output's Arrow schema: the key columns (``key_fields``), ``window``,
    ``window_start``, ``window_end`` (timestamps for a timestamp or date time column, else
    doubles), then one column per entry in its result type."""

    fields = [pa.field(name, f.type) for name, f in zip(plan.keys, key_fields)]
    fields += [
        pa.field("window", pa.string(), False),
        pa.field("window_start", plan.bound),
        pa.field("window_end", plan.bound),
    ]
    fields += [pa.field(e.name, e.type, not _never_null(e)) for e in plan.entries]
    return pa.schema(fields)


def window_table(
    plan: WindowPlan, table: pa.Table, over: WindowPlan | None = None, seg: np.ndarray | None = None
) -> pa.Table:
    """Every window's row: the keys, the window's spec and bounds, every entry (a
    ``pyarrow.Table`` in :func:`output_schema`; windows of each spec in turn, by key and
    start). ``over``: the plan that reads ``table`` when its rows are partials
    (:func:`windowagg.engine.windows.partials.over_partials`); ``seg``: the table is in key
    and time order already, with these key segments. Rows whose entries all merge from
    partials are first reduced per key and slice, compiled
    (:func:`windowagg.engine.windows.slices.slice_partials`)."""

    if over is None and seg is None:
        reduced = slice_partials(plan, table)
        if reduced is not None:
            return window_table(plan, *reduced)
    run = plan if over is None else over
    schema = output_schema(plan, [table.schema.field(k) for k in run.keys])
    if seg is None:
        order, times, seg = arrange(run, table)
        if order is not None:
            table = table.take(pa.array(order))
    else:
        times = times_of(run, table)
    if run.spans is None and times.dtype != np.int64 and beyond_doubles(plan):
        times = as_ints(times)  # edges doubles would round: computed in integers
    spans = None
    if run.spans is not None:  # slices: each one's first and last time (null: no time)
        spans = tuple(
            table.column(c).to_numpy(zero_copy_only=False).astype(float) for c in run.spans
        )
    positions = None
    if run.positions is not None:  # slices of count windows: their row counts
        positions = table.column(run.positions).to_numpy(zero_copy_only=False).astype(np.int64)
    parts = []
    for w, spec in zip(plan.windows, plan.specs):
        b = window_bounds(
            w, times, seg, spans, positions, grain(plan.windows) if positions is not None else 1
        )
        if not len(b.lo):
            continue
        # a window's entries have no frame of their own: the windows' bounds are theirs
        results = evaluate(
            run.entries, table, {None: FrameBounds.given(times, b.lo, b.hi)}, table.column(run.time)
        )
        at = b.lo
        b = b._replace(lo=_NONE, hi=_NONE)  # each window's rows: read for the last time
        cols = [take(table.column(k), at) for k in run.keys]
        cols.append(_spec_column(spec, len(at)))
        del at
        start, end = b.start, b.ends()  # the ends before the starts are converted in place
        del b
        cols.append(_bound(start, plan.bound))
        cols.append(_bound(end, plan.bound))
        del start, end  # now the output's
        cols += results
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


@stage("output")
def _spec_column(spec: str, m: int) -> pa.Array | pa.ChunkedArray:
    """The ``window`` column: the spec ``m`` times, in chunks of under 2 GiB of text each (a
    string array's offsets are 32-bit)."""
    per = max(1, (1 << 30) // max(1, len(spec.encode())))
    if m <= per:
        return pa.repeat(pa.scalar(spec, pa.string()), m)
    chunk = pa.repeat(pa.scalar(spec, pa.string()), per)
    return pa.chunked_array([chunk] * (m // per) + [chunk.slice(0, m % per)])


@stage("output")
def _bound(x: np.ndarray, type_: pa.DataType) -> pa.Array:
    """Window bounds as the output's column, in the time column's type (a timestamp's own
    unit, int64 for integers, else doubles); whole numbers held as doubles are converted in
    ``x``'s own memory (the caller's array, not used after)."""

    if pa.types.is_timestamp(type_) or pa.types.is_integer(type_):
        whole = x
        if x.dtype != np.int64:
            whole = x.view(np.int64)
            whole_in_place(x, whole)
        out = pa.array(whole, pa.int64())
        return out.cast(type_) if pa.types.is_timestamp(type_) else out
    return pa.array(x, pa.float64())
