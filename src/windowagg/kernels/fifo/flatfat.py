"""FlatFAT, compiled (the Reactive Aggregator's flat fixed-size aggregator tree; reference
:mod:`windowagg.fifo.flatfat`): ``aux`` is the flat tree ``[W, 2 cap]``, the leaf of position
``p`` at ``cap + (p & (cap - 1))``, the root at 1."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

#: tmp columns: a run of leaves folded from the left, from the right, and the runs so far
FROM_LEFT, FROM_RIGHT, RUNS = 2, 3, 4
#: the root's column in the tree
ROOT = 1
STORAGE = Storage(rings=(), tree="flat")


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
    leaves, each folded bottom-up, into tmp[FROM_LEFT] from the left and tmp[FROM_RIGHT] from
    the right; tmp[RUNS] collects the runs. One copy of the loop (it is inlined into every
    query)."""
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
        identity(tmp, FROM_LEFT)
        identity(tmp, FROM_RIGHT)
        while lo < hi:
            if lo & 1:
                combine(tmp, FROM_LEFT, tmp, FROM_LEFT, aux, lo)
                lo += 1
            if hi & 1:
                hi -= 1
                combine(tmp, FROM_RIGHT, aux, hi, tmp, FROM_RIGHT)
            lo >>= 1
            hi >>= 1
        if seg == 0:
            combine(tmp, RUNS, tmp, FROM_LEFT, tmp, FROM_RIGHT)
        else:
            combine(tmp, FROM_LEFT, tmp, FROM_LEFT, tmp, FROM_RIGHT)
            combine(tmp, RUNS, tmp, RUNS, tmp, FROM_LEFT)
    copy_partial(dst, di, tmp, RUNS)


@inline
def flatfat_query(buf, aux, iaux, ptr, tmp, dst, di):
    cap = aux.shape[1] >> 1
    f, n = ptr[F_], ptr[E_] - ptr[F_]
    if (f & (cap - 1)) + n <= cap:
        copy_partial(dst, di, aux, ROOT)  # not wrapped: the root
    else:
        _fat_span(aux, tmp, f, n, dst, di)


@inline
def flatfat_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _fat_span(aux, tmp, ptr[E_] - r, r, dst, di)


@inline
def flatfat_rebuild(aux, ptr):
    for i in range(aux.shape[1] // 2 - 1, 0, -1):
        combine(aux, i, aux, 2 * i, aux, 2 * i + 1)
