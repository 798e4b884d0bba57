"""Exactly rounded frame sums (:mod:`windowagg.kernels.exact_sums`) against :func:`math.fsum`
(exactly rounded by its definition) on values of every magnitude, in frames that slide, jump
back and overlap in any order; partial sums beyond the doubles' range; and the property they
are for: a point-in-time query alone gets, bit for bit, what it gets among other queries."""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np
import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg as wa
from windowagg.engine.evaluators.sums import _whole_frames, _whole_sums, float_sums
from windowagg.engine.memory import read_only
from windowagg.kernels.exact_sums import PARTS, exact_sums


def fsum_of(frame: list[float]) -> float:
    """The oracle: NaN skipped, infinities by IEEE's rules, the rest by math.fsum."""
    finite = [v for v in frame if math.isfinite(v)]
    up, down = math.inf in frame, -math.inf in frame
    if up and down:
        return math.nan
    if up or down:
        return math.inf if up else -math.inf
    try:
        return math.fsum(finite)
    except OverflowError:  # math.fsum gives up on a partial sum beyond the range
        from fractions import Fraction

        total = sum(map(Fraction, finite), Fraction(0))
        try:
            return float(total)
        except OverflowError:
            return math.inf if total > 0 else -math.inf


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1, a) == math.copysign(1, b)
    )


doubles = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e3, 1e3),
    st.sampled_from([0.1, -0.1, 1e16, -1e16, 1.0, 2.0**-1074, 1.7e308, -1.7e308, -0.0]),
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(doubles, min_size=1, max_size=60),
    frames=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=40),
    slide=st.booleans(),
)
def test_every_frame_is_the_exactly_rounded_sum(values, frames, slide) -> None:
    n = len(values)
    x = np.array(values, float)
    bounds = sorted((min(a, b) % (n + 1), max(a, b) % (n + 1)) for a, b in frames)
    if not slide:  # in any order: frames that start earlier, end earlier, or do not overlap
        bounds = [(min(a, b) % (n + 1), max(a, b) % (n + 1)) for a, b in frames]
    lo = np.array([min(a, b) for a, b in bounds], np.int64)
    hi = np.array([max(a, b) for a, b in bounds], np.int64)
    got = float_sums(x, lo, hi)
    means = float_sums(x, lo, hi, mean=True)
    for i in range(len(lo)):
        frame = values[lo[i] : hi[i]]
        want = fsum_of(frame)
        assert same(got[i], want) or (want == 0 and got[i] == 0), (i, lo[i], hi[i], got[i], want)
        count = sum(not math.isnan(v) for v in frame)
        mean = want / count if count else math.nan
        assert same(means[i], mean) or (mean == 0 and means[i] == 0), (i, means[i], mean)


def test_the_half_way_case_rounds_to_even_and_cancellation_is_exact() -> None:
    # 1 + 2^-53 lies half way between 1 and its successor: ties to even gives 1; a third part
    # beyond the half decides it up
    x = np.array([1.0, 2.0**-53, 2.0**-80, -(2.0**-80), 1e100, -1e100, 0.1, 0.2, 0.3])
    lo = np.array([0, 0, 4, 6, 0], np.int64)
    hi = np.array([2, 3, 6, 9, 9], np.int64)
    got = float_sums(x, lo, hi)
    assert got[0] == 1.0 and got[1] == 1.0 + 2.0**-52 and got[2] == 0.0
    assert got[3] == math.fsum([0.1, 0.2, 0.3]) == 0.6 and 0.1 + 0.2 + 0.3 != 0.6
    assert got[4] == math.fsum(x.tolist())


def test_partial_sums_beyond_the_range_are_summed_exactly() -> None:
    big = 1.7e308
    x = np.array([big, big, -big, big])
    lo = np.array([0, 0, 1, 0], np.int64)
    hi = np.array([2, 3, 3, 4], np.int64)
    out, overflow = np.empty(4), np.zeros(4, bool)
    assert exact_sums(read_only(x), lo, hi, 0, 4, False, out, overflow, np.empty(PARTS)) == 3
    assert overflow.tolist() == [True, True, False, True]  # the kernel hands them over
    got = float_sums(x, lo, hi)
    assert got.tolist() == [math.inf, big, 0.0, math.inf]


