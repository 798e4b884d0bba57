"""The engine hands the kernels their inputs read-only whatever their source (Arrow's buffers,
taken without a copy, or the engine's own arrays), so that numba compiles each kernel once for
both (:func:`windowagg.engine.memory.read_only`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest

from windowagg.engine.columns import Column
from windowagg.engine.keys import key_codes
from windowagg.engine.memory import read_only


@pytest.mark.parametrize(
    "array",
    [
        pa.array([1.0, 2.0, 3.0]),  # Arrow's buffer, read-only
        pa.array([1.0, None, 3.0]),  # NaN written at the null: the engine's array
        pa.array([1, 2, 3]),  # cast: a new array
        pa.chunked_array([[1.0], [2.0, 3.0]]),
    ],
)
def test_values_are_read_only_from_every_source(array) -> None:
    x = Column(array).floats()
    assert not x.flags.writeable
    assert np.array_equal(x, [1.0, np.nan if array.null_count else 2.0, 3.0], equal_nan=True)


@pytest.mark.parametrize(
    "keys",
    [
        {},  # no key
        {"k": pa.array([0, 2, 1, 2], pa.int64())},  # the values themselves (Arrow's buffer)
        {"k": pa.array([5, 7, 6, 7], pa.int64())},  # offsets: the engine's array
        {"k": pa.array(["a", "c", "b", "c"])},  # dictionary codes
        {"k": pa.array([0, 9, 5, 9], pa.int64()), "j": pa.array(["x", "y", "x", "y"])},
    ],
)
def test_key_codes_are_read_only_from_every_source(keys) -> None:
    table = pa.table({"t": [1.0, 2.0, 3.0, 4.0], **keys})
    keyed = key_codes(table, list(keys))
    assert not keyed.codes.flags.writeable
    if keys:
        assert keyed.codes.tolist() == [0, 2, 1, 2]


def test_read_only_is_a_view_not_a_copy() -> None:
    x = np.arange(5.0)
    v = read_only(x)
    assert not v.flags.writeable and x.flags.writeable
    assert np.shares_memory(v, x)
    assert read_only(v) is v


def test_the_key_sort_takes_read_only_codes_from_every_caller(monkeypatch) -> None:
    """The key sort's kernels get read-only codes, also from the point-in-time queries, whose
    codes the caller builds itself (writable)."""
    from windowagg import rolling_aggregate
    from windowagg.kernels import key_order

    seen: list[bool] = []
    for name in ("code_counts", "by_code", "order_of_code"):
        real = getattr(key_order, name)

        def spy(codes, *rest, real=real):
            seen.append(codes.flags.writeable)
            return real(codes, *rest)

        monkeypatch.setattr(key_order, name, spy)
    rng = np.random.default_rng(1)
    k, t = rng.integers(0, 50, 5_000), rng.permutation(5_000).astype(float)
    events = pa.table({"k": k, "t": t, "v": np.ones(5_000)})
    queries = pa.table({"k": k[:1_000], "t": t[:1_000] + 0.5})
    out = rolling_aggregate(
        events, time="t", key="k", aggs={"n": ("sum", "v", "range:100")}, at=queries
    )
    want = [
        ((k == q) & (t >= s - 99.5) & (t <= s)).sum() for q, s in zip(k[:1_000], t[:1_000] + 0.5)
    ]
    assert out.column("n").to_pylist() == want
    assert len(seen) >= 2 and not any(seen)  # the events' sort and the queries'


def test_the_sums_moments_and_sweep_take_read_only_values_from_every_caller(monkeypatch) -> None:
    """The exact sums, the exact moments and the FIFO sweep get read-only values, also where
    the evaluator builds them itself (a pair's values with the other's nulls as NaN: writable),
    and the answers are the oracle's."""
    from windowagg import rolling_aggregate
    from windowagg.engine import sweep
    from windowagg.engine.evaluators import moments, sums

    seen: dict[str, list[bool]] = {"sums": [], "moments": [], "sweep": []}

    def spy_on(owner, name, where, position):
        real = getattr(owner, name)

        def spy(*args):
            seen[where].append(args[position].flags.writeable)
            return real(*args)

        monkeypatch.setattr(owner, name, spy)

    spy_on(sums, "exact_sums", "sums", 0)
    spy_on(moments.exact, "exact_moments", "moments", 2)
    spy_on(sweep.FifoState, "frames", "sweep", 2)  # (self, code, values, ...)
    rng = np.random.default_rng(2)
    n = 400
    x = rng.integers(0, 9, n).astype(float)
    mask = rng.random(n) < 0.1
    y = rng.integers(0, 9, n).astype(float)
    events = pa.table({"t": np.arange(n), "x": pa.array(x, mask=mask), "y": y})
    aggs = {
        "s": ("sum", "x", "range:10"),
        "c": ("covar_pop", ("y", "x"), "range:10"),
        "d": ("stddev_pop", "x", "rows:5"),
    }
    out = rolling_aggregate(events, time="t", aggs=aggs)
    queries = pa.table({"t": [20.5, 300.5]})  # frames answered alone: the exact moments
    at = rolling_aggregate(events, time="t", aggs={"c": aggs["c"]}, at=queries)
    assert at.column("c").to_pylist() == [
        _covar_pop(y[11:21], x[11:21], mask[11:21]),
        _covar_pop(y[291:301], x[291:301], mask[291:301]),
    ]
    assert all(seen.values()), seen
    assert not any(w for calls in seen.values() for w in calls), seen
    xs = events.column("x").to_pylist()
    for i in (50, 200, 399):
        frame = [v for v in xs[max(0, i - 10) : i + 1] if v is not None]
        assert out.column("s")[i].as_py() == sum(frame)


def _covar_pop(y: np.ndarray, x: np.ndarray, null: np.ndarray) -> float:
    """The population covariance over the pairs where neither is null, exactly, rounded once."""
    ys, xs = [Fraction(v) for v in y[~null]], [Fraction(v) for v in x[~null]]
    my, mx = sum(ys) / len(ys), sum(xs) / len(xs)
    return float(sum((a - my) * (b - mx) for a, b in zip(ys, xs)) / len(ys))
