"""Keys as dense codes and the order by key and time: against numpy's stable lexsort, for
whole-number times (a radix sort of each key's rows packed with their row numbers: insertion,
one pass then insertion, or passes from the least significant digit for long keys) and
keys and row numbers too wide for one word (shortened keys, then refined) and others (a
merge sort per key), with
ties, null (-inf) and NaN (+inf) times, spans of a few values and of 2^41, on one thread and
on several."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine import parallel
from windowagg.engine.keys import _sortable, key_codes, keyed_sort
from windowagg.engine.windows.slices import SPARSE, _occupied, slice_cells
from windowagg.kernels import key_order as kernels

from ..threads import few_rows_on_threads


@settings(max_examples=160, deadline=None)
@given(
    st.integers(1, 400),
    st.integers(1, 9),
    st.sampled_from(["whole", "fractional", "wide"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_order_is_lexsorts_and_the_times_follow_it(n, m, kind, threads, seed) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, m, n)
    if kind == "wide":  # radix passes over a span of 2^41, with ties
        times = rng.integers(-(2**40), 2**40, 20)[rng.integers(0, 20, n)].astype(float)
    else:
        times = rng.integers(-50, 50, n).astype(float) * (1.0 if kind == "whole" else 0.37)
    times[rng.random(n) < 0.05] = -np.inf
    times[rng.random(n) < 0.05] = np.inf
    keyed = key_codes(pa.table({"k": codes}), ["k"])
    old = parallel.PARALLEL_ROWS
    parallel.PARALLEL_ROWS = 1 if threads else old
    try:
        order, ordered, seg = keyed_sort(keyed, times)
    finally:
        parallel.PARALLEL_ROWS = old
    want = np.lexsort((times, keyed.codes))  # stable: ties in the input's order
    assert np.array_equal(order, want)
    assert np.array_equal(ordered, times[want])  # the times in that order, from the sort's keys
    assert np.array_equal(seg, np.r_[0, np.cumsum(np.bincount(keyed.codes))])
    finite = times[np.isfinite(times)]
    assert (_sortable(times) is not None) == (kind != "fractional" or not (finite % 1).any())


def test_the_radix_sort_runs_for_timestamps(monkeypatch) -> None:
    """Whole-number times take the radix sort of each key's times (not a comparison sort),
    whether keys hold a few rows each or many."""
    calls = []
    real = kernels.radix_segments
    monkeypatch.setattr(kernels, "radix_segments", lambda *a: (calls.append(1), real(*a))[1])
    times = np.array([5.0, 3.0, 3.0, 9.0, -np.inf, np.inf]) * 1e6
    order, _, _ = keyed_sort(key_codes(pa.table({"k": [1, 1, 2, 1, 2, 1]}), ["k"]), times)
    assert calls == [1]
    assert order.tolist() == [1, 0, 3, 5, 4, 2]  # key 1 by time (+inf last), then key 2


def test_keys_with_many_rows_sort_their_own_times(monkeypatch) -> None:
    """Whole-number times of keys that hold many rows each take a radix sort per key."""
    calls = []
    real = kernels.radix_segments
    monkeypatch.setattr(kernels, "radix_segments", lambda *a: (calls.append(1), real(*a))[1])
    rng = np.random.default_rng(1)
    codes, times = rng.integers(0, 3, 5000), rng.integers(0, 10**9, 5000).astype(float)
    order, _, _ = keyed_sort(key_codes(pa.table({"k": codes}), ["k"]), times)
    assert calls and np.array_equal(order, np.lexsort((times, codes)))


def test_key_codes_follow_sparks_order() -> None:
    """Codes in the keys' sorted order, a null key first, several columns lexicographic."""
    t = pa.table({"a": ["b", None, "a", "b", "a"], "b": [2, 1, 1, 1, 2]})
    keyed = key_codes(t, ["a", "b"])
    assert keyed.codes.tolist() == [4, 0, 1, 3, 2]
    assert keyed.m == 5 and keyed.first.tolist() == [1, 2, 4, 3, 0]


