"""Per-row frames over key segments (SQL window frames; :mod:`windowagg.frames`), in O(1)
per row whatever the frame.

Rows sorted by key, then time (then order) form one segment per key. Every row's frame is
first found as a range of rows ``[lo, hi)`` (:func:`bounds`: two pointers per key for range
frames, arithmetic for rows frames), once per frame whatever the number of aggregations over
it. Within a segment both bounds only move forward, so the frame is a FIFO window (DABA paper,
Section 2.1): each row enters and leaves it once. The compiled path runs a FIFO algorithm's
kernel over every key in one call per core (:func:`windowagg.kernels.driver.fifo_frames`; the
keys in parts of about equal rows, :func:`parts`, on threads: the kernels release the GIL);
aggregations without a kernel run the same sweep over the Python reference.

Complexity: O(n) combines for n rows with Two-Stacks Lite (amortized; DABA paper, Section
3.1, the Lite variant of Section 4), whatever the frame's length; memory O(longest frame).
Nothing subtracts on eviction, so float sums do not drift (the table engine's float sums and
means are exactly rounded instead: :mod:`windowagg.kernels.exact_sums`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..aggregations import AggLike, AggregationProtocol, check_values, facts, resolve
from ..fifo import fifo
from ..frames import Frame
from ..kernels import order_stats
from ..kernels.bounds import range_bounds, rows_bounds
from ..kernels.order_stats import NEAREST, distinct_frames, sorted_ids, span_ids
from ..storage import kernel_of
from ..storage.fifo_state import FifoState, capacity_for
from . import parallel
from .columns import Column, limits
from .memory import NO_NULLS, empty, float_input, read_only, zeros
from .stages import stage

__all__ = [
    "FrameBounds",
    "distinct",
    "distinct_ids",
    "order_statistic",
    "quantiles",
    "ranks_of",
    "rolling",
]

#: the times of a sweep over bounds found before (it reads none)
_NO_TIMES = np.empty(0)
#: the FIFO algorithm per-row frames run on (amortized O(1), exact: no subtract-on-evict)
ALGORITHM = "two_stacks_lite"
#: quantiles select in each frame while the frames hold at most this many times the rows
#: (beyond, the rank tree's O(log n) per row wins; ``windowagg bench rolling`` measures both)
SELECT_OVERLAP = 16


def _times(times: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(times, np.int64 if times.dtype == np.int64 else float)


def offsets(f: Frame, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A frame's start and end offsets in the times' type, each as two parts whose sum it is
    (an int64 offset beyond the int64 range, as ``range:-1e19,0`` over int64 times, in two
    halves; any beyond twice that reaches past every time anyway): what
    :func:`windowagg.kernels.bounds.shifted` adds, clamped, to a time (read-only: found
    once per frame and type)."""
    return _offsets(f, times.dtype == np.int64)


@functools.lru_cache(maxsize=256)
def _offsets(f: Frame, whole: bool) -> tuple[np.ndarray, np.ndarray]:
    def parts(x: float | None) -> np.ndarray:
        if not whole:
            return np.array([0.0 if x is None else float(x), 0.0])
        x = 0 if x is None else max(-(2**64) + 2, min(2**64 - 2, int(x)))
        half = x // 2 if abs(x) > 2**63 - 1 else x
        return np.array([half, x - half], np.int64)

    return read_only(parts(f.start)), read_only(parts(f.end))


