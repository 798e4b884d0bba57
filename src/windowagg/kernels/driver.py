"""The one compiled loop behind every FIFO algorithm: whole sliding windows (count or time),
several window sizes at once, or batches of inserts, evicts and queries, inside one call.

The free names ``push, pop, query, query_last, rebuild`` (an algorithm's primitives,
:mod:`.fifo`) and ``lift, combine, identity, lower, inverse`` (a family, :mod:`.families`) are
bound per (algorithm, family) by :func:`.specialize.driver`; numba inlines everything and
caches each pair on disk.
"""

from .jit import kernel
from .layout import ANSWER, COUNT, EVICT, INSERT, QUERY, REBUILD, TIME

# bound per specialization (see the module docstring)
push = pop = query = query_last = rebuild = lift = combine = identity = lower = inverse = None


@kernel
def fifo_run(code, buf, aux, iaux, ptr, tmp, tbuf, mode, values, args, times, size, tsize, out):
    """Run ``mode`` over the state, one answer per query.

    COUNT: for each value, insert it, evict down to ``size`` elements, write the answer to
    ``out[i, 0]``. TIME: the same with non-decreasing ``times``, evicting while the oldest time
    is ``<= t - tsize``. INSERT: insert ``values``. EVICT: evict ``size`` elements. QUERY:
    ``out[0, 0]`` gets the answer. REBUILD: recompute derived partials after the state grew
    (FlatFAT's tree, B-Int's levels). One loop serves every mode, so each primitive is inlined
    once.
    """
    if mode == REBUILD:
        rebuild(aux, ptr)
        return
    tm = tbuf.shape[0] - 1
    n = size if mode == EVICT else (1 if mode == QUERY else values.shape[0])
    now = 0.0
    for i in range(n):
        if mode in (COUNT, TIME, INSERT):
            push(code, buf, aux, iaux, ptr, tmp, values[i], args[i])
        if mode == TIME:
            now = times[i]
            tbuf[(ptr[1] - 1) & tm] = now
        once = mode == EVICT
        while (
            once
            or (mode == COUNT and ptr[1] - ptr[0] > size)
            or (mode == TIME and ptr[1] > ptr[0] and tbuf[ptr[0] & tm] <= now - tsize)
        ):
            pop(buf, aux, iaux, ptr, tmp)
            once = False
        if mode in (COUNT, TIME, QUERY):
            query(buf, aux, iaux, ptr, tmp, tmp, ANSWER)
            out[i, 0] = lower(code, tmp, ANSWER)


@kernel
def fifo_run_sizes(
    code, buf, aux, iaux, ptr, tmp, tbuf, mode, values, args, times, sizes, first, rs, out
):
    """Like :func:`fifo_run` (modes COUNT, TIME and QUERY) for window sharing: ``out[i, j]``
    answers window size ``sizes[j]`` (elements for COUNT, a time span for TIME) from one
    structure holding the largest. ``first`` (int64) and ``rs`` (float64) are work arrays of
    the same length as ``sizes``."""
    k = sizes.shape[0]
    tm = tbuf.shape[0] - 1
    largest = sizes[0]
    for j in range(k):
        largest = max(largest, sizes[j])
        first[j] = ptr[0]  # TIME: the first position inside span j
        rs[j] = sizes[j]
    n = 1 if mode == QUERY else values.shape[0]
    for i in range(n):
        if mode != QUERY:
            push(code, buf, aux, iaux, ptr, tmp, values[i], args[i])
        if mode == TIME:
            now = times[i]
            tbuf[(ptr[1] - 1) & tm] = now
            while ptr[1] > ptr[0] and tbuf[ptr[0] & tm] <= now - largest:
                pop(buf, aux, iaux, ptr, tmp)
            for j in range(k):
                p = max(first[j], ptr[0])
                while p < ptr[1] and tbuf[p & tm] <= now - sizes[j]:
                    p += 1
                first[j] = p
                rs[j] = ptr[1] - p
        elif mode == COUNT:
            while ptr[1] - ptr[0] > largest:
                pop(buf, aux, iaux, ptr, tmp)
        length = ptr[1] - ptr[0]
        for j in range(k):
            r = int(rs[j])
            if r >= length:
                query(buf, aux, iaux, ptr, tmp, tmp, ANSWER)
            elif r <= 0:
                identity(tmp, ANSWER)
            else:
                query_last(buf, aux, iaux, ptr, tmp, r, tmp, ANSWER)
            out[i, j] = lower(code, tmp, ANSWER)


