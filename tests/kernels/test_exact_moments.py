"""Moments of frames from their values alone (:mod:`windowagg.kernels.exact_moments`) against
exact rational arithmetic (:class:`fractions.Fraction`) on values of every magnitude, equal
values, means far from zero against the spread, and powers beyond the doubles' range; and the
property they are for: the same bits whatever order the frame's values came in, whatever
frames came before, whatever chunks the call was cut into. The engine's side: a point-in-time
query answered alone equals a backfill (``tests/test_online.py``), and point-in-time frames run
this kernel, not the sweep."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg as wa
from windowagg.aggregations import facts, resolve
from windowagg.engine.evaluators.moments import ALONE
from windowagg.engine.memory import read_only
from windowagg.kernels.exact_moments import PAIRS, exact_moments, scratch


def _statistic(name: str) -> tuple[int, int, str]:
    kernel = facts(resolve(name)).kernel
    assert kernel is not None
    return ALONE[kernel.family], kernel.code, name


#: (kind, code, name): every statistic the kernel answers, as the records place them
STATISTICS = [
    _statistic(name)
    for name in (
        *("var_samp", "var_pop", "stddev_pop", "stddev", "skewness", "kurtosis"),
        *("covar_samp", "covar_pop", "corr"),
    )
]


def run(kind: int, code: int, x, y, lo, hi) -> np.ndarray:
    x, y = read_only(np.asarray(x, float)), read_only(np.asarray(y, float))  # as the engine's
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    out = np.empty(len(lo))
    exact_moments(kind, code, x, y, lo, hi, 0, len(lo), out, *scratch())
    return out


def oracle(name: str, xs: list[float], ys: list[float]) -> float:
    """The statistic in exact rational arithmetic, rounded at its end (Spark's formulas: the
    sample forms over n - 1, skewness sqrt(n) M3 / M2^1.5, kurtosis n M4 / M2^2 - 3; NaN
    where there is none)."""
    pairs = [(F(a), F(b)) for a, b in zip(xs, ys) if math.isfinite(a) and math.isfinite(b)]
    if name.startswith(("covar", "corr")):
        vx = [a for a, _ in pairs]
        vy = [b for _, b in pairs]
    else:
        vx = vy = [F(a) for a in xs if math.isfinite(a)]
    n = len(vx)
    if n == 0:
        return math.nan
    mx, my = sum(vx) / n, sum(vy) / n
    m2 = sum((a - mx) ** 2 for a in vx)
    if name in ("var_samp", "stddev", "covar_samp") and n < 2:
        return math.nan
    if name == "var_samp":
        return float(m2 / (n - 1))
    if name == "var_pop":
        return float(m2 / n)
    if name == "stddev":
        return math.sqrt(m2 / (n - 1))
    if name == "stddev_pop":
        return math.sqrt(m2 / n)
    c = sum((a - mx) * (b - my) for a, b in zip(vx, vy))
    if name == "covar_samp":
        return float(c / (n - 1))
    if name == "covar_pop":
        return float(c / n)
    if name == "corr":
        q = m2 * sum((b - my) ** 2 for b in vy)
        return float(c) / math.sqrt(q) if q else math.nan
    if m2 == 0:
        return math.nan
    if name == "skewness":
        return float(sum((a - mx) ** 3 for a in vx)) * math.sqrt(n) / float(m2) ** 1.5
    return float(n * sum((a - mx) ** 4 for a in vx) / (m2 * m2)) - 3.0


def F(v: float) -> Fraction:
    return Fraction(v)


def close(got: float, want: float, name: str) -> bool:
    """Variances and covariances: the exactly rounded ``n A - B C`` over one or two divisions
    (a few units in the last place); standard deviations one square root more; skewness,
    kurtosis and the correlation within 2^-40 of their size or of 1."""
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if name in ("skewness", "kurtosis", "corr"):
        return abs(got - want) <= 2.0**-40 * max(1.0, abs(want))
    return abs(got - want) <= 4 * math.ulp(want)


def frames_of(n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    hi = np.arange(1, n + 1)
    return np.maximum(0, hi - width), hi


@pytest.mark.parametrize(
    "scale, offset",
    [(1.0, 0.0), (1.0, 1e6), (1e-3, 1e9), (100.0, 0.0), (1e-30, 0.0), (1e30, 0.0)],
)
@pytest.mark.parametrize("kind, code, name", STATISTICS)
def test_every_frame_is_the_exact_statistic(kind, code, name, scale, offset) -> None:
    rng = np.random.default_rng(3)
    n = 160
    x = np.round(rng.normal(size=n) * 100, 2) / 100 * scale + offset
    y = rng.normal(size=n) * scale - offset
    x[20:60] = x[20]  # a run of equal values: M2 exactly 0 in every frame inside it
    x[::17] = np.nan  # missing values
    lo, hi = frames_of(n, 25)
    got = run(kind, code, x, y, lo, hi)
    for i in range(n):
        want = oracle(name, list(x[lo[i] : hi[i]]), list(y[lo[i] : hi[i]]))
        assert close(got[i], want, name), (i, got[i], want)


@pytest.mark.parametrize("kind, code, name", STATISTICS)
def test_a_frame_is_the_same_bits_in_any_order_alone_or_among_others(kind, code, name) -> None:
    """The frame's values shuffled, the frame alone, the frames in another order and reached
    by other slides, cut in chunks: the same bits."""
    rng = np.random.default_rng(5)
    n = 400
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n) + 1e4 * (rng.random(n) < 0.2)
    y = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    lo, hi = frames_of(n, 60)
    slid = run(kind, code, x, y, lo, hi)
    order = rng.permutation(n)
    jumbled = run(kind, code, x, y, lo[order], hi[order])
    assert np.array_equal(slid[order], jumbled, equal_nan=True)
    for i in range(0, n, 37):
        perm = rng.permutation(np.arange(lo[i], hi[i]))
        alone = run(kind, code, x[perm], y[perm], [0], [len(perm)])
        assert np.array_equal(alone, slid[i : i + 1], equal_nan=True), i
    chunks = np.concatenate(
        [run(kind, code, x, y, lo[a : a + 33], hi[a : a + 33]) for a in range(0, n, 33)]
    )
    assert np.array_equal(chunks, slid, equal_nan=True)


finite = st.one_of(
    st.floats(-1e6, 1e6),
    st.sampled_from([0.1, -0.1, 3.0, 1e16, 1e-300, 2.0**-1074, 1e200, -1e200, 1e300]),
)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(finite, min_size=1, max_size=30),
    frames=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=20),
    pick=st.integers(0, len(STATISTICS) - 1),
)
def test_any_frames_in_any_order_equal_the_frame_alone(values, frames, pick) -> None:
    """Hypothesis: frames that slide, jump back and overlap, over values of every magnitude
    (subnormal, squares beyond the range): each frame's bits equal its values' alone, in
    reverse order."""
    kind, code, _ = STATISTICS[pick]
    x = np.array(values)
    y = x[::-1].copy()
    lo = np.array([min(a, b, len(x)) for a, b in frames])
    hi = np.array([min(max(a, b), len(x)) for a, b in frames])
    got = run(kind, code, x, y, lo, hi)
    for i in range(len(lo)):
        rev = np.arange(hi[i] - 1, lo[i] - 1, -1)
        alone = run(kind, code, x[rev], y[rev], [0], [len(rev)])
        assert np.array_equal(alone, got[i : i + 1], equal_nan=True), (i, alone, got[i])


def test_a_mean_far_from_the_spread_takes_the_deviations_and_stays_exact() -> None:
    """Values 10^8 from zero with a spread of 1: the kurtosis from power sums would cancel
    away every digit; the frame's deviations from its mean give it within 2^-40."""
    rng = np.random.default_rng(11)
    x = 1e8 + rng.normal(size=200)
    lo, hi = frames_of(200, 50)
    for kind, code, name in STATISTICS:
        if kind == PAIRS:
            continue
        got = run(kind, code, x, x, lo, hi)
        for i in range(0, 200, 9):
            want = oracle(name, list(x[lo[i] : hi[i]]), [])
            assert close(got[i], want, name), (name, i, got[i], want)


