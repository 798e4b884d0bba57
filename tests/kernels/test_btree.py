"""The compiled FiBA and classic tree against the Python FiBA (itself held to the oracle):
time windows over out-of-order streams with bursts and gaps far longer than the window (bulk
evictions through many levels), several sizes (range queries), any min_arity, a node pool
that has to grow."""

from __future__ import annotations

import numpy as np
import pytest

import windowagg
from windowagg.arrays import _ooo_python
from windowagg.ooo.compiled import BTreeState


def stream(n: int, seed: int):
    rng = np.random.default_rng(seed)
    steps = rng.choice([0.0, 0.0, 1.0, 1.0, 2.0, 40.0, 300.0], n)  # repeats, bursts, gaps
    t = np.cumsum(steps) + rng.integers(-25, 3, n)  # and disorder
    v = rng.integers(-5, 20, n).astype(float)
    v[rng.random(n) < 0.05] = np.nan
    return t.astype(float), v


@pytest.mark.parametrize("classic", [False, True])
@pytest.mark.parametrize("min_arity", [2, 3, 4, 8])
@pytest.mark.parametrize(("agg_name", "family", "code"), [
    ("sum", "sum", 0), ("max", "select", 0), ("last", "select", 5), ("maxcount", "xcount", 0),
    ("stddev", "welford", 0), ("mean", "add", 2),
])  # fmt: skip
def test_compiled_tree_matches_python_fiba(classic, min_arity, agg_name, family, code) -> None:
    t, v = stream(1500, min_arity)
    agg = windowagg.aggregation(agg_name)
    for sizes in ([30.0], [5.0, 30.0, 400.0]):
        state = BTreeState(family, min_arity, classic, nodes=8)  # grows many times
        out = np.empty((len(v), len(sizes)))
        state.slide(code, v, t, t, np.array(sizes), out)
        want = _ooo_python("fiba", agg, v, t, sizes, True)
        np.testing.assert_allclose(out, want, rtol=1e-9, atol=1e-9, equal_nan=True)
        assert state.n > 8


def test_sliding_aggregate_uses_the_compiled_tree() -> None:
    t, v = stream(800, 11)
    for algorithm in ("fiba", "bclassic"):
        got = windowagg.sliding_aggregate(v, size=[7.0, 50.0], agg="max", times=t,
                                          algorithm=algorithm)  # fmt: skip
        want = _ooo_python("fiba", windowagg.aggregation("max"), v, t, [7.0, 50.0], True)
        np.testing.assert_allclose(got, want, equal_nan=True)
