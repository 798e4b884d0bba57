"""Exactly rounded sums of frames of doubles: each frame's sum is the double nearest the exact
sum of its values (ties to even), the value :func:`math.fsum` gives, whatever order the values
came in and whatever frames were asked before. So a frame's sum does not depend on the other
frames of a call: a point-in-time query answered alone (an online request) gets the value a
backfill over every query gives.

The values of the frame in hand are held as a Shewchuk expansion, a few non-overlapping
doubles whose exact sum is the frame's (J. R. Shewchuk, "Adaptive Precision Floating-Point
Arithmetic and Fast Robust Geometric Predicates", 1997, section 2.4: GROW-EXPANSION with zero
elimination, the partials of :func:`math.fsum`). A value enters by adding it and leaves by
adding its negation, both exact, so a sliding frame costs O(1) expected per row (the expansion
of real data holds one to three doubles), and the frame's sum is the expansion rounded once,
as CPython's ``math.fsum`` rounds its partials (half-way cases included). Infinities are
counted apart; NaN is skipped (the caller marks the frames that hold one). A frame whose
partial sums leave the doubles' range is flagged, for the caller to sum exactly in Python.
"""

import numpy as np

from .jit import inline, kernel

#: room for an expansion: non-overlapping doubles span at most about 40 of them
PARTS = 64


@inline
def _grow(parts, n, x):
    """Add ``x`` to the expansion ``parts[:n]`` (increasing magnitude); its new length."""
    i = 0
    for j in range(n):
        y = parts[j]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            parts[i] = lo
            i += 1
        x = hi
    if x != 0.0:
        parts[i] = x
        i += 1
    return i


@inline
def _rounded(parts, n):
    """The expansion ``parts[:n]`` rounded to the nearest double, ties to even."""
    if n == 0:
        return 0.0
    j = n - 1
    hi = parts[j]
    lo = 0.0
    while j > 0:
        x = hi
        j -= 1
        y = parts[j]
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            break
    if j > 0 and ((lo < 0.0 and parts[j - 1] < 0.0) or (lo > 0.0 and parts[j - 1] > 0.0)):
        y = lo * 2.0
        x = hi + y
        if y == x - hi:
            hi = x
    return hi


@kernel
def exact_sums(x, lo, hi, a, b, out, overflow, parts):
    """``out[i]`` for ``i`` in ``[a, b)``: the exactly rounded sum of ``x[lo[i]:hi[i]]`` (NaN
    skipped; +inf, -inf or NaN where infinities are in it); ``overflow[i]`` set where a partial
    sum left the doubles' range (``out[i]`` is then not the sum). Frames in any order: a frame
    that starts before the one in hand or ends before it starts afresh. ``parts``: room for
    the expansion (:data:`PARTS` doubles)."""
    n = 0
    up = down = 0  # infinities in the frame in hand
    cl = ch = 0  # the frame in hand: x[cl:ch]
    fresh = True
    for i in range(a, b):
        l, h = lo[i], hi[i]
        if fresh or l < cl or h < ch or l >= ch:
            n = up = down = 0
            cl = ch = l
            fresh = False
        while cl < l:
            v = x[cl]
            cl += 1
            if v - v == 0.0:
                n = _grow(parts, n, -v)
            elif v == np.inf:
                up -= 1
            elif v == -np.inf:
                down -= 1
        while ch < h:
            v = x[ch]
            ch += 1
            if v - v == 0.0:
                n = _grow(parts, n, v)
            elif v == np.inf:
                up += 1
            elif v == -np.inf:
                down += 1
        bad = n > 0 and parts[n - 1] - parts[n - 1] != 0.0  # not finite: a partial overflowed
        if up and down:
            out[i] = np.nan
        elif up:
            out[i] = np.inf
        elif down:
            out[i] = -np.inf
        elif bad:
            out[i] = np.nan
            overflow[i] = True
        else:
            out[i] = _rounded(parts, n)
        fresh = bad  # an expansion that overflowed is lost: the next frame starts afresh