def _pit(aggs: dict) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(2)
    n = 500
    events = pa.table(
        {
            "k": rng.integers(0, 3, n),
            "t": np.sort(rng.integers(0, 10_000, n)).astype(float),
            "v": rng.standard_normal(n) * 1e3 + 7.0,
            "w": rng.standard_normal(n),
        }
    )
    queries = pa.table({"k": rng.integers(0, 3, 80), "t": rng.integers(0, 10_000, 80) * 1.0})
    return events, queries


def test_point_in_time_frames_run_the_kernel_and_rolling_frames_the_sweep(monkeypatch) -> None:
    """``at=`` answers moments through this kernel (the sweep refused), equal to the
    definition; rolling frames of every row still run the FIFO sweep (this kernel refused)."""
    from windowagg.engine.evaluators import moments

    aggs = {
        "sd": ("stddev", "v", "range:500"),
        "ku": ("kurtosis", "v", "rows:30"),
        "co": ("corr", ("v", "w"), "range:800"),
    }
    events, queries = _pit(aggs)
    sweep = moments.rolling

    def refuse(*a, **k):
        raise AssertionError("the other path ran")

    monkeypatch.setattr(moments, "rolling", refuse)
    got = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    ev = events.to_pylist()
    for q, row in zip(queries.to_pylist(), got.to_pylist()):
        mine = [e for e in ev if e["k"] == q["k"] and e["t"] <= q["t"]]
        inside = [e for e in mine if e["t"] >= q["t"] - 500]
        want = oracle("stddev", [e["v"] for e in inside], [])
        assert close(math.nan if row["sd"] is None else row["sd"], want, "stddev")
        last = mine[-30:]
        want = oracle("kurtosis", [e["v"] for e in last], [])
        assert close(math.nan if row["ku"] is None else row["ku"], want, "kurtosis")
    monkeypatch.setattr(moments, "rolling", sweep)
    monkeypatch.setattr(moments.exact, "exact_moments", refuse)
    wa.rolling_aggregate(events, time="t", key="k", aggs=aggs)