def test_dictionary_keys_are_keyed_by_their_values() -> None:
    """A dictionary-encoded key (a pandas categorical), with a null among its codes and
    chunks of dictionaries of their own, has the codes of its values decoded: equal values
    one key whatever their dictionary, a null the first key. (A null among a dictionary's
    codes had failed: its codes came out as floats.)"""
    values = ["b", None, "a", "b", "c", "a"]
    chunks = [pa.array(values[:3]).dictionary_encode(), pa.array(values[3:]).dictionary_encode()]
    assert chunks[0].dictionary.to_pylist() != chunks[1].dictionary.to_pylist()
    t = pa.table({"k": pa.chunked_array(chunks)})
    keyed = key_codes(t, ["k"])
    assert keyed.codes.tolist() == key_codes(pa.table({"k": values}), ["k"]).codes.tolist()
    assert keyed.codes.tolist() == [2, 0, 1, 2, 3, 1]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 60),
    st.integers(1, 6),
    st.sampled_from([0, 5, 10**6]),
    st.integers(0, 2**31),
    st.sampled_from([1, 3]),
)
def test_slice_cells_give_each_key_and_step_its_own_cell(n, m, spread, seed, threads) -> None:
    """Both ways of numbering cells (one grid for all keys where it is small, a run per key
    where keys' steps lie far apart) give each (key, step) one cell, in key then step order,
    and compaction keeps exactly the occupied ones: the same on one thread and on three
    (chunks of the rows, each with cells of its own, merged)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, m, n).astype(np.int64)
    steps = rng.integers(0, 4, n) + codes * spread
    steps[rng.random(n) < 0.1] = np.iinfo(np.int64).min  # rows without a time
    with few_rows_on_threads(threads):
        cells, span, base, cell = slice_cells(codes, steps, m)
        timed = steps != np.iinfo(np.int64).min
        firsts = [steps[timed & (codes == k)] for k in range(m)]
        assert cells == sum(int(s.max() - s.min() + 1) for s in firsts if len(s)) or (
            cells == m * int(steps[timed].max() - steps[timed].min() + 1)
        )
        if cells > SPARSE * n + m:  # the caller numbers these another way
            return
        assert (cell[~timed] == -1).all()
        pairs = sorted({(int(c), int(s)) for c, s in zip(codes[timed], steps[timed])})
        assert len(pairs) == len(set(cell[timed].tolist()))  # one cell per (key, step)
        code, step, rows, left = _occupied(cell, cells, span, base)
    assert list(zip(code.tolist(), step.tolist())) == pairs
    assert (code[cell[timed]] == codes[timed]).all() and (step[cell[timed]] == steps[timed]).all()
    assert rows.sum() == timed.sum() and left == len(pairs)


def test_bursts_of_near_times_in_long_keys_sort_stably() -> None:
    """Keys of many rows whose times come in bursts (many rows within a few microseconds,
    bursts far apart): a burst fills one digit of the first pass and is sorted by its own
    radix passes, ties in the input's order."""
    rng = np.random.default_rng(7)
    n = 300_000
    codes = rng.integers(0, 2, n)
    bursts = rng.integers(0, 2**40, 200)[rng.integers(0, 200, n)]
    times = (bursts + rng.integers(0, 5000, n)).astype(float)
    keyed = key_codes(pa.table({"k": codes}), ["k"])
    order, ordered, _ = keyed_sort(keyed, times)
    want = np.lexsort((times, keyed.codes))
    assert np.array_equal(order, want) and np.array_equal(ordered, times[want])


