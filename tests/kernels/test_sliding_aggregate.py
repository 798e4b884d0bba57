"""sliding_aggregate against a brute-force window oracle: count windows, time windows in and
out of order with repeated times, NaNs, several sizes at once, every algorithm that can serve
the input; and its input checks."""

from __future__ import annotations

import numpy as np
import pytest

import windowagg
from tests.aggs import COMPILED, crossed
from tests.oracles import direct
from windowagg.fifo import serves

PAIRS = ("argmin", "argmax", "max_by", "min_by", "covar_samp", "covar_pop", "corr")


def oracle(values, size, agg_name, times=None):
    """The api.md definition, element by element."""
    agg = windowagg.aggregation(agg_name)
    sizes = size if isinstance(size, list) else [size]
    out = np.empty((len(values), len(sizes)))
    for i in range(len(values)):
        for j, s in enumerate(sizes):
            if times is None:
                idx = list(range(max(0, i - s + 1), i + 1))
            else:
                now = max(times[: i + 1])
                idx = [k for k in range(i + 1) if now - s < times[k] <= now]
                idx.sort(key=lambda k: (times[k], k))
            if agg_name in PAIRS:
                window = [((k if times is None else times[k]), values[k]) for k in idx]
            else:
                window = [values[k] for k in idx]
            r = direct(agg, window)
            out[i, j] = np.nan if r is None else r
    return out if isinstance(size, list) else out[:, 0]


def data(n: int, seed: int, positive: bool = False):
    rng = np.random.default_rng(seed)
    v = rng.integers(-5, 20, n).astype(float) + rng.choice([0, 0.5], n)
    if positive:
        v = np.abs(v) + 1
    v[rng.random(n) < 0.08] = np.nan
    return v


def check(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, equal_nan=True)


AGGS = tuple(COMPILED)
FIFO = tuple(windowagg.FIFO_ALGORITHMS)


@pytest.mark.parametrize(
    ("algorithm", "agg_name"),
    [(a, g) for a in FIFO for g in AGGS if serves(a, g) and crossed(a, g)],
)
def test_count_windows(algorithm: str, agg_name: str) -> None:
    v = data(300, 1, positive=agg_name == "geomean")
    for size in (1, 2, 7, 33):
        got = windowagg.sliding_aggregate(v, size=size, agg=agg_name, algorithm=algorithm)
        check(got, oracle(v, size, agg_name))


@pytest.mark.parametrize("algorithm", ["recalc", "flatfat", "bint", "flatfit", "slickdeque"])
@pytest.mark.parametrize("agg_name", ["sum", "max", "mean", "argmin", "last", "stddev"])
def test_count_windows_shared_sizes(algorithm: str, agg_name: str) -> None:
    v = data(250, 2)
    sizes = [1, 4, 16, 40]
    got = windowagg.sliding_aggregate(v, size=sizes, agg=agg_name, algorithm=algorithm)
    check(got, oracle(v, sizes, agg_name))


@pytest.mark.parametrize(
    ("algorithm", "agg_name"),
    [
        (a, g)
        for a in ("two_stacks_lite", "daba", "flatfit", "bint", "soe")
        for g in ("sum", "max", "maxcount", "first", "argmax")
        if serves(a, g)
    ],
)
def test_time_windows_in_order_with_repeated_times(algorithm: str, agg_name: str) -> None:
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.choice([0, 0, 1, 2, 5], 300)).astype(float)  # many equal times
    v = data(300, 4)
    got = windowagg.sliding_aggregate(v, size=6.0, agg=agg_name, times=t, algorithm=algorithm)
    check(got, oracle(v, 6.0, agg_name, list(t)))
    if algorithm in ("flatfit", "bint"):
        got = windowagg.sliding_aggregate(
            v, size=[2.0, 9.0], agg=agg_name, times=t, algorithm=algorithm
        )
        check(got, oracle(v, [2.0, 9.0], agg_name, list(t)))