class FrameBounds:
    """One frame over the rows of a sorted table: every row's frame as rows ``[lo, hi)``,
    found once, by the first aggregation over it (:func:`rolling`) or :meth:`bounds`, and
    shared by the others.

    ``times``: float64 or int64 (:func:`~windowagg.engine.columns.times_of`), ascending
    within each key (a null time sorted first); ``seg``: the rows of key k are ``seg[k]`` to
    ``seg[k + 1] - 1``."""

    def __init__(self, times: np.ndarray, seg: np.ndarray, frame: Frame):
        self.times = _times(times)
        self.seg = np.asarray(seg, np.int64)
        self.frame: Frame | None = frame
        self.lo: np.ndarray | None = None
        self.hi: np.ndarray | None = None
        self._one_row: np.ndarray | bool | None = None  # one_row(), once asked
        self.alone = False
        if frame.kind == "rows":
            n = len(self.times)
            self.lo, self.hi = empty(n, np.int64), empty(n, np.int64)
            start, end = int(frame.start or 0), int(frame.end or 0)
            unbounded = frame.start is None, frame.end is None
            parallel.on_cores(
                lambda piece: rows_bounds(*piece, start, end, *unbounded, self.lo, self.hi),
                parallel.pieces(self.seg),
            )

    @classmethod
    def given(
        cls, times: np.ndarray, lo: np.ndarray, hi: np.ndarray, alone: bool = False
    ) -> FrameBounds:
        """Bounds found elsewhere, one pair per answer (a window's rows, for window
        aggregates): both never decrease; ``times`` are the rows' own. ``alone``: each
        answer from its frame's values alone, whatever other frames the call asks for (the
        frames of point-in-time queries: a query answered alone then equals a backfill)."""
        self = cls.__new__(cls)
        self.alone = alone
        self.times = _times(times)
        self.frame = None
        self.lo, self.hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
        self._one_row = None
        return self

    @functools.cached_property
    def seg(self) -> np.ndarray:
        """The rows of key k are ``seg[k]`` to ``seg[k + 1] - 1`` (given bounds: one segment
        of every row, made where it is asked for)."""
        return np.array([0, len(self.times)], np.int64)

    def holds_own_row(self) -> bool:
        """Whether every row's frame holds the row itself (a per-row frame from at or before
        the row to at or after it), so that no frame is empty."""
        f = self.frame
        if f is None:
            return False
        return (f.start is None or f.start <= 0) and (f.end is None or f.end >= 0)

    def one_row(self) -> np.ndarray | bool | None:
        """Where given bounds hold one row each (windows of one slice each, over a table of
        partials): True where those rows are every row in order, else the rows; None where
        some frame holds another number of rows, for per-row frames and for frames each
        answered alone (point-in-time queries: their evaluators read the row as it is)."""
        if self.frame is not None or self.alone:
            return None
        if self._one_row is None:
            lo, hi = self.bounds()
            one = len(lo) > 0 and bool((hi - lo == 1).all())
            every = one and lo[0] == 0 and lo[-1] == len(lo) - 1 == len(self.times) - 1
            self._one_row = (True if every else lo) if one else False
        return None if self._one_row is False else self._one_row

    @property
    def found(self) -> bool:
        return self.lo is not None

    def offsets(self) -> tuple[float, float, bool, bool]:
        """The frame's offsets as doubles, for the compiled sweep that finds range frames as
        it goes (over doubles only: int64 times have their bounds found first)."""
        f = self.frame
        if f is None:  # given bounds: no offsets to look for
            return 0.0, 0.0, False, False
        start = 0.0 if f.start is None else float(f.start)
        end = 0.0 if f.end is None else float(f.end)
        return start, end, f.start is None, f.end is None

    @stage("bounds")
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Every row's frame as rows ``[lo, hi)`` of the sorted table."""
        if not self.found:
            n = len(self.times)
            lo, hi = empty(n, np.int64), empty(n, np.int64)
            f = self.frame
            assert f is not None  # given bounds are found
            args = (*offsets(f, self.times), limits(self.times), f.start is None, f.end is None)
            parallel.on_cores(  # a long key's runs on several threads too
                lambda piece: range_bounds(self.times, *piece, *args, lo, hi),
                parallel.pieces(self.seg),
            )
            self.lo, self.hi = lo, hi
        assert self.lo is not None and self.hi is not None
        return self.lo, self.hi