def test_long_keys_take_the_least_significant_digit_passes(monkeypatch) -> None:
    """Keys of at least LSD_ROWS rows, times with ties and a span of 2^37 (a day in
    microseconds) plus -inf and +inf: sorted by radix passes from the least significant
    digit, stably, on several threads, as lexsort orders them."""
    monkeypatch.setattr(parallel, "PARALLEL_ROWS", 1)
    rng = np.random.default_rng(3)
    n = 5 * kernels.LSD_ROWS
    codes = rng.integers(0, 3, n)
    times = rng.integers(0, 2**37, n // 8)[rng.integers(0, n // 8, n)].astype(float)
    times[rng.random(n) < 0.01] = -np.inf
    times[rng.random(n) < 0.01] = np.inf
    keyed = key_codes(pa.table({"k": codes}), ["k"])
    order, ordered, seg = keyed_sort(keyed, times)
    assert np.diff(seg).min() >= kernels.LSD_ROWS
    want = np.lexsort((times, codes))
    assert np.array_equal(order, want) and np.array_equal(ordered, times[want])


@pytest.mark.parametrize("spread", [True, False])
def test_keys_and_row_numbers_too_wide_for_one_word_are_refined(monkeypatch, spread) -> None:
    """A span of 2^47 over 2^16 rows: a key and a row number need 64 bits, more than one
    packed word holds, so the radix sort runs on keys without their two lowest bits and the
    rows of equal shortened keys are then sorted by their whole keys, on several threads:
    the order is lexsort's, for times spread far apart and for times in runs of neighbours
    (1, 2, 3 share a shortened key), ties in the input's order; likewise for integer keys the
    caller gives."""
    calls = []
    for name in ("radix_segments", "refined"):
        real = getattr(kernels, name)
        monkeypatch.setattr(
            kernels, name, lambda *a, name=name, real=real: (calls.append(name), real(*a))[1]
        )
    monkeypatch.setattr(parallel, "PARALLEL_ROWS", 1)
    rng = np.random.default_rng(4)
    n = 2**16
    codes = rng.integers(0, 4, n)
    tops = rng.integers(0, 2**47, n // 64) & ~7  # neighbours: 8 values from each of these
    times = (tops[rng.integers(0, n // 64, n)] + rng.integers(0, 8 if spread else 1, n)).astype(
        float
    )
    times[rng.random(n) < 0.01] = -np.inf
    times[:2] = 0, 2**47  # the span: keys of 48 bits
    keyed = key_codes(pa.table({"k": codes}), ["k"])
    want = np.lexsort((times, codes))
    order, ordered, _ = keyed_sort(keyed, times)
    assert np.array_equal(order, want) and np.array_equal(ordered, times[want])
    sortable = _sortable(times)
    assert sortable is not None and sortable[1] + 16 == 64
    order, ordered, _ = keyed_sort(keyed, None, sortable)
    assert np.array_equal(order, want) and np.array_equal(ordered, times[want])
    assert {"radix_segments", "refined"} <= set(calls)


def test_fractional_times_take_the_merge_sort(monkeypatch) -> None:
    """Times that are not whole numbers have no radix keys: each key's rows are merge-sorted
    (the radix sort does not run), in lexsort's order."""
    calls = []
    real = kernels.radix_segments
    monkeypatch.setattr(kernels, "radix_segments", lambda *a: (calls.append(1), real(*a))[1])
    rng = np.random.default_rng(5)
    codes, times = rng.integers(0, 4, 5000), rng.integers(0, 50, 5000) * 0.37
    order, ordered, _ = keyed_sort(key_codes(pa.table({"k": codes}), ["k"]), times)
    want = np.lexsort((times, codes))
    assert np.array_equal(order, want) and np.array_equal(ordered, times[want])
    assert calls == []


def test_the_key_sort_is_timed_as_the_sort_stage() -> None:
    """A call's profile names the key sort's time ``sort`` (and the linear check of whether
    rows are in order already is not counted as one)."""
    import windowagg
    from windowagg.engine.keys import in_key_order
    from windowagg.engine.stages import profile

    rng = np.random.default_rng(3)
    table = {"k": rng.integers(0, 9, 5000), "t": rng.permutation(5000), "v": rng.random(5000)}
    aggs = {"s": ("sum", "v", "rows:3")}
    _, stages = profile(lambda: windowagg.rolling_aggregate(table, time="t", key="k", aggs=aggs))
    assert "sort" in stages
    _, stages = profile(lambda: in_key_order(table["k"], table["t"]))
    assert "sort" not in stages


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.integers(0, 3), max_size=12),
    times=st.lists(st.sampled_from([0.0, 1.0, 2.0, float("nan")]), max_size=12),
    whole=st.booleans(),
    sort=st.booleans(),
)
def test_the_compiled_order_check_is_numpys(keys, times, whole, sort) -> None:
    """:func:`in_key_order` over int64 keys and int64 or float64 times, compiled
    (``kernels.key_order.in_order``), says what NumPy's comparisons of neighbours say: NaN
    times in order with none of their key, ties in any order."""
    from windowagg.engine.keys import in_key_order
    from windowagg.kernels.key_order import in_order

    n = min(len(keys), len(times))
    k = np.array(sorted(keys[:n]) if sort else keys[:n], np.int64)
    t = np.array(times[:n])
    if whole:
        t = np.nan_to_num(t, nan=5.0).astype(np.int64)
    want = n < 2 or bool((k[:-1] <= k[1:]).all() and ((k[:-1] < k[1:]) | (t[:-1] <= t[1:])).all())
    assert in_key_order(k, t) == want
    if n >= 2:
        assert in_order.signatures  # the compiled check answered