@pytest.mark.parametrize("agg_name", ["sum", "max", "mean", "first", "last", "argmin", "median"])
def test_time_windows_out_of_order(agg_name: str) -> None:
    rng = np.random.default_rng(5)
    t = (np.arange(200) + rng.integers(-8, 3, 200)).astype(float)  # disorder and repeats
    v = data(200, 6)
    got = windowagg.sliding_aggregate(v, size=10.0, agg=agg_name, times=t)
    check(got, oracle(v, 10.0, agg_name, list(t)))
    got = windowagg.sliding_aggregate(v, size=[3.0, 10.0], agg=agg_name, times=t)
    check(got, oracle(v, [3.0, 10.0], agg_name, list(t)))


@pytest.mark.parametrize("algorithm", ["fiba", "bclassic", "recalc"])
def test_out_of_order_algorithms_serve_every_input(algorithm: str) -> None:
    rng = np.random.default_rng(8)
    t = (np.arange(150) + rng.integers(-6, 2, 150)).astype(float)
    v = data(150, 9)
    got = windowagg.sliding_aggregate(v, size=7.0, agg="max", times=t, algorithm=algorithm)
    check(got, oracle(v, 7.0, "max", list(t)))
    if algorithm != "recalc":  # recalc is the FIFO one for count windows
        got = windowagg.sliding_aggregate(v, size=[3, 11], agg="sum", algorithm=algorithm)
        check(got, oracle(v, [3, 11], "sum"))


def test_python_path_for_other_aggregations() -> None:
    v = data(120, 7)
    check(windowagg.sliding_aggregate(v, size=9, agg="median"), oracle(v, 9, "median"))
    q = windowagg.aggregation("quantile", q=0.9)
    got = windowagg.sliding_aggregate(v, size=9, agg=q)
    want = [direct(q, list(v[max(0, i - 8) : i + 1])) for i in range(len(v))]
    check(got, np.array([np.nan if w is None else w for w in want]))


def test_datetime_times() -> None:
    t = np.array(
        ["2021-01-01T00:00:00", "2021-01-01T00:00:30", "2021-01-01T00:01:10"], dtype="datetime64[s]"
    )
    got = windowagg.sliding_aggregate([1.0, 2.0, 4.0], size=np.timedelta64(60, "s"), times=t)
    check(got, [1.0, 3.0, 6.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": [[1, 2]], "size": 2}, "one-dimensional"),
        ({"values": ["a", "b"], "size": 2}, "numeric"),
        ({"values": [1, 2], "size": 0}, "positive"),
        ({"values": [1, 2], "size": -1.5, "times": [0, 1]}, "positive"),
        ({"values": [1, 2], "size": 2.5}, "count-based size must be an integer"),
        ({"values": [1, 2], "size": []}, "empty list"),
        ({"values": [1, 2], "size": 2, "times": [0]}, "one element per value"),
        ({"values": [1, 2], "size": 2, "times": [0, float("nan")]}, "NaN"),
        ({"values": [1, 2], "size": 2, "algorithm": "dabba"}, "unknown algorithm"),
        ({"values": [1, 2], "size": 2, "times": [1, 0], "algorithm": "daba"}, "out of order"),
        ({"values": [1, 2], "size": [1, 2], "algorithm": "daba"}, "several window sizes"),
        ({"values": [1, 2], "size": 2, "agg": "max", "algorithm": "soe"}, "invertible"),
        ({"values": [1, 2], "size": 2, "agg": "maxcount", "algorithm": "slickdeque"}, "slickdeque"),
        ({"values": [1, 0], "size": 2, "agg": "geomean"}, "positive values"),
        ({"values": [1, 2], "size": 2, "agg": "collect"}, "numbers"),
    ],
)
def test_rejects_what_it_cannot_serve(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        windowagg.sliding_aggregate(kwargs.pop("values"), **kwargs)
