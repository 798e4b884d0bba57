"""DABA Lite, compiled (DABA paper, Section 6, Theorem 13; reference
:mod:`windowagg.fifo.daba_lite`): one ring; the pointers L, R, A, B in named slots of ``ptr``,
the aggregates aggRA and aggB in named columns of ``tmp``."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slots: the pointers L, R, A and B; tmp columns: aggRA and aggB
AT_L, AT_R, AT_A, AT_B = 2, 3, 4, 5
AGG_RA, AGG_B = 0, 1
STORAGE = Storage(rings=("buf",))


@inline
def _daba_lite_fixup(buf, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    L, R, A, B = ptr[AT_L], ptr[AT_R], ptr[AT_A], ptr[AT_B]
    if f == B:  # singleton, lines 20-22
        ptr[AT_L] = e
        ptr[AT_R] = e
        ptr[AT_A] = e
        ptr[AT_B] = e
        identity(tmp, AGG_RA)
        identity(tmp, AGG_B)
        return
    if L == B:  # flip, lines 25-27
        L = f
        A = e
        B = e
        copy_partial(tmp, AGG_RA, tmp, AGG_B)
        identity(tmp, AGG_B)
    if L == R:  # shift, line 29
        A += 1
        R += 1
        L += 1
    else:  # shrink, lines 31-34
        combine(buf, L & m, buf, L & m, tmp, AGG_RA)
        L += 1
        if A != B:
            combine(buf, (A - 1) & m, buf, (A - 1) & m, buf, A & m)
        A -= 1
    ptr[AT_L] = L
    ptr[AT_R] = R
    ptr[AT_A] = A
    ptr[AT_B] = B


@inline
def daba_lite_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)  # lines 10-12
    combine(tmp, AGG_B, tmp, AGG_B, buf, i)
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
    if f == ptr[AT_B]:
        copy_partial(dst, di, tmp, AGG_B)
    else:  # line 8: Pi_F (x) aggB
        combine(dst, di, buf, f & m, tmp, AGG_B)
