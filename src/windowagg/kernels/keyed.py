"""Rows of many keys in one compiled pass: keys are dense codes (0 to m - 1, in the keys'
sorted order), a key's rows are one segment of the row order, and a slice (Scotty, Section 5:
the span between two window edges) of a key is one cell of a flat array.

* :func:`by_code` and :func:`radix_segments`: the order by key, then time, stable (ties keep
  the input's order) for whole-number times: a counting sort by key (parts of the rows on
  threads) into rows packed with their time (one word per row), then each key's rows sorted
  over their own span (insertion for a few rows, radix passes from the least significant
  digit for many, else one most significant digit pass, then insertion, or radix passes for
  a burst), parts of the keys on threads (:func:`windowagg.engine.parallel.on_cores`).
  :func:`order_of_code` and :func:`sort_segments`, for other times: a counting sort by code,
  then each key's rows merge-sorted by time, a key already in time order in one linear check.
* :func:`slice_cells`, :func:`cell_sums`, :func:`cell_extremes`: the pre-aggregation per (key,
  slice) before any sort (slices are fewer than rows): every key's slices from its first to its
  last are one run of cells, and each row adds itself to its cell, O(n).
"""

import numpy as np

from .jit import inline, kernel


@inline
def _merge(src_k, src_o, dst_k, dst_o, a, m, b):
    """The sorted runs ``[a, m)`` and ``[m, b)`` of ``src`` merged into ``dst[a:b]``, the
    left run first on ties (stable)."""
    i = a
    j = m
    for o in range(a, b):
        if j >= b or (i < m and src_k[i] <= src_k[j]):
            dst_k[o] = src_k[i]
            dst_o[o] = src_o[i]
            i += 1
        else:
            dst_k[o] = src_k[j]
            dst_o[o] = src_o[j]
            j += 1


@inline
def _merge_sort(keys, order, work_keys, work_rows, s, e):
    """``keys[s:e]`` sorted, stably, ``order[s:e]`` moved with them: bottom-up merge passes
    back and forth between the arrays and the work space (at the same places)."""
    width = 1
    src_is_main = True
    while width < e - s:
        for a in range(s, e, 2 * width):
            m, b = min(a + width, e), min(a + 2 * width, e)
            if src_is_main:
                _merge(keys, order, work_keys, work_rows, a, m, b)
            else:
                _merge(work_keys, work_rows, keys, order, a, m, b)
        src_is_main = not src_is_main
        width *= 2
    if not src_is_main:  # the last pass wrote the work space
        for i in range(s, e):
            keys[i] = work_keys[i]
            order[i] = work_rows[i]


@kernel
def sort_segments(times, seg, order, keys, work_keys, work_rows):
    """Each segment of ``order`` sorted by ``times`` of its rows, stably (merge sort, runs of
    the input's order kept); ``keys``, ``work_keys``, ``work_rows``: work space, one entry
    per row (each segment uses its own rows of them: parts of the segments can be sorted on
    several threads at once)."""
    for g in range(seg.shape[0] - 1):
        s = seg[g]
        e = seg[g + 1]
        ordered = True
        for i in range(s, e):
            keys[i] = times[order[i]]
            if i > s and keys[i] < keys[i - 1]:
                ordered = False
        if not ordered:
            _merge_sort(keys, order, work_keys, work_rows, s, e)


#: a run of at most this many rows is sorted by insertion (in the cache)
SMALL_RUN = 32
#: a key of at least this many rows is sorted by least significant digit passes of up to
#: :data:`LSD_BITS` bits; a shorter one by one most significant digit pass, then insertion
LSD_ROWS = 4096
LSD_BITS = 12


@inline
def _insertion(rows, s, e):
    """``rows[s:e]`` sorted by insertion (packed rows: no two are equal)."""
    for i in range(s + 1, e):
        v = rows[i]
        if v >= rows[i - 1]:
            continue
        j = i - 1
        while j >= s and rows[j] > v:
            rows[j + 1] = rows[j]
            j -= 1
        rows[j + 1] = v


