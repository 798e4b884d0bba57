"""Order statistics over frames: the selection per frame and the rank tree against the
definition (sort the frame's values, take the ``ceil(q * n)``-th, or the floor and ceiling of
the 0-based ``(n - 1) * q``), with NaN, ties and empty frames, and which of the two a call
runs; the mode kernel against a count of each value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine import sweep
from windowagg.engine.sweep import FrameBounds, quantiles
from windowagg.kernels import order_stats


def definition(values, lo, hi, q, mode=order_stats.NEAREST) -> list[float]:
    out = []
    for a, b in zip(lo, hi):
        xs = sorted(x for x in values[a:b] if not math.isnan(x))
        if not xs:
            out.append(math.nan)
            continue
        pos = (len(xs) - 1) * q
        k = {
            order_stats.NEAREST: max(1, math.ceil(q * len(xs))) - 1,
            order_stats.BELOW: math.floor(pos),
            order_stats.ABOVE: math.ceil(pos),
        }[mode]
        out.append(xs[k])
    return out


values_ = st.lists(
    st.sampled_from([math.nan, -1.0, 0.0, 0.5, 2.0, 3.0, 7.0]) | st.floats(-5, 5),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(values_, st.data(), st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]))
def test_selection_and_rank_tree_equal_the_definition(xs, data, q) -> None:
    values = np.array(xs)
    n = len(values)
    m = data.draw(st.integers(1, 20))
    lo = np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m)))
    hi = np.maximum(lo, np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m))))
    lo, hi = np.array(lo, np.int64), np.array(hi, np.int64)
    want = definition(values, lo, hi, q)
    picked = np.empty(m)
    order_stats.select_quantiles(values, lo, hi, q, order_stats.NEAREST, np.empty(n), picked)
    frames = FrameBounds.given(np.arange(n, dtype=float), lo, hi)
    for overlap, kernel in [(0, "rank_quantiles"), (10**9, "select_quantiles")]:
        sweep.SELECT_OVERLAP = overlap
        try:
            got = quantiles(values, frames, q)
        finally:
            sweep.SELECT_OVERLAP = 16
        assert np.array_equal(got, want, equal_nan=True), kernel
    assert np.array_equal(picked, want, equal_nan=True)


@pytest.mark.parametrize(
    "size,slide,kernel",
    [(50, 50, "select_quantiles"), (100, 10, "select_quantiles"), (400, 1, "rank_quantiles")],
)
def test_little_overlap_selects_in_each_frame(monkeypatch, size, slide, kernel) -> None:
    """Tumbling and mildly sliding frames select in each (no sort of all values); frames that
    hold each row many times take the rank tree."""
    calls = []
    for name in ("select_quantiles", "rank_quantiles"):
        real = getattr(order_stats, name)
        monkeypatch.setattr(
            order_stats, name, lambda *a, _r=real, _n=name: (calls.append(_n), _r(*a))[1]
        )
    values = np.random.default_rng(1).random(4000)
    lo = np.arange(0, 4000 - size, slide, dtype=np.int64)
    hi = lo + size
    got = quantiles(values, FrameBounds.given(np.arange(4000.0), lo, hi), 0.5)
    assert calls == [kernel]
    assert np.array_equal(got, definition(values, lo, hi, 0.5))


@settings(max_examples=100, deadline=None)
@given(
    values_,
    st.data(),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.9, 1.0]),
    st.sampled_from([order_stats.BELOW, order_stats.ABOVE]),
)
def test_the_ranks_a_percentile_interpolates_between(xs, data, q, mode) -> None:
    values = np.array(xs)
    n = len(values)
    m = data.draw(st.integers(1, 20))
    lo = np.array(np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m))))
    hi = np.maximum(lo, np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m))))
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    ranks, order = sweep.ranks_of(values)
    frames = FrameBounds.given(np.arange(n, dtype=float), lo, hi)
    for overlap in (0, 10**9):
        sweep.SELECT_OVERLAP = overlap
        try:
            picked = sweep.order_statistic(ranks, frames, q, mode)
        finally:
            sweep.SELECT_OVERLAP = 16
        got = [values[order[p - 1]] if p else math.nan for p in picked]
        assert np.array_equal(got, definition(values, lo, hi, q, mode), equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 6), min_size=1, max_size=60), st.data())
def test_mode_is_the_smallest_most_frequent_value(ids, data) -> None:
    ids = np.array(ids, np.int64)
    n = len(ids)
    m = data.draw(st.integers(1, 20))
    lo = np.array(np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m))))
    hi = np.maximum(lo, np.sort(data.draw(st.lists(st.integers(0, n), min_size=m, max_size=m))))
    out = np.empty(m, np.int64)
    tree = np.zeros(16, np.int64)
    order_stats.mode_frames(ids, lo.astype(np.int64), hi.astype(np.int64), tree, out)
    for j, (a, b) in enumerate(zip(lo, hi)):
        counts = {}
        for v in ids[a:b]:
            if v >= 0:
                counts[v] = counts.get(v, 0) + 1
        top = max(counts.values(), default=0)
        assert out[j] == (min(v for v, c in counts.items() if c == top) if counts else -1)
    assert not tree.any()  # left zeroed


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1, 6), min_size=1, max_size=80), st.data())
def test_distinct_counts_the_values_of_each_frame(ids, data) -> None:
    """Frames that overlap the one before, touch it, or start past it (a new run: the window
    found empty, the counts of the run before read as none), empty frames included, against
    a set of each frame's values."""
    ids = np.array(ids, np.int64)
    n = len(ids)
    lo, hi, a, b = [], [], 0, 0
    for _ in range(data.draw(st.integers(1, 25))):
        a = data.draw(st.integers(a, n))  # at or after the start before
        b = data.draw(st.integers(max(a, b), min(n, max(a, b) + 12)))  # at or after the end
        lo.append(a)
        hi.append(b)
    lo_, hi_ = np.array(lo, np.int64), np.array(hi, np.int64)
    out = np.empty(len(lo), np.int64)
    order_stats.distinct_frames(ids, lo_, hi_, np.zeros(7, np.int64), out)
    assert out.tolist() == [len({v for v in ids[a:b] if v >= 0}) for a, b in zip(lo, hi)]
