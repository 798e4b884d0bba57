"""Several aggregations of one stream in one call: ``sliding_aggregate(..., aggs=...)`` and
``WindowOperator(aggs=...)`` against each aggregation alone and a brute-force oracle, with a
non-commutative user aggregation among them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import windowagg
from tests.oracles import direct
from windowagg.aggregations import Facts
from windowagg.combined import Combined


class Latest:
    """The most recent value: associative, not commutative; one number (its facts say so)."""

    name = "latest"
    facts = Facts()
    identity = None

    def lift(self, x):
        return None if x is None or x != x else float(x)

    def combine(self, a, b):
        return a if b is None else b

    def lower(self, p):
        return p


def same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("timed", [False, True])
def test_sliding_aggregate_several_equals_each_alone(timed) -> None:
    rng = np.random.default_rng(4)
    values = np.round(rng.normal(size=300), 2)
    values[rng.random(300) < 0.1] = np.nan
    times = np.cumsum(rng.integers(0, 3, 300)).astype(float) if timed else None
    aggs = {"s": "sum", "m": "max", "md": "median", "latest": Latest(), "n": "count"}
    got = windowagg.sliding_aggregate(values, size=7, times=times, aggs=aggs)
    assert list(got) == list(aggs)
    for name, agg in aggs.items():
        for i in range(len(values)):
            if times is None:
                window = list(values[max(0, i - 6) : i + 1])
            else:
                window = [v for v, t in zip(values[: i + 1], times[: i + 1]) if t > times[i] - 7]
            want = (
                direct(windowagg.aggregations.resolve(agg), window)
                if name != "latest"
                else next((v for v in reversed(window) if v == v), None)
            )
            assert same(got[name][i], want), (name, i, got[name][i], want)


def test_window_operator_several_equals_each_alone() -> None:
    rng = np.random.default_rng(7)
    events = [(float(t), float(rng.integers(0, 50))) for t in rng.permutation(120)]
    aggs = {"s": "sum", "m": "max", "latest": Latest()}

    def run(**kw):
        op = windowagg.WindowOperator(allowed_lateness=200, **kw)
        op.add_window(windowagg.Tumbling(10))
        op.add_window(windowagg.Session(3))
        for t, x in events:
            op.process(t, x)
        return {(r.window.spec(), r.start, r.end): r.value for r in op.flush()}

    together = run(aggs=aggs)
    for name, agg in aggs.items():
        alone = run(agg=agg)
        assert alone.keys() == together.keys()
        assert all(together[w][name] == alone[w] for w in alone), name


def test_flags_and_errors() -> None:
    assert Combined({"a": "sum", "b": "count"}).invertible
    assert not Combined({"a": "sum", "b": "max"}).invertible
    assert not Combined({"a": "sum", "b": Latest()}).commutative
    with pytest.raises(ValueError, match="non-empty dict"):
        Combined({})
    with pytest.raises(ValueError, match="unknown aggregation"):
        windowagg.combined({"a": "summ"})
    with pytest.raises(TypeError, match="give agg, or aggs"):
        windowagg.WindowOperator("sum", aggs={"a": "max"})
    with pytest.raises(ValueError, match="lowers to a list"):
        windowagg.sliding_aggregate([1.0, 2.0], size=2, aggs={"c": "collect"})
