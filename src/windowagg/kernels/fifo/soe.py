"""Subtract-on-evict, compiled (SlickDeque paper, Section 2.2; reference
:mod:`windowagg.fifo.soe`): a ring of partials and the running product of the window, the
oldest partial's inverse taken out on evict."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: tmp column: the running product of the window
RUNNING = 0
STORAGE = Storage(rings=("buf",))


@inline
def soe_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    m = buf.shape[1] - 1
    i = ptr[E_] & m
    lift(code, buf, i, x, arg)
    combine(tmp, RUNNING, tmp, RUNNING, buf, i)
    ptr[E_] += 1


@inline
def soe_pop(buf, aux, iaux, ptr, tmp):
    m = buf.shape[1] - 1
    f = ptr[F_]
    if f + 1 == ptr[E_]:
        identity(tmp, RUNNING)
    else:
        inverse(tmp, RUNNING, tmp, RUNNING, buf, f & m)
    ptr[F_] = f + 1


@inline
def soe_query(buf, aux, iaux, ptr, tmp, dst, di):
    copy_partial(dst, di, tmp, RUNNING)