@inline
def _lsd(rows, s, e, work, counts, ib):
    """``rows[s:e]`` (packed) sorted by their keys (the bits from ``ib`` up), stably, by least
    significant digit passes over the span of their own keys, of at most :data:`LSD_BITS` bits
    (fewer for a short run); the passes go back and forth between ``rows`` and ``work`` (at
    the run's own places); ``counts``: ``2**LSD_BITS`` entries."""
    lo = rows[s] >> ib
    hi = lo
    for i in range(s, e):
        k = rows[i] >> ib
        lo = min(lo, k)
        hi = max(hi, k)
    bits = 0
    while (hi - lo) >> bits:
        bits += 1
    most = 4  # digits of about the run's length: its counts fit with its rows
    while most < LSD_BITS and (1 << most) < e - s:
        most += 1
    passes = (bits + most - 1) // most
    width = (bits + passes - 1) // passes if passes else 0
    mask = (1 << width) - 1
    base = lo << ib
    shift = ib
    flipped = False  # whether the rows are in the work space
    for _ in range(passes):
        src, dst = (work, rows) if flipped else (rows, work)
        for d in range(mask + 1):
            counts[d] = 0
        for i in range(s, e):
            counts[((src[i] - base) >> shift) & mask] += 1
        total = s
        for d in range(mask + 1):
            c = counts[d]
            counts[d] = total
            total += c
        for i in range(s, e):
            v = src[i]
            d = ((v - base) >> shift) & mask
            j = counts[d]
            dst[j] = v
            counts[d] = j + 1
        flipped = not flipped
        shift += width
    if flipped:
        for i in range(s, e):
            rows[i] = work[i]


@kernel
def radix_segments(rows, seg, work, counts, ib):
    """Each segment of ``rows`` sorted. A row is packed into one int64: its key (a non-negative
    sort key of its time) above bit ``ib``, its row number below (:func:`by_code`), so that no
    two rows are equal, ties in time go by row number (the sort is stable) and a sort moves one
    word per row. A segment already in order is left after one linear check; a short one is
    sorted by insertion; a long one (:data:`LSD_ROWS`) by least significant digit passes over
    the span of its own keys (:func:`_lsd`); others by one most significant digit pass (about
    eight rows per digit, at most 2**14 digits), each digit's rows then by insertion, or, where
    a digit holds more than ``SMALL_RUN`` rows (bursts of equal or near times), by
    :func:`_lsd`. ``work`` (one per row): work space, each segment on its own rows, so that
    parts of the segments sort on several threads at once; ``counts``: 32768 entries, this
    thread's own. A key's rows fit the cache where all rows do not."""
    for g in range(seg.shape[0] - 1):
        s = seg[g]
        e = seg[g + 1]
        if e - s <= SMALL_RUN:
            _insertion(rows, s, e)
            continue
        lo = rows[s] >> ib
        hi = lo
        ordered = True
        for i in range(s, e):
            k = rows[i] >> ib
            lo = min(lo, k)
            hi = max(hi, k)
            if i > s and rows[i] < rows[i - 1]:
                ordered = False
        if ordered:
            continue
        if e - s >= LSD_ROWS:
            _lsd(rows, s, e, work, counts, ib)
            continue
        bits = 0
        while (hi - lo) >> bits:
            bits += 1
        width = 1  # digits: about eight rows each
        while width < 14 and (1 << (width + 3)) < e - s:
            width += 1
        width = min(width, bits)
        shift = bits - width
        digits = 1 << width
        for d in range(digits + 1):
            counts[d] = 0
        for i in range(s, e):
            counts[((rows[i] >> ib) - lo >> shift) + 1] += 1
        counts[0] = s
        for d in range(1, digits + 1):
            counts[d] += counts[d - 1]
        for i in range(s, e):  # stable: each digit's rows in their order
            v = rows[i]
            d = (v >> ib) - lo >> shift
            j = counts[d]
            work[j] = v
            counts[d] = j + 1
        for i in range(s, e):
            rows[i] = work[i]
        a = s  # digit d's rows are now [counts[d - 1], counts[d])
        for d in range(digits):
            b = counts[d]
            if b - a <= SMALL_RUN:
                _insertion(rows, a, b)
            else:
                _lsd(rows, a, b, work, counts[digits + 1 :], ib)
            a = b