def test_an_overflowed_frame_stops_growing_its_expansion() -> None:
    """Long frames whose partial sums leave the doubles' range early: each is flagged and
    its expansion stops there, never writing past its room (a guard after it stays as it
    was), and the exact sums in Python give the answers."""
    n, big = 400, 1.5e308
    x = np.full(n, big)
    x[1::2] = -big / 2  # the exact sums stay finite in half the frames
    lo, hi = np.zeros(n, np.int64), np.arange(1, n + 1, dtype=np.int64)
    room = np.full(2 * PARTS, 7.0)
    out, overflow = np.empty(n), np.zeros(n, bool)
    flagged = exact_sums(read_only(x), lo, hi, 0, n, False, out, overflow, room[:PARTS])
    assert (room[PARTS:] == 7.0).all()  # nothing written past the expansion's room
    assert flagged == int(overflow.sum()) > n // 2
    got = float_sums(x, lo, hi)
    exact = [sum(map(Fraction, x[:k].tolist()), Fraction(0)) for k in hi.tolist()]
    assert got.tolist() == [math.inf if t > 2**1024 else float(t) for t in exact]


def test_a_query_alone_gets_what_it_gets_among_others_and_ran_compiled() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    t = np.sort(rng.integers(0, 10**6, n))
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n)
    events = pa.table({"k": rng.integers(0, 3, n), "t": t, "v": v})
    qt = np.sort(rng.integers(0, 10**6, 400))
    queries = pa.table({"k": rng.integers(0, 3, len(qt)), "t": qt})
    aggs = {"s": ("sum", "v", "range:50000"), "m": ("mean", "v", "range:-50000,-1")}
    together = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert exact_sums.signatures  # the compiled kernel answered
    for i in range(0, len(qt), 7):
        alone = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries.slice(i, 1))
        for name in aggs:
            assert same(alone[name][0].as_py(), together[name][i].as_py()), (i, name)
        k, at = queries["k"][i].as_py(), qt[i]
        mine = (events["k"].to_numpy() == k) & (t <= at) & (t >= at - 50000)
        want = math.fsum(v[mine]) if mine.any() else None
        assert together["s"][i].as_py() == want


