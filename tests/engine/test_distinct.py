"""Exact distinct counts number the values by a hash table where they repeat and by a sort
where nearly every value is new: the same counts either way, against a brute force."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg import rolling_aggregate
from windowagg.engine import sweep
from windowagg.kernels.order_stats import sorted_ids, span_ids, whole_span


@pytest.fixture
def hashed(monkeypatch) -> list[int]:
    """How many times the values were numbered by Arrow's hash table."""
    calls: list[int] = []
    encode = pc.dictionary_encode

    def spy(array, *args, **kwargs):
        calls.append(len(array))
        return encode(array, *args, **kwargs)

    monkeypatch.setattr(sweep.pc, "dictionary_encode", spy)
    return calls


def _check_ids(values: np.ndarray, ids: np.ndarray, m: int) -> None:
    """Equal ids exactly for equal values (-0.0 equals 0.0), dense over ``0..m-1``."""
    assert ids.dtype == np.int64 and len(ids) == len(values)
    assert m == len(np.unique(values)) and set(np.unique(ids)) == set(range(m))
    first = {}
    for v, i in zip(values.tolist(), ids.tolist()):
        assert first.setdefault(v, i) == i  # -0.0 == 0.0 as dictionary keys
    assert len(set(first.values())) == m


SPECIAL = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 5e-324, -5e-324, 1e308, 2.0**53, 2.0**53 + 2]


def test_repeated_values_are_numbered_by_a_hash_table(hashed: list[int]) -> None:
    rng = np.random.default_rng(3)
    values = rng.choice(np.array(SPECIAL), 50_000)
    ids, m = sweep.value_ids(values)
    assert hashed == [50_000]
    _check_ids(values, ids, m)
    assert m == len(SPECIAL) - 1  # -0.0 and 0.0 are one value


def test_values_nearly_all_new_are_numbered_by_a_sort(hashed: list[int]) -> None:
    rng = np.random.default_rng(4)
    values = np.r_[rng.normal(size=40_000), -0.0, 0.0]
    ids, m = sweep.value_ids(values)
    assert hashed == []
    _check_ids(values, ids, m)


def test_few_values_are_numbered_by_a_sort(hashed: list[int]) -> None:
    values = np.array([3.0, -0.0, 0.0, 3.0, np.inf])
    ids, m = sweep.value_ids(values)
    assert hashed == [] and m == 3
    _check_ids(values, ids, m)


def test_few_values_are_numbered_in_one_compiled_pass() -> None:
    """Fewer values than a hash table pays for: their ascending order walked once, compiled
    (NaN, sorted last, numbered -1)."""
    rng = np.random.default_rng(6)
    values = rng.permutation(np.array([*SPECIAL, *SPECIAL[::2], np.nan, np.nan]))
    ids = np.full(len(values), 99, np.int64)
    m = sorted_ids(values, np.argsort(values), ids)
    nan = np.isnan(values)
    assert sorted_ids.signatures  # the compiled kernel ran
    assert (ids[nan] == -1).all() and m == len(SPECIAL) - 1
    _check_ids(values[~nan], ids[~nan], m)


