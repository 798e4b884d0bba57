"""SlickDeque for selective aggregations, compiled (SlickDeque paper, Section 3.2,
Algorithm 2; reference :mod:`windowagg.fifo.slickdeque`): the deque's nodes ``k`` in
``[ptr[AT_HEAD], ptr[AT_TAIL])``, node ``k``'s partial in ``buf[:, k & m]`` and its stream
position in ``iaux[POSITION, k & m]``."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slots: the deque's head and tail; iaux row: each node's position; tmp columns: the new
#: partial, and it combined with a tail node
AT_HEAD, AT_TAIL = 2, 3
POSITION = 0
NEW, TRIED = 6, 7
STORAGE = Storage(rings=("buf", "iaux"), deque=True)


@inline
def slick_noninv_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    lift(code, tmp, NEW, x, arg)
    head, tail = ptr[AT_HEAD], ptr[AT_TAIL]
    w = buf.shape[0]
    while tail > head:  # Algorithm 2, lines 16-18: pop the tail nodes the new partial dominates
        combine(tmp, TRIED, buf, (tail - 1) & m, tmp, NEW)
        same = True
        for f in range(w):
            if tmp[f, TRIED] != tmp[f, NEW]:
                same = False
        if not same:
            break
        tail -= 1
    copy_partial(buf, tail & m, tmp, NEW)  # line 19
    iaux[POSITION, tail & m] = ptr[E_]
    ptr[AT_TAIL] = tail + 1
    ptr[E_] += 1


@inline
def slick_noninv_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    head = ptr[AT_HEAD]
    if (
        head < ptr[AT_TAIL] and iaux[POSITION, head & m] == ptr[F_]
    ):  # line 13: the expired head node
        ptr[AT_HEAD] = head + 1
    ptr[F_] += 1


@inline
def _slick_first_from(buf, iaux, ptr, start):
    """The first deque node whose position is >= start (binary search)."""
    m = buf.shape[1] - 1
    lo, hi = ptr[AT_HEAD], ptr[AT_TAIL]
    while lo < hi:
        mid = (lo + hi) >> 1
        if iaux[POSITION, mid & m] < start:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline
def slick_noninv_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    if ptr[AT_HEAD] == ptr[AT_TAIL]:
        identity(dst, di)
    else:
        copy_partial(dst, di, buf, ptr[AT_HEAD] & m)


@inline
def slick_noninv_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    m = buf.shape[1] - 1
    k = _slick_first_from(buf, iaux, ptr, ptr[E_] - r)
    if k == ptr[AT_TAIL]:
        identity(dst, di)
    else:
        copy_partial(dst, di, buf, k & m)
