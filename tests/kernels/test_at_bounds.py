"""Point-in-time frames (:func:`windowagg.kernels.bounds.at_bounds`): each query's events found
by pointers that move by galloping, against a binary search per query (NumPy's
``searchsorted``): range and rows frames, ties, queries before, between and after a key's
events, long keys asked a few times, and doubles and int64 times alike."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine.columns import limits
from windowagg.kernels.bounds import at_bounds


def _expected(times, seg, qseg, qtimes, rows, lo_off, hi_off):
    lo, hi = np.zeros(len(qseg), np.int64), np.zeros(len(qseg), np.int64)
    for j, (g, t) in enumerate(zip(qseg, qtimes)):
        if g < 0:
            continue
        s, e = seg[g], seg[g + 1]
        own = times[s:e]
        if rows:
            at = s + np.searchsorted(own, t, "right")
            a, b = min(max(at - 1 + lo_off, s), e), min(max(at + hi_off, s), e)
        else:
            a = s + np.searchsorted(own, t + lo_off, "left")
            b = s + np.searchsorted(own, t + hi_off, "right")
        lo[j], hi[j] = a, max(a, b)
    return lo, hi


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=4),
    rows=st.booleans(),
    whole=st.booleans(),
)
def test_galloping_pointers_equal_a_binary_search_per_query(data, sizes, rows, whole) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    times = np.concatenate([np.sort(rng.integers(0, 60, n)) for n in sizes])
    seg = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    asked = data.draw(st.lists(st.integers(-1, len(sizes) - 1), max_size=12))
    qseg = np.sort(np.array(asked, np.int64))
    qtimes = np.sort(rng.integers(-10, 70, len(qseg)))  # sorted within each segment too
    order = np.lexsort((qtimes, qseg))
    qseg, qtimes = qseg[order], qtimes[order]
    if rows:
        lo_n, hi_n = data.draw(st.integers(-50, 0)), data.draw(st.integers(-5, 5))
    else:
        lo_n, hi_n = data.draw(st.integers(-40, 0)), data.draw(st.integers(-5, 10))
    kind = np.int64 if whole else np.float64
    t, q = times.astype(kind), qtimes.astype(kind)
    lo_off, hi_off = np.array([lo_n, 0], kind), np.array([hi_n, 0], kind)
    lo, hi = np.empty(len(qseg), np.int64), np.empty(len(qseg), np.int64)
    at_bounds(t, seg, qseg, q, rows, lo_off, hi_off, limits(t), False, False, lo, hi)
    want_lo, want_hi = _expected(times, seg, qseg, qtimes, rows, lo_n, hi_n)
    np.testing.assert_array_equal(lo, want_lo)
    np.testing.assert_array_equal(hi, want_hi)


@pytest.mark.parametrize("rows", [False, True])
def test_an_end_at_or_past_the_segments_last_time_is_its_end_without_a_gallop(rows) -> None:
    """A request at or after its segment's last time (one at the newest time) ends at the
    segment's end from that last time alone. The segment's middle here descends, which no
    laid segment does: a gallop from its start would stop there, so only the end's own check
    gives the segment's end."""
    times = np.array([0, 100, 100, 5, 7], np.int64)  # a gallop from 0 stops at the 100s
    seg, qseg, q = np.array([0, 5], np.int64), np.zeros(1, np.int64), np.array([10], np.int64)
    zero = np.zeros(2, np.int64)
    lo, hi = np.empty(1, np.int64), np.empty(1, np.int64)
    at_bounds(times, seg, qseg, q, rows, zero, zero, limits(times), True, False, lo, hi)
    assert (lo[0], hi[0]) == (0, 5)
