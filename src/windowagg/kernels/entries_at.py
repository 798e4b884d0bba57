"""Every entry of point-in-time requests over one column's events in one compiled call: each
frame's bounds (:func:`~.bounds.at_bounds`), then each count, sum, mean, max, min, distinct
count, first or last value over them by the kernels the evaluators call for it
(:func:`~.passes.whole_frame_sums` or :func:`~.exact_sums.exact_sums`,
:func:`~.select_frames.select_frames`, :func:`~.order_stats.span_ids` and
:func:`~.order_stats.distinct_frames`), so that the answers are the evaluation's, and no step
between them waits for Python's lock (an online state's batch on several threads:
:mod:`windowagg.engine.rolling.compiled_at`). Values the evaluators treat apart (NaN, a double
sum beyond the doubles' range, integers whose sums could overflow or that doubles do not hold
exactly, distinct values that are not whole numbers of a small range) are left to them: the
call then says so, and writes nothing the caller keeps."""

import numpy as np

from .bounds import at_bounds
from .exact_sums import exact_sums
from .jit import kernel
from .order_stats import distinct_frames, ids_from, span_ids
from .passes import whole_frame_sums
from .select_frames import select_frames

#: what each entry is (``how``): a count (of rows, or of a column without nulls), a sum or mean
#: of doubles, a sum or mean of integers, a max, a min, a distinct count, the frame's first or
#: last value
COUNT, SUM, MEAN, INT_SUM, INT_MEAN, LARGEST, SMALLEST, DISTINCT, FIRST, LAST = range(10)

#: integers whose largest magnitude times their count is less than this: no frame's sum
#: overflows int64
SMALL_SUMS = 2.0**62
#: integers below this in magnitude are doubles exactly (a max or min compares them so)
EXACT_INTS = 2.0**53


