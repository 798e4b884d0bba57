"""Compiled FIFO aggregators: the ten algorithms of :mod:`windowagg.fifo` as four primitives
each over one state layout, so a single driver (:mod:`.driver`) runs them all.

``lift, combine, identity, inverse`` are free names, bound to one family's functions
(:mod:`.families`) by :func:`.specialize.fifo_primitives`.

State (allocated by :mod:`windowagg.fifo.compiled`): ``buf`` and ``aux`` float64 ``[W, .]``
arrays of partials, ``iaux`` int64 ``[2, .]``, ``ptr`` int64 scalars (``ptr[0]`` = F, the
absolute position of the oldest element, ``ptr[1]`` = E, one past the youngest) and ``tmp``
float64 ``[W, 8]`` scratch partials. Rings are indexed by absolute position ``& (cap - 1)``.

Primitives of algorithm ``a`` (``a_query_last`` for the window-sharing ones, ``a_rebuild``
for FlatFAT and B-Int)::

    a_push(code, buf, aux, iaux, ptr, tmp, x, arg)
    a_pop(buf, aux, iaux, ptr, tmp)
    a_query(buf, aux, iaux, ptr, tmp, dst, di)          # whole window into dst[:, di]
    a_query_last(buf, aux, iaux, ptr, tmp, r, dst, di)  # the youngest r, 0 < r < n
    a_rebuild(aux, ptr)                                 # after the capacity grew

Each follows the pseudocode of the Python reference module of the same name (and its paper).
"""

from .jit import inline
from .layout import E as E_
from .layout import F as F_

lift = combine = identity = inverse = None  # bound per specialization


@inline
def _copy(d, di, s, si):
    for f in range(d.shape[0]):
        d[f, di] = s[f, si]


# --- recalc: a ring of partials, folded per query -------------------------------------------


@inline
def recalc_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    lift(code, buf, ptr[E_] & m, x, arg)
    ptr[E_] += 1


@inline
def recalc_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1


@inline
def recalc_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    m = buf.shape[1] - 1
    e = ptr[E_]
    _copy(dst, di, buf, (e - r) & m)
    for p in range(e - r + 1, e):
        combine(dst, di, dst, di, buf, p & m)


@inline
def recalc_query(buf, aux, iaux, ptr, tmp, dst, di):
    n = ptr[E_] - ptr[F_]
    if n == 0:
        identity(dst, di)
    else:
        recalc_query_last(buf, aux, iaux, ptr, tmp, n, dst, di)


# --- soe: subtract-on-evict; tmp[0] is the running product ----------------------------------


@inline
def soe_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)
    combine(tmp, 0, tmp, 0, buf, i)
    ptr[E_] += 1


@inline
def soe_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f = ptr[F_]
    if f + 1 == ptr[E_]:
        identity(tmp, 0)
    else:
        inverse(tmp, 0, tmp, 0, buf, f & m)
    ptr[F_] = f + 1


@inline
def soe_query(buf, aux, iaux, ptr, tmp, dst, di):
    _copy(dst, di, tmp, 0)


# --- two_stacks: aux = vals, buf = aggs; front [F, B) suffix products, back [B, E) prefix ----
# ptr[2] = B


@inline
def two_stacks_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, aux, e & m, x, arg)
    if ptr[2] == e:  # back stack empty: its aggregate is the value itself
        _copy(buf, e & m, aux, e & m)
    else:  # line 8: push (v, Pi_B (x) v)
        combine(buf, e & m, buf, (e - 1) & m, aux, e & m)
    ptr[E_] = e + 1


@inline
def two_stacks_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    if f == ptr[2]:  # flip, lines 10-13: the back stack moves onto the front stack
        _copy(buf, (e - 1) & m, aux, (e - 1) & m)
        for i in range(e - 2, f - 1, -1):
            combine(buf, i & m, aux, i & m, buf, (i + 1) & m)
        ptr[2] = e
    ptr[F_] = f + 1


@inline
def two_stacks_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f, b, e = ptr[F_], ptr[2], ptr[E_]
    if f == b:
        if b == e:
            identity(dst, di)
        else:
            _copy(dst, di, buf, (e - 1) & m)
    elif b == e:
        _copy(dst, di, buf, f & m)
    else:  # line 6: Pi_F (x) Pi_B
        combine(dst, di, buf, f & m, buf, (e - 1) & m)


# --- two_stacks_lite: ptr[2] = B, tmp[0] = aggB ---------------------------------------------


@inline
def two_stacks_lite_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)  # lines 6-8
    combine(tmp, 0, tmp, 0, buf, i)
    ptr[E_] += 1


