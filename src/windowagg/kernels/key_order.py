"""The order of rows by key, then time, in compiled passes over many keys at once: keys are
dense codes (0 to m - 1, in the keys' sorted order) and a key's rows are one segment of the
row order.

* :func:`by_code` and :func:`radix_segments`: the order by key, then time, stable (ties keep
  the input's order) for whole-number times: a counting sort by key (parts of the rows on
  threads) into rows packed with their time (one word per row), then each key's rows sorted
  over their own span (insertion for a few rows, radix passes from the least significant
  digit for many, else one most significant digit pass, then insertion, or radix passes for
  a burst), parts of the keys on threads (:func:`windowagg.engine.parallel.on_cores`).
  :func:`order_of_code` and :func:`sort_segments`, for other times: a counting sort by code,
  then each key's rows merge-sorted by time, a key already in time order in one linear check.
* :func:`merged_rows`: two runs sorted by key, then time, merged, stably (the online state's
  parts, as they merge); :func:`part_runs`: each asked key's rows in several such runs laid one
  after another, found through a run's table of its keys or among its distinct keys;
  :func:`merged_runs`: those rows merged key by key in time order, stably, as stretches of
  rows that lie one after another, their times and a column copied (what a query asks of
  them); :func:`rows_by_run`: rows
  split by run again, for one take from each; :func:`asked_keys`: the keys a batch asks for
  and each query's place among them; :func:`query_segments`: each query's segment among
  those keys' rows.
"""

import numpy as np

from .jit import inline, kernel
from .prefetch import AHEAD, ahead


@inline
def _merge_two(ka, oa, i, m, kb, ob, j, n, off, dst_k, dst_o, start):
    """The sorted runs ``ka[i:m]`` and ``kb[j:n]`` merged into ``dst_k`` from ``start`` on,
    ``oa`` and ``ob + off`` moved with them into ``dst_o``; the first run first on ties
    (stable)."""
    for o in range(start, start + (m - i) + (n - j)):
        if j >= n or (i < m and ka[i] <= kb[j]):
            dst_k[o] = ka[i]
            dst_o[o] = oa[i]
            i += 1
        else:
            dst_k[o] = kb[j]
            dst_o[o] = ob[j] + off
            j += 1


@inline
def _merge(src_k, src_o, dst_k, dst_o, a, m, b):
    """The sorted runs ``[a, m)`` and ``[m, b)`` of ``src`` merged into ``dst[a:b]``, the
    left run first on ties (stable)."""
    _merge_two(src_k, src_o, a, m, src_k, src_o, m, b, 0, dst_k, dst_o, a)


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
def merged_rows(ka, ta, kb, tb, dst_k, dst_t, rows):
    """The runs ``a`` and ``b``, each sorted by key ``k``, then time ``t``, merged into
    ``dst_k`` and ``dst_t``; ``rows[o]``: where merged row ``o`` was (``a``'s rows, then
    ``b``'s after them); ``a``'s first on ties (stable)."""
    na, nb = len(ka), len(kb)
    i = 0
    j = 0
    for o in range(na + nb):
        if j >= nb or (i < na and (ka[i] < kb[j] or (ka[i] == kb[j] and ta[i] <= tb[j]))):
            dst_k[o] = ka[i]
            dst_t[o] = ta[i]
            rows[o] = i
            i += 1
        else:
            dst_k[o] = kb[j]
            dst_t[o] = tb[j]
            rows[o] = na + j
            j += 1


@kernel
def asked_keys(q, valid, low, table, wanted, place):
    """The keys asked for (``q[i]`` where ``valid[i]``), all within ``table``'s span from
    ``low`` (``table``: int64, zeroed, one per key of the span): sorted and distinct into
    ``wanted`` (room for one more than the keys), and each query's place among them into
    ``place`` (-1 where not ``valid``). Returns how many keys. Two passes over the queries
    and one over the span, no sort: for keys of a span not much wider than the queries are
    many. The span's pass has no branch (a key of the span is written at the next place
    whether asked for or not, and kept where it is): a branch on each key, asked for by
    chance, is mispredicted often (10,000 keys of a span of 100,000: 142 against 94 us)."""
    for i in range(q.shape[0]):
        if valid[i]:
            table[q[i] - low] = 1
    w = 0
    for k in range(table.shape[0]):
        wanted[w] = low + k
        w += table[k] != 0
        table[k] = w  # an asked key's place, plus one (another key's is never read)
    for i in range(q.shape[0]):
        place[i] = table[q[i] - low] - 1 if valid[i] else -1
    return w


@kernel
def in_order(keys, times):
    """Whether rows are in order by ``keys``, then ``times`` (ties in any order; a NaN time
    is in order with no other of its key): one pass, to its first row out of order."""
    for i in range(keys.shape[0] - 1):
        a = keys[i]
        b = keys[i + 1]
        if a > b or (a == b and not times[i] <= times[i + 1]):
            return False
    return True


