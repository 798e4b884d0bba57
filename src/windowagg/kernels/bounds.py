"""Where every row's frame starts and ends (SQL's RANGE BETWEEN over sorted times): two
pointers per key segment, each moving forward only, so O(rows) whatever the frame's length.
A binary search per row (``np.searchsorted``) costs O(rows log rows) and, at a million rows,
more than the aggregation itself."""

import numpy as np

from .jit import inline, kernel


@inline
def _plus(t, off, low, high):
    """``t + off`` within ``[low, high]``: an int64 sum past either end clamps to it, never
    wraps round (doubles reach -inf or +inf as they are). The test comes before the sum:
    compiled integer sums may not overflow at all (LLVM assumes they do not)."""
    if off > 0 and t > high - off:
        return high
    if off < 0 and t < low - off:
        return low
    return t + off


@inline
def shifted(t, off, low, high, null):
    """A frame's bound ``t + off[0] + off[1]`` (an offset beyond the int64 range comes in two
    parts of one sign), clamped to ``[low, high]`` (:func:`_plus`); a null time (``null``:
    -inf, or the smallest int64) stays itself (its frame is its peers)."""
    if t == null:
        return t
    return _plus(_plus(t, off[0], low, high), off[1], low, high)


@inline
def past(t, off, high):
    """Whether ``t + off[0] + off[1]`` lies beyond ``high`` (a frame that starts after the
    largest int64 holds no row)."""
    if off[0] > 0 and t > high - off[0]:
        return True
    return off[1] > 0 and t + off[0] > high - off[1]


@inline
def _start(t, lo_off, lims, plain):
    """A range frame's first time for a row at ``t``, and whether it lies past every time
    (doubles: ``plain`` sums; int64: clamped, :func:`shifted` and :func:`past`)."""
    if plain:
        return t + lo_off[0], False
    a = shifted(t, lo_off, lims[1], lims[2], lims[0])
    return a, t != lims[0] and past(t, lo_off, lims[2])


@kernel
def range_bounds(times, seg, home, lo_off, hi_off, lims, lo_unb, hi_unb, lo_row, hi_row):
    """Row i of segment k (rows ``seg[k]`` to ``seg[k + 1] - 1``, times ascending), a run of
    the rows of a key that holds rows ``home[k, 0]`` to ``home[k, 1] - 1`` (the key itself,
    or a piece of a long key: :func:`windowagg.engine.parallel.pieces`), gets the rows
    ``lo_row[i]`` to ``hi_row[i] - 1``: those of its key with
    ``times[i] + lo_off <= times[j] <= times[i] + hi_off`` (bounds by :func:`shifted`: doubles
    or int64, exactly); a side flagged unbounded reaches the key's first or last row. A null
    time (sorted first) is a peer of every other null and in no other row's frame. An empty
    frame has ``lo_row == hi_row``. A piece that starts within its key finds its first row's
    start by a binary search, then moves both pointers on as the key's first piece does."""
    plain = lims[0] == lims[1]  # doubles: -inf and +inf bound every sum as it is
    for k in range(seg.shape[0] - 1):
        s = home[k, 0]
        e = home[k, 1]
        lo = s
        hi = s
        if seg[k] > s and not lo_unb and seg[k] < seg[k + 1]:  # a piece: its first start
            a, after = _start(times[seg[k]], lo_off, lims, plain)
            if after:
                lo = e
            else:
                right = e
                while lo < right:  # the first row at or after the start
                    mid = (lo + right) // 2
                    if times[mid] < a:
                        lo = mid + 1
                    else:
                        right = mid
            hi = lo
        for i in range(seg[k], seg[k + 1]):
            t = times[i]
            if lo_unb:
                lo = s
            else:  # lims: the null time, the smallest and the largest other bound
                a, after = _start(t, lo_off, lims, plain)
                while lo < e and (times[lo] < a or after):
                    lo += 1
            if hi_unb:
                hi = e
            else:
                if hi < lo:
                    hi = lo
                # nulls lie below every end
                b = t + hi_off[0] if plain else shifted(t, hi_off, lims[0], lims[2], lims[0])
                while hi < e and times[hi] <= b:
                    hi += 1
            lo_row[i] = lo
            hi_row[i] = hi if hi > lo else lo


