"""Exact distinct counts of an online state's frames from each part's rows grouped by value,
without reading the frames' rows.

Each part (:class:`~windowagg.engine.rolling.part_index.PartIndex`) keeps, for a column whose
distinct values are counted, its rows that hold a value (not null, not NaN) sorted by key,
then value, then row (:func:`value_groups`): each key's rows of one value form a group, its
rows in time order. A frame's distinct values are then the values of the groups that hold a
row of the frame, in any part: the groups of the request's key in every part are walked in
value order together (a merge of ``k`` sorted lists), and a group holds a row of its part's
frame where a binary search among its rows finds one (:func:`distinct_at`). That costs
O(σ k log n) for a key of σ distinct values in ``k`` parts, whatever the frame's rows: far
less than reading them where a key's values repeat (a hot key's day of a hundred prices), and
more where they do not, so the caller reads the events then. This is the distinct count as
the number of values with an occurrence in a range, counted from per-value occurrence lists
(the inverted index of a column store), rather than by a sweep over the range."""

from .bounds import gallop
from .jit import inline, kernel


@inline
def _sort(values, rows, work, a, b):
    """``rows[a:b]`` sorted by ``values[rows[i]]``, stably (bottom-up merge sort through
    ``work[a:b]``; runs of 16 by insertion first)."""
    for s in range(a, b, 16):
        e = min(s + 16, b)
        for i in range(s + 1, e):
            r = rows[i]
            x = values[r]
            j = i - 1
            while j >= s and values[rows[j]] > x:
                rows[j + 1] = rows[j]
                j -= 1
            rows[j + 1] = r
    width = 16
    src, dst = rows, work
    swapped = False
    while width < b - a:
        for s in range(a, b, 2 * width):
            m = min(s + width, b)
            e = min(s + 2 * width, b)
            i, j, o = s, m, s
            while i < m and j < e:
                if values[src[j]] < values[src[i]]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < m:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < e:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        swapped = not swapped
        width *= 2
    if swapped:
        for i in range(a, b):
            rows[i] = work[i]


@kernel
def value_groups(keys, values, valid, check, start, end, at, rows, groups, gvalues, work):
    """Rows ``start`` to ``end - 1`` (sorted by key, ``keys``, then time) that hold a value
    (``valid``, read where ``check``; NaN holds none), sorted by key, then value, then row,
    into ``rows`` (laid from place ``at`` on); where each group of one key and value starts,
    as places, into ``groups``, then the end, and each group's value into ``gvalues``
    (:func:`group_starts`). ``work``: work space, as long as ``rows``. Returns the number of
    rows laid and of groups."""
    o = 0
    s = start
    while s < end:
        e = s + 1
        while e < end and keys[e] == keys[s]:
            e += 1
        first = o
        for r in range(s, e):
            x = values[r]
            if (not check or valid[r]) and x == x:
                rows[o] = r
                o += 1
        _sort(values, rows, work, first, o)
        s = e
    return o, group_starts(keys, values, rows, o, at, groups, gvalues)


@kernel
def group_starts(keys, values, rows, n, at, groups, gvalues):
    """Where each group of one key and value starts among ``rows[:n]`` (sorted by key, value
    and row; laid from place ``at`` on), as places, into ``groups``, then the end; and each
    group's value into ``gvalues`` (zero for the end: never read). Returns the number of
    groups."""
    g = 0
    for i in range(n):
        r = rows[i]
        if i == 0 or keys[r] != keys[rows[i - 1]] or values[r] != values[rows[i - 1]]:
            groups[g] = at + i
            gvalues[g] = values[r]
            g += 1
    groups[g] = at + n
    gvalues[g] = 0
    return g


@kernel
def merged_groups(keys, values, older, newer, rows, start, place, out):
    """The rows of two parts' groups, ``older`` and ``newer`` (laid rows, each sorted by key,
    value and row; the newer part's rows right after the older's, from ``start``), as rows of
    the part they merge into, whose row ``i`` is row ``start + rows[i]``: row ``r`` becomes
    ``start + place[r - start]`` (``place``: work space, one per row, the inverse of
    ``rows``), and the two lists merge by key, value and that row into ``out``: one pass,
    where sorting the merged part's groups again would cost a sort. The choice of list is
    computed, not branched on (values in no order mispredict every other branch)."""
    for k in range(rows.shape[0]):
        place[rows[k]] = k
    i = 0
    j = 0
    o = 0
    na = older.shape[0]
    nb = newer.shape[0]
    while i < na and j < nb:
        r = older[i]
        q = newer[j]
        kr, kq = keys[r], keys[q]
        vr, vq = values[r], values[q]
        pr, pq = place[r - start], place[q - start]
        first = (kr < kq) | ((kr == kq) & ((vr < vq) | ((vr == vq) & (pr < pq))))
        out[o] = start + (pr if first else pq)
        i += first
        j += 1 - first
        o += 1
    while i < na:
        out[o] = start + place[older[i] - start]
        i += 1
        o += 1
    while j < nb:
        out[o] = start + place[newer[j] - start]
        j += 1
        o += 1