@kernel
def by_place(place, counts, order):
    """The rows in order of ``place`` (``-1`` first; ties in their order): a counting sort
    into ``order``; ``counts``: work space, two more than the places."""
    for u in range(counts.shape[0]):
        counts[u] = 0
    for i in range(place.shape[0]):
        counts[place[i] + 2] += 1
    for u in range(1, counts.shape[0]):
        counts[u] += counts[u - 1]
    for i in range(place.shape[0]):
        p = place[i] + 1
        order[counts[p]] = i
        counts[p] += 1


@kernel
def query_segments(place, counts, seg, qseg, of_key):
    """The segments of the keys asked for (in their order, holding ``counts`` rows each)
    that hold rows: ``seg[:m + 1]``; ``qseg[i]``, query ``i``'s (its key's place among them
    ``place[i]``), -1 where its key is null (``place[i]`` -1) or holds no rows; ``of_key`` is
    work space, one per key asked for. Returns ``m``."""
    m = 0
    seg[0] = 0
    for j in range(counts.shape[0]):
        of_key[j] = -1
        if counts[j] > 0:
            of_key[j] = m
            seg[m + 1] = seg[m] + counts[j]
            m += 1
    for i in range(place.shape[0]):
        qseg[i] = of_key[place[i]] if place[i] >= 0 else -1
    return m


@kernel
def part_runs(wanted, distinct, starts, doff, bounds, table, toff, kmin, lo, hi, at, each):
    """Each wanted key's run in each part of rows laid one after another (part ``p``: rows
    ``bounds[p]`` to ``bounds[p + 1] - 1``, sorted by key), found among the part's distinct
    keys (sorted: ``distinct[doff[p]:doff[p + 1]]``, key ``distinct[j]``'s rows from
    ``starts[j]`` to the next one's start, or the part's end);
    ``wanted`` sorted and distinct: key ``wanted[w]``'s rows of part ``p`` are ``lo[p, w]``
    to ``hi[p, w] - 1`` (an empty run where it has none), and it is the part's distinct key
    ``at[p, w]`` (-1: none); ``each[w]``: how many rows its runs hold. Where the part's keys
    are dense, its table (``table[toff[p]:toff[p + 1]]``: for each key from ``kmin[p]`` on,
    its place among the distinct keys, -1 for none) finds each key at once; else a binary
    search per key, from where the key before was found. Returns how many rows the runs
    hold."""
    total = 0
    for w in range(len(wanted)):
        each[w] = 0
    for p in range(len(doff) - 1):
        j = doff[p]  # where the search for the next key starts
        n = doff[p + 1]
        t0 = toff[p]
        size = toff[p + 1] - t0
        k0 = kmin[p]
        for w in range(len(wanted)):
            x = wanted[w]
            found = -1
            if size > 0:  # a table of the part's keys: no search
                # within the table's keys (its last, k0 + size - 1, is a key: no overflow)
                if k0 <= x and x <= k0 + (size - 1):
                    found = table[t0 + (x - k0)]
            else:
                a, b = j, n  # the first distinct key >= x lies in [a, b]
                while a < b:
                    m = (a + b) >> 1
                    if distinct[m] < x:
                        a = m + 1
                    else:
                        b = m
                j = a
                if j < n and distinct[j] == x:
                    found = j
            at[p, w] = found
            if found >= 0:
                lo[p, w] = starts[found]
                hi[p, w] = starts[found + 1] if found + 1 < n else bounds[p + 1]
                total += hi[p, w] - lo[p, w]
                each[w] += hi[p, w] - lo[p, w]
            else:
                lo[p, w] = 0
                hi[p, w] = 0
    return total


@inline
def _first_at(times, a, b, x, after):
    """The first place in ``[a, b)`` (``times`` sorted there) whose time is ``x`` or more
    (``after``: more than ``x``); ``b`` where none is."""
    while a < b:
        m = (a + b) >> 1
        t = times[m]
        if t > x or (not after and t == x):
            b = m
        else:
            a = m + 1
    return a


@inline
def _stretch(times, values, r, end, starts, sizes, m, out_times, out_values, o):
    """Rows ``r`` to ``end - 1`` as stretch ``m``, their times copied to ``out_times`` from
    ``o``, and their ``values`` to ``out_values`` in the same loop where there are any (over
    slices from 0: no wraparound to test, the loop runs faster); the next stretch's number
    and place."""
    k = end - r
    starts[m] = r
    sizes[m] = k
    dst, src = out_times[o : o + k], times[r:end]
    if values.shape[0]:
        into, of = out_values[o : o + k], values[r:end]
        for i in range(k):
            dst[i] = src[i]
            into[i] = of[i]
    else:
        for i in range(k):
            dst[i] = src[i]
    return m + 1, o + k


