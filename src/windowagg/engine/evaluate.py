"""Every entry's column over its frames' bounds, by SQL's rules (one engine for rolling frames
and windows, on pandas, Arrow and Spark's workers), over a table sorted by key, time and
order.

Each frame's bounds are found once (:class:`~windowagg.engine.sweep.Frames`). What the SQL
rules need besides the aggregation itself comes from prefix counts over those bounds: the
non-null values in a frame (``count``; null results), the NaNs in it (a NaN sum, mean or
stddev; NaN the largest for ``max``/``min``). Integer and decimal sums are exact prefix-sum
differences (integers wrap as Java's longs do); float sums, means and stddevs, and every other
aggregation run the FIFO sweep; ``min``/``max`` select the row, so the result is the input
value itself, in its type, with one SlickDeque for every frame over the column that ends with
the same bound (:mod:`windowagg.kernels.select_frames`); ``first``/``last`` take the frame's
first and last row. Where every given frame holds one row (a tumbling window of one slice,
over partials), ``sum``, ``min`` and ``max`` are that row's value, with no sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..aggregations import Percentile, PercentileDisc, Quantile, facts
from ..compiled import EXACT, kernel_for
from ..errors import ArithmeticOverflowError
from ..frames import Frame
from ..kernels import select_frames as selection
from ..kernels.order_stats import ABOVE, BELOW, NEAREST, mode_frames
from ..kernels.specialize import merge
from . import parallel
from .columns import ArrowColumn, Column, running, take, totals
from .entries import Entry
from .memory import empty, zeros
from .stages import stage
from .sweep import Frames, distinct, order_statistic, quantiles, rolling

__all__ = ["evaluate", "select_rows", "sums_stay_small"]


def _counted(col: Column, fr: Frames) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame's bounds and its count of non-null values (after a sweep, which finds range
    bounds on the way, so that they are not looked for twice)."""
    lo, hi = fr.bounds()
    key = ("count", id(fr))
    if key not in col._cache:
        col._cache[key] = col.count(lo, hi)
    return lo, hi, col._cache[key]


