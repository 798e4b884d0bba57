"""Counts, sums and means, and truth values: by SQL's rules from prefix sums and counts over the
frames' bounds. Integer and decimal sums are exact prefix-sum differences (integers wrap as
Java's longs do where the entry says so, else an overflow raises); float sums are exactly
rounded (:func:`float_sums`: a frame's sum does not depend on the other frames asked, so a
point-in-time query alone gets what it gets among many) and means are those sums over the
counts; a NaN in a frame makes its sum or mean NaN. ``count_if``, ``bool_and`` and
``bool_or`` from prefix counts of the true and the non-null values."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pyarrow as pa

from ...aggregations import Evaluation
from ...errors import ArithmeticOverflowError
from ...kernels.exact_sums import PARTS, exact_sums
from ...kernels.passes import whole_frame_sums, whole_prefix
from .. import parallel
from ..columns import Column, totals
from ..entries import Entry
from ..memory import NO_NULLS, empty, read_only
from ..sweep import FrameBounds
from .common import (
    Inputs,
    counted,
    decimal_array,
    prefix_count,
    with_nulls,
)

#: the evaluations this evaluator serves (counts, sums, means, truth values)
SERVES = frozenset(
    {
        Evaluation.COUNT,
        Evaluation.SUM,
        Evaluation.MEAN,
        Evaluation.COUNT_TRUE,
        Evaluation.EVERY,
        Evaluation.SOME,
    }
)


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    if e.evaluation is Evaluation.COUNT:
        return with_nulls(counted(col, fr)[2], NO_NULLS, pa.int64())
    if e.evaluation in (Evaluation.SUM, Evaluation.MEAN):
        return _sum(col, fr, e, None if e.counts is None else inputs.columns[e.counts])
    return _truths(col, fr, e)


def _sum(col: Column, fr: FrameBounds, entry: Entry, counts: Column | None = None) -> pa.Array:
    """sum, or mean (``counts``: rows that are partial sums, and their value counts)."""

    if counts is not None:
        lo, hi = fr.bounds()
        cs = counts.prefix_sums()[0]
        count = totals(cs, lo, hi)
        if pa.types.is_floating(col.type):
            total = _sum(col, fr, replace(entry, evaluation=Evaluation.SUM, type=pa.float64()))
            total = total.to_numpy(zero_copy_only=False)
            null = count == 0
            np.maximum(count, 1, out=count)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.divide(total, count, out=empty(len(count)))
            return with_nulls(mean, null, entry.type)
    if pa.types.is_decimal(col.type) or not pa.types.is_floating(col.type):
        if counts is None:
            lo, hi, count = counted(col, fr)
        null = count == 0
        cs, scale = col.prefix_sums()
        total = totals(cs, lo, hi)
        if entry.evaluation is Evaluation.SUM:
            if pa.types.is_decimal(col.type):
                return decimal_array(total, null, entry.type)
            if not entry.wraps:
                _no_overflow(col, lo, hi, entry)
            return with_nulls(total, null, entry.type)
        # mean of integers or decimals, from the exact sum
        if pa.types.is_decimal(col.type):
            return decimal_array(
                _mean_half_up(total, count, entry.type.scale - scale), null, entry.type
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / np.maximum(count, 1)
        risky, exact = _exact_sums(col, lo, hi)  # where int64 sums wrap: Spark sums doubles
        mean[risky] = [float(t) / max(int(c), 1) for t, c in zip(exact, count[risky])]
        return with_nulls(mean, null, entry.type)
    lo, hi = fr.bounds()
    out = float_sums(col.floats(), lo, hi, mean=entry.evaluation is Evaluation.MEAN)
    nan = col.nans(lo, hi)
    if nan is not None:
        out[nan > 0] = np.nan
    if not col.array.null_count and fr.holds_own_row():  # no frame without a value
        return with_nulls(out, NO_NULLS, entry.type)
    return with_nulls(out, counted(col, fr)[2] == 0, entry.type)


#: whole numbers are summed exactly as int64 from this many on: frame by frame
#: (:func:`_whole_frames`) where the frames read each value twice or less, else from prefix
#: sums (:func:`_whole_sums`)
WHOLE_FROM = 1 << 12


def float_sums(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, mean: bool = False
) -> np.ndarray:
    """Each frame's sum of ``values`` (NaN skipped), exactly rounded
    (:mod:`windowagg.kernels.exact_sums`): the same whatever other frames the call asks for,
    in chunks on the cores; frames whose partial sums leave the doubles' range summed exactly
    here (+-inf where the sum itself does). ``mean``: each sum over its count of values (NaN
    where none)."""
    n = len(lo)
    values = read_only(values)  # as a column's values come: one compile of the kernel
    lo, hi = np.ascontiguousarray(lo, np.int64), np.ascontiguousarray(hi, np.int64)
    if len(values) >= WHOLE_FROM:  # few values: the kernel costs less than the checks
        # each value read twice or less: frame by frame (prefix sums write and read each)
        by_frame = int(np.subtract(hi, lo).sum()) <= 2 * len(values)
        whole = (_whole_frames if by_frame else _whole_sums)(values, lo, hi, mean)
        if whole is not None:
            return whole
    out, overflow = empty(n), np.zeros(n, bool)
    flagged = 0
    if n:
        flagged = sum(
            parallel.by_chunks(
                lambda a, b: exact_sums(values, lo, hi, a, b, mean, out, overflow, empty(PARTS)),
                n,
            )
        )
    for i in np.flatnonzero(overflow) if flagged else ():
        frame = values[lo[i] : hi[i]]
        total = sum(map(Fraction, frame[np.isfinite(frame)].tolist()), Fraction(0))
        try:
            out[i] = float(total)
        except OverflowError:
            out[i] = math.inf if total > 0 else -math.inf
        if mean:  # as the kernel divides: the rounded sum over the count
            out[i] /= max(1, int(np.isfinite(frame).sum()))
    return out


def _whole_sums(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, mean: bool
) -> np.ndarray | None:
    """Each frame's sum (or mean) as :func:`float_sums` gives it, from exact int64 prefix
    sums (:func:`~windowagg.kernels.passes.whole_prefix`), where every value is a whole
    number and no partial sum can overflow: one pass and O(1) per frame, the sum exact and
    then rounded once to a double; None where the values are not such (NaN, an infinity, a
    fraction, or too large)."""
    sums = empty(len(values) + 1, np.int64)
    if not whole_prefix(values, sums):
        return None
    return _rounded(np.subtract(sums[hi], sums[lo]), lo, hi, mean)


def _whole_frames(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, mean: bool
) -> np.ndarray | None:
    """:func:`_whole_sums`, each frame summed on its own as an exact int64
    (:func:`~windowagg.kernels.passes.whole_frame_sums`), in chunks of the frames on the
    cores: one read of each value a frame holds, and nothing written per value."""
    sums = empty(len(lo), np.int64)
    lo, hi = read_only(lo), read_only(hi)
    fit = parallel.by_chunks(
        lambda a, b: whole_frame_sums(values, lo[a:b], hi[a:b], sums[a:b]), len(lo)
    )
    return _rounded(sums, lo, hi, mean) if all(fit) else None


def _rounded(total: np.ndarray, lo: np.ndarray, hi: np.ndarray, mean: bool) -> np.ndarray:
    """Exact int64 sums of frames with no NaN as the kernel's doubles: each rounded once,
    to nearest; ``mean``: over the frame's rows (NaN where none)."""
    out = total.astype(np.float64)
    if mean:
        count = np.subtract(hi, lo)  # no NaN among the values: every row counts
        with np.errstate(invalid="ignore", divide="ignore"):
            out /= count
        out[count == 0] = np.nan  # as the kernel has it (0 / 0 sets the sign bit)
    return out


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


def _truths(col: Column, fr: FrameBounds, e: Entry) -> pa.Array:
    """count_if, bool_and and bool_or from prefix counts of the true and the non-null values."""

    lo, hi, count = counted(col, fr)
    true = prefix_count(col.valid & (col.floats() == 1.0), lo, hi)
    if e.evaluation is Evaluation.COUNT_TRUE:
        return pa.array(true, pa.int64())
    return with_nulls(
        true == count if e.evaluation is Evaluation.EVERY else true > 0, count == 0, e.type
    )