@kernel
def fifo_frames(
    code,
    buf,
    aux,
    iaux,
    ptr,
    tmp,
    cap,
    values,
    args,
    times,
    seg,
    lo_off,
    hi_off,
    lo_unb,
    hi_unb,
    given,
    restart,
    lo_row,
    hi_row,
    pos,
    out,
):
    """Per-row frames over key segments: rows sorted by key, then time; rows ``seg[k]`` to
    ``seg[k + 1] - 1`` are key k's. Row i's frame is rows ``lo_row[i]`` to ``hi_row[i] - 1``:
    read from those arrays when ``given`` (rows frames, or a range frame found before), else
    found here and written to them: the rows j of the key with
    ``times[i] + lo_off <= times[j] <= times[i] + hi_off`` (a side flagged unbounded reaches
    the key's first or last row; a time of -inf, a null time sorted first, is a peer of the
    other -inf and in no finite row's frame).

    Both bounds only move forward, so the frame is a FIFO window: each row is pushed and
    popped once, O(1) per row with the worst-case O(1) algorithms, whatever the frame's
    length; finding the start and popping are one loop. ``out[i, 0]`` gets row i's answer.

    ``pos`` (int64: key, row, lo, hi) says where to start and, on return, where the call
    stopped: at the end (key = number of keys), or when the frame would not fit the state's
    capacity ``cap`` (the caller grows it and calls again; the window's contents are kept).

    ``restart`` (> 0, frames found here): the window starts afresh at every ``restart``-th
    row of a key (emptied, its frame's rows pushed again), as a sweep over frames given in
    runs of that many rows of a long key does (:func:`windowagg.engine.parallel.pieces`), so
    that both give the same answers on any number of threads."""
    nseg = seg.shape[0] - 1
    k, i, lo, hi = pos[0], pos[1], pos[2], pos[3]
    while k < nseg:
        s = seg[k]
        e = seg[k + 1]
        if i <= s:  # a key's first row: the window is empty (emptied after the last key)
            i, lo, hi = s, s, s
            if given:  # answers s.. (a part of them): the window starts at the first's rows
                lo, hi = lo_row[s], lo_row[s]
        while i < e:
            if restart > 0 and not given and i > s and (i - s) % restart == 0:
                c = lo  # a run of a long key: the window afresh
                while c < hi:
                    pop(buf, aux, iaux, ptr, tmp)
                    c += 1
                hi = lo
            if given:
                want_lo = lo_row[i]
                want_hi = hi_row[i]
            else:
                t = times[i]
                if hi_unb:
                    want_hi = e
                else:
                    want_hi = hi
                    while want_hi < e and times[want_hi] <= t + hi_off:
                        want_hi += 1
                want_lo = lo
                if lo_unb:
                    want_lo = s
                elif want_lo < e and times[want_lo] < t + lo_off:
                    want_lo = e  # moves: found below, popping as it goes
            need = want_hi - max(lo, want_lo) if given else max(want_hi, hi) - lo
            if need > cap - 1:
                pos[0], pos[1], pos[2], pos[3] = k, i, lo, hi
                return
            if given:
                while lo < hi and lo < want_lo:
                    pop(buf, aux, iaux, ptr, tmp)
                    lo += 1
                if lo < want_lo:  # rows before the frame that never entered it
                    lo = want_lo
                    hi = want_lo
            elif want_lo > lo:  # one loop finds the frame's start and pops the rows before it
                thr = t + lo_off
                while lo < e and times[lo] < thr:
                    if lo < hi:
                        pop(buf, aux, iaux, ptr, tmp)
                    lo += 1
                if hi < lo:
                    hi = lo
            if want_hi < lo:
                want_hi = lo
            while hi < want_hi:
                push(code, buf, aux, iaux, ptr, tmp, values[hi], args[hi])
                hi += 1
            if not given:
                lo_row[i] = lo
                hi_row[i] = hi
            query(buf, aux, iaux, ptr, tmp, tmp, ANSWER)
            out[i, 0] = lower(code, tmp, ANSWER)
            i += 1
        while lo < hi:  # empty the window for the next key
            pop(buf, aux, iaux, ptr, tmp)
            lo += 1
        k += 1
    pos[0], pos[1], pos[2], pos[3] = k, i, lo, hi