@kernel
def entries_at(
    times,
    seg,
    qseg,
    qtimes,
    lims,
    rows,
    lo_off,
    hi_off,
    unbounded,
    values,
    every,
    how,
    frame,
    limit,
    known,
    lo,
    hi,
    out_f,
    out_i,
    null,
    sums,
    parts,
    overflow,
    keys,
    ids,
    counts,
    dq,
    ptr,
    picks,
):
    """Entry ``e`` (``how[e]``, over frame ``frame[e]``) at every query (segment ``qseg[j]``
    of the events ``times``, -1: none; time ``qtimes[j]``; sorted by segment, then time):
    ``out_i[e]`` (counts, integer sums, an integer column's max, min, first or last) or ``out_f[e]``
    (the others), ``null[e]`` where the frame holds no value. Frame ``f``: a ``rows`` frame
    or a range frame, its offsets ``lo_off[f]`` and ``hi_off[f]``, ``unbounded[f]`` its
    sides (as :func:`~.bounds.at_bounds` takes them), its bounds written to ``lo[f]`` and
    ``hi[f]``. ``values`` (float64 or int64, no null: ``every``, an empty array of flags) is
    the column every entry but a count of rows reads; ``limit``: the span of whole numbers
    a distinct count numbers directly (:func:`~.order_stats.span_ids`). ``known`` (int64:
    whether no value is NaN, whether some value is counted and every one is a whole number
    below 4e18 in magnitude, and then the smallest and the largest; zeros where nothing is
    known) is what the caller
    knows of a set of values that holds these (:func:`~.order_stats.whole_span` of an online
    state's parts): the passes that would find it again over the values are spared, and
    sums of whole numbers that cannot overflow are summed without a check per value. The
    rest is work space: ``sums`` and ``overflow`` one per query, ``parts`` an expansion's room
    (:data:`~.exact_sums.PARTS`), ``keys``, ``ids`` and ``dq`` one per event, ``counts``
    ``limit``, ``ptr`` one, ``picks`` ``(1, queries)``. Returns False (having answered
    none) where a value is one the evaluators treat apart."""
    n = qseg.shape[0]
    floats = values.dtype.kind == "f"
    summed = selected = False
    for e in range(how.shape[0]):
        summed |= how[e] == SUM or how[e] == MEAN or how[e] == INT_SUM or how[e] == INT_MEAN
        selected |= how[e] == LARGEST or how[e] == SMALLEST
    clean, whole, least, most = known[0] != 0, known[1] != 0, known[2], known[3]
    # the largest magnitude, where known: every frame's sum of whole numbers is then exact
    # in int64 where it times the values' count is below SMALL_SUMS
    top = max(abs(float(least)), abs(float(most))) if whole else np.inf
    exact = top * values.shape[0] < SMALL_SUMS
    # values the evaluators treat apart, found first (a reduction the compiler runs several
    # values at a time): nothing is answered then
    if floats and (summed or selected) and not clean:
        nan = False
        for i in range(values.shape[0]):
            nan |= values[i] != values[i]
        if nan:  # a sum, max or min of NaN, as Spark has them, is the evaluators'
            return False
    elif not floats and values.shape[0] and (summed or selected):
        if not (exact and top < EXACT_INTS):  # not known to be small: found over the values
            small = large = values[0]
            for i in range(values.shape[0]):
                small = min(small, values[i])
                large = max(large, values[i])
            top = max(abs(float(small)), abs(float(large)))
        if summed and not top * values.shape[0] < SMALL_SUMS:
            return False  # a frame's sum could overflow int64
        if selected and not top < EXACT_INTS:
            return False  # compared by their rank, not as doubles
    numbered = -1  # the distinct counts' ids, found once
    for e in range(how.shape[0]):
        if how[e] == DISTINCT and numbered < 0:
            if whole and float(most) - float(least) < limit and most - least < limit:
                ids_from(values, every, least, ids)  # numbered from the smallest known
                numbered = most - least + 1
            else:
                numbered = span_ids(values, every, limit, ids)
            if numbered < 0:
                return False
    for f in range(rows.shape[0]):
        at_bounds(
            times,
            seg,
            qseg,
            qtimes,
            rows[f],
            lo_off[f],
            hi_off[f],
            lims,
            unbounded[f, 0],
            unbounded[f, 1],
            lo[f],
            hi[f],
        )
    for e in range(how.shape[0]):
        h, a, b = how[e], lo[frame[e]], hi[frame[e]]
        for j in range(n):
            null[e, j] = b[j] == a[j]
        if h == COUNT:
            for j in range(n):
                out_i[e, j] = b[j] - a[j]
                null[e, j] = False
        elif h in (SUM, MEAN):
            if floats and exact:  # whole numbers whose sums stay in int64: no check
                for j in range(n):
                    t = 0
                    src = values[a[j] : b[j]]  # a slice from 0: no wraparound to test
                    for i in range(src.shape[0]):
                        t += np.int64(src[i])
                    sums[j] = t
            if (floats and exact) or whole_frame_sums(values, a, b, sums):
                for j in range(n):
                    s = float(sums[j])
                    out_f[e, j] = s / (b[j] - a[j]) if h == MEAN and b[j] > a[j] else s
            elif exact_sums(values, a, b, 0, n, h == MEAN, out_f[e], overflow, parts) > 0:
                return False  # a partial sum beyond the doubles: the evaluators sum exactly
        elif h in (INT_SUM, INT_MEAN):
            for j in range(n):
                s = 0
                for i in range(a[j], b[j]):
                    s += values[i]
                out_i[e, j] = s
                if h == INT_MEAN:
                    out_f[e, j] = s / max(b[j] - a[j], 1)
        elif h in (LARGEST, SMALLEST):
            first = a[0] if n else 0
            if floats and h == LARGEST:  # the values as they are
                select_frames(values, a.reshape((1, n)), b, 0, n, first, dq, ptr, picks)
            else:
                sign = 1.0 if h == LARGEST else -1.0
                for i in range(values.shape[0]):
                    keys[i] = sign * values[i]
                select_frames(keys, a.reshape((1, n)), b, 0, n, first, dq, ptr, picks)
            for j in range(n):
                r = picks[0, j]
                if floats:
                    out_f[e, j] = values[r] if r >= 0 else 0.0
                else:
                    out_i[e, j] = values[r] if r >= 0 else 0
        elif h in (FIRST, LAST):
            for j in range(n):
                r = a[j] if h == FIRST else b[j] - 1
                if floats:
                    out_f[e, j] = values[r] if b[j] > a[j] else 0.0
                else:
                    out_i[e, j] = values[r] if b[j] > a[j] else 0
        else:  # a distinct count: never null
            for u in range(numbered):
                counts[u] = 0
            distinct_frames(ids, a, b, counts[:numbered], out_i[e])
            for j in range(n):
                null[e, j] = False
    return True
