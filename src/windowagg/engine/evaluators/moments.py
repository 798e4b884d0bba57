"""Moments (the variances, standard deviations, skewness, kurtosis) and the product, compiled over
the non-NaN values, and the co-moments of ``(x, y)`` pairs (covariances, the correlation), by
SQL's null rules from the record (:attr:`~windowagg.aggregations.Facts.fewest`,
:attr:`~windowagg.aggregations.Facts.zero_null`,
:attr:`~windowagg.aggregations.Facts.infinity_nan`); over rows that are partials, each slice's
state merged in time order (:mod:`windowagg.kernels.merge`). The frames of point-in-time
queries (:attr:`~windowagg.engine.sweep.FrameBounds.alone`) take each frame's moments from its
values alone (:mod:`windowagg.kernels.exact_moments`), so that a query answered alone gets the
bits a backfill gives; rolling frames of every row take them from the FIFO sweep's merges,
about four times faster."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...aggregations import COMOMENTS, MOMENTS, WELFORD, AggLike, Evaluation, facts, resolve
from ...kernels import exact_moments as exact
from ...kernels.specialize import merge
from ...storage import kernel_for, kernel_of
from .. import parallel
from ..columns import Column
from ..entries import Entry
from ..memory import empty, float_input, zeros
from ..stages import stage
from ..sweep import FrameBounds, rolling
from .common import (
    Inputs,
    counted,
    null_rule,
    prefix_count,
    with_nulls,
)

#: the evaluations this evaluator serves (moments, co-moments, the product)
SERVES = frozenset({Evaluation.MOMENTS, Evaluation.COMOMENTS})
#: the kernel families whose frames :mod:`windowagg.kernels.exact_moments` answers from their
#: values alone (the product is left to the sweep)
ALONE = {WELFORD: exact.WELFORD, MOMENTS: exact.MOMENTS, COMOMENTS: exact.PAIRS}


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    if e.states:  # partials: each slice's state
        return _states([inputs.columns[c] for c in e.states], fr, e)
    if e.other is not None:
        return _comoments(col, inputs.columns[e.other], fr, e)
    return _moment(col, fr, e)


def _moment(col: Column, fr: FrameBounds, e: Entry) -> pa.Array:
    """Moments (stddev, variances, skewness, kurtosis) and the product, compiled over the
    non-NaN values; a frame holding a NaN gives NaN, as Spark's arithmetic does, and so does a
    moment's frame holding an infinity (Spark's running mean turns infinite, and its deviations
    from it NaN)."""
    fewest, zero_division = null_rule(e)
    out = _swept(col.floats(), fr, e.agg)
    lo, hi, count = counted(col, fr)
    nan = col.nans(lo, hi)
    null = count < fewest
    if zero_division:
        null |= np.isnan(out) if nan is None else np.isnan(out) & (nan == 0)
    if nan is not None:
        out[nan > 0] = np.nan
    inf = col.infs(lo, hi) if facts(e.agg).infinity_nan else None
    if inf is not None:
        out[inf > 0] = np.nan
        null &= count < fewest
    return with_nulls(out, null, e.type)


def _states(parts: list[Column], fr: FrameBounds, e: Entry) -> pa.Array:
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
    fewest, zero_division = null_rule(e)
    null = prefix_count(n, lo, hi) < fewest
    odd = prefix_count(~np.isfinite(fields[0]), lo, hi)  # a NaN or an infinite mean
    out[odd > 0] = np.nan  # a slice holding NaN or an infinity: NaN, as Spark's merge gives
    if zero_division:  # NaN from a zero divisor, not from such a mean
        null |= np.isnan(out) & (odd == 0)
    return with_nulls(out, null, e.type)


def _comoments(x: Column, y: Column, fr: FrameBounds, e: Entry) -> pa.Array:
    """covar_samp, covar_pop and corr over the rows where both ``x`` and ``y`` are not null
    (compiled over those without NaN; a frame holding a NaN gives NaN)."""
    both = x.valid & y.valid
    xf, yf = x.floats(), y.floats()
    nan = both & (np.isnan(xf) | np.isnan(yf))
    keep = both & ~nan
    out = _swept(np.where(keep, yf, np.nan), fr, e.agg, np.where(keep, xf, np.nan))
    lo, hi = fr.bounds()
    count = prefix_count(both, lo, hi)
    nans = prefix_count(nan, lo, hi)
    fewest, zero_division = null_rule(e)
    null = count < fewest
    if zero_division:  # NaN from a zero divisor, not from an infinity (Spark's NaN)
        infs = prefix_count(keep & (np.isinf(xf) | np.isinf(yf)), lo, hi)
        null |= np.isnan(out) & (nans == 0) & (infs == 0)
    out[nans > 0] = np.nan
    return with_nulls(out, null, e.type)


def _swept(
    values: np.ndarray, fr: FrameBounds, agg: AggLike, args: np.ndarray | None = None
) -> np.ndarray:
    """Every frame's statistic, as :func:`~windowagg.engine.sweep.rolling` gives it, or, for
    frames to be answered alone, from each frame's values alone."""
    kernel = kernel_of(resolve(agg))
    if fr.alone and kernel is not None and kernel.family in ALONE:
        return _alone(ALONE[kernel.family], kernel.code, values, args, *fr.bounds())
    return rolling(values, fr, agg, args)


@stage("sweep")
def _alone(
    kind: int,
    code: int,
    values: np.ndarray,
    args: np.ndarray | None,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    """The statistic ``code`` of the family ``kind`` over each frame ``[lo, hi)`` of
    ``values`` (pairs with ``args``), compiled, in chunks on the cores: the same bits whatever
    the chunks or the other frames (:mod:`windowagg.kernels.exact_moments`)."""
    x = float_input(values)  # one compile whatever the caller
    y = x if args is None else float_input(args)
    lo, hi = np.ascontiguousarray(lo, np.int64), np.ascontiguousarray(hi, np.int64)
    out = empty(len(lo))
    parallel.by_chunks(
        lambda a, b: exact.exact_moments(kind, code, x, y, lo, hi, a, b, out, *exact.scratch()),
        len(lo),
    )
    return out
