"""Distinct counts from each part's rows grouped by key and value
(:mod:`windowagg.kernels.distinct_groups`): the groups laid part after part, each request's
key's groups found by its runs, and each frame's count, against Python's sets of the values
in the frames (null and NaN not counted, -0.0 the same value as 0.0): many parts, keys with
no row in some parts, repeated and distinct values, doubles and integers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.kernels.distinct_groups import (
    distinct_at,
    key_first_groups,
    merged_groups,
    value_groups,
    walked_groups,
)
from windowagg.kernels.key_order import merged_rows


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    parts=st.integers(1, 5),
    keys=st.integers(1, 4),
    spread=st.sampled_from([2, 6, 1000]),
    doubles=st.booleans(),
)
def test_each_frames_distinct_count_equals_a_set_of_its_values(
    seed, parts, keys, spread, doubles
) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 40, (parts, keys))
    lo, hi = np.zeros((parts, keys), np.int64), np.zeros((parts, keys), np.int64)
    laid_keys, at = [], 0
    for p in range(parts):
        for w in range(keys):
            lo[p, w], hi[p, w] = at, at + sizes[p, w]
            laid_keys.append(np.full(sizes[p, w], 10 * w, np.int64))
            at += sizes[p, w]
    n = at
    keys_laid = np.concatenate([np.zeros(0, np.int64), *laid_keys])
    values = rng.integers(-spread, spread, n)
    if doubles:
        values = values.astype(np.float64)
        values[rng.random(n) < 0.1] = np.nan
        values[values == 0] = np.where(rng.random(int((values == 0).sum())) < 0.5, -0.0, 0.0)
    valid = rng.random(n) > 0.1
    rows, groups = np.empty(n, np.int64), np.empty(n + parts, np.int64)
    gvalues = np.empty(n + parts, values.dtype)  # each group's value, beside it
    goff, r, g = [0], 0, 0
    bounds = [int(lo[p, 0]) if keys else 0 for p in range(parts)] + [n]
    # each part's distinct keys (those with rows there), laid part after part, with where
    # their groups begin; and each key's place among them
    first, doff, at = [], [0], np.full((parts, keys), -1, np.int64)
    for p in range(parts):
        a, b = bounds[p], bounds[p + 1]
        work = np.empty(b - a, np.int64)
        m, k = value_groups(
            keys_laid,
            values,
            valid,
            True,
            a,
            b,
            r,
            rows[r : r + b - a],
            groups[g:],
            gvalues[g:],
            work,
        )
        held = [w for w in range(keys) if sizes[p, w]]
        at[p, held] = doff[-1] + np.arange(len(held))
        distinct = np.array([10 * w for w in held], np.int64)
        out = np.empty(len(held), np.int64)
        key_first_groups(keys_laid, rows, groups, g, g + k, distinct, out)
        first.append(out)
        doff.append(doff[-1] + len(held))
        r, g = r + m, g + k + 1
        goff.append(g)
    rows, groups, goff = rows[:r], groups[:g], np.array(goff, np.int64)
    q = 30
    key = rng.integers(-1, keys, q)
    laid = np.concatenate([np.zeros(0, np.int64), *first])
    per_key = np.zeros(keys, np.int64)  # each key's groups: those of its rows, as a scan finds
    for p in range(parts):
        starts = rows[groups[goff[p] : goff[p + 1] - 1]]
        for w in range(keys):
            per_key[w] += np.count_nonzero((starts >= lo[p, w]) & (starts < hi[p, w]))
    walked = walked_groups(laid, np.array(doff, np.int64), goff, at, key)
    assert walked == per_key[key[key >= 0]].sum()
    fa, fb = np.zeros((parts, q), np.int64), np.zeros((parts, q), np.int64)
    for j, w in enumerate(key):
        for p in range(parts):
            if w >= 0 and hi[p, w] > lo[p, w]:
                x, y = np.sort(rng.integers(lo[p, w], hi[p, w] + 1, 2))
                if rng.random() < 0.3:  # the key's whole run in the part
                    x, y = lo[p, w], hi[p, w]
                fa[p, j], fb[p, j] = x, y
        again = rng.random()
        if j and again < 0.4:  # the request before again: several asking for one key at once
            key[j], fa[:, j], fb[:, j] = key[j - 1], fa[:, j - 1], fb[:, j - 1]
            if again < 0.15:  # its key, but one part's frame one row shorter
                p = int(rng.integers(0, parts))
                fb[p, j] = max(fa[p, j], fb[p, j] - 1)
    out = np.empty(q, np.int64)
    work = *np.empty((2, parts), np.int64), np.empty(parts, values.dtype)
    full = np.empty(parts, bool)
    offs = np.array(doff, np.int64), goff
    for p in range(parts):  # each group's value beside it: its first row's
        mine = np.arange(goff[p], goff[p + 1] - 1)
        assert np.array_equal(gvalues[mine], values[rows[groups[mine]]], equal_nan=True)
    distinct_at(gvalues, rows, groups, laid, *offs, at, key, fa, fb, lo, hi, out, *work, full)
    want = []
    for j in range(q):
        seen = set()
        for p in range(parts):
            for i in range(fa[p, j], fb[p, j]):
                if valid[i] and values[i] == values[i]:
                    seen.add(float(values[i]) + 0.0)
        want.append(len(seen))
    assert out.tolist() == want
    # a part whose frame holds its key's whole run counts its groups without reading their
    # rows: with every frame a whole run, rows that would match no frame change nothing
    whole = key >= 0
    wa, wb = (
        np.where(whole, lo[:, np.maximum(key, 0)], 0),
        np.where(whole, hi[:, np.maximum(key, 0)], 0),
    )
    unread = np.full_like(rows, -1)  # each group's rows: before every frame
    distinct_at(gvalues, unread, groups, laid, *offs, at, key, wa, wb, lo, hi, out, *work, full)
    keys_values = [
        {
            float(values[i]) + 0.0
            for p in range(parts)
            for i in range(wa[p, j], wb[p, j])
            if valid[i] and values[i] == values[i]
        }
        for j in range(q)
    ]
    assert out.tolist() == [len(v) for v in keys_values]


def _part(rng, n, keys, spread):
    order = np.lexsort((rng.integers(0, 50, n), rng.integers(0, keys, n)))
    k = rng.integers(0, keys, n)[order]
    k.sort()
    t = np.zeros(n, np.int64)
    for key in np.unique(k):
        t[k == key] = np.sort(rng.integers(0, 50, int((k == key).sum())))
    v = rng.integers(-spread, spread, n).astype(np.float64)
    v[rng.random(n) < 0.1] = np.nan
    return k, t, v


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    na=st.integers(0, 60),
    nb=st.integers(0, 60),
    keys=st.integers(1, 4),
    spread=st.sampled_from([2, 6, 1000]),
)
def test_two_parts_groups_merged_equal_the_merged_parts_groups_sorted(
    seed, na, nb, keys, spread
) -> None:
    """Where two parts merge, their groups' rows merged in one pass (as rows of the merged
    part) equal the merged part's groups sorted again."""
    rng = np.random.default_rng(seed)
    (ka, ta, va), (kb, tb, vb) = _part(rng, na, keys, spread), _part(rng, nb, keys, spread)
    valid = rng.random(na + nb) > 0.1
    k, v = np.r_[ka, kb], np.r_[va, vb]
    n = na + nb
    rows_a, rows_b = np.empty(n, np.int64), np.empty(n, np.int64)
    groups, gvalues = np.empty(n + 2, np.int64), np.empty(n + 2, v.dtype)
    work = np.empty(n, np.int64)
    ma, _ = value_groups(k, v, valid, True, 0, na, 0, rows_a, groups, gvalues, work)
    mb, _ = value_groups(k, v, valid, True, na, n, ma, rows_b, groups, gvalues, work)
    dst_k, dst_t, rows = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    merged_rows(ka, ta, kb, tb, dst_k, dst_t, rows)
    out = np.empty(ma + mb, np.int64)
    merged_groups(k, v, rows_a[:ma], rows_b[:mb], rows, 0, np.empty(n, np.int64), out)
    # the merged part laid, its groups sorted from scratch
    mv, mvalid = v[rows], valid[rows]
    want = np.empty(n, np.int64)
    m, _ = value_groups(dst_k, mv, mvalid, True, 0, n, 0, want, groups, gvalues, work)
    assert m == ma + mb and out.tolist() == want[:m].tolist()
