"""FiBA's bounds as operator-invocation counts (deterministic, not timed): FIFO cost
independent of n (and growing with log n for the classic tree), cost growing with the
out-of-order distance d rather than n, bulk evict sublinear in m, bulk insert cheaper than m
single inserts, query() at most two invocations."""

from __future__ import annotations

import random

import pytest

import windowagg
from tests.aggs import Counting

HIGH = 10**9


def _round_cost(algorithm: str, n: int, d: int, rounds: int = 2000, min_arity: int = 4) -> float:
    """Average invocations per round of evict, insert, query on a window of n entries where
    every insert has exactly d younger entries (FiBA paper, Section 5.1.1: the window is
    pre-populated with d high timestamps, then low timestamps are produced in order)."""
    agg = Counting(windowagg.aggregation("sum"))
    w = windowagg.ooo(algorithm, agg, min_arity=min_arity)
    w.bulk_insert([(t, 1) for t in range(n - d)])
    w.bulk_insert([(HIGH + j, 1) for j in range(d)])
    before = agg.calls
    for r in range(rounds):
        assert w.evict(r)
        w.insert(n - d + r, 1)
        w.query()
    assert len(w) == n
    return (agg.calls - before) / rounds


def test_fifo_cost_independent_of_n_for_fiba_and_growing_for_bclassic() -> None:
    small, large = 2**8, 2**14
    fiba_small, fiba_large = _round_cost("fiba", small, 0), _round_cost("fiba", large, 0)
    classic_small = _round_cost("bclassic", small, 0)
    classic_large = _round_cost("bclassic", large, 0)
    assert fiba_large <= 1.1 * fiba_small + 0.5  # amortized O(1) for in-order data
    assert classic_large >= 1.3 * classic_small  # O(log n): a deeper tree costs more
    assert fiba_large < classic_large


def test_fiba_cost_grows_with_distance_not_window_size() -> None:
    n = 2**13
    costs = {d: _round_cost("fiba", n, d) for d in (0, 16, 1024)}
    assert costs[0] < costs[16] < costs[1024]  # O(log d)
    # the same distance in a window 8x larger costs about the same
    assert _round_cost("fiba", 2**10, 16) == pytest.approx(costs[16], rel=0.15)
    # the classic tree pays O(log n) whatever the distance
    classic = {d: _round_cost("bclassic", n, d) for d in (0, 1024)}
    assert classic[0] == pytest.approx(classic[1024], rel=0.15)
    assert costs[0] < classic[0]


def _bulk_evict_cost(m: int, n: int = 2**14, repeats: int = 8) -> tuple[float, float]:
    """Invocations for evicting the oldest m entries in one bulk_evict and in m evicts."""
    bulk = single = 0
    for rep in range(repeats):
        for mode in ("bulk", "single"):
            agg = Counting(windowagg.aggregation("sum"))
            w = windowagg.ooo("fiba", agg, min_arity=4)
            w.bulk_insert([(t, 1) for t in range(n)])
            for t in range(n, n + 97 * rep):  # vary the tree's shape between repeats
                w.insert(t, 1)
                w.evict(t - n)
            oldest = w.oldest()
            before = agg.calls
            if mode == "bulk":
                assert w.bulk_evict(oldest + m - 1) == m
                bulk += agg.calls - before
            else:
                for t in range(oldest, oldest + m):
                    w.evict(t)
                single += agg.calls - before
            w.check_invariants()
    return bulk / repeats, single / repeats


def test_bulk_evict_sublinear_and_far_below_single_evicts() -> None:
    small_bulk, _ = _bulk_evict_cost(64)
    big_bulk, big_single = _bulk_evict_cost(4096)
    assert big_bulk < 3 * small_bulk  # m grew 64x; O(log m) grew at most 3x
    assert big_bulk < big_single / 50


def test_bulk_insert_cheaper_than_single_inserts() -> None:
    """m entries at out-of-order distance d, one bulk_insert against m inserts."""
    n, m, d = 2**13, 1024, 2048
    costs = {}
    for mode in ("bulk", "single"):
        agg = Counting(windowagg.aggregation("sum"))
        w = windowagg.ooo("fiba", agg, min_arity=4)
        w.bulk_insert([(2 * t, 1) for t in range(n)])  # even times
        start = 2 * (n - d) + 1  # odd times among the d youngest entries
        items = [(start + 2 * k, 1) for k in range(m)]
        before = agg.calls
        if mode == "bulk":
            w.bulk_insert(items)
        else:
            for t, x in items:
                w.insert(t, x)
        costs[mode] = agg.calls - before
        w.check_invariants()
        assert len(w) == n + m
    assert costs["bulk"] < 0.75 * costs["single"]


@pytest.mark.parametrize("min_arity", [2, 4])
def test_query_at_most_two_invocations(min_arity: int) -> None:
    agg = Counting(windowagg.aggregation("max"))
    w = windowagg.ooo("fiba", agg, min_arity=min_arity)
    rng = random.Random(5)
    for step in range(3000):
        if rng.random() < 0.6:
            w.insert(rng.randint(0, 500), rng.random())
        else:
            w.evict(rng.randint(0, 500))
        before = agg.calls
        w.query()
        assert agg.calls - before <= 2, f"step {step}"


if __name__ == "__main__":  # the figures quoted in the README
    print("in-order round (evict+insert+query), invocations:")
    for alg in ("fiba", "bclassic"):
        small, large = _round_cost(alg, 2**8, 0), _round_cost(alg, 2**14, 0)
        print(f"  {alg:9s} n=2^8 {small:6.1f}  n=2^14 {large:6.1f}")
    print(
        "fiba at n=2^13 by distance d:",
        {d: round(_round_cost("fiba", 2**13, d), 1) for d in (0, 16, 1024)},
    )
    bulk, single = _bulk_evict_cost(4096)
    print(f"evict 4096 oldest of 2^14: bulk_evict {bulk:.0f}, single evicts {single:.0f}")