def test_the_frames_of_a_hot_key_are_summed_on_several_threads(monkeypatch) -> None:
    """Each frame's sum stands alone: the frames are cut into chunks, one per thread, however
    the keys lie (here one key holds every row), and the answers do not change."""
    from windowagg.engine.evaluators import sums

    from ..threads import few_rows_on_threads

    rng = np.random.default_rng(5)
    n = 3000
    table = pa.table(
        {
            "k": np.zeros(n, np.int64),
            "t": np.sort(rng.integers(0, 10**5, n)),
            "v": rng.standard_normal(n),
        }
    )
    aggs = {"s": ("sum", "v", "range:1000")}
    alone = wa.rolling_aggregate(table, time="t", key="k", aggs=aggs)
    calls: list[tuple[str, int, int]] = []

    def spy(x, lo, hi, a, b, *rest):
        calls.append((threading.current_thread().name, a, b))
        return exact_sums(x, lo, hi, a, b, *rest)

    monkeypatch.setattr(sums, "exact_sums", spy)
    with few_rows_on_threads(4):
        cut = wa.rolling_aggregate(table, time="t", key="k", aggs=aggs)
    # the first piece on the calling thread, the other three on the engine's pool
    here = threading.current_thread().name
    assert len(calls) == 4 and [name == here for name, _, _ in calls].count(True) == 1
    assert all(name == here or name.startswith("windowagg") for name, _, _ in calls)
    assert sorted((a, b) for _, a, b in calls)[-1][1] == n
    assert cut["s"].equals(alone["s"])


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    scale=st.sampled_from([1.0, 100.0, 2.0**40, 2.0**53, 2.0**60]),
    mean=st.booleans(),
)
def test_whole_numbers_summed_from_prefix_sums_equal_the_kernel(seed, scale, mean) -> None:
    """Frames of whole numbers (-0.0 among them, magnitudes up to 2**60) summed from exact
    int64 prefix sums, or frame by frame as exact int64 sums, give the kernel's exactly
    rounded sums and means bit for bit (the sign of a zero, NaN for an empty mean); values
    whose largest magnitude times their count (of them all, or of a frame's) may overflow an
    int64 sum, fractions, NaN and infinities are left to the kernel."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    v = np.floor(rng.normal(size=n) * scale)
    v[rng.random(n) < 0.1] = -0.0
    lo = np.sort(rng.integers(0, n + 1, 60))
    hi = np.maximum.accumulate(np.minimum(n, lo + rng.integers(0, 40, 60)))
    got = _whole_sums(read_only(v), lo, hi, mean)
    fits = np.abs(v).max() * n < 4e18
    assert (got is not None) == fits
    out, overflow = np.empty(len(lo)), np.zeros(len(lo), bool)
    exact_sums(read_only(v), lo, hi, 0, len(lo), mean, out, overflow, np.empty(PARTS))
    if got is not None:
        assert got.tobytes() == out.tobytes()
    for odd in (0.5, np.nan, np.inf):
        assert _whole_sums(read_only(np.r_[v, odd]), lo, hi, mean) is None
    # frame by frame: each frame's own magnitude times its count bounds its sum
    by_frame = _whole_frames(read_only(v), lo, hi, mean)
    fits = all(np.abs(v[a:b]).max(initial=0) * (b - a) < 4e18 for a, b in zip(lo, hi))
    assert (by_frame is not None) == fits
    if by_frame is not None:
        assert by_frame.tobytes() == out.tobytes()
    held = np.flatnonzero(hi > lo)
    for odd in (0.5, np.nan, np.inf) if len(held) else ():
        w = v.copy()
        w[lo[held[-1]]] = odd  # in a frame: the kernel's
        assert _whole_frames(read_only(w), lo, hi, mean) is None


def test_rolling_sums_of_whole_numbers_come_from_prefix_sums(monkeypatch) -> None:
    """Rolling sums and means of 10,000 whole-number doubles (frames reading more rows than
    there are) are answered from prefix sums, equal to math.fsum of each frame."""
    from windowagg.engine.evaluators import sums

    used: list[bool] = []
    prefix = sums.whole_prefix
    monkeypatch.setattr(sums, "whole_prefix", lambda *a: used.append(prefix(*a)) or used[-1])
    rng = np.random.default_rng(12)
    v = rng.integers(-(2**40), 2**40, 10_000).astype(float)
    aggs = {"s": ("sum", "v", "rows:50"), "m": ("mean", "v", "rows:50")}
    out = wa.rolling_aggregate(pa.table({"t": np.arange(10_000), "v": v}), time="t", aggs=aggs)
    assert used == [True, True]
    for i in rng.integers(0, 10_000, 200):
        frame = v[max(0, i - 49) : i + 1]
        assert out["s"][int(i)].as_py() == math.fsum(frame)
        assert out["m"][int(i)].as_py() == math.fsum(frame) / len(frame)


def test_point_in_time_sums_of_whole_numbers_are_summed_frame_by_frame(monkeypatch) -> None:
    """Point-in-time sums and means of whole-number doubles whose frames read each value
    about once are exact int64 sums frame by frame (no prefix sums), equal to math.fsum of
    each frame; a fraction among them leaves every frame to the exactly rounded kernel."""
    from windowagg.engine.evaluators import sums

    used: list[bool] = []
    real = sums.whole_frame_sums
    monkeypatch.setattr(sums, "whole_frame_sums", lambda *a: used.append(real(*a)) or used[-1])
    rng = np.random.default_rng(21)
    n = 20_000
    t = np.sort(rng.integers(0, 10**7, n))
    v = rng.integers(-(2**40), 2**40, n).astype(float)
    events = pa.table({"k": rng.integers(0, 50, n), "t": t, "v": v})
    queries = pa.table({"k": rng.integers(0, 60, 300), "t": rng.integers(0, 10**7, 300)})
    aggs = {"s": ("sum", "v", "range:100000"), "m": ("mean", "v", "range:-100000,-1")}
    out = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert used == [True, True]
    k, qt = queries["k"].to_numpy(), queries["t"].to_numpy()
    for i in range(300):
        mine = (events["k"].to_numpy() == k[i]) & (t <= qt[i]) & (t >= qt[i] - 100000)
        assert out["s"][i].as_py() == (math.fsum(v[mine]) if mine.any() else None)
        before = (events["k"].to_numpy() == k[i]) & (t < qt[i]) & (t >= qt[i] - 100000)
        want = math.fsum(v[before]) / before.sum() if before.any() else None
        assert out["m"][i].as_py() == want
    used.clear()
    w = v + 0.5
    out = wa.rolling_aggregate(
        events.set_column(2, "v", pa.array(w)), time="t", key="k", aggs=aggs, at=queries
    )
    assert used == [False, False]
    for i in range(50):
        mine = (events["k"].to_numpy() == k[i]) & (t <= qt[i]) & (t >= qt[i] - 100000)
        assert out["s"][i].as_py() == (math.fsum(w[mine]) if mine.any() else None)
    # whole numbers with nulls (skipped) and a NaN (a value: the frame's sum is NaN), on
    # Arrow and Polars tables: the kernel's, not the int64 sums
    null = rng.random(n) < 0.05
    x = v.copy()
    x[7] = np.nan
    odd = events.set_column(2, "v", pa.array(x, mask=null))
    for table in (odd, pl.from_arrow(odd)):
        used.clear()
        out = wa.rolling_aggregate(table, time="t", key="k", aggs=aggs, at=queries)
        if isinstance(out, pl.DataFrame):
            out = out.to_arrow()
        assert used == [False, False]
        for i in range(300):
            mine = (events["k"].to_numpy() == k[i]) & (t <= qt[i]) & (t >= qt[i] - 100000)
            kept = mine & ~null
            want = math.fsum(x[kept]) if kept.any() else None
            got = out["s"][i].as_py()
            assert (got is None and want is None) or same(got, want), i