@kernel
def merged_runs(times, values, lo, hi, starts, sizes, out_times, out_values, counts, head):
    """Each wanted key's runs (``lo[p, w]`` to ``hi[p, w] - 1`` of part ``p``: rows in time
    order, ``times``) merged in time order, the earlier part's row first on ties (parts in
    arrival order: ties in arrival order), key after key, as stretches of rows that lie one
    after another: stretch ``s`` is rows ``starts[s]`` to ``starts[s] + sizes[s] - 1``. The
    rows' times go into ``out_times``, their ``values`` (a column's, as long as the times; an
    empty array: none) into ``out_values``, each key's count into ``counts``; ``head``: work
    space, one per part. Returns the number of stretches. Parts that arrived in about time
    order hardly interleave: where each part's run of a key follows the one before, they are
    its stretches as they are; else, once a part's row is next, its rows that come before
    every other part's next row are found by a binary search. Another column is then
    gathered by copying stretches (:func:`~.passes.stretched`); the one copied here comes with
    the times, in the same loop, its misses overlapping theirs."""
    return merged_keys(
        times, values, lo, hi, 0, lo.shape[1], starts, sizes, out_times, out_values, counts, head
    )


@inline
def merged_keys(
    times, values, lo, hi, first, stop, starts, sizes, out_times, out_values, counts, head
):
    """:func:`merged_runs` of keys ``first`` to ``stop - 1`` alone (their rows from the start
    of ``out_times`` and ``out_values``, key ``w``'s count in ``counts[w]``): the runs of the
    keys from ``stop`` on are fetched ahead as those before it are merged."""
    parts = lo.shape[0]
    o = 0
    m = 0
    keys = lo.shape[1]
    later = max(1, AHEAD // parts)  # about AHEAD runs ahead
    for w in range(first, stop):
        if w + later < keys:  # a later key's runs' first lines, while this one's are merged
            for p in range(parts):
                ahead(times, lo[p, w + later], hi[p, w + later] - lo[p, w + later])
                if values.shape[0]:
                    ahead(values, lo[p, w + later], hi[p, w + later] - lo[p, w + later])
        start = o
        # the common case first: each part's run after the one before (a tie in part order)
        ordered = True
        last = -1
        for p in range(parts):
            if lo[p, w] < hi[p, w]:
                if last >= 0 and times[hi[last, w] - 1] > times[lo[p, w]]:
                    ordered = False
                    break
                last = p
        if ordered:
            for p in range(parts):
                if hi[p, w] > lo[p, w]:
                    m, o = _stretch(
                        times,
                        values,
                        lo[p, w],
                        hi[p, w],
                        starts,
                        sizes,
                        m,
                        out_times,
                        out_values,
                        o,
                    )
            counts[w] = o - start
            continue
        for p in range(parts):
            head[p] = lo[p, w]
        while True:
            best = -1
            for p in range(parts):
                if head[p] < hi[p, w] and (best < 0 or times[head[p]] < times[head[best]]):
                    best = p
            if best < 0:
                break
            r = head[best]
            end = hi[best, w]
            for p in range(parts):  # an earlier part's next row comes first on a tie
                if p != best and head[p] < hi[p, w]:
                    end = _first_at(times, r + 1, end, times[head[p]], p > best)
            m, o = _stretch(times, values, r, end, starts, sizes, m, out_times, out_values, o)
            head[best] = end
        counts[w] = o - start
    return m


@inline
def _run_of(starts, x):
    """The run that place ``x`` lies in (runs from ``starts[r]`` to ``starts[r + 1] - 1``;
    a few runs: a linear scan)."""
    r = 0
    while x >= starts[r + 1]:
        r += 1
    return r


@kernel
def rows_by_run(rows, starts, local, at, bounds, fill):
    """``rows`` (places among runs laid one after another, run ``r`` from ``starts[r]``),
    split by run: ``local`` holds each run's rows (within it) one run after another, in the
    order of ``rows``; ``at[o]``: where row ``o`` went in ``local``; ``bounds``: where each
    run's rows begin in ``local`` (one more than the runs); ``fill``: work space, one per
    run."""
    runs = len(starts) - 1
    for r in range(runs + 1):
        bounds[r] = 0
    for o in range(len(rows)):
        bounds[_run_of(starts, rows[o]) + 1] += 1
    for r in range(runs):
        bounds[r + 1] += bounds[r]
        fill[r] = bounds[r]
    for o in range(len(rows)):
        r = _run_of(starts, rows[o])
        p = fill[r]
        local[p] = rows[o] - starts[r]
        at[o] = p
        fill[r] = p + 1


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
def sortable_keys(times, base, top, null, keys):
    """Whole-number ``times`` as keys from 1 (``base``: the smallest finite time) up: a null
    (``null``, -inf) 0, +inf and NaN ``top``."""
    for i in range(times.shape[0]):
        t = times[i]
        if t != null and t - t == 0:
            keys[i] = np.int64(t - base) + 1
        else:
            keys[i] = 0 if t == null or t < 0 else top


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
