"""Moments of frames that depend on the frame's values alone: the variances and standard
deviations, skewness and kurtosis, covariances and the correlation of each frame, the same to
the last bit whatever other frames the call asks for and whatever order the values came in.
So a point-in-time request answered alone (an online request) gets the value a backfill over
every request gives, as the exactly rounded sums of :mod:`.exact_sums` do for sums and means.

Method. As a frame slides, the power sums of its values, ``S1 = sum x``, ``S2 = sum x^2`` (and
``S3``, ``S4`` for skewness and kurtosis; ``sum y``, ``sum y^2``, ``sum x y`` for pairs) are
held exactly: each power as a few doubles whose sum it is (Dekker's product: T. J. Dekker, "A
floating-point technique for extending the available precision", 1971), each sum as
:mod:`.exact_sums` holds one (two doubles, else a Shewchuk expansion). A value enters by
adding its pieces and leaves by adding their negations, both exact: O(1) per row, no drift.
Each frame's state, the family's own (:mod:`.families`: ``n``, the mean, ``M2``, ``M3``,
``M4``, or the co-moment ``C`` and ``M2x``, ``M2y``), comes from those exact sums alone and is
lowered by the family's ``lower``, as the sweep's state is:

- ``M2 = (n S2 - S1^2) / n``, and ``C = (n Sxy - Sx Sy) / n``: the difference exactly rounded
  (the double nearest it), then divided. It is evaluated in double-double from the sums'
  two leading doubles with a bound of its error, and exactly, in an expansion, where the bound
  does not settle the rounding (J. R. Shewchuk, "Adaptive Precision Floating-Point Arithmetic
  and Fast Robust Geometric Predicates", 1997, section 4: an approximation whose error bound
  decides, else the exact value): a frame of equal values, whose ``M2`` is exactly 0, takes
  the exact path, in O(1).
- ``M3 = (n^2 S3 - 3 n S1 S2 + 2 S1^3) / n^2`` and ``M4`` likewise, in double-double, where
  the bound of their error leaves skewness and kurtosis within ``2^-42``; elsewhere (values
  whose mean is large against their spread, about 10^4 times for kurtosis) from the frame's
  deviations from its mean, each power rounded and their sums exactly rounded: O(frame) for
  those frames alone. A frame with a power beyond the doubles' range takes that path too.

Every choice above depends on the frame's exact sums alone, never on the order or the path by
which the frame was reached, so the state is a function of the frame's values. NaN is left
out (the caller marks the frames holding one). A frame holding an infinity is NaN, or for
pairs Spark's own update over the frame's pairs in order, whose -inf, +inf or NaN depends on
the order the infinities meet in.
"""

import math

import numpy as np

from .exact_sums import PARTS, _compress, _grow, _rounded, _two_sum
from .families import comoments_lower, moments_lower, welford_lower
from .jit import helper, inline, kernel

#: what a call computes: the Welford family's state (variances, standard deviations), the
#: moments family's (skewness, kurtosis), the co-moments family's (covariances, correlation)
WELFORD, MOMENTS, PAIRS = 0, 1, 2
#: the exact sums each kind holds: x, x^2, then x^3, x^4; or x, x^2, y, y^2, x y
SUMS = (2, 4, 5)
#: the rows of the state a call is given (:func:`scratch`): the sliding sums (5), the sums over
#: a frame's deviations (5), a row of scratch
ROWS = 11
#: a sum's fields in the state: three doubles whose sum it is while they hold it, whether
#: they do, else the length of its expansion (``parts``)
S, E, F, FAST, LENGTH = range(5)

_SPLIT = 134217729.0  # 2^27 + 1: Dekker's split of a double into two halves of 26 bits
_EPS_SUM = 2.0**-50  # a bound of a few roundings' relative error (2^-53 each), generously
_EPS_DD = 2.0**-100  # of double-double's
_SETTLED = 2.0**-42  # the error at which skewness and kurtosis are taken from double-double
_SPLITTABLE = 2.0**995  # beyond, Dekker's split overflows
_TINY = 2.0**-400  # a variance whose square is near the doubles' smallest
#: the differences ``n A - B C`` a frame's state takes (the sums' slots ``A``, ``B``, ``C``)
#: and the field each goes to, over ``n``: a pair's C, M2x, M2y; x's M2
_A, _B, _C, _INTO = (4, 1, 3, 1), (0, 0, 2, 0), (2, 0, 2, 0), (3, 4, 5, 2)


