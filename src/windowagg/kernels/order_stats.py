"""Order statistics (nearest-rank quantiles, and the two ranks a percentile interpolates
between), modes and distinct counts over frames whose bounds only move forward
(rolling frames, and the windows of one spec). Quantiles: a Fenwick tree over the values'
ranks holds the frame's values; a row entering or leaving updates one path of it, and the
k-th smallest value is one descent, so a frame costs O(log n) amortized whatever its length (a
sort per frame costs O(w log w)). Frames that overlap little (tumbling windows, runs of rows)
are cheaper one by one: a copy of the frame's values and a selection in it, O(w) expected per
frame, with no sort of all values. Distinct counts: a count per distinct value, and the number
of values whose count is not zero, O(1) per row."""

import math

import numpy as np

from .jit import inline, kernel

#: which rank of a frame's c values a quantile ``q`` picks: the nearest rank ``ceil(q * c)``,
#: or the floor or the ceiling of the 0-based ``(c - 1) * q`` plus one (a percentile
#: interpolates between those two)
NEAREST, BELOW, ABOVE = 0, 1, 2


@inline
def _kth(q, mode, c):
    if mode == NEAREST:
        return max(1, math.ceil(q * c))
    pos = (c - 1) * q
    return (math.floor(pos) if mode == BELOW else math.ceil(pos)) + 1


@kernel
def rank_quantiles(ranks, lo, hi, q, mode, tree, out):
    """``out[j]``: the rank (1-based, into the sorted values) of the k-th (:func:`_kth`)
    smallest value among rows ``lo[j]`` to ``hi[j] - 1`` (c of them have a value), or 0 if
    none. ``ranks[i]``: row i's rank among all values (distinct per row; 0 for a row without
    a value, never counted). ``tree`` (int64, one more than the rows, zeroed) is work space.
    Both bounds never decrease."""
    size = tree.shape[0] - 1
    top = 1
    while top * 2 <= size:
        top *= 2
    a = 0
    b = 0
    count = 0
    for j in range(lo.shape[0]):
        while a < lo[j]:
            if a < b and ranks[a] > 0:  # leaves: it entered before
                r = ranks[a]
                while r <= size:
                    tree[r] -= 1
                    r += r & -r
                count -= 1
            a += 1
        if b < a:  # rows before the frame that never entered it
            b = a
        while b < hi[j]:
            if ranks[b] > 0:
                r = ranks[b]
                while r <= size:
                    tree[r] += 1
                    r += r & -r
                count += 1
            b += 1
        if count == 0:
            out[j] = 0
            continue
        k = _kth(q, mode, count)
        pos = 0
        step = top
        while step > 0:  # the largest pos with fewer than k values at ranks <= pos
            nxt = pos + step
            if nxt <= size and tree[nxt] < k:
                pos = nxt
                k -= tree[nxt]
            step //= 2
        out[j] = pos + 1
    while a < b:  # leave the tree zeroed
        if ranks[a] > 0:
            r = ranks[a]
            while r <= size:
                tree[r] -= 1
                r += r & -r
        a += 1


@kernel
def select_quantiles(values, lo, hi, q, mode, work, out):
    """``out[j]``: the k-th (:func:`_kth`) smallest of the c values (NaN: none) among rows
    ``lo[j]`` to ``hi[j] - 1``, NaN if c is 0. ``work`` (float64, as long as the longest frame)
    holds a frame's values while they are selected from: quickselect with a random pivot and a
    three-way partition (runs of equal values settle at once), O(w) expected per frame. Any
    bounds."""
    for j in range(lo.shape[0]):
        c = 0
        for i in range(lo[j], hi[j]):
            if values[i] == values[i]:  # not NaN
                work[c] = values[i]
                c += 1
        if c == 0:
            out[j] = np.nan
            continue
        k = _kth(q, mode, c) - 1
        a = 0
        b = c - 1
        while a < b:
            p = work[np.random.randint(a, b + 1)]
            lt = a
            i = a
            gt = b
            while i <= gt:  # [a, lt): below p, [lt, i): equal, (gt, b]: above
                x = work[i]
                if x < p:
                    work[i] = work[lt]
                    work[lt] = x
                    lt += 1
                    i += 1
                elif x > p:
                    work[i] = work[gt]
                    work[gt] = x
                    gt -= 1
                else:
                    i += 1
            if k < lt:
                b = lt - 1
            elif k > gt:
                a = gt + 1
            else:
                work[k] = p
                break
        out[j] = work[k]


@kernel
def distinct_frames(ids, lo, hi, counts, out):
    """``out[j]``: the number of distinct values among rows ``lo[j]`` to ``hi[j] - 1``.
    ``ids[i]``: row i's value as a dense id (-1: no value, never counted); ``counts`` (int64,
    one per id, zeroed) is work space. Both bounds never decrease. A frame that starts at or
    after the end of the one before (a key's frame after another key's, a tumbling window)
    starts a new run with an empty window, without taking the rows before out one by one:
    each count holds its run above its low 32 bits (a frame holds fewer than 2**32 rows), and
    a count of an earlier run reads as none."""
    a = 0
    b = 0
    distinct = 0
    top = np.int64(0)  # the current run, above the counts' 32 bits
    for j in range(lo.shape[0]):
        if lo[j] >= b:  # nothing of the window is in this frame: a new run, empty
            top += np.int64(1) << 32
            distinct = 0
            a = b = lo[j]
        else:
            while a < lo[j]:
                x = ids[a]
                if x >= 0:
                    counts[x] -= 1
                    if counts[x] == top:
                        distinct -= 1
                a += 1
        while b < hi[j]:
            x = ids[b]
            if x >= 0:
                c = counts[x]
                if c < top:  # counted in an earlier run: none in this one
                    c = top
                if c == top:
                    distinct += 1
                counts[x] = c + 1
            b += 1
        out[j] = distinct