@stage("sweep")
def rolling(
    values: np.ndarray,
    frames: FrameBounds,
    agg: AggLike,
    args: np.ndarray | None = None,
    valid: np.ndarray | None = None,
) -> np.ndarray:
    """The aggregate of every row's frame.

    Parameters
    ----------
    values : float64 array
        One value per row, rows sorted by key, then time; NaN is a missing value.
    frames : FrameBounds
        The frame over the same rows; its bounds are found here if not yet.
    agg : aggregation
        Compiled when it has a kernel, else the Python reference.
    args : float64 array, optional
        The args of argmin/argmax.
    valid : bool array, optional
        The rows whose value is not null, where a NaN at such a row is a value (Arrow's and
        Spark's rule): it reaches the ``lift`` of an aggregation without a kernel (the user's
        own) as a float NaN. Without it, NaN is missing (pandas' and numpy's rule).

    Returns
    -------
    numpy.ndarray
        One float64 per row, or per given frame (NaN where the aggregation has no value), or
        an object array of the lowered results for aggregations that do not lower to one number.
    """
    agg = resolve(agg)
    args = values if args is None else args
    kernel = kernel_of(agg)
    if kernel is None:
        if valid is not None and np.isnan(values[valid]).any():
            return _reference(_nan_values(values, valid), args, *frames.bounds(), _NanIsAValue(agg))
        return _reference(values, args, *frames.bounds(), agg)
    family, code = kernel
    check_values(agg, values)
    values, args = float_input(values), float_input(args)  # one compile whatever the caller
    n = len(values)
    given = frames.found
    if given:  # one answer per given frame (a window, for window aggregates)
        lo, hi = frames.bounds()
        n = len(lo)
        seg = np.array([0, n], np.int64)
    else:  # a range frame: the sweep finds it, and keeps it for the next aggregation
        lo, hi, seg = empty(n, np.int64), empty(n, np.int64), frames.seg
    if not given and (frames.times.dtype == np.int64 or parallel.outweighs(frames.seg)):
        # int64 times, or a key of more than a thread's share of the rows: the bounds first,
        # then the frames given, each run of a long key's rows starting afresh at its first
        # frame's rows, the runs on several threads (:func:`windowagg.engine.parallel.pieces`)
        frames.bounds()
        return rolling(values, frames, agg, args, valid)
    times = frames.times if frames.times.dtype != np.int64 else _NO_TIMES  # not read
    out = empty((n, 1))
    # found here: a long key's runs start afresh all the same (the answers of the given runs)
    restart = 0 if given or not parallel.cuts_keys(frames.seg) else parallel.LONG

    def sweep(part: np.ndarray) -> None:  # the keys of one part, on one core
        state = FifoState(ALGORITHM, family, capacity_for(1024))
        pos = np.zeros(4, np.int64)
        while True:
            state.frames(
                code, values, args, times, part, *frames.offsets(), given, restart, lo, hi, pos, out
            )
            if pos[0] >= len(part) - 1:
                break
            state.ensure(2 * state.cap)  # the frame outgrew the state: keep it, and go on

    if not given:  # the keys in parts, each a run of whole keys
        pieces = parallel.parts(seg)
    elif frames.frame is None:  # a window's answers, in blocks
        pieces = parallel.blocks(n)
    else:  # per-row frames found before: keys whole, long ones in runs (fixed cuts)
        pieces = [part for part, _ in parallel.pieces(frames.seg)]
    parallel.on_cores(sweep, pieces)
    if not given:
        frames.lo, frames.hi = lo, hi
    return out[:, 0]


class _Nan:
    """What stands for a NaN that is a value in a FIFO window (a float NaN there is missing)."""

    def __repr__(self) -> str:
        return "NaN"


NAN = _Nan()