@kernel
def sliding_windows(times, seg, size, slide, limit, count_only, start, lo, hi):
    """The windows ``[k * slide, k * slide + size)`` that hold at least one row (Spark's
    ``window()`` makes no other), per key segment in order of start, with their rows
    ``lo`` to ``hi - 1``; rows with a time of +-inf (null, NaN) are in none. Returns how many;
    with ``count_only`` it only counts (the caller then sizes the outputs). Row i lies in the
    windows ``k`` from ``floor((t - size) / slide) + 1`` to ``floor(t / slide)``; both only
    grow along a key, so each window is made once, by its first row, and two pointers find
    every window's rows. A time beyond ``limit`` (where doubles no longer tell one slide
    from the next) stops it at once: returns -1."""
    m = 0
    for g in range(seg.shape[0] - 1):
        s = seg[g]
        e = seg[g + 1]
        last = -np.inf  # the last window made for this key
        p_lo = s
        p_hi = s
        for i in range(s, e):
            t = times[i]
            if t == -np.inf or t == np.inf:
                continue
            if abs(t) > limit:
                return -1
            first = np.floor((t - size) / slide) + 1
            while first * slide + size <= t:  # rounding of the division
                first += 1
            top = np.floor(t / slide)
            while top * slide > t:
                top -= 1
            k = max(first, last + 1)
            while k <= top:
                if not count_only:
                    a = k * slide
                    while p_lo < e and times[p_lo] < a:
                        p_lo += 1
                    if p_hi < p_lo:
                        p_hi = p_lo
                    while p_hi < e and times[p_hi] < a + size:
                        p_hi += 1
                    start[m] = a
                    lo[m] = p_lo
                    hi[m] = p_hi
                m += 1
                k += 1
            last = max(last, top)
    return m


@kernel
def sliding_windows_int(times, seg, size, slide, lims, count_only, start, end, lo, hi):
    """:func:`sliding_windows` over int64 times (``lims``: the null time, then the smallest
    and the largest int64 a bound may take), in integers: row i lies in the windows ``top -
    d`` for ``d`` from 0 to ``(size - r - 1) // slide``, ``top = t // slide`` and ``r = t %
    slide`` (floor division, as Python's), each made once, by its key's first row in it.
    Every quantity is a distance from ``t`` (``d * slide + r < size``), so nothing
    overflows, and a window's start and end are clamped to the int64 range instead of
    wrapping round (a window reaching past it holds the times within); ``end`` gets each
    window's end."""
    m = 0
    for g in range(seg.shape[0] - 1):
        s = seg[g]
        e = seg[g + 1]
        opened = False
        last = 0  # the index (``t // slide``) of the last window made for this key
        p_lo = s
        p_hi = s
        for i in range(s, e):
            t = times[i]
            if t == lims[0]:
                continue
            top = t // slide
            r = t % slide
            most = (size - r - 1) // slide  # the windows before ``top`` that hold t
            if opened:  # those up to ``last`` are made: at most ``top - last - 1`` before
                far = last < 0 and top > last + lims[2]  # top - last past the int64 range
                most = min(most, lims[2] if far else top - last - 1)
            d = most
            while d >= 0:
                if not count_only:
                    back = d * slide + r  # t - (top - d) * slide
                    a = _plus(t, -back, lims[1], lims[2])
                    b = _plus(t, size - back, lims[1], lims[2])
                    beyond = t > lims[2] - (size - back)  # the end lies past the largest int64
                    while p_lo < e and times[p_lo] < a:
                        p_lo += 1
                    if p_hi < p_lo:
                        p_hi = p_lo
                    while p_hi < e and (times[p_hi] < b or beyond):
                        p_hi += 1
                    start[m] = a
                    end[m] = b
                    lo[m] = p_lo
                    hi[m] = p_hi
                m += 1
                d -= 1
            opened = True
            last = top
    return m


@kernel
def whole_in_place(x, out):
    """``out[i] = round(x[i])`` where ``out`` is ``x``'s own memory seen as int64 (each element
    read before it is written): whole numbers held as doubles become int64 without a copy."""
    for i in range(x.shape[0]):
        out[i] = np.int64(np.rint(x[i]))


@inline
def gallop(times, p, e, t, strict):
    """The first place ``x`` from ``p`` on with ``times[x] > t`` (``strict``) or ``>= t``,
    else ``e`` (times ascending): steps doubling from ``p``, then a binary search in the last
    step, so O(log d) for a place ``d`` rows on, and O(1) for the next row."""
    lo = p - 1  # the last place known before the one sought
    step = 1
    while lo + step < e and (times[lo + step] <= t if strict else times[lo + step] < t):
        lo += step
        step *= 2
    hi = min(lo + step, e)  # the one sought lies in (lo, hi]
    while hi - lo > 1:
        m = (lo + hi) >> 1
        if times[m] <= t if strict else times[m] < t:
            lo = m
        else:
            hi = m
    return hi


