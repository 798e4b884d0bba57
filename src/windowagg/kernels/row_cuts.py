"""Where a ``rows`` frame starts and ends in each part of an online state, found without
reading its rows: selection in sorted lists by pivots.

A key's events lie in several parts (:class:`~windowagg.engine.rolling.part_index.PartIndex`),
each part's run in time order; merged, they are in time order with ties in part order (the
parts lie in arrival order), then row order. A request's ``rows`` frame counts rows of that
merged order back and forth from its last event at or before its time, which ends in each
part where the part's rows at or before the time end (found by the bounds' galloping). A cut
``G`` rows into the merged order is, in each part, some number of its rows: a rows frame
``start`` to ``end`` is the rows between the cuts ``p + start`` and ``p + end + 1``, ``p``
the count of rows at or before the time, less one.

A cut ``D`` rows away from the time's moves each part's cut by ``D`` rows at most, so each
part's cut lies among its ``2 D`` rows around the time's. Among them, a pivot (the middle
row of the part with the most rows left) is ranked by a binary search in every part; rows
before a taken pivot are taken, rows after an untaken one are not, so each pivot halves a
part's rows left: O(k log D) pivots and O(k^2 log^2 D) steps for ``k`` parts, whatever the
key's events, against O(D k) to walk the rows (the classic selection in sorted lists, as in
Frederickson and Johnson, "The complexity of selection and ranking in X + Y and matrices
with sorted columns", 1982; here with the ``k`` parts few, a binary counter's)."""

from .bounds import gallop
from .jit import inline, kernel


@inline
def _cut(times, s, e, up, w, g, lo, hi, out, j):
    """``out[p, j]`` for each part ``p``: the row of part ``p``'s run ``s[p, w]`` to
    ``e[p, w] - 1`` where a cut ``g`` rows into the merged order falls (``g`` clamped to the
    runs' rows), the rows at or before the request's time ending at ``up[p, j]``; ``lo`` and
    ``hi``: work space, one per part, each part's cut known to lie between them."""
    parts = s.shape[0]
    total = 0
    at = 0
    for p in range(parts):
        total += e[p, w] - s[p, w]
        at += up[p, j] - s[p, w]
    if g <= 0 or g >= total:
        for p in range(parts):
            out[p, j] = s[p, w] if g <= 0 else e[p, w]
        return
    d = g - at if g > at else at - g  # each part's cut within d rows of the time's
    for p in range(parts):
        lo[p] = max(s[p, w], up[p, j] - d)
        hi[p] = min(e[p, w], up[p, j] + d)
    while True:
        q = -1
        for p in range(parts):  # the part with the most rows left
            if hi[p] > lo[p] and (q < 0 or hi[p] - lo[p] > hi[q] - lo[q]):
                q = p
        if q < 0:
            break
        mid = (lo[q] + hi[q]) >> 1
        t = times[mid]
        # the pivot's rank with each part's rows before it clamped to where its cut may lie:
        # below g where the pivot is among the first g rows, g or more where it is not
        rank = mid - s[q, w]
        for p in range(parts):
            if p != q:
                rank += gallop(times, lo[p], hi[p], t, p < q) - s[p, w]
        taken = rank < g  # the pivot is among the first g rows: so is every row before it
        for p in range(parts):
            c = mid if p == q else gallop(times, lo[p], hi[p], t, p < q)
            if rank == g:  # the cut falls just before the pivot
                lo[p] = c
            elif taken:
                lo[p] = c + 1 if p == q else c
            else:
                hi[p] = c
        if rank == g:
            break
    for p in range(parts):
        out[p, j] = lo[p]


@kernel
def row_cuts(times, s, e, key, up, start, end, lo_unb, hi_unb, a, b, lo, hi):
    """Each request ``j``'s rows frame (rows ``start`` to ``end`` of the merged order from its
    last event at or before its time; a side flagged unbounded reaches the key's first or
    last event) in each part ``p``: rows ``a[p, j]`` to ``b[p, j] - 1``. ``key[j]``: its
    key's runs ``s[p, key[j]]`` to ``e[p, key[j]] - 1`` (-1: no key, an empty frame);
    ``up[p, j]``: where its rows at or before its time end in each part. ``lo`` and ``hi``:
    work space, one per part."""
    parts = s.shape[0]
    for j in range(key.shape[0]):
        w = key[j]
        if w < 0:
            for p in range(parts):
                a[p, j] = 0
                b[p, j] = 0
            continue
        at = 0
        for p in range(parts):
            at += up[p, j] - s[p, w]
        if lo_unb:
            for p in range(parts):
                a[p, j] = s[p, w]
        else:
            _cut(times, s, e, up, w, at - 1 + start, lo, hi, a, j)
        if hi_unb:
            for p in range(parts):
                b[p, j] = e[p, w]
        else:
            _cut(times, s, e, up, w, at + end, lo, hi, b, j)
        for p in range(parts):
            if b[p, j] < a[p, j]:
                b[p, j] = a[p, j]