def _nan_values(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The values as objects: :data:`NAN` where a valid row holds NaN, NaN (missing) where a
    row is null."""
    out = values.astype(object)
    out[valid & np.isnan(values)] = NAN
    return out


class _NanIsAValue:
    """An aggregation whose ``lift`` takes :data:`NAN` as the float NaN it stands for."""

    def __init__(self, agg: AggregationProtocol):
        self.agg = agg
        self.identity = agg.identity

    def lift(self, x: object) -> object:
        if isinstance(x, tuple):  # an (arg, value) pair
            return self.agg.lift(tuple(math.nan if v is NAN else v for v in x))
        return self.agg.lift(math.nan if x is NAN else x)

    def combine(self, a: object, b: object) -> object:
        return self.agg.combine(a, b)

    def lower(self, p: object) -> object:
        return self.agg.lower(p)

    def __getattr__(self, name: str) -> object:
        return getattr(self.agg, name)


def _reference(values, args, los, his, agg) -> np.ndarray:
    """The Python reference over the same frames: one FIFO window, the frame's rows entering
    at its end and leaving at its start (aggregations without a kernel)."""

    pairs = facts(agg).pairs
    scalar = facts(agg).scalar
    out = empty(len(los), float if scalar else object)
    w = fifo(ALGORITHM, agg, backend="python")
    lo = hi = 0
    for i in range(len(los)):
        while lo < hi and lo < los[i]:
            w.evict()
            lo += 1
        if lo < los[i]:  # rows before the frame never enter it
            lo = hi = int(los[i])
        while hi < his[i]:
            w.insert((args[hi], values[hi]) if pairs else values[hi])
            hi += 1
        r = w.query()
        out[i] = (np.nan if r is None else r) if scalar else r
    return out


def ranks_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row's rank among the values (1-based, distinct per row, ties in row order; 0 for
    NaN, a missing value) and the rows in that order."""
    order = np.argsort(values, kind="stable")  # NaN sort last
    valid = int(np.count_nonzero(~np.isnan(values)))
    ranks = zeros(len(values), np.int64)
    ranks[order[:valid]] = np.arange(1, valid + 1)
    return ranks, order


def order_statistic(ranks: np.ndarray, frames: FrameBounds, q: float, mode: int) -> np.ndarray:
    """The rank (1-based; 0 for an empty frame) of every frame's k-th smallest value, k from
    ``q`` and the frame's count as ``mode`` says (:mod:`windowagg.kernels.order_stats`), from
    every row's rank (distinct per row, 0: no value), compiled: frames that together hold few
    more rows than there are (tumbling windows, runs of rows) by a selection in each
    (:func:`~windowagg.kernels.order_stats.select_quantiles`, O(w) expected per frame), others
    by a tree over the ranks (:func:`~windowagg.kernels.order_stats.rank_quantiles`, O(log n)
    per row and frame, whatever their overlap)."""

    lo, hi = frames.bounds()
    width = hi - lo
    if len(lo) and int(width.sum()) <= SELECT_OVERLAP * max(1, len(ranks)):
        out = empty(len(lo))
        work = empty(max(1, int(width.max())))
        values = np.where(ranks > 0, ranks, np.nan)
        order_stats.select_quantiles(values, lo, hi, float(q), mode, work, out)
        return np.nan_to_num(out, nan=0.0).astype(np.int64)
    picked = empty(len(lo), np.int64)
    order_stats.rank_quantiles(
        ranks, lo, hi, float(q), mode, zeros(len(ranks) + 1, np.int64), picked
    )
    return picked


def quantiles(values: np.ndarray, frames: FrameBounds, q: float) -> np.ndarray:
    """The nearest-rank ``q`` quantile (the ``ceil(q * n)``-th smallest of the frame's n
    values; NaN is missing) of every frame (:func:`order_statistic`)."""

    values = np.ascontiguousarray(values, float)
    ranks, order = ranks_of(values)
    picked = order_statistic(ranks, frames, q, NEAREST)
    out = np.full(len(picked), np.nan)
    some = picked > 0
    out[some] = values[order[picked[some] - 1]]
    return out


def distinct(col: Column, frames: FrameBounds) -> np.ndarray:
    """The number of distinct values (null and NaN missing) of every frame, exactly, compiled
    (:func:`windowagg.kernels.order_stats.distinct_frames`): O(1) per row and frame."""
    ids, m = distinct_ids(col)
    lo, hi = frames.bounds()
    out = empty(len(lo), np.int64)
    distinct_frames(ids, lo, hi, zeros(m, np.int64), out)
    return out


#: whole numbers spanning fewer than this many values more than there are rows are numbered
#: by their distance from the smallest (:func:`~windowagg.kernels.order_stats.span_ids`)
SPAN = 1024


@stage("distinct ids")
def distinct_ids(col: Column) -> tuple[np.ndarray, int]:
    """Every row's value as an id (-1: null or NaN), equal exactly for equal values
    (``-0.0`` is ``0.0``), and ``m``, the ids' bound (every id below it). Integers, times,
    truth values and decimals are numbered as their own whole numbers (a double would merge
    those beyond 2**53), floats as doubles: by their distance from the smallest where they
    are whole numbers of a small range (two compiled passes), else in their order for few
    (one compiled pass) or by :func:`value_ids`."""
    whole = None if pa.types.is_floating(col.type) else col.ints()[0]
    if whole is None and pa.types.is_decimal(col.type):  # beyond 64 bits: Arrow's hash
        enc = pc.dictionary_encode(col.array)
        return pc.fill_null(enc.indices, -1).to_numpy().astype(np.int64), len(enc.dictionary)
    if whole is None:
        values, valid = col.floats(), NO_NULLS  # null is NaN
    else:
        values = read_only(whole)
        valid = read_only(col.valid) if col.array.null_count else NO_NULLS
    n = len(values)
    ids = empty(n, np.int64)
    m = span_ids(values, valid, n + SPAN, ids) if n else 0
    if m >= 0:
        return ids, m
    counted = values if not len(valid) else values[valid]
    if len(counted) < HASHED_FROM:  # few: numbered in their order, in one compiled pass
        some = empty(len(counted), np.int64)
        m = sorted_ids(read_only(counted), np.argsort(counted), some)
    else:
        nan = np.isnan(counted) if counted.dtype.kind == "f" else None
        if nan is not None and nan.any():
            some = empty(len(counted), np.int64)
            some[nan] = -1
            some[~nan], m = value_ids(counted[~nan])
        else:  # every value numbered as it is
            some, m = value_ids(counted)
    if not len(valid):
        return some, m
    ids[:] = -1
    ids[valid] = some
    return ids, m


#: fewer values than this are numbered by a sort (a hash table's set-up costs more)
HASHED_FROM = 1 << 14
#: values sampled, evenly, to judge whether they repeat enough for a hash table
SAMPLE = 4096


def value_ids(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's id (doubles without NaN, or int64), dense in ``0..m-1`` and equal for
    equal values (``-0.0`` is ``0.0``), and ``m``. By a hash table (Arrow's dictionary
    encoding, O(n)) where a sample of the values repeats (then the table stays small: 20x
    faster than a sort for 10M values of 100 or 10,000 distinct ones), else by a sort (numpy's
    ``unique``, which beats the table where nearly every value is new)."""
    n = len(values)
    if n >= HASHED_FROM:
        sample = values[:: n // SAMPLE]
        repeats = len(sample) - len(np.unique(sample))
        # a sample of s values from d distinct ones repeats about s^2 / 2d times (the
        # birthday bound): hashed where that puts d below a quarter of the values
        if 2 * repeats * n > 4 * len(sample) ** 2:
            whole = values.dtype.kind != "f"
            enc = pc.dictionary_encode(pa.array(values if whole else values + 0.0))  # -0.0 + 0.0
            return enc.indices.to_numpy().astype(np.int64, copy=False), len(enc.dictionary)
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int64, copy=False), len(uniq)
