"""Each asked key's runs in the parts of an online state merged in time order
(:func:`windowagg.kernels.key_order.merged_runs`, as stretches of rows one after another, a
column copied with the times or by :func:`windowagg.kernels.passes.stretched`; some of the
keys alone, :func:`windowagg.kernels.key_order.merged_keys`), against a
stable sort by time of the key's rows part by part: ties in part order (arrival order), then
in each part's order; parts that interleave a little, a lot or not at all, or follow each
other (with a tie where they touch), few distinct times, empty runs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine.rolling.part_index import Stretches
from windowagg.kernels.key_order import by_place, merged_keys, merged_runs
from windowagg.kernels.passes import stretched


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    parts=st.integers(1, 4),
    keys=st.integers(1, 6),
    span=st.sampled_from([3, 50, 10_000]),
    whole=st.booleans(),
    overlap=st.sampled_from(["half", "touching", "apart"]),
)
def test_merged_runs_equal_a_stable_sort(data, parts, keys, span, whole, overlap) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dtype = np.int64 if whole else np.float64
    chunks, lo, hi = [], np.zeros((parts, keys), np.int64), np.zeros((parts, keys), np.int64)
    at = 0
    for p in range(parts):
        # later parts later: by half the span (they overlap), or after the one before (they
        # touch: a tie between the last of one and the first of the next), or apart
        shift = p * {"half": span // 2, "touching": span - 1, "apart": span}[overlap]
        for w in range(keys):
            n = int(rng.integers(0, 40))
            chunks.append(np.sort(rng.integers(shift, shift + span, n)).astype(dtype))
            lo[p, w], hi[p, w] = at, at + n
            at += n
    times = np.concatenate(chunks) if at else np.zeros(0, dtype)
    starts, sizes = np.full(at, -1, np.int64), np.full(at, -1, np.int64)
    out_times, counts = np.zeros(at, dtype), np.full(keys, -1, np.int64)
    # a column copied with the times (here each row's own number), and none
    values, out_values = np.arange(at, dtype=np.int64), np.full(at, -1, np.int64)
    head = np.empty(parts, np.int64)
    m = merged_runs(times, values, lo, hi, starts, sizes, out_times, out_values, counts, head)
    alone = np.zeros(at, dtype)
    none = np.zeros(0, np.float64)
    assert merged_runs(times, none, lo, hi, starts, sizes, alone, none, counts, head) == m
    assert (sizes[:m] > 0).all()  # no empty stretch
    rows = Stretches(starts[:m], sizes[:m], at).rows()
    stretched(times, starts, sizes, 0, m, 0, gathered := np.zeros(at, dtype))
    want = []
    for w in range(keys):
        own = np.concatenate([np.arange(lo[p, w], hi[p, w]) for p in range(parts)])
        want.append(own[np.argsort(times[own], kind="stable")])  # part order on ties
    expected = np.concatenate(want) if want else np.zeros(0, np.int64)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(out_times, times[expected])
    np.testing.assert_array_equal(alone, times[expected])
    np.testing.assert_array_equal(out_values, expected)  # the column's rows, merged
    np.testing.assert_array_equal(gathered, times[expected])  # the stretches copied
    np.testing.assert_array_equal(counts, [len(x) for x in want])
    # some keys alone (a chunk of a range: merged_keys): their rows from the start
    first = data.draw(st.integers(0, keys - 1))
    stop = data.draw(st.integers(first, keys))
    part = np.concatenate([np.zeros(0, np.int64), *want[first:stop]])
    mine, own, few = np.zeros(at, dtype), np.full(at, -1, np.int64), np.full(keys, -1, np.int64)
    k = merged_keys(times, values, lo, hi, first, stop, starts, sizes, mine, own, few, head)
    assert Stretches(starts[:k], sizes[:k], len(part)).rows().tolist() == part.tolist()
    np.testing.assert_array_equal(mine[: len(part)], times[part])
    np.testing.assert_array_equal(own[: len(part)], part)
    assert few[first:stop].tolist() == [len(x) for x in want[first:stop]]


def test_the_copies_ask_the_cache_for_later_runs_ahead() -> None:
    """The merge and the copy of stretches hint the processor to fetch later runs' first
    lines while they copy this one (:mod:`windowagg.kernels.prefetch`): their compiled code
    calls LLVM's prefetch, and the copy is the same with the hint as without it."""
    from numba import njit

    times = np.arange(64, dtype=np.int64)
    lo = np.array([[0, 8, 16, 24, 32, 40, 48, 56]], np.int64)
    hi, n = lo + 8, 64
    starts, sizes, out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    values = np.empty(n, np.int64)
    counts, head = np.empty(8, np.int64), np.empty(1, np.int64)
    for kernel in (merged_runs, stretched):
        fresh = njit(kernel.py_func)  # compiled here: its LLVM code can be read
        if kernel is merged_runs:
            m = fresh(times, times, lo, hi, starts, sizes, out, values, counts, head)
            assert values.tolist() == times.tolist()
        else:
            copied = np.empty(n, np.int64)
            fresh(times, starts, sizes, 0, m, 0, copied)
            assert copied.tolist() == times.tolist()
        assert any("llvm.prefetch" in code for code in fresh.inspect_llvm().values())
    assert out.tolist() == times.tolist() and counts.tolist() == [8] * 8


@settings(max_examples=200, deadline=None)
@given(places=st.lists(st.integers(-1, 6), max_size=40))
def test_the_requests_by_place_are_a_stable_sort(places) -> None:
    """:func:`~windowagg.kernels.key_order.by_place` orders rows by their place (a null
    key's, -1, first), ties in their order: NumPy's stable sort."""
    place = np.array(places, np.int64)
    order = np.empty(len(place), np.int64)
    by_place(place, np.empty(7 + 2, np.int64), order)
    assert order.tolist() == np.argsort(place, kind="stable").tolist()
