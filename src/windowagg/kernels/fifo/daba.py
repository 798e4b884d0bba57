"""DABA, compiled (DABA paper, Section 5, Theorem 10; reference :mod:`windowagg.fifo.daba`):
``aux`` holds the values and ``buf`` the aggregates; the pointers L, R, A, B of the paper's
Figure 5 in named slots of ``ptr``."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slots: the pointers L, R, A and B; tmp column: a scratch partial
AT_L, AT_R, AT_A, AT_B = 2, 3, 4, 5
SCRATCH = 1
STORAGE = Storage(rings=("buf", "aux"))


@inline
def _daba_fixup(buf, aux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    L, R, A, B = ptr[AT_L], ptr[AT_R], ptr[AT_A], ptr[AT_B]
    if f == B:  # singleton, line 23
        ptr[AT_L] = e
        ptr[AT_R] = e
        ptr[AT_A] = e
        ptr[AT_B] = e
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
        combine(tmp, SCRATCH, buf, L & m, buf, (A - 1) & m)  # Pi_L (x) Pi_R (L != R so both exist)
        if A != B:
            combine(buf, L & m, tmp, SCRATCH, buf, A & m)
            combine(buf, (A - 1) & m, aux, (A - 1) & m, buf, A & m)
        else:
            copy_partial(buf, L & m, tmp, SCRATCH)
            copy_partial(buf, (A - 1) & m, aux, (A - 1) & m)
        L += 1
        A -= 1
    ptr[AT_L] = L
    ptr[AT_R] = R
    ptr[AT_A] = A
    ptr[AT_B] = B


@inline
def daba_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, aux, e & m, x, arg)
    if ptr[AT_B] == e:  # line 14: Pi_B (x) v
        copy_partial(buf, e & m, aux, e & m)
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
    f, b, e = ptr[F_], ptr[AT_B], ptr[E_]
    if f == b:
        if b == e:
            identity(dst, di)
        else:
            copy_partial(dst, di, buf, (e - 1) & m)
    elif b == e:
        copy_partial(dst, di, buf, f & m)
    else:  # line 12
        combine(dst, di, buf, f & m, buf, (e - 1) & m)