@inline
def two_stacks_lite_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    if f == ptr[2] and f != e:  # flip in place, lines 10-16
        for i in range(e - 2, f - 1, -1):
            combine(buf, i & m, buf, i & m, buf, (i + 1) & m)
        ptr[2] = e
        identity(tmp, 0)
    ptr[F_] = f + 1


@inline
def two_stacks_lite_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f = ptr[F_]
    if f == ptr[2]:
        _copy(dst, di, tmp, 0)
    else:  # line 4: Pi_F (x) aggB
        combine(dst, di, buf, f & m, tmp, 0)


# --- daba: aux = vals, buf = aggs; ptr[2..5] = L, R, A, B -----------------------------------


@inline
def _daba_fixup(buf, aux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    L, R, A, B = ptr[2], ptr[3], ptr[4], ptr[5]
    if f == B:  # singleton, line 23
        ptr[2] = e
        ptr[3] = e
        ptr[4] = e
        ptr[5] = e
        return
    if L == B:  # flip, line 26
        L = f
        A = e
        B = e
    if L == R:  # shift, line 28
        A += 1
        R += 1
        L += 1
    else:  # shrink, lines 30-33: *L.agg = Pi_L (x) Pi_R (x) Pi_A
        combine(tmp, 1, buf, L & m, buf, (A - 1) & m)  # Pi_L (x) Pi_R (L != R so both exist)
        if A != B:
            combine(buf, L & m, tmp, 1, buf, A & m)
            combine(buf, (A - 1) & m, aux, (A - 1) & m, buf, A & m)
        else:
            _copy(buf, L & m, tmp, 1)
            _copy(buf, (A - 1) & m, aux, (A - 1) & m)
        L += 1
        A -= 1
    ptr[2] = L
    ptr[3] = R
    ptr[4] = A
    ptr[5] = B


@inline
def daba_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, aux, e & m, x, arg)
    if ptr[5] == e:  # line 14: Pi_B (x) v
        _copy(buf, e & m, aux, e & m)
    else:
        combine(buf, e & m, buf, (e - 1) & m, aux, e & m)
    ptr[E_] = e + 1
    _daba_fixup(buf, aux, ptr, tmp)


@inline
def daba_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1
    _daba_fixup(buf, aux, ptr, tmp)


@inline
def daba_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f, b, e = ptr[F_], ptr[5], ptr[E_]
    if f == b:
        if b == e:
            identity(dst, di)
        else:
            _copy(dst, di, buf, (e - 1) & m)
    elif b == e:
        _copy(dst, di, buf, f & m)
    else:  # line 12
        combine(dst, di, buf, f & m, buf, (e - 1) & m)


# --- daba_lite: ptr[2..5] = L, R, A, B; tmp[0] = aggRA, tmp[1] = aggB ------------------------


@inline
def _daba_lite_fixup(buf, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    L, R, A, B = ptr[2], ptr[3], ptr[4], ptr[5]
    if f == B:  # singleton, lines 20-22
        ptr[2] = e
        ptr[3] = e
        ptr[4] = e
        ptr[5] = e
        identity(tmp, 0)
        identity(tmp, 1)
        return
    if L == B:  # flip, lines 25-27
        L = f
        A = e
        B = e
        _copy(tmp, 0, tmp, 1)
        identity(tmp, 1)
    if L == R:  # shift, line 29
        A += 1
        R += 1
        L += 1
    else:  # shrink, lines 31-34
        combine(buf, L & m, buf, L & m, tmp, 0)
        L += 1
        if A != B:
            combine(buf, (A - 1) & m, buf, (A - 1) & m, buf, A & m)
        A -= 1
    ptr[2] = L
    ptr[3] = R
    ptr[4] = A
    ptr[5] = B


@inline
def daba_lite_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)  # lines 10-12
    combine(tmp, 1, tmp, 1, buf, i)
    ptr[E_] += 1
    _daba_lite_fixup(buf, ptr, tmp)


@inline
def daba_lite_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1
    _daba_lite_fixup(buf, ptr, tmp)


@inline
def daba_lite_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f = ptr[F_]
    if f == ptr[5]:
        _copy(dst, di, tmp, 1)
    else:  # line 8: Pi_F (x) aggB
        combine(dst, di, buf, f & m, tmp, 1)


# --- flatfat: aux = the flat tree [W, 2 cap], leaf of position p at cap + (p & (cap-1)) -----


@inline
def _fat_update(aux, leaf):
    i = (aux.shape[1] >> 1) + leaf
    i >>= 1
    while i:
        combine(aux, i, aux, 2 * i, aux, 2 * i + 1)
        i >>= 1


