"""B-Int, compiled (base intervals; reference :mod:`windowagg.fifo.bint`): ``aux`` holds level
``l`` at offset ``2 cap - 2 (cap >> l)``, the interval ``j`` of that level in slot
``j & ((cap >> l) - 1)``."""

from ..jit import inline
from ..layout import E as E_
from ..layout import F as F_
from .state import Storage, copy_partial

lift = combine = identity = inverse = None  # bound per specialization

STORAGE = Storage(rings=(), tree="levels")


@inline
def _bint_slot(cap, level, j):
    return 2 * cap - 2 * (cap >> level) + (j & ((cap >> level) - 1))


@inline
def _bint_complete(aux, f, p):
    cap = aux.shape[1] >> 1
    top = 0
    while (1 << (top + 1)) <= cap:
        top += 1
    lv = 1
    while lv <= top and ((p + 1) & ((1 << lv) - 1)) == 0:
        j = p >> lv
        if (j << lv) >= f:  # intervals reaching before the front are never read
            combine(
                aux,
                _bint_slot(cap, lv, j),
                aux,
                _bint_slot(cap, lv - 1, 2 * j),
                aux,
                _bint_slot(cap, lv - 1, 2 * j + 1),
            )
        lv += 1


@inline
def bint_push(code, buf, aux, iaux, ptr, tmp, x, arg):
    cap = aux.shape[1] >> 1
    p = ptr[E_]
    lift(code, aux, _bint_slot(cap, 0, p), x, arg)
    _bint_complete(aux, ptr[F_], p)
    ptr[E_] = p + 1


@inline
def bint_rebuild(aux, ptr):
    for p in range(ptr[F_], ptr[E_]):
        _bint_complete(aux, ptr[F_], p)


@inline
def bint_pop(buf, aux, iaux, ptr, tmp):
    ptr[F_] += 1


@inline
def _bint_cover(aux, start, stop, dst, di):
    cap = aux.shape[1] >> 1
    top = 0
    while (1 << (top + 1)) <= cap:
        top += 1
    first = True
    i = start
    while i < stop:
        lv = top
        if i != 0:
            tz = 0
            while ((i >> tz) & 1) == 0 and tz < top:
                tz += 1
            lv = tz
        while i + (1 << lv) > stop:
            lv -= 1
        s = _bint_slot(cap, lv, i >> lv)
        if first:
            copy_partial(dst, di, aux, s)
            first = False
        else:
            combine(dst, di, dst, di, aux, s)
        i += 1 << lv
    if first:
        identity(dst, di)


@inline
def bint_query(buf, aux, iaux, ptr, tmp, dst, di):
    _bint_cover(aux, ptr[F_], ptr[E_], dst, di)


@inline
def bint_query_last(buf, aux, iaux, ptr, tmp, r, dst, di):
    _bint_cover(aux, ptr[E_] - r, ptr[E_], dst, di)