@kernel
def slice_index(times, period, offset, limit, out):
    """``out[i]``: the grid step ``j`` with ``j * period + offset <= times[i]`` and the next
    above it; rows without a time (+-inf) get the smallest int64 (in no slice). Returns
    False, at once, at a time beyond ``limit`` (where doubles no longer tell one step from
    the next), else True."""
    none = np.iinfo(np.int64).min
    for i in range(times.shape[0]):
        t = times[i]
        if t == np.inf or t == -np.inf:
            out[i] = none
            continue
        if abs(t) > limit:
            return False
        j = np.floor((t - offset) / period)
        while j * period + offset > t:  # rounding of the division
            j -= 1
        while (j + 1) * period + offset <= t:
            j += 1
        out[i] = np.int64(j)
    return True


@kernel
def step_span(steps):
    """The smallest and largest grid step (the smallest int64, no step, left out): the
    largest and the smallest int64 where there is none."""
    none = np.iinfo(np.int64).min
    lo = np.iinfo(np.int64).max
    hi = none
    for j in steps:
        if j != none:
            lo = min(lo, j)
            hi = max(hi, j)
    return lo, hi


@kernel
def grid_cells(codes, steps, lo, width, cell):
    """One grid for every key (``width`` steps from ``lo``): row i's cell is its code's run
    of ``width`` cells, at its step (-1: no time); no lookup per key."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        cell[i] = -1 if j == none else codes[i] * width + (j - lo)


@kernel
def key_spans(codes, steps, span):
    """``span[2k]`` (from the largest int64) and ``span[2k + 1]`` (from the smallest): code
    k's first and last step among these rows (interleaved: a row touches one cache line)."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        if j == none:
            continue
        k = 2 * codes[i]
        if j < span[k]:
            span[k] = j
        if j > span[k + 1]:
            span[k + 1] = j