@kernel
def key_first_groups(keys, rows, groups, g0, g1, distinct, out):
    """Where each of a part's distinct keys (``distinct``, ascending) has its groups begin
    among the part's groups ``g0`` to ``g1 - 1`` (group ``g``'s rows from ``rows[groups[g]]``,
    of key ``keys[rows[groups[g]]]``; sorted by key): ``out[d]``, the first group of a key at
    or after ``distinct[d]``, so that key ``d``'s groups are ``out[d]`` to ``out[d + 1] - 1``
    (the last key's to ``g1 - 1``; none where its rows hold no value). One pass."""
    d = 0
    for g in range(g0, g1):
        k = keys[rows[groups[g]]]
        while d < len(distinct) and distinct[d] <= k:
            out[d] = g
            d += 1
    while d < len(distinct):
        out[d] = g1
        d += 1


@inline
def _span(first, doff, goff, p, d):
    """The groups of part ``p``'s distinct key ``d`` (-1: none; :func:`walked_groups`)."""
    if d < 0:
        return goff[p], goff[p]
    return first[d], first[d + 1] if d + 1 < doff[p + 1] else goff[p + 1] - 1


@kernel
def walked_groups(first, doff, goff, at, place):
    """How many groups the requests walk: request ``j`` (of the asked key ``place[j]``; -1:
    none) each group of its key in every part ``p``, from where the groups of its place among
    the part's distinct keys (``at[p, w]``; -1 where it has no rows there) begin (``first``,
    laid as the distinct keys are: part ``p``'s from ``doff[p]``; :func:`key_first_groups`)
    to where the next key's do; part ``p``'s groups are ``goff[p]`` to ``goff[p + 1] - 2``
    (then its end). O(parts) a request."""
    total = 0
    for j in range(place.shape[0]):
        w = place[j]
        if w < 0:
            continue
        for p in range(at.shape[0]):
            u, v = _span(first, doff, goff, p, at[p, w])
            total += v - u
    return total


@inline
def _holds(rows, u, v, a, b):
    """Whether the group of rows ``rows[u:v]`` (ascending) holds a row from ``a`` to ``b - 1``:
    from its last row or its first where either decides (a frame that ends at its key's last
    row, as a request at the newest time has it, reads the last row alone), else by a search
    among its rows."""
    last = rows[v - 1]
    if last < a:
        return False
    if last < b:
        return True
    first = rows[u]
    if first >= b:
        return False
    if first >= a:
        return True
    i = gallop(rows, u, v, a, False)
    return rows[i] < b


@kernel
def distinct_at(
    gvalues, rows, groups, first, doff, goff, place, key, a, b, lo, hi, out, at, end, cur, full
):
    """``out[j]``: the number of distinct values among each request ``j``'s frames, rows
    ``a[p, j]`` to ``b[p, j] - 1`` of each part ``p``: its key (``key[j]``, -1: none) is the
    part's distinct key ``place[p, key[j]]``, whose groups (:func:`walked_groups`; group ``g``:
    the rows ``rows[groups[g]]`` to ``rows[groups[g + 1] - 1]``, of the one value
    ``gvalues[g]``, ascending) are walked in value order together (a part whose frame is
    empty left out), a value counted where a group of it holds a row of its part's frame
    (:func:`_holds`: O(1) where its last or first row decides; every group of a part whose
    frame holds the key's whole run there, rows ``lo[p, key[j]]`` to ``hi[p, key[j]] - 1``,
    without a read). Each group's value is read beside it, not through its first row (a
    read far into the values for every group). ``at``, ``end``, ``cur`` (each part's next
    group's value, in the values' type) and ``full``: work space, one per part."""
    parts = a.shape[0]
    for j in range(a.shape[1]):
        w = key[j]
        if w < 0:
            out[j] = 0
            continue
        for p in range(parts):
            at[p], end[p] = _span(first, doff, goff, p, place[p, w])
            if a[p, j] >= b[p, j]:
                end[p] = at[p]
            if at[p] < end[p]:
                cur[p] = gvalues[at[p]]
            full[p] = a[p, j] <= lo[p, w] and b[p, j] >= hi[p, w]
        count = 0
        while True:
            q = -1
            for p in range(parts):  # the part whose next group holds the smallest value
                if at[p] < end[p] and (q < 0 or cur[p] < cur[q]):
                    q = p
            if q < 0:
                break
            x = cur[q]
            held = False
            for p in range(parts):
                g = at[p]
                if g < end[p] and cur[p] == x:
                    if not held:
                        held = full[p] or _holds(rows, groups[g], groups[g + 1], a[p, j], b[p, j])
                    at[p] = g + 1
                    if g + 1 < end[p]:
                        cur[p] = gvalues[g + 1]
            count += held
        out[j] = count
