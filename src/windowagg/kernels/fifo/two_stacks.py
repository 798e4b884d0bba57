"""Two-Stacks, compiled (DABA paper, Section 3, Theorem 3; reference
:mod:`windowagg.fifo.two_stacks`): ``aux`` holds the values and ``buf`` the stacks'
aggregates, the front stack ``[F, B)`` as suffix products, the back ``[B, E)`` as prefix
products."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slot: B, the boundary between the front and the back stack
AT_B = 2
STORAGE = Storage(rings=("buf", "aux"))


@inline
def two_stacks_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    e = ptr[E_]
    lift(code, aux, e & m, x, arg)
    if ptr[AT_B] == e:  # back stack empty: its aggregate is the value itself
        copy_partial(buf, e & m, aux, e & m)
    else:  # line 8: push (v, Pi_B (x) v)
        combine(buf, e & m, buf, (e - 1) & m, aux, e & m)
    ptr[E_] = e + 1


@inline
def two_stacks_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    if f == ptr[AT_B]:  # flip, lines 10-13: the back stack moves onto the front stack
        copy_partial(buf, (e - 1) & m, aux, (e - 1) & m)
        for i in range(e - 2, f - 1, -1):
            combine(buf, i & m, aux, i & m, buf, (i + 1) & m)
        ptr[AT_B] = e
    ptr[F_] = f + 1


@inline
def two_stacks_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f, b, e = ptr[F_], ptr[AT_B], ptr[E_]
    if f == b:
        if b == e:
            identity(dst, di)
        else:
            copy_partial(dst, di, buf, (e - 1) & m)
    elif b == e:
        copy_partial(dst, di, buf, f & m)
    else:  # line 6: Pi_F (x) Pi_B
        combine(dst, di, buf, f & m, buf, (e - 1) & m)