@kernel
def keyed_cells(codes, steps, span, cell):
    """Row i's cell: its code's run start minus its first step (``span[2k + 1]``) plus its
    step (-1: no time)."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        cell[i] = -1 if j == none else span[2 * codes[i] + 1] + j


@kernel
def run_cells(steps, seg, cell, code, step, rows):
    """Cells as the runs of equal (key code, grid step) of the rows in order by key and
    step (``steps`` in that order, as doubles, -inf for a row without a step; code k's rows
    are ``seg[k]`` to ``seg[k + 1] - 1``): ``cell[i]`` the cell of the i-th row in that
    order (-1: no step; cells ascend with i), ``code``, ``step`` and ``rows`` (its row count) each
    cell's. One pass in sorted order, every write in sequence. Returns the number of
    cells."""
    j = -1
    for k in range(seg.shape[0] - 1):
        for i in range(seg[k], seg[k + 1]):
            s = steps[i]
            if s == -np.inf:
                cell[i] = -1
                continue
            if j < 0 or code[j] != k or step[j] != s:
                j += 1
                code[j] = k
                step[j] = np.int64(s)
                rows[j] = 0
            cell[i] = j
            rows[j] += 1
    return j + 1


@kernel
def compact_cells(rows, span, base, code, step, new):
    """Drop the cells without a row: the occupied ones numbered anew in order (``rows``
    compacted in place, ``code`` and ``step`` get each one's key code and grid step from
    ``span`` (each code's first step at ``2k``) and ``base`` (each code's first cell);
    ``new[c]``: cell c's new number). Returns how many cells are left."""
    j = 0
    for k in range(base.shape[0] - 1):
        for c in range(base[k], base[k + 1]):
            if rows[c] > 0:
                new[c] = j
                code[j] = k
                step[j] = span[2 * k] + c - base[k]
                rows[j] = rows[c]
                j += 1
    return j


@kernel
def renumbered(cell, new):
    """Every row's cell renumbered in place (``new``; -1, no cell, kept)."""
    for i in range(cell.shape[0]):
        if cell[i] >= 0:
            cell[i] = new[cell[i]]


@kernel
def merge_extremes(lo, hi, counts, lo2, hi2, counts2):
    """Cells' smallest and largest values and counts of another part of the rows
    (``lo2``, ``hi2``, ``counts2``) merged into these, by :func:`cell_extremes`' rules."""
    for c in range(lo.shape[0]):
        if counts2[c] == 0:
            continue
        if counts[c] == 0:
            lo[c] = lo2[c]
            hi[c] = hi2[c]
        else:
            x = lo2[c]
            if x < lo[c] or (lo[c] != lo[c] and x == x):
                lo[c] = x
            x = hi2[c]
            if x != x or (hi[c] == hi[c] and x > hi[c]):
                hi[c] = x
        counts[c] += counts2[c]


@kernel
def cell_rows(cell, valid, rows, order):
    """``rows[c]``: the valid rows in cell c (rows without a time, cell -1, in none).
    ``order`` (here and in the other cell kernels): empty, ``cell[i]`` is row i's; else
    ``cell[i]`` is row ``order[i]``'s (the rows in their cells' order: the cells are then
    written in sequence, the rows read at random)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        r = i if whole else order[i]
        if cell[i] >= 0 and valid[r]:
            rows[cell[i]] += 1


@kernel
def cell_sums(cell, values, valid, sums, counts, order):
    """Each cell's sum and count of the valid values (NaN adds as a value: the sum is NaN)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        c = cell[i]
        r = i if whole else order[i]
        if c >= 0 and valid[r]:
            sums[c] += values[r]
            counts[c] += 1


@kernel
def cell_extremes(cell, values, valid, lo, hi, counts, order):
    """Each cell's smallest and largest valid value, NaN the largest (Spark's order), and the
    count of valid values (0: the cell has none, ``lo``/``hi`` undefined)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        c = cell[i]
        r = i if whole else order[i]
        if c < 0 or not valid[r]:
            continue
        x = values[r]
        if counts[c] == 0:
            lo[c] = x
            hi[c] = x
        else:
            if x < lo[c] or (lo[c] != lo[c] and x == x):
                lo[c] = x
            if x != x or (hi[c] == hi[c] and x > hi[c]):
                hi[c] = x
        counts[c] += 1


@kernel
def first_rows(codes, first):
    """``first[k]`` (filled with the row count): the first row of code k."""
    for i in range(codes.shape[0] - 1, -1, -1):
        first[codes[i]] = i


@kernel
def code_counts(codes, a, b, counts):
    """``counts[k]``: the rows of code k among rows ``[a, b)``."""
    for i in range(a, b):
        counts[codes[i]] += 1


@kernel
def by_code(codes, keys, a, b, place, ib, shift, rows):
    """Rows ``[a, b)`` by code, stably: row i goes to ``place[codes[i]]`` (the place of its
    code's next row, moved on) of ``rows``, packed with its sort key without its ``shift``
    lowest bits: ``keys[i] >> shift << ib | i`` (:func:`radix_segments`; one pass reading
    the rows in order, each code's rows written in one run). Parts of the rows run on several
    threads at once, each with its own ``place``."""
    for i in range(a, b):
        k = codes[i]
        j = place[k]
        rows[j] = keys[i] >> shift << ib | i
        place[k] = j + 1


@kernel
def order_of_code(codes, rows, seg, order):
    """``order``: ``rows`` (a permutation) by code, stably (their order within a code kept);
    ``seg`` (m + 1 entries, zeroed): code k's rows are ``order[seg[k]:seg[k + 1]]``."""
    for i in range(rows.shape[0]):
        seg[codes[rows[i]] + 1] += 1
    for k in range(1, seg.shape[0]):
        seg[k] += seg[k - 1]
    for i in range(rows.shape[0]):
        k = codes[rows[i]]
        order[seg[k]] = rows[i]
        seg[k] += 1
    for k in range(seg.shape[0] - 1, 0, -1):
        seg[k] = seg[k - 1]
    seg[0] = 0


@kernel
def finite_span(times, null):
    """The smallest and largest finite time (not ``null``, -inf or NaN), how many times are
    finite, and whether those are all whole numbers: one pass, doubles or int64."""
    lo, hi, count, whole = times[0], times[0], 0, True
    for t in times:
        if t != null and t - t == 0:  # neither null nor infinite nor NaN
            if count == 0 or t < lo:
                lo = t
            if count == 0 or t > hi:
                hi = t
            count += 1
            whole = whole and t == np.floor(t)
    return lo, hi, count, whole


@kernel
def prefix_sums(x, out):
    """``out[i]``: the sum of ``x[0]`` to ``x[i]`` (integers wrap as int64 does)."""
    total = 0
    for i in range(x.shape[0]):
        total += np.int64(x[i])
        out[i] = total


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
def sortable_keys(times, base, top, null, keys):
    """Whole-number ``times`` as keys from 1 (``base``: the smallest finite time) up: a null
    (``null``, -inf) 0, +inf and NaN ``top``."""
    for i in range(times.shape[0]):
        t = times[i]
        if t != null and t - t == 0:
            keys[i] = np.int64(t - base) + 1
        else:
            keys[i] = 0 if t == null or t < 0 else top


@kernel
def step_keys(steps, keys):
    """Grid steps as sort keys from 1 up (the smallest int64, no step, 0); returns the
    smallest step (0 where there is none) and the largest key."""
    none = np.iinfo(np.int64).min
    lo = np.iinfo(np.int64).max
    for j in steps:
        if j != none and j < lo:
            lo = j
    if lo == np.iinfo(np.int64).max:
        lo = 0
    top = 0
    for i in range(steps.shape[0]):
        j = steps[i]
        keys[i] = 0 if j == none else j - lo + 1
        top = max(top, keys[i])
    return lo, top


@kernel
def descends(x):
    """Whether some value is greater than the next (rows out of order: found at the first
    such pair, usually among the first rows)."""
    for i in range(x.shape[0] - 1):  # noqa: SIM110 (numba compiles no generator here)
        if x[i] > x[i + 1]:
            return True
    return False


@inline
def _time_of(k, base, top, null, last):
    """The time of :func:`sortable_keys`' key ``k`` (0 ``null``, ``top`` ``last``: +inf)."""
    return null if k == 0 else (last if k == top else base + (k - 1))


@kernel
def unpacked(rows, ib, a, b, base, top, null, last, order, times):
    """Packed rows ``[a, b)`` (:func:`by_code`) apart: ``order[i]`` row i's number,
    ``times[i]`` its time from its :func:`sortable_keys` key (0 ``null``, ``top`` ``last``,
    others ``base + key - 1``), in the type of ``times``."""
    mask = (1 << ib) - 1
    for i in range(a, b):
        v = rows[i]
        order[i] = v & mask
        times[i] = _time_of(v >> ib, base, top, null, last)


@kernel
def refined(keys, order, seg, shift, base, top, null, last, full, work_keys, work_rows, times):
    """Rows sorted by their keys without the ``shift`` lowest bits (:func:`by_code`; equal
    ones in row order) sorted by their whole keys: in each segment, each run of rows with
    equal shortened keys and whole keys out of order is merge-sorted (stably) by its whole
    keys, and ``times`` written from them (``full``, ``work_keys``, ``work_rows``: work
    space, one per row, each segment on its own rows). Spread times make runs of one or a
    few rows: one linear pass."""
    for g in range(seg.shape[0] - 1):
        s = seg[g]
        e = seg[g + 1]
        for i in range(s, e):
            full[i] = keys[order[i]]
        a = s
        while a < e:
            b = a + 1
            ordered = True
            while b < e and full[b] >> shift == full[a] >> shift:
                ordered = ordered and full[b] >= full[b - 1]
                b += 1
            if not ordered:
                _merge_sort(full, order, work_keys, work_rows, a, b)
            a = b
        for i in range(s, e):
            times[i] = _time_of(full[i], base, top, null, last)


@kernel
def gather(values, rows, a, b, out):
    """``out[i] = values[rows[i]]`` for i in ``[a, b)``."""
    for i in range(a, b):
        out[i] = values[rows[i]]


@kernel
def scatter(values, rows, a, b, out):
    """``out[rows[i]] = values[i]`` for i in ``[a, b)`` (``rows`` a permutation)."""
    for i in range(a, b):
        out[rows[i]] = values[i]