@pytest.mark.parametrize("kind", ["arrow", "polars"])
@pytest.mark.parametrize("frame", ["rows:40", "range:25"])
@pytest.mark.parametrize(("n", "nan"), [(30_000, True), (20_000, False), (3_000, True)])
def test_distinct_counts_of_repeated_values_equal_a_brute_force(
    hashed: list[int], frame: str, kind: str, n: int, nan: bool, monkeypatch
) -> None:
    """Rolling distinct counts over rows of a few values (NaN and null missing, -0.0 equal to
    0.0), in two keys, on int64 times, against a count of each frame's set: 30,000 rows
    numbered by the hash table (20,000 without NaN or null: every value numbered as it is), 3,000 by
    one compiled pass over their order."""
    walked: list[int] = []
    walk = sweep.sorted_ids
    monkeypatch.setattr(sweep, "sorted_ids", lambda v, *a: walked.append(len(v)) or walk(v, *a))
    rng = np.random.default_rng(5)
    values = rng.choice(np.array([*SPECIAL, np.nan] if nan else SPECIAL), n)
    null = rng.random(n) < (0.05 if nan else 0)  # a null is NaN to the numbering
    keys = rng.integers(0, 2, n)
    times = np.sort(rng.integers(0, 2 * n // 3, n))
    table = pa.table({"k": keys, "t": times, "v": pa.array(values, mask=null)})
    events = table if kind == "arrow" else pl.from_arrow(table)
    out = rolling_aggregate(
        events, time="t", key="k", aggs={"d": ("count_distinct", "v", frame)}, order_by=None
    )
    if n > sweep.HASHED_FROM:
        assert hashed and max(hashed) > n // 4 and not walked
        assert (max(hashed) == n) != nan  # without NaN, the values as they are
    else:
        assert walked == [n] and not hashed
    got = np.asarray(out["d"].to_numpy())
    want = np.empty(n, np.int64)
    for k in (0, 1):
        rows = np.flatnonzero(keys == k)  # in time order, ties in row order
        for j, r in enumerate(rows):
            if frame == "rows:40":
                window = rows[max(0, j - 39) : j + 1]
            else:
                window = rows[(times[rows] >= times[r] - 25) & (times[rows] <= times[r])]
            seen = {
                float(values[i]) + 0.0 for i in window if not null[i] and values[i] == values[i]
            }
            want[r] = len(seen)
    np.testing.assert_array_equal(got, want)


def _column(kind: str, n: int, rng: np.random.Generator) -> pa.Array:
    """``n`` values of one kind, about 5% null: whole doubles of a small range (with -0.0 and
    NaN), int64 and decimals whose neighbours a double cannot tell apart, decimals beyond
    64 bits, truth values."""
    null = rng.random(n) < 0.05
    small = rng.integers(-40, 40, n)
    if kind == "whole doubles":
        values = np.where(small == 7, np.nan, np.where(small == 0, -0.0, small.astype(float)))
        return pa.array(values, mask=null)
    if kind == "int64 near 2**62":
        return pa.array(2**62 + small, mask=null)
    if kind == "int64 far apart":
        return pa.array(
            rng.choice(np.array([2**53, 2**53 + 1, -(2**63), 2**63 - 1, 0]), n), mask=null
        )
    if kind == "int8":
        return pa.array(small.astype(np.int8), mask=null)
    if kind == "bool":
        return pa.array(small > 0, mask=null)
    scale = 10 if kind == "decimal(38, 10)" else 1
    base = 1234567890123456789 if scale == 10 else 10**30  # unscaled: in 64 bits, or not
    values = [None if z else Decimal(base + int(s)).scaleb(-scale) for s, z in zip(small, null)]
    return pa.array(values, pa.decimal128(38, scale))


KINDS = [
    "whole doubles",
    "int64 near 2**62",
    "int64 far apart",
    "int8",
    "bool",
    "decimal(38, 10)",
    "decimal beyond 64 bits",
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [300, 20_000])
def test_distinct_counts_are_exact_for_every_kind_of_value(kind: str, n: int, monkeypatch) -> None:
    """Each kind of value numbered as itself, not as a double (which takes 2**53 + 1 for
    2**53): rolling distinct counts against Python sets of the values. Whole numbers of a
    small range are numbered by their distance from the smallest, compiled, with no hash or
    sort; values far apart are not."""
    spans: list[int] = []
    span = sweep.span_ids
    monkeypatch.setattr(sweep, "span_ids", lambda v, *a: spans.append(span(v, *a)) or spans[-1])
    rng = np.random.default_rng(8)
    column = _column(kind, n, rng)
    times = np.sort(rng.integers(0, n, n))
    out = rolling_aggregate(
        pa.table({"t": times, "v": column}),
        time="t",
        aggs={"d": ("count_distinct", "v", "range:30")},
    )
    direct = kind not in ("int64 far apart", "decimal beyond 64 bits")
    assert (
        bool(spans) and spans[0] > 0
    ) == direct and span_ids.signatures  # the compiled kernel ran
    values = column.to_pylist()
    want = []
    for t in times:
        window = [values[j] for j in np.flatnonzero((times >= t - 30) & (times <= t))]
        want.append(len({v for v in window if v is not None and v == v}))
    assert out["d"].to_pylist() == want


def test_span_ids_refuses_what_it_cannot_number() -> None:
    """A value that is not whole, a span as wide as the limit, whole numbers at both ends of
    int64 (whose distance overflows) and infinities: -1, the caller numbers them otherwise."""
    nothing = np.zeros(0, bool)
    cases = [
        (np.array([1.0, 1.5]), 10),
        (np.array([0.0, 10.0]), 10),
        (np.array([-(2**63), 2**63 - 1], np.int64), 10),
        (np.array([np.inf, 1.0]), 10),
        (np.array([np.inf, np.inf]), 10),
    ]
    for values, limit in cases:
        assert span_ids(values, nothing, limit, np.empty(len(values), np.int64)) == -1
    ids = np.empty(4, np.int64)
    assert span_ids(np.array([3.0, -0.0, np.nan, 0.0]), nothing, 10, ids) == 4
    assert ids.tolist() == [3, 0, -1, 0]
    assert span_ids(np.array([5, 9], np.int64), np.array([False, True]), 10, ids[:2]) == 1
    assert ids[:2].tolist() == [-1, 0]


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.integers(-(10**6), 10**6).map(float),
            st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5, -2.25, 4.0e18, -4.0e18, 3.9e18]),
        ),
        max_size=30,
    ),
    nulls=st.booleans(),
    data=st.data(),
)
def test_whole_span_finds_what_a_pass_over_the_values_would(values, nulls, data) -> None:
    """:func:`~windowagg.kernels.order_stats.whole_span` (what an online state keeps of each
    part for a batch's compiled call), against Python over the values: the smallest and
    largest counted value (NaN and nulls are not counted; where every one is whole), whether
    some counted value is not a whole number below 4e18 in magnitude, whether some valid
    value is NaN; int64 values are always whole."""
    x = np.array(values, np.float64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(x), max_size=len(x))), bool)
    flags = valid if nulls else np.zeros(0, bool)
    held = [v for v, ok in zip(values, valid if nulls else [True] * len(x)) if ok]
    counted = [v for v in held if v == v]
    lo, hi, odd, nan = whole_span(x, flags)
    assert nan == any(v != v for v in held)
    assert odd == any(v != np.floor(v) or abs(v) >= 4.0e18 for v in counted)
    if counted and not odd:  # the span, where every counted value is whole
        assert (lo, hi) == (min(map(int, counted)), max(map(int, counted)))
    elif not counted:
        assert lo > hi  # none counted
    ints = np.array([int(v) for v in counted if abs(v) < 2**62], np.int64)
    lo, hi, odd, nan = whole_span(ints, np.zeros(0, bool))
    assert not odd and not nan
    if len(ints):
        assert (lo, hi) == (ints.min(), ints.max())