@kernel
def at_bounds(times, seg, qseg, qtimes, rows, lo_off, hi_off, lims, lo_unb, hi_unb, lo_row, hi_row):
    """Frames of events placed at other rows' times (point-in-time): query j, of the events of
    segment ``qseg[j]`` (rows ``seg[g]`` to ``seg[g + 1] - 1``, times ascending; -1: none), at
    time ``qtimes[j]``, gets the events ``lo_row[j]`` to ``hi_row[j] - 1``. Queries come sorted
    by segment, then time, so two pointers per segment find every frame in O(events +
    queries). A range frame (``rows`` false) holds the events with ``t + lo_off <= time <= t +
    hi_off``; a rows frame the events ``p + lo_off`` to ``p + hi_off``, ``p`` the last event at
    or before ``t``. A side flagged unbounded reaches the segment's first or last event. A query
    without a segment, or with a null time (``lims[0]``), gets an empty frame; bounds never
    decrease. Range bounds by :func:`shifted` (doubles or int64, exactly). The pointers move
    by :func:`gallop`: O(log d) for a move of d events, so a few queries of a long segment
    (a hot key's request) cost far less than its events; an end at or past the segment's last
    time is its end, in O(1)."""
    prev = -1
    s = e = lo = hi = at = 0
    plain = lims[0] == lims[1]  # doubles: -inf and +inf bound every sum as it is
    lo_n = int(lo_off[0])  # rows frames: whole rows
    hi_n = int(hi_off[0])
    for j in range(qseg.shape[0]):
        g = qseg[j]
        if g < 0:  # no event of its key: sorted first, an empty frame before every other
            lo_row[j] = 0
            hi_row[j] = 0
            continue
        if g != prev:
            prev = g
            s = seg[g]
            e = seg[g + 1]
            lo = hi = at = s
        t = qtimes[j]
        if t == lims[0]:
            lo_row[j] = s
            hi_row[j] = s
            continue
        # a time at or past the segment's last (a request at the newest time) ends at its end
        # at once, where a gallop from the segment's start would cross a hot key's run
        if rows:
            at = e if e > s and times[e - 1] <= t else gallop(times, at, e, t, True)
            a = s if lo_unb else min(max(at - 1 + lo_n, s), e)
            b = e if hi_unb else min(max(at + hi_n, s), e)
        else:
            if lo_unb:
                a = s
            else:
                if plain:
                    first = t + lo_off[0]
                    after = False
                else:
                    first = shifted(t, lo_off, lims[1], lims[2], lims[0])
                    after = past(t, lo_off, lims[2])
                lo = e if after else gallop(times, lo, e, first, False)
                a = lo
            if hi_unb:
                b = e
            else:
                if hi < a:
                    hi = a
                last = t + hi_off[0] if plain else shifted(t, hi_off, lims[0], lims[2], lims[0])
                hi = e if e > s and times[e - 1] <= last else gallop(times, hi, e, last, True)
                b = hi
        lo_row[j] = a
        hi_row[j] = b if b > a else a


@kernel
def frame_totals(prefix, lo, hi, out):
    """``out[i] = prefix[hi[i]] - prefix[lo[i]]``: every frame's total from prefix sums, one
    pass (NumPy's ``prefix[hi] - prefix[lo]`` makes two gathered copies first)."""
    for i in range(lo.shape[0]):
        out[i] = prefix[hi[i]] - prefix[lo[i]]


@kernel
def rows_bounds(seg, home, start, end, lo_unb, hi_unb, lo_row, hi_row):
    """SQL's ROWS BETWEEN: row i of segment k (rows ``seg[k]`` to ``seg[k + 1] - 1``, a run
    of the rows of a key that holds rows ``home[k, 0]`` to ``home[k, 1] - 1``) gets the rows
    ``lo_row[i]`` to ``hi_row[i] - 1``: ``i + start`` to ``i + end`` within its key, a side
    flagged unbounded reaching the key's first or last row; an empty frame has
    ``lo_row == hi_row``."""
    for k in range(seg.shape[0] - 1):
        s = home[k, 0]
        e = home[k, 1]
        for i in range(seg[k], seg[k + 1]):
            a = s if lo_unb else min(max(i + start, s), e)
            b = e if hi_unb else min(max(i + end + 1, s), e)
            lo_row[i] = a
            hi_row[i] = max(a, b)


@kernel
def session_windows(first, last, seg, gap, lims, count_only, start, end, lo, hi):
    """Sessions (Scotty, Section 4), key by key, rows in time order: a row with a time
    (``first`` neither null, ``lims[0]``, nor infinite or NaN) joins the open session of its
    key when it starts at most ``gap`` after the last time (``last``) of the session's last
    row, else opens one. Session j holds rows ``lo[j]`` to ``hi[j] - 1`` and spans
    ``[start[j], end[j])``, ``end`` the last row's ``last`` plus ``gap`` (clamped to the
    int64 range: :func:`_plus`). Returns the number of sessions; ``count_only``: writes
    nothing."""
    m = 0
    for k in range(seg.shape[0] - 1):
        opened = False
        reach = lims[1]  # the open session's last time plus the gap
        for i in range(seg[k], seg[k + 1]):
            a = first[i]
            if a == lims[0] or a - a != 0:
                continue
            if not (opened and a <= reach):
                if not count_only:
                    start[m] = a
                    lo[m] = i
                m += 1
                opened = True
            reach = _plus(last[i], gap, lims[1], lims[2])
            if not count_only:
                hi[m - 1] = i + 1
                end[m - 1] = reach
    return m
