"""Two-Stacks Lite, compiled (DABA paper, Section 4, Theorem 7; reference
:mod:`windowagg.fifo.two_stacks_lite`): one ring, the front stack's suffix products flipped in
place, the back stack kept as one aggregate."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: ptr slot: B, the boundary between the stacks; tmp column: aggB, the back stack's product
AT_B = 2
AGG_B = 0
STORAGE = Storage(rings=("buf",))


@inline
def two_stacks_lite_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)  # lines 6-8
    combine(tmp, AGG_B, tmp, AGG_B, buf, i)
    ptr[E_] += 1


@inline
def two_stacks_lite_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f, e = ptr[F_], ptr[E_]
    if f == ptr[AT_B] and f != e:  # flip in place, lines 10-16
        for i in range(e - 2, f - 1, -1):
            combine(buf, i & m, buf, i & m, buf, (i + 1) & m)
        ptr[AT_B] = e
        identity(tmp, AGG_B)
    ptr[F_] = f + 1


@inline
def two_stacks_lite_query(buf, aux, iaux, ptr, tmp, dst, di):
    m = buf.shape[1] - 1
    f = ptr[F_]
    if f == ptr[AT_B]:
        copy_partial(dst, di, tmp, AGG_B)
    else:  # line 4: Pi_F (x) aggB
        combine(dst, di, buf, f & m, tmp, AGG_B)
