"""SlickDeque for invertible aggregations, compiled (SlickDeque paper, Section 3.2,
Algorithm 1; reference :mod:`windowagg.fifo.slickdeque`): ``buf`` holds the partials, column
``WHOLE`` of ``aux`` the whole window's product and column ``1 + j`` that of range ``j``; row
``RANGES`` of ``iaux`` the ranges, ``ptr[AT_K]`` how many there are."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slot: the number of ranges; aux column: the whole window; iaux row: the ranges
AT_K = 2
WHOLE = 0
RANGES = 0
STORAGE = Storage(rings=("buf",), ranges=True)


@inline
def slick_inv_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    lift(code, buf, e & m, x, arg)
    combine(aux, WHOLE, aux, WHOLE, buf, e & m)
    for j in range(ptr[AT_K]):  # Algorithm 1, line 24: ans (+) newPartial (-) expiring
        combine(aux, 1 + j, aux, 1 + j, buf, e & m)
        leaving = e - iaux[RANGES, j]
        if leaving >= f:
            inverse(aux, 1 + j, aux, 1 + j, buf, leaving & m)
    ptr[E_] = e + 1


@inline
def slick_inv_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    n = e - f - 1  # elements left
    if n == 0:
        identity(aux, WHOLE)
    else:
        inverse(aux, WHOLE, aux, WHOLE, buf, f & m)
    for j in range(ptr[AT_K]):
        if n < iaux[RANGES, j]:  # the oldest element was among the youngest r
            if n == 0:
                identity(aux, 1 + j)
            else:
                inverse(aux, 1 + j, aux, 1 + j, buf, f & m)
    ptr[F_] = f + 1


@inline
def slick_inv_query(buf, aux, iaux, ptr, tmp, dst, di):
    copy_partial(dst, di, aux, WHOLE)


@inline
def slick_inv_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    for j in range(ptr[AT_K]):
        if iaux[RANGES, j] == r:
            copy_partial(dst, di, aux, 1 + j)
            return
    copy_partial(dst, di, aux, WHOLE)  # r >= n (the driver only asks for registered ranges)
