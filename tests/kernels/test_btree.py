"""The compiled FiBA and classic tree against the Python FiBA (itself held to the oracle):
time windows over out-of-order streams with bursts and gaps far longer than the window (bulk
evictions through many levels), several sizes (range queries), any min_arity, a node pool
that has to grow."""

from __future__ import annotations

import numpy as np
import pytest

import windowagg
from windowagg.arrays import _ooo_rows, _rows
from windowagg.storage.btree_state import BTreeState


def stream(n: int, seed: int, in_order: bool = False):
    rng = np.random.default_rng(seed)
    steps = rng.choice([0.0, 0.0, 1.0, 1.0, 2.0, 40.0, 300.0], n)  # repeats, bursts, gaps
    if in_order:  # long runs at the fingers: appends, splits, evicts that merge and move
        steps = rng.choice([0.0, 1.0, 1.0, 1.0, 2.0], n)
    t = np.cumsum(steps) + (0 if in_order else rng.integers(-25, 3, n))  # and disorder
    v = rng.integers(-5, 20, n).astype(float)
    v[rng.random(n) < 0.05] = np.nan
    return t.astype(float), v


@pytest.mark.parametrize("classic", [False, True])
@pytest.mark.parametrize("min_arity", [2, 3, 4, 8])
@pytest.mark.parametrize(
    ("agg_name", "family", "code"),
    [
        ("sum", "sum", 0),
        ("max", "select", 0),
        ("last", "select", 5),
        ("maxcount", "xcount", 0),
        ("stddev", "welford", 0),
        ("mean", "add", 2),
    ],
)
@pytest.mark.parametrize("in_order", [False, True], ids=["disordered", "in_order"])
def test_compiled_tree_matches_python_fiba(
    classic, min_arity, agg_name, family, code, in_order
) -> None:
    t, v = stream(1500, min_arity, in_order)
    agg = windowagg.aggregation(agg_name)
    for sizes in ([30.0], [5.0, 30.0, 400.0], [3.0]):
        state = BTreeState(family, min_arity, classic, nodes=8)  # grows many times
        out = np.empty((len(v), len(sizes)))
        state.slide(code, v, t, t, np.array(sizes), out)
        want = _rows(_ooo_rows("fiba", agg, v, t, sizes), len(sizes), agg)
        np.testing.assert_allclose(out, want, rtol=1e-9, atol=1e-9, equal_nan=True)
        assert state.n > 8


def test_sliding_aggregate_uses_the_compiled_tree() -> None:
    t, v = stream(800, 11)
    for algorithm in ("fiba", "bclassic"):
        got = windowagg.sliding_aggregate(
            v, size=[7.0, 50.0], agg="max", times=t, algorithm=algorithm
        )
        want = _rows(
            _ooo_rows("fiba", mx := windowagg.aggregation("max"), v, t, [7.0, 50.0]), 2, mx
        )
        np.testing.assert_allclose(got, want, equal_nan=True)


@pytest.mark.parametrize("min_arity", [2, 3, 4, 8])
def test_rounds_in_order_match_python_fiba(min_arity) -> None:
    """The FiBA paper's in-order rounds (insert the youngest, evict the oldest, query) through
    the left- and right-finger fast paths, against the Python FiBA."""
    n, rounds = 300, 2000
    rng = np.random.default_rng(min_arity)
    vals = rng.integers(-5, 20, n + rounds).astype(float)
    st = BTreeState("sum", min_arity, nodes=4 * (n + rounds))
    t = np.arange(n, dtype=float)
    st.slide(0, vals[:n], t, t, np.array([np.inf]), np.empty((n, 1)))
    out = np.empty(rounds)
    evict_to = np.arange(rounds, dtype=float) + rng.integers(0, 2, rounds).cumsum()
    st.rounds(0, evict_to, n + np.arange(rounds, dtype=float), vals[n:], out)
    ref = windowagg.ooo("fiba", "sum", min_arity=min_arity, backend="python")
    want = []
    for i in range(n):
        ref.insert(float(i), vals[i])
    for r in range(rounds):
        ref.insert(float(n + r), vals[n + r])
        ref.bulk_evict(evict_to[r])
        want.append(ref.query())
    np.testing.assert_array_equal(out, want)
