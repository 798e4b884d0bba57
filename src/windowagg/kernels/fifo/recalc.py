"""Recalc, compiled (DABA paper, Section 8.1; reference :mod:`windowagg.fifo.recalc`): a ring
of partials, folded at each query."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

STORAGE = Storage(rings=("buf",))


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
    copy_partial(dst, di, buf, (e - r) & m)
    for p in range(e - r + 1, e):
        combine(dst, di, dst, di, buf, p & m)


@inline
def recalc_query(buf, aux, iaux, ptr, tmp, dst, di):
    n = ptr[E_] - ptr[F_]
    if n == 0:
        identity(dst, di)
    else:
        recalc_query_last(buf, aux, iaux, ptr, tmp, n, dst, di)