def scratch() -> tuple[np.ndarray, ...]:
    """The arrays one running :func:`exact_moments` works in (kernels never allocate): the
    state, the expansions, the sums' leading doubles, the family's state, a value's pieces
    and their sums."""
    return (
        np.zeros((ROWS, 5)),
        np.zeros((ROWS, PARTS)),
        np.zeros((5, 64)),
        np.zeros((6, 1)),
        np.zeros(16),
        np.zeros(16, np.int64),
    )


@inline
def _two_prod(a, b):
    """Dekker's product: ``p + e == a * b`` exactly (unless it overflows or underflows)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@inline
def _quick_two_sum(a, b):
    """``s + e == a + b`` exactly where ``|a| >= |b|``."""
    s = a + b
    return s, b - (s - a)


@inline
def _dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    return _quick_two_sum(p, e + (ah * bl + al * bh))


@inline
def _dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    return _two_sum(s, e + (al + bl))  # not quick: after a cancellation the rest may be larger


@inline
def _clear(st, a, b):
    for j in range(a, b):
        st[j, S] = 0.0
        st[j, E] = 0.0
        st[j, F] = 0.0
        st[j, FAST] = 1.0
        st[j, LENGTH] = 0.0


@inline
def _put(st, parts, j, v):
    """Add ``v`` (finite) to exact sum ``j``: in its three doubles while three TwoSums leave
    no error (Knuth's), else in its expansion (:func:`_put_slowly`)."""
    if st[j, FAST] != 0.0:
        t, r = _two_sum(st[j, S], v)
        u, w = _two_sum(st[j, E], r)
        z, q = _two_sum(st[j, F], w)
        if q == 0.0 and t - t == 0.0:
            st[j, S] = t
            st[j, E] = u
            st[j, F] = z
            return
    _put_slowly(st, parts, j, v)


@helper
def _put_slowly(st, parts, j, v):
    """Add ``v`` to exact sum ``j`` in its expansion (:mod:`.exact_sums`), which goes back to
    three doubles once it fits them."""
    row = parts[j]
    if st[j, FAST] != 0.0:
        n = _grow(row, 0, st[j, F])
        n = _grow(row, n, st[j, E])
        n = _grow(row, n, st[j, S])
        st[j, FAST] = 0.0
    else:
        n = int(st[j, LENGTH])
    n = _grow(row, n, v)
    if n >= 4:
        n = _compress(row, n)
    if n <= 3 and (n == 0 or row[n - 1] - row[n - 1] == 0.0):
        st[j, S] = row[n - 1] if n > 0 else 0.0
        st[j, E] = row[n - 2] if n > 1 else 0.0
        st[j, F] = row[n - 3] if n > 2 else 0.0
        st[j, FAST] = 1.0
        n = 0
    st[j, LENGTH] = n


@inline
def _overflowed(st, parts, j):
    n = int(st[j, LENGTH])
    return st[j, FAST] == 0.0 and n > 0 and parts[j, n - 1] - parts[j, n - 1] != 0.0


@inline
def _expansion(st, parts, j, out):
    """Sum ``j`` as an expansion in ``out`` (increasing magnitude, no overlap); its length."""
    if st[j, FAST] != 0.0:
        n = _grow(out, 0, st[j, F])
        n = _grow(out, n, st[j, E])
        return _grow(out, n, st[j, S])
    n = int(st[j, LENGTH])
    for k in range(n):
        out[k] = parts[j, k]
    return n


@helper
def _leading(st, parts, j, comp, scratch, most):
    """Sum ``j``'s exact value as its ``most`` leading doubles (all, at most ``len(comp)``),
    each the nearest double to what the ones before leave (``comp[0]`` the sum exactly
    rounded, ``comp[1]`` the rest rounded, ...): the same doubles whatever order the sum was
    built in; how many (``comp[:2]`` zero-filled)."""
    m = _expansion(st, parts, j, scratch)
    comp[0] = 0.0
    comp[1] = 0.0
    c = 0
    while m > 0 and c < most:
        r = _rounded(scratch, m)
        if r == 0.0:
            break
        comp[c] = r
        c += 1
        m = _grow(scratch, m, -r)
        if m >= 2:
            m = _compress(scratch, m)
    return c


@inline
def _half_ulp(s):
    """Half the gap to the nearer neighbour of ``s`` (a quarter below a power of two)."""
    mant, ex = math.frexp(s)
    half = math.ldexp(1.0, ex - 54)
    return half * 0.5 if abs(mant) == 0.5 else half


@inline
def _approx(st, j):
    """Sum ``j`` (held in three doubles) as two, ``h + l`` with ``l`` at most half an ulp of
    ``h``, and a bound of how far the sum is from them."""
    rest = st[j, E] + st[j, F]
    h, l = _two_sum(st[j, S], rest)
    return h, l, 2.0**-53 * abs(rest)


@inline
def _difference(n, st, parts, a, b, c, comps, scratch):
    """``n A - B C`` of the exact sums ``a``, ``b``, ``c``, exactly rounded: in double-double
    where its error bound settles the rounding, else exactly (:func:`_exact_difference`)."""
    if st[a, FAST] != 0.0 and st[b, FAST] != 0.0 and st[c, FAST] != 0.0:
        ah, al, ra = _approx(st, a)
        bh, bl, rb = _approx(st, b)
        ch, cl, rc = _approx(st, c)
        a1, a2 = _two_prod(n, ah)
        d1, d2 = _two_prod(bh, ch)
        u, ue = _two_sum(a1, -d1)
        t2 = n * al
        t3 = bh * cl
        t4 = bl * ch
        r = ((a2 - d2) + (t2 - (t3 + t4))) + ue
        s, se = _two_sum(u, r)
        err = _EPS_SUM * (abs(a2) + abs(d2) + abs(t2) + abs(t3) + abs(t4) + abs(ue))
        err += _EPS_DD * (abs(a1) + abs(d1))  # and b l c l, below that
        # how far the two doubles of each sum are from it
        err += n * ra + rb * (abs(ch) + abs(cl) + rc) + rc * (abs(bh) + abs(bl))
        err *= 1.0 + _EPS_SUM  # the bound's own roundings
        if s != 0.0 and s - s == 0.0 and abs(se) + err < _half_ulp(s):
            return s
    return _exact_difference(n, st, parts, a, b, c, comps, scratch)


@helper
def _exact_difference(n, st, parts, a, b, c, comps, scratch):
    """``n A - B C`` exactly rounded: every product of the sums' leading doubles
    (:func:`_leading`, the same whatever order the sums were built in), into one expansion."""
    every = comps.shape[1]
    na = _leading(st, parts, a, comps[0], scratch, every)
    nb = _leading(st, parts, b, comps[1], scratch, every)
    nc = _leading(st, parts, c, comps[2], scratch, every)
    m = 0
    for i in range(na):
        p, q = _two_prod(n, comps[0, i])
        m = _grow(scratch, m, p)
        m = _grow(scratch, m, q)
        if m >= 32:
            m = _compress(scratch, m)
    for i in range(nb):
        for k in range(nc):
            p, q = _two_prod(comps[1, i], comps[2, k])
            m = _grow(scratch, m, -p)
            m = _grow(scratch, m, -q)
            if m >= 32:
                m = _compress(scratch, m)
    if m >= 2:
        m = _compress(scratch, m)
    return _rounded(scratch, m)


@helper
def _higher(n, st, parts, comps, scratch, m2, buf):
    """``M3`` and ``M4`` into ``buf[3, 0]``, ``buf[4, 0]``, in double-double from the sums'
    leading doubles; False where their error bound does not leave skewness and kurtosis
    within :data:`_SETTLED` (or a term leaves the doubles' range)."""
    for j in range(4):
        _leading(st, parts, j, comps[j], scratch, 2)  # the two that double-double reads
    s1h, s1l = comps[0, 0], comps[0, 1]
    s2h, s2l = comps[1, 0], comps[1, 1]
    s3h, s3l = comps[2, 0], comps[2, 1]
    s4h, s4l = comps[3, 0], comps[3, 1]
    nh, nl = _two_prod(n, n)
    nnh, nnl = _dd_mul(nh, nl, n, 0.0)
    q1h, q1l = _dd_mul(s1h, s1l, s1h, s1l)  # S1^2
    # n^2 M3 = n^2 S3 - 3 n S1 S2 + 2 S1^3
    t1h, t1l = _dd_mul(nh, nl, s3h, s3l)
    t2h, t2l = _dd_mul(s1h, s1l, s2h, s2l)
    t2h, t2l = _dd_mul(t2h, t2l, 3.0 * n, 0.0)
    t3h, t3l = _dd_mul(q1h, q1l, s1h, s1l)
    d3h, d3l = _dd_add(t1h, t1l, -t2h, -t2l)
    d3h, d3l = _dd_add(d3h, d3l, 2.0 * t3h, 2.0 * t3l)
    err3 = _EPS_DD * (abs(t1h) + abs(t2h) + abs(2.0 * t3h))
    # n^3 M4 = n^3 S4 - 4 n^2 S1 S3 + 6 n S1^2 S2 - 3 S1^4
    u1h, u1l = _dd_mul(nnh, nnl, s4h, s4l)
    u2h, u2l = _dd_mul(s1h, s1l, s3h, s3l)
    u2h, u2l = _dd_mul(u2h, u2l, nh, nl)
    u3h, u3l = _dd_mul(q1h, q1l, s2h, s2l)
    u3h, u3l = _dd_mul(u3h, u3l, 6.0 * n, 0.0)
    u4h, u4l = _dd_mul(q1h, q1l, q1h, q1l)
    u4h, u4l = _dd_mul(u4h, u4l, 3.0, 0.0)  # 3 S1^4: three times a double is not exact
    d4h, d4l = _dd_add(u1h, u1l, -4.0 * u2h, -4.0 * u2l)
    d4h, d4l = _dd_add(d4h, d4l, u3h, u3l)
    d4h, d4l = _dd_add(d4h, d4l, -u4h, -u4l)
    err4 = _EPS_DD * (abs(u1h) + abs(4.0 * u2h) + abs(u3h) + abs(u4h))
    m3 = (d3h + d3l) / n / n
    m4 = (d4h + d4l) / n / n / n
    if not (m3 - m3 == 0.0 and m4 - m4 == 0.0 and err4 - err4 == 0.0):
        return False
    spread = m2 / n  # the population variance: skewness is M3 / n / spread^1.5
    if spread < _TINY:  # fourth powers of such deviations leave the doubles' range
        return False
    if err3 / n / n / n > _SETTLED * spread * math.sqrt(spread):
        return False
    if err4 / n / n / n / n > _SETTLED * spread * spread:  # kurtosis: M4 / n / spread^2
        return False
    buf[3, 0] = m3
    buf[4, 0] = m4
    return True


@helper
def _value(st, parts, j):
    """Exact sum ``j`` rounded to the nearest double (through the state's row of scratch)."""
    scratch = parts[ROWS - 1]
    return _rounded(scratch, _expansion(st, parts, j, scratch))


@helper
def _deviations(kind, x, y, l, h, cx, cy, st, parts, buf, pc):
    """The state from the frame's deviations from ``cx`` (and ``cy``): each deviation's
    powers rounded, their sums (the state's rows 5 to 9) exactly rounded, then corrected for
    the centre not being the mean exactly. O(frame): the frames the sums cannot settle."""
    k = 5
    _clear(st, k, k + 5)
    n = 0
    ok = True
    for r in range(l, h):
        v = x[r]
        w = y[r] if kind == PAIRS else 0.0
        if v - v != 0.0 or w - w != 0.0:
            continue
        n += 1
        d = v - cx
        d2 = d * d
        e = w - cy
        t3 = e if kind == PAIRS else d2 * d
        t4 = e * e if kind == PAIRS else d2 * d2
        pc[0], pc[1], pc[2], pc[3], pc[4] = d, d2, t3, t4, d * e
        for j in range(5 if kind == PAIRS else (4 if kind == MOMENTS else 2)):
            if pc[j] - pc[j] != 0.0:
                ok = False
            elif ok:
                _put(st, parts, k + j, pc[j])
    nf = float(n)
    buf[0, 0] = nf
    if not ok:  # a power beyond the doubles' range: no number
        for f in range(1, buf.shape[0]):
            buf[f, 0] = np.nan
        return
    for j in range(5):  # the sums' indices as variables: numba compiles a helper once
        pc[j] = _value(st, parts, k + j)
    t1, t2, t3, t4, t5 = pc[0], pc[1], pc[2], pc[3], pc[4]
    if kind == PAIRS:  # deviations of x, their squares, of y, their squares, their products
        buf[3, 0] = t5 - t1 * t3 / nf
        buf[4, 0] = t2 - t1 * t1 / nf
        buf[5, 0] = t4 - t3 * t3 / nf
        return
    m = t1 / nf
    buf[2, 0] = t2 - t1 * m
    if kind == MOMENTS:
        buf[3, 0] = t3 - 3.0 * m * t2 + 2.0 * m * m * t1
        buf[4, 0] = t4 - 4.0 * m * t3 + 6.0 * m * m * t2 - 3.0 * m * m * m * t1


@helper
def _settle(kind, x, y, l, h, nf, st, parts, comps, buf, pc, scratch, direct):
    """The family's state of the frame in hand ``[l, h)`` in ``buf`` (its ``nf`` values'
    sums in ``st``), where :func:`exact_moments`' quick path did not: the moments of order 3
    and 4, and the frames whose sums overflowed (``direct``)."""
    if not direct and buf[2, 0] != 0.0:
        direct = not _higher(nf, st, parts, comps, scratch, buf[2, 0], buf)
    if not direct:
        return
    for j in range(2):  # the centres: the means, from the exactly rounded sums (0 where
        i = 2 * j  # a sum overflowed), x's in pc[0], y's in pc[2]
        pc[i] = 0.0
        if (j == 0 or kind == PAIRS) and not _overflowed(st, parts, i):
            pc[i] = _value(st, parts, i) / nf
    cx, cy = pc[0], pc[2]
    _deviations(kind, x, y, l, h, cx, cy, st, parts, buf, pc)


@inline
def _pieces(kind, v, w, pc, ix):
    """The pieces of one value's powers (Dekker's products: ``v^2 = hh + hl``, ``v^3 = v hh +
    v hl``, ``v^4 = hh^2 + 2 hh hl + hl^2``; for pairs ``w``, ``w^2``, ``v w``): ``pc[p]``
    goes to sum ``ix[p]``; how many, 0 where a power leaves the doubles' range."""
    hh, hl = _two_prod(v, v)
    if abs(v) > _SPLITTABLE or abs(w) > _SPLITTABLE or hh - hh != 0.0:
        return 0
    pc[0], pc[1], pc[2] = v, hh, hl
    ix[0], ix[1], ix[2] = 0, 1, 1
    if kind == WELFORD:
        return 3
    if kind == PAIRS:
        pc[3] = w
        pc[4], pc[5] = _two_prod(w, w)
        pc[6], pc[7] = _two_prod(v, w)
        ix[3], ix[4], ix[5], ix[6], ix[7] = 2, 3, 3, 4, 4
        return 8 if pc[4] - pc[4] == 0.0 and pc[6] - pc[6] == 0.0 else 0
    pc[3], pc[4] = _two_prod(v, hh)
    pc[5], pc[6] = _two_prod(v, hl)
    pc[7], pc[8] = _two_prod(hh, hh)
    p, q = _two_prod(hh, hl)
    pc[9], pc[10] = 2.0 * p, 2.0 * q
    pc[11], pc[12] = _two_prod(hl, hl)
    for p in range(3, 13):
        ix[p] = 2 if p < 7 else 3
    return 13 if pc[7] - pc[7] == 0.0 else 0


@helper
def _in_order(x, y, l, h, buf, code):
    """Covariances and the correlation of a frame holding an infinity, by Spark's own update
    (its ``Covariance`` and ``Corr``: each pair in order moves the means, the co-moment and
    the squares), whose infinities give -inf, +inf or NaN by the order they meet in."""
    n = mx = my = c = qx = qy = 0.0
    for r in range(l, h):
        b = x[r]  # SQL's second argument
        a = y[r]
        if a != a or b != b:
            continue
        n += 1.0
        dx = a - mx
        mx = mx + dx / n
        dy = b - my
        my = my + dy / n
        c = c + dx * (b - my)
        qx = qx + dx * (a - mx)
        qy = qy + dy * (b - my)
    buf[0, 0] = n
    buf[3, 0] = c
    buf[4, 0] = qx
    buf[5, 0] = qy
    return comoments_lower(code, buf, 0) if n > 0.0 else np.nan


@kernel
def exact_moments(kind, code, x, y, lo, hi, a, b, out, st, parts, comps, buf, pc, ix):
    """``out[i]`` for ``i`` in ``[a, b)``: the statistic ``code`` of the family ``kind`` over
    ``x[lo[i]:hi[i]]`` (pairs with ``y``: ``y`` is SQL's first argument; NaN left out, NaN
    where the family's lower has no value), from the frame's values alone (see the module).
    A frame holding an infinity: NaN, or for pairs Spark's own update over the frame's pairs
    in order (:func:`_in_order`). Frames in any order: a frame that starts before the one in
    hand or ends before it starts afresh. ``st``, ``parts``, ``comps``, ``buf``, ``pc``,
    ``ix``: :func:`scratch`."""
    k = SUMS[kind]
    scratch = parts[ROWS - 1]
    n = 0  # values in the frame in hand (pairs with both), and those whose powers overflow
    big = 0
    odd = 0  # those with an infinity
    cl = ch = 0
    fresh = True
    for i in range(a, b):
        l, h = lo[i], hi[i]
        if fresh or l < cl or h < ch or l >= ch:
            _clear(st, 0, k)
            n = big = odd = 0
            cl = ch = l
        while cl < l or ch < h:
            if cl < l:  # a value leaves: its powers' negations are added
                r = cl
                cl += 1
                sign = -1.0
            else:
                r = ch
                ch += 1
                sign = 1.0
            v = x[r]
            w = y[r] if kind == PAIRS else 0.0
            if v != v or w != w:
                continue
            if v - v != 0.0 or w - w != 0.0:
                odd += int(sign)
                continue
            n += int(sign)
            m = _pieces(kind, v, w, pc, ix)
            if m == 0:
                big += int(sign)
            for p in range(m):
                _put(st, parts, ix[p], sign * pc[p])
        fresh = False
        for j in range(k):  # an expansion that overflowed is lost: the next starts afresh
            fresh = fresh or _overflowed(st, parts, j)
        if odd != 0:
            out[i] = _in_order(x, y, l, h, buf, code) if kind == PAIRS else np.nan
            continue
        if n == 0:
            out[i] = np.nan
            continue
        nf = float(n)
        buf[0, 0] = nf
        buf[1, 0] = 0.0  # the mean: no lower reads it
        direct = fresh or big != 0
        if not direct:  # n A - B C exactly rounded, over n: M2 (C and M2x, M2y for pairs)
            first, last = (0, 3) if kind == PAIRS else (3, 4)
            for t in range(first, last):
                d = _difference(nf, st, parts, _A[t], _B[t], _C[t], comps, scratch)
                buf[_INTO[t], 0] = d / nf
        if direct or kind == MOMENTS:
            _settle(kind, x, y, l, h, nf, st, parts, comps, buf, pc, scratch, direct)
        if kind == WELFORD:
            out[i] = welford_lower(code, buf, 0)
        elif kind == MOMENTS:
            out[i] = moments_lower(code, buf, 0)
        else:
            out[i] = comoments_lower(code, buf, 0)