@inline
def flatfat_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    cap = aux.shape[1] >> 1
    leaf = ptr[E_] & (cap - 1)
    lift(code, aux, cap + leaf, x, arg)
    _fat_update(aux, leaf)
    ptr[E_] += 1


@inline
def flatfat_pop(buf, aux, iaux, ptr, tmp):
    cap = aux.shape[1] >> 1
    leaf = ptr[F_] & (cap - 1)
    identity(aux, cap + leaf)
    _fat_update(aux, leaf)
    ptr[F_] += 1


@inline
def _fat_span(aux, tmp, start, count, dst, di):
    """Leaves start .. start + count - 1 (modulo the capacity) in order: one or two runs of
    leaves, each folded bottom-up, tmp[2] from the left and tmp[3] from the right; tmp[4]
    collects the runs. One copy of the loop (it is inlined into every query)."""
    cap = aux.shape[1] >> 1
    lo0 = start & (cap - 1)
    wrapped = lo0 + count > cap
    for seg in range(2 if wrapped else 1):
        if seg == 0:
            lo = lo0 + cap
            hi = (cap if wrapped else lo0 + count) + cap
        else:
            lo = cap
            hi = lo0 + count
        identity(tmp, 2)
        identity(tmp, 3)
        while lo < hi:
            if lo & 1:
                combine(tmp, 2, tmp, 2, aux, lo)
                lo += 1
            if hi & 1:
                hi -= 1
                combine(tmp, 3, aux, hi, tmp, 3)
            lo >>= 1
            hi >>= 1
        if seg == 0:
            combine(tmp, 4, tmp, 2, tmp, 3)
        else:
            combine(tmp, 2, tmp, 2, tmp, 3)
            combine(tmp, 4, tmp, 4, tmp, 2)
    _copy(dst, di, tmp, 4)


@inline
def flatfat_query(buf, aux, iaux, ptr, tmp, dst, di):
    cap = aux.shape[1] >> 1
    f, n = ptr[F_], ptr[E_] - ptr[F_]
    if (f & (cap - 1)) + n <= cap:
        _copy(dst, di, aux, 1)  # not wrapped: the root
    else:
        _fat_span(aux, tmp, f, n, dst, di)


@inline
def flatfat_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _fat_span(aux, tmp, ptr[E_] - r, r, dst, di)


@inline
def flatfat_rebuild(aux, ptr):
    for i in range(aux.shape[1] // 2 - 1, 0, -1):
        combine(aux, i, aux, 2 * i, aux, 2 * i + 1)


@inline
def no_rebuild(aux, ptr):
    pass


# --- bint: aux holds level l at offset 2 cap - 2 (cap >> l), slot j & ((cap >> l) - 1) ------


@inline
def _bint_slot(cap, level, j):
    return 2 * cap - 2 * (cap >> level) + (j & ((cap >> level) - 1))


@inline
def _bint_complete(aux, f, p):
    cap = aux.shape[1] >> 1
    top = 0
    while (1 << (top + 1)) <= cap:
        top += 1
    lv = 1
    while lv <= top and ((p + 1) & ((1 << lv) - 1)) == 0:
        j = p >> lv
        if (j << lv) >= f:  # intervals reaching before the front are never read
            combine(
                aux,
                _bint_slot(cap, lv, j),
                aux,
                _bint_slot(cap, lv - 1, 2 * j),
                aux,
                _bint_slot(cap, lv - 1, 2 * j + 1),
            )
        lv += 1


@inline
def bint_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    cap = aux.shape[1] >> 1
    p = ptr[E_]
    lift(code, aux, _bint_slot(cap, 0, p), x, arg)
    _bint_complete(aux, ptr[F_], p)
    ptr[E_] = p + 1


@inline
def bint_rebuild(aux, ptr):
    for p in range(ptr[F_], ptr[E_]):
        _bint_complete(aux, ptr[F_], p)


@inline
def bint_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1


@inline
def _bint_cover(aux, start, stop, dst, di):
    cap = aux.shape[1] >> 1
    top = 0
    while (1 << (top + 1)) <= cap:
        top += 1
    first = True
    i = start
    while i < stop:
        lv = top
        if i != 0:
            tz = 0
            while ((i >> tz) & 1) == 0 and tz < top:
                tz += 1
            lv = tz
        while i + (1 << lv) > stop:
            lv -= 1
        s = _bint_slot(cap, lv, i >> lv)
        if first:
            _copy(dst, di, aux, s)
            first = False
        else:
            combine(dst, di, dst, di, aux, s)
        i += 1 << lv
    if first:
        identity(dst, di)


@inline
def bint_query(buf, aux, iaux, ptr, tmp, dst, di):
    _bint_cover(aux, ptr[F_], ptr[E_], dst, di)


@inline
def bint_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _bint_cover(aux, ptr[E_] - r, ptr[E_], dst, di)


# --- flatfit: buf = partials, iaux[0] = pointers (absolute positions), iaux[1] = the stack ----


@inline
def flatfit_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, buf, e & m, x, arg)
    iaux[0, e & m] = e + 1
    ptr[E_] = e + 1


