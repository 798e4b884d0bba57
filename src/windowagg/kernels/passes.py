"""Compiled passes over one column, each O(n) and chunked on the threads by its caller
(:func:`windowagg.engine.parallel.by_chunks`): prefix sums, whole numbers' sums frame by
frame, the count of NaN or infinite
values, doubles from whole numbers and their span, a gather and a scatter of rows, whether
values descend somewhere."""

import numpy as np

from .jit import inline, kernel
from .prefetch import AHEAD, ahead


@kernel
def prefix_sums(x, out):
    """``out[i]``: the sum of ``x[0]`` to ``x[i]`` (integers wrap as int64 does)."""
    total = 0
    for i in range(x.shape[0]):
        total += np.int64(x[i])
        out[i] = total


@kernel
def whole_prefix(x, out):
    """``out[i]``: the sum of ``x[0]`` to ``x[i - 1]`` as int64 (``out[0]`` is 0), where
    every value is a whole number and the largest magnitude times their count is below
    2**62, so that no partial sum overflows and every frame's sum is a difference of two of
    them, exactly; returns whether they are (NaN and infinities are not; ``out`` is then
    not the sums)."""
    out[0] = 0
    total = 0
    limit = 4.0e18 / max(x.shape[0], 1)  # each magnitude below 2**62 / n, whatever the rounding
    for i in range(x.shape[0]):
        v = x[i]
        if not (v == np.floor(v) and abs(v) < limit):
            return False
        total += np.int64(v)
        out[i + 1] = total
    return True


@kernel
def whole_frame_sums(x, lo, hi, out):
    """``out[j]``: the sum of ``x[lo[j]]`` to ``x[hi[j] - 1]`` as int64, frame by frame,
    where every value read is a whole number and each frame's largest magnitude times its
    count is below 2**62, so that no partial sum overflows and the sum is exact; returns
    whether they are (NaN and infinities are not; ``out`` is then not the sums)."""
    for j in range(lo.shape[0]):
        a = lo[j]
        k = hi[j] - a
        src = x[a : a + k]  # a slice from 0: no wraparound to test per value
        # each magnitude below 4e18 / k (2**62 / k, whatever the rounding): no running largest,
        # whose chain of compares would bound the loop at one value per compare's latency
        limit = 4.0e18 / max(k, 1)
        total = 0
        odd = False  # a fraction, NaN or too large: noted without a branch per value
        for i in range(k):
            v = src[i]
            m = abs(v)
            odd |= (v != np.floor(v)) | (m >= limit)
            total += np.int64(v) if m < limit else 0
        if odd:
            return False
        out[j] = total
    return True


@kernel
def odd_count(x, valid, nan):
    """How many of the valid values (``valid`` empty: every one) are NaN (``nan``), or
    infinite (else)."""
    every = valid.shape[0] == 0
    count = 0
    for i in range(x.shape[0]):
        v = x[i]
        odd = v != v if nan else (v - v != 0 and v == v)
        if odd and (every or valid[i]):
            count += 1
    return count


@kernel
def nan_where_null(x, valid, out):
    """``out[i]``: ``x[i]``, NaN where ``valid[i]`` is false."""
    for i in range(x.shape[0]):
        out[i] = x[i] if valid[i] else np.nan


@inline
def _wider(lo, hi, v):
    """The span ``[lo, hi]`` widened to hold ``v``."""
    return min(lo, v), max(hi, v)


@kernel
def int_span(x):
    """The smallest and largest of integers ``x`` (at least one), in one pass."""
    lo = hi = x[0]
    for v in x:
        lo, hi = _wider(lo, hi, v)
    return lo, hi


@kernel
def doubles_of(x, out):
    """``out[i] = x[i]`` as a double, for whole numbers; returns their smallest and largest
    (as they are), in the same pass."""
    lo = hi = x[0]
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v
        lo, hi = _wider(lo, hi, v)
    return lo, hi


@kernel
def descends(x):
    """Whether some value is greater than the next (rows out of order: found at the first
    such pair, usually among the first rows)."""
    for i in range(x.shape[0] - 1):  # noqa: SIM110 (numba compiles no generator here)
        if x[i] > x[i + 1]:
            return True
    return False


@kernel
def gather(values, rows, a, b, out):
    """``out[i] = values[rows[i]]`` for i in ``[a, b)``. Over slices from 0: an index known
    not to be negative needs no wraparound, and the loop runs a third faster."""
    at, to = rows[a:b], out[a:b]
    for i in range(at.shape[0]):
        to[i] = values[at[i]]


@kernel
def stretched(values, starts, sizes, a, b, at, out):
    """Stretches ``a`` to ``b - 1`` of ``values`` (stretch ``s``: ``sizes[s]`` values from
    ``starts[s]``) laid one after another in ``out`` from ``at``: copies of runs, where a
    :func:`gather` reads an index per value."""
    o = at
    for s in range(a, b):
        if s + AHEAD < b:  # a later stretch's first lines, while this one is copied
            ahead(values, starts[s + AHEAD], sizes[s + AHEAD])
        k = sizes[s]
        dst, src = out[o : o + k], values[starts[s] : starts[s] + k]
        for i in range(k):
            dst[i] = src[i]
        o += k


@kernel
def scatter(values, rows, a, b, out):
    """``out[rows[i]] = values[i]`` for i in ``[a, b)`` (``rows`` a permutation), over slices
    from 0 as :func:`gather`."""
    at, of = rows[a:b], values[a:b]
    for i in range(at.shape[0]):
        out[at[i]] = of[i]
