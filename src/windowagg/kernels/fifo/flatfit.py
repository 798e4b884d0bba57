"""FlatFIT, compiled (reference :mod:`windowagg.fifo.flatfit`): ``buf`` holds the partials, row
``POINTERS`` of ``iaux`` each position's pointer (an absolute position), row ``STACK`` the
positions a query visits."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: iaux rows: the pointers, and the stack of positions a query visits
POINTERS, STACK = 0, 1
STORAGE = Storage(rings=("buf", "iaux"), iaux_rows=2)


@inline
def flatfit_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, buf, e & m, x, arg)
    iaux[POINTERS, e & m] = e + 1
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
        iaux[STACK, top] = i
        top += 1
        i = iaux[POINTERS, i & m]
    if top == 0:
        identity(dst, di)
        return
    top -= 1
    copy_partial(dst, di, buf, iaux[STACK, top] & m)  # the last stretch already ends at the end
    while top > 0:  # pop, combining right to left; each visited position now spans to e
        top -= 1
        j = iaux[STACK, top] & m
        combine(buf, j, buf, j, dst, di)
        copy_partial(dst, di, buf, j)
        iaux[POINTERS, j] = e


@inline
def flatfit_query(buf, aux, iaux, ptr, tmp, dst, di):
    _fit_walk(buf, iaux, ptr[E_], ptr[F_], dst, di)


@inline
def flatfit_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _fit_walk(buf, iaux, ptr[E_], ptr[E_] - r, dst, di)