@inline
def flatfit_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1


@inline
def _fit_walk(buf, iaux, e, start, dst, di):
    m = buf.shape[1] - 1
    top = 0
    i = start
    while i < e:  # push the positions visited on the Positions stack
        iaux[1, top] = i
        top += 1
        i = iaux[0, i & m]
    if top == 0:
        identity(dst, di)
        return
    top -= 1
    _copy(dst, di, buf, iaux[1, top] & m)  # the last stretch already ends at the end
    while top > 0:  # pop, combining right to left; each visited position now spans to e
        top -= 1
        j = iaux[1, top] & m
        combine(buf, j, buf, j, dst, di)
        _copy(dst, di, buf, j)
        iaux[0, j] = e


@inline
def flatfit_query(buf, aux, iaux, ptr, tmp, dst, di):
    _fit_walk(buf, iaux, ptr[E_], ptr[F_], dst, di)


@inline
def flatfit_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _fit_walk(buf, iaux, ptr[E_], ptr[E_] - r, dst, di)


# --- slickdeque (Inv): buf = partials; aux[:, 0] whole window, aux[:, 1 + j] range j ---------
# iaux[0, :k] = the ranges, ptr[2] = k


@inline
def slick_inv_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    lift(code, buf, e & m, x, arg)
    combine(aux, 0, aux, 0, buf, e & m)
    for j in range(ptr[2]):  # Algorithm 1, line 24: ans (+) newPartial (-) expiring
        combine(aux, 1 + j, aux, 1 + j, buf, e & m)
        leaving = e - iaux[0, j]
        if leaving >= f:
            inverse(aux, 1 + j, aux, 1 + j, buf, leaving & m)
    ptr[E_] = e + 1


@inline
def slick_inv_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    n = e - f - 1  # elements left
    if n == 0:
        identity(aux, 0)
    else:
        inverse(aux, 0, aux, 0, buf, f & m)
    for j in range(ptr[2]):
        if n < iaux[0, j]:  # the oldest element was among the youngest r
            if n == 0:
                identity(aux, 1 + j)
            else:
                inverse(aux, 1 + j, aux, 1 + j, buf, f & m)
    ptr[F_] = f + 1


@inline
def slick_inv_query(buf, aux, iaux, ptr, tmp, dst, di):
    _copy(dst, di, aux, 0)


@inline
def slick_inv_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    for j in range(ptr[2]):
        if iaux[0, j] == r:
            _copy(dst, di, aux, 1 + j)
            return
    _copy(dst, di, aux, 0)  # r >= n (the driver only asks for registered ranges)


# --- slickdeque (Non-Inv): deque nodes k in [ptr[2], ptr[3]): buf[:, k & m] value, ----------
# iaux[0, k & m] stream position


@inline
def slick_noninv_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    lift(code, tmp, 6, x, arg)
    head, tail = ptr[2], ptr[3]
    w = buf.shape[0]
    while tail > head:  # Algorithm 2, lines 16-18: pop the tail nodes the new partial dominates
        combine(tmp, 7, buf, (tail - 1) & m, tmp, 6)
        same = True
        for f in range(w):
            if tmp[f, 7] != tmp[f, 6]:
                same = False
        if not same:
            break
        tail -= 1
    _copy(buf, tail & m, tmp, 6)  # line 19
    iaux[0, tail & m] = ptr[E_]
    ptr[3] = tail + 1
    ptr[E_] += 1


@inline
def slick_noninv_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    head = ptr[2]
    if head < ptr[3] and iaux[0, head & m] == ptr[F_]:  # line 13: the expired head node
        ptr[2] = head + 1
    ptr[F_] += 1


@inline
def _slick_first_from(buf, iaux, ptr, start):
    """The first deque node whose position is >= start (binary search)."""
    m = buf.shape[1] - 1
    lo, hi = ptr[2], ptr[3]
    while lo < hi:
        mid = (lo + hi) >> 1
        if iaux[0, mid & m] < start:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline
def slick_noninv_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    if ptr[2] == ptr[3]:
        identity(dst, di)
    else:
        _copy(dst, di, buf, ptr[2] & m)


@inline
def slick_noninv_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    m = buf.shape[1] - 1
    k = _slick_first_from(buf, iaux, ptr, ptr[E_] - r)
    if k == ptr[3]:
        identity(dst, di)
    else:
        _copy(dst, di, buf, k & m)
