"""The compiled steps of an online state's answers from its parts' summaries
(:mod:`windowagg.engine.rolling.summaries`): every request's frames in every part in one call,
a count, sum or mean from a column's prefix differences added over the parts, the row a
``first`` or ``last`` picks, and the values at the rows a ``max``, ``min``, ``first`` or
``last`` picks. Each replaces a handful of NumPy steps per frame or entry, which cost a single
request more than its work.

A frame's rows in a part are found by the batch engine's own bounds
(:func:`~windowagg.kernels.bounds.at_bounds`; a ``rows`` frame's ends by
:func:`~windowagg.kernels.row_cuts.row_cuts`), so every path finds the same rows. A prefix
difference is FiBA's range query for an invertible aggregation (Tangwongsan, Hirzel and
Schneider, "Optimal and General Out-of-Order Sliding-Window Aggregation", section 2, "Query
Sharing"): the frame's answer from two prefixes per part, with no event read."""

from __future__ import annotations

from .bounds import at_bounds
from .jit import kernel
from .row_cuts import row_cuts

__all__ = ["COUNTED", "MEAN", "ROWS", "SUMS", "ends_at", "frames_at", "summed_at", "values_at"]

#: what :func:`summed_at` gives: the frames' rows, their values counted, their sum, their mean
ROWS, COUNTED, SUMS, MEAN = 0, 1, 2, 3


@kernel
def frames_at(
    times, lo, hi, key, qtimes, lims, rows, offs, unb, cuts, zero, a, b, up, wa, wb, seg, qseg, qt
):
    """Every request's frame ``f`` in every part: rows ``a[f, p * n + j]`` to
    ``b[f, p * n + j] - 1`` for request ``j`` of ``n`` and part ``p``. The requests come
    sorted by key (``key[j]``, among the keys whose runs in part ``p`` are ``lo[p, w]`` to
    ``hi[p, w] - 1``; -1: none), then time (``qtimes``). Frame ``f``: a ``rows`` frame where
    ``rows[f]`` (rows ``cuts[f, 0]`` to ``cuts[f, 1]`` from the last at or before the
    request's time), else a range frame of start offset ``offs[f, 0:2]`` and end offset
    ``offs[f, 2:4]`` (each as two parts, :func:`~windowagg.engine.sweep.offsets`); ``unb[f]``:
    whether its start and its end are unbounded. ``zero``: a zero offset in the times' type.
    Work space: ``up`` (one per part and request), ``wa`` and ``wb`` (one per part), and
    ``seg``, ``qseg`` and ``qt``, where each part's runs are laid as segments (run ``w`` of
    part ``p`` is segment ``2 (p w + w)``, the gap after it the next) and every request once
    per part, part after part, as :func:`~windowagg.kernels.bounds.at_bounds` reads them. A
    request with a null time (``lims[0]``) has empty frames."""
    parts, w = lo.shape
    n = key.shape[0]
    for p in range(parts):
        for k in range(w):
            seg[2 * (p * w + k)] = lo[p, k]
            seg[2 * (p * w + k) + 1] = hi[p, k]
        for j in range(n):
            qseg[p * n + j] = 2 * (p * w + key[j]) if key[j] >= 0 else -1
            qt[p * n + j] = qtimes[j]
    for f in range(rows.shape[0]):
        af, bf = a[f], b[f]
        if not rows[f]:
            at_bounds(
                times,
                seg,
                qseg,
                qt,
                False,
                offs[f, 0:2],
                offs[f, 2:4],
                lims,
                unb[f, 0],
                unb[f, 1],
                af,
                bf,
            )
            continue
        # where each part's rows at or before the request's time end, then the frame's cuts
        at_bounds(times, seg, qseg, qt, False, zero, zero, lims, True, False, af, up)
        a2, b2 = af.reshape((parts, n)), bf.reshape((parts, n))
        row_cuts(
            times,
            lo,
            hi,
            key,
            up.reshape((parts, n)),
            cuts[f, 0],
            cuts[f, 1],
            unb[f, 0],
            unb[f, 1],
            a2,
            b2,
            wa,
            wb,
        )
        for j in range(n):
            if qtimes[j] == lims[0]:  # no time: an empty frame, as the evaluation has it
                for p in range(parts):
                    b2[p, j] = a2[p, j]


@kernel
def summed_at(counts, sums, a, b, how, out, none):
    """``out[j]``: request ``j``'s answer over its frames (rows ``a[p, j]`` to ``b[p, j] - 1``
    of each part ``p``) from a column's prefixes, added over the parts (part ``p``'s laid from
    its first row plus ``p``: one more than its rows): by ``how``, the frames' rows
    (:data:`ROWS`; no prefix read), the values counted (``counts``, :data:`COUNTED`), their
    exact sum (``sums``, :data:`SUMS`: as it is into an int64 ``out``, rounded once into a
    float64 one) or that sum over the count (:data:`MEAN`); ``none[j]``: a sum or mean of no
    value (null, as SQL has it). Returns how many are none."""
    nones = 0
    for j in range(a.shape[1]):
        count = 0
        total = 0
        for p in range(a.shape[0]):
            lo, hi = a[p, j], b[p, j]
            if how == ROWS:
                count += hi - lo
                continue
            count += counts[hi + p] - counts[lo + p]
            if how >= SUMS:
                total += sums[hi + p] - sums[lo + p]
        none[j] = how >= SUMS and count == 0
        nones += none[j]
        if how <= COUNTED:
            out[j] = count
        elif how == MEAN:
            out[j] = float(total) / max(count, 1)
        else:
            out[j] = total
    return nones


@kernel
def ends_at(times, first, a, b, out):
    """``out[j]``: the first row of request ``j``'s frames (rows ``a[p, j]`` to ``b[p, j] - 1``
    of each part ``p``) in the merged order (where ``first``: the earliest time, the earlier
    part on a tie: its first row there), or the last (the latest time, the later part on a
    tie); -1 where no frame holds a row. O(parts) a request."""
    for j in range(a.shape[1]):
        best = -1
        for p in range(a.shape[0]):
            if b[p, j] <= a[p, j]:
                continue
            row = a[p, j] if first else b[p, j] - 1
            if best < 0 or (times[row] < times[best] if first else times[row] >= times[best]):
                best = row
        out[j] = best


@kernel
def values_at(values, valid, has_valid, rows, out, null):
    """``out[j]``: the value at row ``rows[j]``; ``null[j]`` where the row is -1 or (where
    ``has_valid``) holds no value. Returns how many are null."""
    nulls = 0
    for j in range(rows.shape[0]):
        r = rows[j]
        if r < 0:
            out[j] = 0
            null[j] = True
        else:
            out[j] = values[r]
            null[j] = has_valid and not valid[r]
        nulls += null[j]
    return nulls
