"""Operator-invocation bounds of the DABA paper, counted with a counting aggregation."""

from __future__ import annotations

import random

import pytest

import windowagg
from tests.aggs import Concat, Counting


def _ops(seed: int, n: int = 3000) -> list[str]:
    """A random mix of inserts and evicts with bursts of each (dynamic windows)."""
    rng = random.Random(seed)
    ops: list[str] = []
    size = 0
    while len(ops) < n:
        burst = rng.randint(1, 40)
        if size and rng.random() < 0.5:
            k = min(size, burst)
            ops += ["e"] * k
            size -= k
        else:
            ops += ["i"] * burst
            size += burst
    return ops


def _costs(algorithm: str, ops: list[str]) -> dict[str, list[int]]:
    agg = Counting(Concat())
    w = windowagg.fifo(algorithm, agg)
    costs: dict[str, list[int]] = {"i": [], "e": [], "q": []}
    for k, op in enumerate(ops):
        before = agg.calls
        if op == "i":
            w.insert(k)
        else:
            w.evict()
        costs[op].append(agg.calls - before)
        before = agg.calls
        w.query()
        costs["q"].append(agg.calls - before)
    return costs


def _alternating(algorithm: str, n: int, rounds: int) -> float:
    """Average invocations per evict+insert round on a fixed-size window of n elements."""
    agg = Counting(Concat())
    w = windowagg.fifo(algorithm, agg)
    for k in range(n):
        w.insert(k)
    before = agg.calls
    for k in range(rounds):
        w.evict()
        w.insert(k)
    return (agg.calls - before) / rounds


def _random_walk(algorithm: str, n: int, ops: int, seed: int = 0) -> tuple[float, float]:
    """Average invocations per insert and per evict while the window size wanders between
    n / 2 and 2 n, each operation chosen by a fair coin (so independent of the fixup case)."""
    agg = Counting(Concat())
    w = windowagg.fifo(algorithm, agg)
    for k in range(n):
        w.insert(k)
    rng = random.Random(seed)
    cost = {"i": 0, "e": 0}
    count = {"i": 0, "e": 0}
    for k in range(ops):
        op = "e" if rng.random() < 0.5 else "i"
        op = "i" if len(w) <= n // 2 else "e" if len(w) >= 2 * n else op
        before = agg.calls
        w.insert(k) if op == "i" else w.evict()
        cost[op] += agg.calls - before
        count[op] += 1
    return cost["i"] / count["i"], cost["e"] / count["e"]


@pytest.mark.parametrize("seed", range(3))
def test_daba_worst_case(seed: int) -> None:
    """Theorem 10: at most 4 invocations per insert, 3 per evict, 1 per query."""
    costs = _costs("daba", _ops(seed))
    assert max(costs["i"]) == 4
    assert max(costs["e"]) == 3
    assert max(costs["q"]) == 1


@pytest.mark.parametrize("seed", range(3))
def test_daba_lite_worst_case(seed: int) -> None:
    """Theorem 13: at most 3 invocations per insert, 2 per evict, 1 per query."""
    costs = _costs("daba_lite", _ops(seed))
    assert max(costs["i"]) == 3
    assert max(costs["e"]) == 2
    assert max(costs["q"]) == 1


@pytest.mark.parametrize(("algorithm", "per_round"), [("daba", 4.0), ("daba_lite", 3.0)])
@pytest.mark.parametrize("n", [2, 7, 64, 1000])
def test_average_per_slide(algorithm: str, per_round: float, n: int) -> None:
    """Theorems 10 and 13: after each flip come as many shrinks (3 invocations in DABA, 2 in
    DABA Lite) as shifts (0), so an evict+insert round costs 1.5 + 2.5 = 4 (DABA) and
    1 + 2 = 3 (DABA Lite) on average."""
    assert _alternating(algorithm, n, rounds=40 * n + 400) == pytest.approx(per_round, abs=0.02)


@pytest.mark.parametrize(("algorithm", "ins", "ev"), [("daba", 2.5, 1.5), ("daba_lite", 2.0, 1.0)])
@pytest.mark.parametrize("n", [64, 1000])
def test_average_per_insert_and_evict(algorithm: str, ins: float, ev: float, n: int) -> None:
    """Theorems 10 and 13: on average 2.5 / 1.5 (DABA) and 2 / 1 (DABA Lite) invocations per
    insert / evict on non-empty windows."""
    got_ins, got_ev = _random_walk(algorithm, n, ops=60_000)
    assert got_ins == pytest.approx(ins, abs=0.05)
    assert got_ev == pytest.approx(ev, abs=0.05)


@pytest.mark.parametrize("algorithm", ["two_stacks", "two_stacks_lite"])
def test_two_stacks_one_per_insert_and_query(algorithm: str) -> None:
    """Theorems 3 and 7: exactly one invocation per insert and per query; evict amortized
    one (the flip pays for the inserts before it)."""
    ops = _ops(7)
    costs = _costs(algorithm, ops)
    assert set(costs["i"]) == {1}
    assert set(costs["q"]) == {1}
    assert sum(costs["e"]) <= len(costs["i"])
    assert max(costs["e"]) > 1  # a flip happened


def test_soe_and_slickdeque_inv_constant() -> None:
    """Subtract-on-evict: one combine per insert, none per query; SlickDeque (Inv): one per
    range per insert plus one for the whole window."""
    agg = Counting(windowagg.aggregation("sum"))
    w = windowagg.fifo("soe", agg)
    for k in range(100):
        before = agg.calls
        w.insert(k)
        assert agg.calls - before == 1
        before = agg.calls
        w.query()
        assert agg.calls == before
    agg = Counting(windowagg.aggregation("sum"))
    w = windowagg.fifo("slickdeque", agg, ranges=[3, 5])
    for k in range(100):
        before = agg.calls
        w.insert(k)
        assert agg.calls - before == 3
        if len(w) > 5:
            w.evict()


def test_slickdeque_noninv_under_two_amortized() -> None:
    """SlickDeque paper, Section 4.1: fewer than two invocations per slide amortized."""
    agg = Counting(windowagg.aggregation("max"))
    w = windowagg.fifo("slickdeque", agg, ranges=[10, 100])
    rng = random.Random(1)
    slides = 5000
    for _ in range(slides):
        if len(w) == 100:
            w.evict()
        w.insert(rng.random())
        w.query_ranges()
    assert agg.calls < 2 * slides


def test_flatfit_amortized_constant() -> None:
    """FlatFIT: a query per slide costs O(1) invocations amortized (path compression)."""
    agg = Counting(Concat())
    w = windowagg.fifo("flatfit", agg)
    for k in range(1000):
        w.insert(k)
    w.query()
    before = agg.calls
    for k in range(5000):
        w.evict()
        w.insert(k)
        w.query()
    assert (agg.calls - before) / 5000 <= 3


def test_bint_insert_amortized_constant() -> None:
    """B-Int: each interval is combined once, when complete: < 2 invocations per insert."""
    agg = Counting(Concat())
    w = windowagg.fifo("bint", agg)
    for k in range(1024):
        w.insert(k)
    before = agg.calls
    for k in range(8192):
        w.evict()
        w.insert(k)
    assert (agg.calls - before) / 8192 < 2