@kernel
def sorted_ids(values, order, ids):
    """Each value's id (``ids``, as ``value_ids`` numbers them: dense in ``0..m-1``, equal for
    equal values, ``-0.0`` as ``0.0``; -1 for NaN), given ``order``, the values' ascending
    order (NaN last); returns ``m``. One pass, each value compared with the one before in its
    own type (whole numbers beyond 2**53 exactly): few values are numbered faster by it than
    by ``numpy.unique``, whose fixed cost dominates them."""
    m = 0
    last = 0
    for i in range(order.shape[0]):
        r = order[i]
        x = values[r]
        if x != x:  # NaN
            ids[r] = -1
            continue
        if m == 0 or x != values[last]:
            m += 1
            last = r
        ids[r] = m - 1
    return m


#: the largest int64 (the smallest is one less than its negation)
_MOST = np.int64(2**63 - 1)


@kernel
def whole_span(values, valid):
    """What numbering distinct values (:func:`span_ids`), summing them exactly and checking
    them for NaN need to know of ``values`` (``valid``: which rows hold one, an empty array
    meaning every row), in one pass: the smallest and the largest counted value as int64
    (a NaN is not counted; ``_MOST`` and ``-_MOST - 1`` where none is), whether some counted
    value is not a whole number that converts to int64 exactly (a fraction, or a double of
    4e18 or more in magnitude), and whether some valid value is NaN. An online state keeps
    these of each part (:class:`~windowagg.engine.rolling.part_index.Spans`), so that a
    batch's compiled call (:func:`~.entries_at.entries_at`) need not find them again."""
    n = values.shape[0]
    top = 4.0e18 if values.dtype.kind == "f" else np.inf  # an integer converts exactly
    lo = _MOST
    hi = -_MOST - 1
    odd = False  # a fraction, or a double too large: noted without a branch per value
    nan = False
    every = valid.shape[0] == 0
    # the smallest and largest as int64, whose compares LLVM runs several at a time (a chain
    # of double compares bounds the loop at one value per compare's latency)
    for i in range(n):
        x = values[i]
        held = every or valid[i]
        use = held and x == x
        nan |= held and x != x
        large = abs(x) >= top
        odd |= use & ((x - np.floor(x) > 0) | large)
        w = np.int64(x) if use and not large else np.int64(0)
        lo = min(lo, w if use else _MOST)
        hi = max(hi, w if use else -_MOST - 1)
    return lo, hi, odd, nan


@inline
def ids_from(values, valid, lo, ids):
    """``ids[i]``: value i's distance from ``lo`` (each counted value a whole number of at
    least ``lo``), -1 where ``valid`` is False (empty: every row holds a value) or it is NaN."""
    every = valid.shape[0] == 0
    for i in range(values.shape[0]):
        x = values[i]
        ids[i] = np.int64(x) - lo if (every or valid[i]) and x == x else -1


@kernel
def span_ids(values, valid, limit, ids):
    """Each value's id as its distance from the smallest (``ids``: -1 where ``valid`` is
    False, an empty ``valid`` meaning every row, or the value is NaN), where every counted
    value is a whole number (a double's below 4e18 in magnitude, so that it converts to
    int64 exactly) and they span fewer than ``limit`` values; returns the span ``m`` (ids in
    ``0..m-1``, equal exactly for equal values, ``-0.0`` as ``0.0``), or -1 where they do not
    fit (``ids`` then unset). Two passes (:func:`whole_span`, then the ids) and no hash or
    sort: the values of a small range of whole numbers (codes, counts, small ids) numbered
    directly."""
    lo, hi, odd, _ = whole_span(values, valid)
    if lo > hi:  # no value counted
        for i in range(values.shape[0]):
            ids[i] = -1
        return 0
    if odd:
        return -1
    # apart by fewer than ``limit`` (in doubles first: whole numbers far apart would overflow)
    if not float(hi) - float(lo) < limit + 4096.0 or not hi - lo < limit:
        return -1
    ids_from(values, valid, lo, ids)
    return hi - lo + 1


@kernel
def mode_frames(ids, lo, hi, tree, out):
    """``out[j]``: the smallest id among the most frequent ids of rows ``lo[j]`` to
    ``hi[j] - 1`` (-1: none). ``ids[i]``: row i's value as a dense id in the values' order (-1:
    no value); ``tree`` (int64, zeroed, twice a power of two at least the ids' count) holds
    each id's count at its leaf and the largest count below each node, so that a row entering
    or leaving costs O(log u) and the answer is one descent. Both bounds never decrease."""
    size = tree.shape[0] // 2
    a = 0
    b = 0
    for j in range(lo.shape[0]):
        while a < lo[j]:
            if a < b and ids[a] >= 0:
                _bump(tree, size, ids[a], -1)
            a += 1
        if b < a:
            b = a
        while b < hi[j]:
            if ids[b] >= 0:
                _bump(tree, size, ids[b], 1)
            b += 1
        top = tree[1]
        if top == 0:
            out[j] = -1
            continue
        node = 1
        while node < size:  # the leftmost leaf holding the largest count
            node = 2 * node if tree[2 * node] == top else 2 * node + 1
        out[j] = node - size
    while a < b:  # leave the tree zeroed
        if ids[a] >= 0:
            _bump(tree, size, ids[a], -1)
        a += 1


@inline
def _bump(tree, size, i, delta):
    node = size + i
    tree[node] += delta
    node //= 2
    while node >= 1:
        tree[node] = max(tree[2 * node], tree[2 * node + 1])
        node //= 2
