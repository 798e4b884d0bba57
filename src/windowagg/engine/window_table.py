"""Window aggregates over an Arrow table (one engine for pandas, Arrow and Spark's workers):
every window of a :class:`~windowagg.engine.window_plan.WindowPlan` that holds a row, per key,
with every entry's value.

Rows sorted by key, then time, form one segment per key. Each window is a range of a key's
rows ``[lo, hi)``, found once per window spec whatever the number of entries
(:func:`window_bounds`): time windows ``[start, end)`` with two pointers
(:func:`windowagg.kernels.frames.sliding_windows`), sessions (Scotty, Section 4: a new session
where the gap to the previous row exceeds the session gap) by one difference, count windows by
arithmetic. Within a key both bounds only move forward with the window's start, so the windows
of a spec are frames given by their bounds, and the rolling engine's rules answer them
(:func:`windowagg.engine.evaluate.evaluate`): SQL's for sum, count, mean, min, max,
stddev, first and last (exact integer and decimal sums, NaN a value, Spark's types), a FIFO
sweep (each row enters and leaves once) for every other aggregation, the user's own included.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ..kernels.frames import session_windows, sliding_windows, whole_in_place
from ..slicing import Session, Sliding
from . import parallel
from .columns import arrange, take, times_of
from .evaluate import evaluate
from .memory import empty
from .slice_table import slice_partials
from .sweep import Frames
from .window_plan import WindowPlan

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
    """Each key's rows with a time (null times sort first as -inf, NaN last as +inf)."""
    s, e = seg[:-1], seg[1:]
    null = np.r_[0, np.cumsum(times == -np.inf)]
    nan = np.r_[0, np.cumsum(times == np.inf)]
    first = s + null[e] - null[s]
    return first, np.maximum(first, e - (nan[e] - nan[s]))


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
    size, slide = float(w.size), float(w.slide)
    pieces = parallel.parts(seg)  # parts of the keys on both cores: counted, then made
    counts = parallel.on_cores(
        lambda part: sliding_windows(times, part, size, slide, True, np.empty(0), none, none),
        pieces,
    )
    at = np.r_[0, np.cumsum(counts)].astype(np.int64)
    start, lo, hi = empty(int(at[-1])), empty(int(at[-1]), np.int64), empty(int(at[-1]), np.int64)

    def make(j: int) -> None:
        a, b = at[j], at[j + 1]
        sliding_windows(times, pieces[j], size, slide, False, start[a:b], lo[a:b], hi[a:b])

    parallel.on_cores(make, list(range(len(pieces))))
    return WindowBounds(start, None, lo, hi, size)


def _sessions(gap: float, first: np.ndarray, last: np.ndarray, seg: np.ndarray) -> WindowBounds:
    """Sessions ``[first time, last time + gap)``: rows whose times differ by at most ``gap``
    (in time order) share one; a row's times run from ``first`` to ``last`` (a slice), and
    the next row joins its session when it starts at most ``gap`` after the row's last."""
    none = np.empty(0, np.int64)
    args = (first, last, seg, float(gap))
    m = session_windows(*args, True, np.empty(0), np.empty(0), none, none)
    start, end, lo, hi = empty(m), empty(m), empty(m, np.int64), empty(m, np.int64)
    session_windows(*args, False, start, end, lo, hi)
    return WindowBounds(start, end, lo, hi)


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
    fields += [pa.field(e.name, e.type, e.sql != "count") for e in plan.entries]
    return pa.schema(fields)


def window_table(
    plan: WindowPlan, table: pa.Table, over: WindowPlan | None = None, seg: np.ndarray | None = None
) -> pa.Table:
    """Every window's row: the keys, the window's spec and bounds, every entry (a
    ``pyarrow.Table`` in :func:`output_schema`; windows of each spec in turn, by key and
    start). ``over``: the plan that reads ``table`` when its rows are partials
    (:func:`windowagg.engine.window_partials.over_partials`); ``seg``: the table is in key
    and time order already, with these key segments. Rows whose entries all merge from
    partials are first reduced per key and slice, compiled
    (:func:`windowagg.engine.slice_table.slice_partials`)."""

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
            run.entries, table, {None: Frames.given(times, b.lo, b.hi)}, table.column(run.time)
        )
        at = b.lo
        b = b._replace(lo=_NONE, hi=_NONE)  # each window's rows: read for the last time
        cols = [take(table.column(k), at) for k in run.keys]
        cols.append(pa.repeat(pa.scalar(spec, pa.string()), len(at)))
        del at
        start, end = b.start, b.ends()  # the ends before the starts are converted in place
        del b
        cols.append(_bound(start, plan.bound))
        cols.append(_bound(end, plan.bound))
        del start, end  # now the output's
        cols += results
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _bound(x: np.ndarray, type_: pa.DataType) -> pa.Array:
    """Window bounds as the output's column; timestamps are converted in ``x``'s own memory
    (the caller's array, not used after)."""

    if pa.types.is_timestamp(type_):
        whole = x.view(np.int64)
        whole_in_place(x, whole)
        return pa.array(whole, pa.int64()).cast(type_)
    return pa.array(x, pa.float64())