@stage("output arrays")
def _with_nulls(values: np.ndarray, null: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``type_``, null where ``null``: a float64 or int64
    array of their own memory with validity bits packed from ``null``."""
    some = bool(null.any())
    width = {pa.float64(): np.float64, pa.int64(): np.int64}.get(type_)
    if width is None or values.dtype != width or not values.flags.c_contiguous:
        return pa.array(values, type=type_, mask=null if some else None)
    bits = pa.py_buffer(np.packbits(~null, bitorder="little")) if some else None
    return pa.Array.from_buffers(type_, len(values), [bits, pa.py_buffer(values)])


def _decimal(unscaled: np.ndarray, null: np.ndarray, type_: pa.DataType) -> pa.Array:
    """Unscaled integers (int64, or Python ints) as a decimal128 array."""

    if unscaled.dtype != object:
        words = empty(2 * len(unscaled), np.int64)
        words[0::2], words[1::2] = unscaled, unscaled >> 63
        validity = pa.array(~null).buffers()[1] if null.any() else None
        return pa.Array.from_buffers(type_, len(unscaled), [validity, pa.py_buffer(words)])
    s = type_.scale
    return pa.array(
        [None if z else Decimal(int(u)).scaleb(-s) for u, z in zip(unscaled, null)], type=type_
    )


def _sum(col: Column, fr: Frames, entry: Entry, counts: Column | None = None) -> pa.Array:
    """sum, or mean (``counts``: rows that are partial sums, and their value counts)."""

    if counts is not None:
        lo, hi = fr.bounds()
        cs = counts.prefix_sums()[0]
        count = totals(cs, lo, hi)
        if pa.types.is_floating(col.type):
            total = _sum(col, fr, replace(entry, sql="sum", type=pa.float64()))
            total = total.to_numpy(zero_copy_only=False)
            null = count == 0
            np.maximum(count, 1, out=count)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.divide(total, count, out=empty(len(count)))
            return _with_nulls(mean, null, entry.type)
    if pa.types.is_decimal(col.type) or not pa.types.is_floating(col.type):
        if counts is None:
            lo, hi, count = _counted(col, fr)
        null = count == 0
        cs, scale = col.prefix_sums()
        total = totals(cs, lo, hi)
        if entry.sql == "sum":
            if pa.types.is_decimal(col.type):
                return _decimal(total, null, entry.type)
            if not entry.wraps:
                _no_overflow(col, lo, hi, entry)
            return _with_nulls(total, null, entry.type)
        # mean of integers or decimals, from the exact sum
        if pa.types.is_decimal(col.type):
            return _decimal(_mean_half_up(total, count, entry.type.scale - scale), null, entry.type)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / np.maximum(count, 1)
        risky, exact = _exact_sums(col, lo, hi)  # where int64 sums wrap: Spark sums doubles
        mean[risky] = [float(t) / max(int(c), 1) for t, c in zip(exact, count[risky])]
        return _with_nulls(mean, null, entry.type)
    out = rolling(col.floats(), fr, entry.sql or entry.agg)
    lo, hi = fr.bounds()
    nan = col.nans(lo, hi)
    if nan is not None:
        out[nan > 0] = np.nan
    if not col.array.null_count and fr.holds_own_row():  # no frame without a value
        return _with_nulls(out, np.zeros(0, bool), entry.type)
    return _with_nulls(out, _counted(col, fr)[2] == 0, entry.type)


def _exact_sums(col: Column, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The frames whose integer sum may leave a long's range (int64 prefix sums wrap there:
    their absolute values add up to 2^62 or more), and their sums, exactly (Python ints)."""
    ints = col.ints()[0]
    if ints is None or not len(lo) or sums_stay_small(ints):
        return np.zeros(0, np.int64), np.zeros(0, object)
    bound = np.r_[0.0, np.cumsum(np.abs(ints.astype(float)))]
    risky = np.flatnonzero(bound[hi] - bound[lo] >= 2.0**62)
    if not len(risky):
        return risky, np.zeros(0, object)
    exact = np.r_[0, np.cumsum(ints.astype(object))]
    return risky, exact[hi[risky]] - exact[lo[risky]]


def sums_stay_small(ints: np.ndarray) -> bool:
    """Whether no sum of these integers can reach 2^62 (one pass, no allocation: the usual
    case skips the bounds of every frame)."""
    return float(max(-int(ints.min(initial=0)), int(ints.max(initial=0)))) * len(ints) < 2.0**62


def _no_overflow(col: Column, lo: np.ndarray, hi: np.ndarray, entry: Entry) -> None:
    """Raise where a frame's integer sum leaves a long's range."""
    for total in _exact_sums(col, lo, hi)[1]:
        if not -(2**63) <= total < 2**63:
            raise ArithmeticOverflowError.of_sum(f"aggs[{entry.name!r}]", total)


def _mean_half_up(total: np.ndarray, count: np.ndarray, extra: int) -> np.ndarray:
    """``total / count`` with ``extra`` more decimal digits, rounded half up (Spark's
    ``avg`` of a decimal), exactly: Python ints."""
    out = empty(len(total), object)
    scale = 10**extra
    for i, (s, c) in enumerate(zip(total.tolist(), count.tolist())):
        if c == 0:
            out[i] = 0
            continue
        q, r = divmod(abs(s) * scale, c)
        q += 2 * r >= c
        out[i] = q if s >= 0 else -q
    return out


def _select_keys(col: Column) -> np.ndarray:
    """What min/max compare: the values as doubles where that is exact, else (decimals,
    strings, integers beyond 2^53) their dense rank; NaN where the value is null."""

    if "keys" not in col._cache:
        keys = None
        if col.numeric or pa.types.is_temporal(col.type):
            keys = col.floats()
            exact = (
                pa.types.is_floating(col.type) or np.abs(np.nan_to_num(keys)).max(initial=0) < EXACT
            )
            keys = keys if exact else None
        if keys is None:
            rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense")
            keys = np.where(col.valid, rank.to_numpy().astype(float), np.nan)
        col._cache["keys"] = keys
    return col._cache["keys"]


def _by_keys(col: Column) -> np.ndarray:
    """What ``max_by``/``min_by`` compare of their ``y``: its dense rank (NaN above every
    number, as Spark orders it), NaN where ``y`` is null."""

    if "by" not in col._cache:
        rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense")
        col._cache["by"] = np.where(col.valid, rank.to_numpy().astype(float), np.nan)
    return col._cache["by"]


@stage("selection")
def select_rows(col: Column, sql: str, frames: list[Frames]) -> list[np.ndarray]:
    """For frames that end together, every row's selected row (the largest value for max,
    the smallest for min, the largest or smallest ``y`` for max_by and min_by, ties to the
    youngest; -1 if the frame has no value): one shared deque for all of them
    (:func:`windowagg.kernels.select_frames.select_frames`)."""

    keys = _by_keys(col) if sql in ("max_by", "min_by") else _select_keys(col)
    keys = np.ascontiguousarray(keys if sql in ("max", "max_by") else -keys)
    n, k = len(frames[0].bounds()[1]), len(frames)
    if k == 1:  # the frame's own starts, as one row (a view)
        lo = np.ascontiguousarray(frames[0].bounds()[0], np.int64).reshape(1, n)
    else:
        lo = empty((k, n), np.int64)
        for j, fr in enumerate(frames):
            lo[j] = fr.bounds()[0]
    out = empty((k, n), np.int64)
    hi = frames[0].bounds()[1]

    def run(part: np.ndarray) -> None:
        a, b = int(part[0]), int(part[-1])
        if b <= a:
            return
        first = int(lo[:, a].min())  # no frame of these answers starts before it
        selection.select_frames(
            keys,
            lo,
            hi,
            a,
            b,
            first,
            empty(max(int(hi[b - 1]) - first, 1), np.int64),
            empty(k, np.int64),
            out,
        )

    # per-row frames: the keys in parts, one per core (a key longer than a thread's share:
    # chunks, as a window's answers, each starting at its first frame's rows)
    per_row = frames[0].frame is not None and not parallel.outweighs(frames[0].seg)
    pieces = parallel.parts(frames[0].seg) if per_row else parallel.chunks(n)
    parallel.on_cores(run, pieces)
    return list(out)


def _select(col: Column, fr: Frames, entry: Entry, pick: np.ndarray) -> pa.Array:
    """min/max from the selected rows: the input value itself, in its own type."""

    out = _take(col.array, pick)
    if pa.types.is_floating(col.type):  # NaN is the largest double: max NaN if the frame holds
        lo, hi = fr.bounds()  # one, min NaN if it holds nothing else
        nan = col.nans(lo, hi)
        if nan is None:
            return out
        count = _counted(col, fr)[2]
        patch = nan > 0 if entry.sql == "max" else (nan > 0) & (nan == count)
        if patch.any():
            v = out.to_numpy(zero_copy_only=False).astype(float)
            v[patch] = np.nan
            out = _with_nulls(v, count == 0, entry.type)
    return out


def _collected(col: Column, fr: Frames, entry: Entry, keep: np.ndarray | None = None) -> pa.Array:
    """Every frame's values in order (``keep``: the rows that count; by default the non-missing
    ones, nulls and NaN left out, as the library's aggregations leave them): one take from the
    column, no Python object per value."""

    if keep is None:
        keep = col.valid & ~np.isnan(col.floats())
    at = np.r_[0, np.cumsum(keep)]
    lo, hi = fr.bounds()
    values = col.array.filter(pa.array(keep))
    if values.type != entry.type.value_type:
        values = values.cast(entry.type.value_type)
    sizes = at[hi] - at[lo]
    ends = np.cumsum(sizes)
    idx = (
        np.arange(int(ends[-1]) if len(ends) else 0)
        - np.repeat(ends - sizes, sizes)
        + np.repeat(at[lo], sizes)
    )
    return pa.ListArray.from_arrays(
        pa.array(np.r_[0, ends], pa.int32()), values.take(pa.array(idx))
    ).cast(entry.type)


def _rule(e: Entry) -> tuple[int, bool]:
    """SQL's null rules of a moment, co-moment or product entry, from its record
    (:attr:`~windowagg.aggregations.Facts.fewest`,
    :attr:`~windowagg.aggregations.Facts.zero_null`)."""
    f = facts(e.agg)
    return f.fewest, f.zero_null


def _through(lookup: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``lookup[at]`` where ``at >= 0``, -1 elsewhere (every answer -1 where ``lookup`` is
    empty: no value at all)."""

    if not len(lookup):
        return np.full(len(at), -1, np.int64)
    return np.where(at >= 0, lookup[np.maximum(at, 0)], -1)


def _take(array: ArrowColumn, rows: np.ndarray) -> ArrowColumn:
    """``array``'s values at ``rows``, null where a row is -1."""

    null = rows < 0
    if not null.any():
        return take(array, rows)
    return pc.take(array, pa.array(np.where(null, 0, rows), mask=null))


def _moment(col: Column, fr: Frames, e: Entry) -> pa.Array:
    """Moments (stddev, variances, skewness, kurtosis) and the product, compiled over the
    non-NaN values; a frame holding a NaN gives NaN, as Spark's arithmetic does, and so does a
    moment's frame holding an infinity (Spark's running mean turns infinite, and its deviations
    from it NaN)."""
    fewest, zero_division = _rule(e)
    out = rolling(col.floats(), fr, e.agg)
    lo, hi, count = _counted(col, fr)
    nan = col.nans(lo, hi)
    null = count < fewest
    if zero_division:
        null |= np.isnan(out) if nan is None else np.isnan(out) & (nan == 0)
    if nan is not None:
        out[nan > 0] = np.nan
    inf = col.infs(lo, hi) if e.sql != "product" else None
    if inf is not None:
        out[inf > 0] = np.nan
        null &= count < fewest
    return _with_nulls(out, null, e.type)


def _states(parts: list[Column], fr: Frames, e: Entry) -> pa.Array:
    """A statistic of rows that are partials: each slice's state (its count first, then the
    family's other fields: :data:`windowagg.aggregations.STATES`), merged in time order, compiled.
    A frame holding a NaN or an infinity gives NaN; a zero divisor gives null."""
    n = np.nan_to_num(parts[0].floats())
    some = n > 0
    fields = [np.where(some, p.floats(), 0.0) for p in parts[1:]]
    states = np.ascontiguousarray(np.stack([n, *fields]))
    lo, hi = fr.bounds()
    out = empty(len(lo))
    kernel = kernel_for(e.agg)
    merge(kernel.family)(kernel.code, states, lo, hi, zeros((len(parts), 1)), out)
    fewest, zero_division = _rule(e)
    null = _prefix_count(n, lo, hi) < fewest
    odd = _prefix_count(~np.isfinite(fields[0]), lo, hi)  # a NaN or an infinite mean
    out[odd > 0] = np.nan  # a slice holding NaN or an infinity: NaN, as Spark's merge gives
    if zero_division:  # NaN from a zero divisor, not from such a mean
        null |= np.isnan(out) & (odd == 0)
    return _with_nulls(out, null, e.type)


def _comoments(x: Column, y: Column, fr: Frames, e: Entry) -> pa.Array:
    """covar_samp, covar_pop and corr over the rows where both ``x`` and ``y`` are not null
    (compiled over those without NaN; a frame holding a NaN gives NaN)."""
    both = x.valid & y.valid
    xf, yf = x.floats(), y.floats()
    nan = both & (np.isnan(xf) | np.isnan(yf))
    keep = both & ~nan
    out = rolling(np.where(keep, yf, np.nan), fr, e.agg, np.where(keep, xf, np.nan))
    lo, hi = fr.bounds()
    count = _prefix_count(both, lo, hi)
    nans = _prefix_count(nan, lo, hi)
    fewest, zero_division = _rule(e)
    null = count < fewest
    if zero_division:
        null |= np.isnan(out) & (nans == 0)
    out[nans > 0] = np.nan
    return _with_nulls(out, null, e.type)


def _prefix_count(mask: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return totals(running(mask), lo, hi)


def _truths(col: Column, fr: Frames, e: Entry) -> pa.Array:
    """count_if, bool_and and bool_or from prefix counts of the true and the non-null values."""

    lo, hi, count = _counted(col, fr)
    true = _prefix_count(col.valid & (col.floats() == 1.0), lo, hi)
    if e.sql == "count_if":
        return pa.array(true, pa.int64())
    return _with_nulls(true == count if e.sql == "bool_and" else true > 0, count == 0, e.type)


def _first_valid(col: Column, lo: np.ndarray, hi: np.ndarray, first: bool) -> np.ndarray:
    """Every frame's first (or last) row with a value, -1 if none."""
    n = len(col.valid)
    rows = np.arange(n, dtype=np.int64)
    if first:
        nxt = np.r_[np.minimum.accumulate(np.where(col.valid, rows, n)[::-1])[::-1], n]
        at = nxt[lo]
        return np.where(at < hi, at, -1)
    prv = np.r_[-1, np.maximum.accumulate(np.where(col.valid, rows, -1))]
    at = prv[hi]
    return np.where(at >= lo, at, -1)


def _ranks(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """Every row's rank among the column's values (1-based, distinct, ties in row order, NaN
    above every number; 0 for null) and the rows in that order."""

    if "ranks" not in col._cache:
        order = pc.sort_indices(col.array).to_numpy().astype(np.int64)  # NaN, then nulls last
        ranks = zeros(len(order), np.int64)
        count = int(np.count_nonzero(col.valid))
        ranks[order[:count]] = np.arange(1, count + 1)
        col._cache["ranks"] = (ranks, order)
    return col._cache["ranks"]


def _percentile(col: Column, fr: Frames, e: Entry) -> pa.Array:
    """percentile and median (Spark's interpolation between the values at the floor and the
    ceiling of rank ``(n - 1) * p``, :func:`windowagg.aggregations.interpolate`),
    percentile_disc (the nearest rank, as a double) and percentile_approx (the nearest rank, in
    the column's type), by compiled order statistics over the rows' ranks (NaN above every
    number)."""

    ranks, order = _ranks(col)
    assert isinstance(e.agg, Percentile | PercentileDisc)  # its record says so
    p = e.agg.p
    if not len(order):  # no rows at all (no events for at=): every frame empty
        return pa.nulls(len(fr.bounds()[0]), e.type)
    if e.sql in ("percentile_disc", "percentile_approx"):
        picked = order_statistic(ranks, fr, p, NEAREST)
        out = _take(col.array, _through(order, picked - 1))
        return out.cast(pa.float64()) if e.sql == "percentile_disc" else out
    below = order_statistic(ranks, fr, p, BELOW)
    above = order_statistic(ranks, fr, p, ABOVE)
    values = col.floats()
    low = values[order[np.maximum(below, 1) - 1]]  # an empty frame's: null below
    high = values[order[np.maximum(above, 1) - 1]]
    count = _counted(col, fr)[2]
    pos = (np.maximum(count, 1) - 1) * p
    floor = np.floor(pos)
    with np.errstate(invalid="ignore"):  # Spark's rounding: low + fraction * (high - low)
        out = np.where(
            (floor == np.ceil(pos)) | (low == high), low, low + (pos - floor) * (high - low)
        )
    return _with_nulls(out, count == 0, e.type)


def _dense(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """Every row's value as a dense id in the values' order (NaN one value, above every
    number; -1 for null), and a row holding each id's value."""

    if "dense" not in col._cache:
        rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense").to_numpy()
        ids = np.where(col.valid, rank.astype(np.int64) - 1, -1)
        rep = zeros(int(ids.max(initial=-1)) + 1, np.int64)
        rep[ids[col.valid]] = np.flatnonzero(col.valid)
        col._cache["dense"] = (ids, rep)
    return col._cache["dense"]


def _mode(col: Column, fr: Frames) -> pa.Array:
    """The most frequent value of every frame, ties to the smallest (Spark's ``mode(x,
    true)``), compiled (:func:`windowagg.kernels.order_stats.mode_frames`): O(log u) per row."""

    ids, rep = _dense(col)
    size = 1 << max(0, int(len(rep) - 1).bit_length())
    lo, hi = fr.bounds()
    out = empty(len(lo), np.int64)
    mode_frames(ids, lo, hi, zeros(2 * size, np.int64), out)
    return _take(col.array, _through(rep, out))


def _set(col: Column, fr: Frames, e: Entry) -> pa.Array:
    """Every frame's distinct values, ascending (Spark's ``collect_set``). A row's value is new
    to exactly the frames that hold the row but not the value's previous row, a run of frames
    (both bounds never decrease): one (frame, value) pair per answer, in numpy."""

    ids, rep = _dense(col)
    lo, hi = fr.bounds()
    rows = np.flatnonzero(ids >= 0)
    vid = ids[rows]
    prev = np.full(len(rows), -1, np.int64)  # the value's previous row
    by = np.lexsort((rows, vid))
    same = np.zeros(len(rows), bool)
    same[1:] = vid[by][1:] == vid[by][:-1]
    prev[by[same]] = rows[by][np.flatnonzero(same) - 1]
    start = np.maximum(np.searchsorted(hi, rows, "right"), np.searchsorted(lo, prev, "right"))
    end = np.searchsorted(lo, rows, "right")
    sizes = np.maximum(end - start, 0)
    frame = np.repeat(start - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    value = np.repeat(vid, sizes)
    order = np.lexsort((value, frame))
    offsets = np.r_[0, np.cumsum(np.bincount(frame, minlength=len(lo)))].astype(np.int32)
    values = col.array.take(pa.array(rep[value[order]]))
    return pa.ListArray.from_arrays(pa.array(offsets), values).cast(e.type)


def _library(col: Column, fr: Frames, times_col: ArrowColumn | None, entry: Entry) -> pa.Array:
    """Any other aggregation, the user's own included: over the non-null values (a NaN is a
    value that reaches the ``lift`` of an aggregation without a kernel, Arrow's and Spark's
    rule; pandas' and numpy's NaN arrive here as nulls)."""

    f = facts(entry.agg)
    if f.frames == "collect":  # the frame's values, sliced out of the column
        return _collected(col, fr, entry)
    if f.frames == "quantile":  # compiled order statistics (a sweep of sorted partials
        assert isinstance(entry.agg, Quantile)  # costs O(frame) per row)
        q = quantiles(col.floats(), fr, entry.agg.q)
        return _with_nulls(q, np.isnan(q), entry.type)
    if f.frames == "distinct":  # an exact count per value
        return pa.array(distinct(col.floats(), fr), entry.type)
    rows = np.arange(len(col.valid), dtype=float)
    out = rolling(col.floats(), fr, entry.agg, rows if f.pairs else None, col.valid)
    if f.result == "arg":  # the row of the arg: the time column's value there
        null = np.isnan(out.astype(float))
        return pc.take(times_col, pa.array(np.where(null, 0, out).astype(np.int64), mask=null))
    if out.dtype != object:
        null = np.isnan(out)
        if pa.types.is_integer(entry.type):  # a count, or a count's estimate, rounded
            return _with_nulls(np.rint(np.where(null, 0, out)).astype(np.int64), null, entry.type)
        return _with_nulls(out, null, entry.type)
    values = [v._asdict() if hasattr(v, "_asdict") else v for v in out]
    if pa.types.is_list(entry.type) and not pa.types.is_floating(entry.type.value_type):
        return pa.array(values, type=pa.list_(pa.float64())).cast(entry.type)  # exact ints
    return pa.array(values, type=entry.type)


def _ends(frame: Frame | None) -> tuple | None:
    """What frames that end together share (min/max share one deque): a rows or range frame's
    kind and end; None for a window's entries (the windows' bounds, shared by all)."""
    return None if frame is None else (frame.kind, frame.end)


#: aggregations whose value over one row is that row's value (nulls and NaN included)
ONE_ROW = ("sum", "min", "max")


@stage("evaluate")
def evaluate(
    entries: Sequence[Entry], table: pa.Table, frames: dict, times_col: ArrowColumn | None
) -> list[ArrowColumn]:
    """Every entry's column over the bounds of its frame (``frames``: frame ->
    :class:`~windowagg.engine.sweep.Frames`, one answer per row, or per given pair of
    bounds: a window's rows), in the order of ``entries``."""

    columns: dict[str, Column] = {}
    picks: dict[tuple, np.ndarray] = {}  # (column, min or max, frame) -> selected rows
    out = []
    for e in entries:
        fr = frames[e.frame]
        if e.sql in ONE_ROW and e.column and not (e.counts or e.other or e.states):
            one = fr.one_row()
            if one is not None:  # every window one row (one slice): the row's value
                col = table.column(e.column).combine_chunks()
                out.append((col if one is True else take(col, one)).cast(e.type))
                continue
        if e.column is None:  # count(*): the frame's rows
            lo, hi = fr.bounds()
            out.append(pa.array(hi - lo, pa.int64()))
            continue
        if e.column not in columns:
            columns[e.column] = Column(table.column(e.column).combine_chunks())
        col = columns[e.column]
        for c in (e.other, e.counts, *e.states):
            if c is not None and c not in columns:
                columns[c] = Column(table.column(c).combine_chunks())
        if e.sql in ("min", "max", "max_by", "min_by"):
            by = e.column if e.other is None else e.other  # what is compared
            if (by, e.sql, e.frame) not in picks:  # every frame ending with this one
                group = [
                    x.frame
                    for x in entries
                    if (x.other or x.column, x.sql) == (by, e.sql)
                    and _ends(x.frame) == _ends(e.frame)
                ]
                group = list(dict.fromkeys(group))
                rows = select_rows(columns[by], e.sql, [frames[f] for f in group])
                picks.update({(by, e.sql, f): r for f, r in zip(group, rows)})
            pick = picks[(by, e.sql, e.frame)]
            out.append(_select(col, fr, e, pick) if e.other is None else _take(col.array, pick))
            continue
        if e.states:  # partials: each slice's state
            out.append(_states([columns[c] for c in e.states], fr, e))
            continue
        if e.other is not None:
            out.append(_comoments(col, columns[e.other], fr, e))
            continue
        counts = None if e.counts is None else columns[e.counts]
        out.append(_entry(col, fr, times_col, e, counts))
    return out


def _entry(
    col: Column, fr: Frames, times_col: ArrowColumn | None, e: Entry, counts: Column | None = None
) -> pa.Array:
    if e.sql in ("first", "last"):
        lo, hi = fr.bounds()
        if getattr(e.agg, "ignorenulls", False):
            return _take(col.array, _first_valid(col, lo, hi, e.sql == "first"))
        return _take(col.array, np.where(hi == lo, -1, lo if e.sql == "first" else hi - 1))
    if e.sql is None:
        return _library(col, fr, times_col, e)
    if e.sql == "count":
        return pa.array(_counted(col, fr)[2], pa.int64())
    if e.sql in ("sum", "mean"):
        return _sum(col, fr, e, counts)
    if facts(e.agg).fewest:  # moments and the product (co-moments take two columns)
        return _moment(col, fr, e)
    if facts(e.agg).takes == "booleans":
        return _truths(col, fr, e)
    if e.sql in ("percentile", "median", "percentile_disc", "percentile_approx"):
        return _percentile(col, fr, e)
    if e.sql == "mode":
        return _mode(col, fr)
    if e.sql == "collect_list":
        return _collected(col, fr, e, keep=col.valid)
    if e.sql == "collect_set":
        return _set(col, fr, e)
    raise AssertionError(f"no evaluation of {e.sql!r}")