@pytest.mark.parametrize("at", [False, True])
def test_a_spread_whose_cube_underflows_divides_as_spark(at) -> None:
    """Skewness of values near 1e-60: ``M2^3`` underflows to 0 while ``M2`` does not. Spark
    divides by IEEE's rules (+-infinity); numba's division raised ZeroDivisionError, in the
    sweep and in this kernel alike."""
    rng = np.random.default_rng(4)
    v = rng.normal(size=40) * 1e-60
    table = {"k": np.zeros(40, int), "t": np.arange(40.0), "v": v}
    queries = {"k": np.zeros(40, int), "t": np.arange(40.0)} if at else None
    aggs = {"s": ("skewness", "v", "rows:10")}
    got = wa.rolling_aggregate(table, time="t", key="k", aggs=aggs, at=queries)["s"]
    for i in range(2, 40):
        frame = [F(x) for x in v[max(0, i - 9) : i + 1]]
        mean = sum(frame) / len(frame)
        m3 = sum((x - mean) ** 3 for x in frame)
        assert got[i] == math.copysign(math.inf, m3), (i, got[i])


moderate = st.one_of(
    st.floats(-1e6, 1e6).map(lambda v: v if abs(v) > 1e-20 else 0.0),  # powers in range
    st.floats(-1.0, 1.0).map(lambda v: 1e4 + v),  # a mean far from zero against the spread
    st.sampled_from([0.1, -0.1, 3.0, 0.0]),
)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(moderate, min_size=1, max_size=30),
    width=st.integers(1, 12),
    pick=st.integers(0, len(STATISTICS) - 1),
)
def test_sliding_frames_equal_exact_arithmetic(values, width, pick) -> None:
    """Hypothesis: sliding frames over values of several magnitudes and runs of equal ones
    against the exact rational statistic."""
    kind, code, name = STATISTICS[pick]
    x = np.array(values)
    y = np.cos(x) * 1e3
    lo, hi = frames_of(len(x), width)
    got = run(kind, code, x, y, lo, hi)
    for i in range(len(x)):
        want = oracle(name, list(x[lo[i] : hi[i]]), list(y[lo[i] : hi[i]]))
        assert close(got[i], want, name), (i, got[i], want)


@pytest.mark.parametrize("times", ["int64", "nanoseconds"])
@pytest.mark.parametrize("kind", ["arrow", "polars"])
def test_point_in_time_moments_skip_nulls_keep_nan_on_every_time_kind(kind, times) -> None:
    """``at=`` stddev over int64 times and nanosecond epochs beyond doubles, on Arrow and
    Polars: a null is skipped, a NaN is a value (the frame's answer NaN, as Spark's), fewer
    than two values null; each query alone gives the batch's bits."""
    rng = np.random.default_rng(8)
    n = 300
    base = 1_800_000_000_000_000_000 if times == "nanoseconds" else 0
    t = base + np.sort(rng.integers(0, 100_000, n))
    v = rng.normal(size=n) * 1e3 + 5.0
    valid = rng.random(n) > 0.15
    v[rng.random(n) < 0.03] = np.nan
    time_type = pa.timestamp("ns") if times == "nanoseconds" else pa.int64()
    events = pa.table(
        {
            "k": rng.integers(0, 3, n),
            "t": pa.array(t, pa.int64()).cast(time_type),
            "v": pa.array(v, mask=~valid),
        }
    )
    qt = base + rng.integers(0, 100_000, 60)
    queries = pa.table({"k": rng.integers(0, 3, 60), "t": pa.array(qt, pa.int64()).cast(time_type)})
    width = 5_000
    aggs = {
        "sd": ("stddev", "v", f"range:{width}ns" if times == "nanoseconds" else f"range:{width}")
    }
    if kind == "polars":
        import polars as pl

        at = pl.from_arrow(queries)
        got = wa.rolling_aggregate(pl.from_arrow(events), time="t", key="k", aggs=aggs, at=at)
        got = got.to_arrow()
    else:
        got = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    answers = got.column("sd").to_pylist()
    keys, ts, vs = events.column("k").to_pylist(), t.tolist(), events.column("v").to_pylist()
    seen = set()
    for i, (qk, q) in enumerate(zip(queries.column("k").to_pylist(), qt.tolist())):
        inside = [x for k, s, x in zip(keys, ts, vs) if k == qk and q - width <= s <= q]
        present = [x for x in inside if x is not None]
        seen.add(min(len(present), 2) + any(x is not None and math.isnan(x) for x in present))
        if len(present) < 2:
            assert answers[i] is None, i
        elif any(math.isnan(x) for x in present):
            assert answers[i] is not None and math.isnan(answers[i]), i
        else:
            assert close(answers[i], oracle("stddev", present, []), "stddev"), i
        alone = wa.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries.slice(i, 1))
        one = alone.column("sd")[0].as_py()
        assert one == answers[i] or (one is not None and math.isnan(one) and math.isnan(answers[i]))
    assert {1, 2, 3} <= seen  # a frame of one value or none, of values, holding a NaN
