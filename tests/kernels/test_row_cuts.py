"""Rows frames across an online state's parts (:func:`windowagg.kernels.row_cuts.row_cuts`):
each part's rows of the frame, found by pivots, against merging every row of the key in
Python (time order, ties in part order, then row order) and counting the frame's rows of
each part: many parts, long ties across them, frames back, forth and around the request's
last event, unbounded sides, requests before and after every event, keys with no event in
some parts and no key at all, several requests of one key at one time in a row; int64 and
double times."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.kernels.row_cuts import row_cuts


def _expected(times, s, e, key, up, start, end, lo_unb, hi_unb):
    parts, n = s.shape[0], len(key)
    a, b = np.zeros((parts, n), np.int64), np.zeros((parts, n), np.int64)
    for j, w in enumerate(key):
        if w < 0:
            continue
        merged = sorted(
            (times[r], p, r) for p in range(parts) for r in range(s[p, w], e[p, w])
        )  # time, then part, then row
        total = len(merged)
        at = sum(int(up[p, j] - s[p, w]) for p in range(parts))
        g1 = 0 if lo_unb else min(max(at - 1 + start, 0), total)
        g2 = total if hi_unb else min(max(at + end, 0), total)
        for p in range(parts):
            a[p, j] = s[p, w] + sum(1 for _, q, _ in merged[:g1] if q == p)
            b[p, j] = max(a[p, j], s[p, w] + sum(1 for _, q, _ in merged[:g2] if q == p))
    return a, b


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    parts=st.integers(1, 6),
    keys=st.integers(1, 4),
    span=st.sampled_from([3, 20, 1000]),
    start=st.integers(-40, 5),
    length=st.integers(-3, 40),
    unbounded=st.sampled_from([(False, False), (True, False), (False, True)]),
    doubles=st.booleans(),
)
def test_each_parts_rows_of_a_rows_frame_equal_merging_every_row(
    seed, parts, keys, span, start, length, unbounded, doubles
) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 30, (parts, keys))  # each part's rows of each key
    chunks, s, e = [], np.zeros((parts, keys), np.int64), np.zeros((parts, keys), np.int64)
    at = 0
    for p in range(parts):
        for w in range(keys):
            chunks.append(np.sort(rng.integers(0, span, sizes[p, w])))  # ties where few times
            s[p, w], e[p, w] = at, at + sizes[p, w]
            at += sizes[p, w]
    times = np.concatenate([np.zeros(0, np.int64), *chunks])
    times = times.astype(np.float64) if doubles else times
    n = 40
    key = rng.integers(-1, keys, n)
    qtimes = rng.integers(-2, span + 2, n)
    again = np.flatnonzero(rng.random(n) < 0.4)  # several requests of one key at one time
    for j in again[again > 0]:
        key[j], qtimes[j] = key[j - 1], qtimes[j - 1]
    up = np.zeros((parts, n), np.int64)
    for j, w in enumerate(key):
        for p in range(parts):
            if w >= 0:
                run = times[s[p, w] : e[p, w]]
                up[p, j] = s[p, w] + np.searchsorted(run, qtimes[j], "right")
    end = start + length
    a, b = np.empty((parts, n), np.int64), np.empty((parts, n), np.int64)
    work = np.empty(parts, np.int64), np.empty(parts, np.int64)
    row_cuts(times, s, e, key, up, start, end, *unbounded, a, b, *work)
    want = _expected(times, s, e, key, up, start, end, *unbounded)
    assert np.array_equal(a, want[0]) and np.array_equal(b, want[1])
