"""Every FIFO algorithm x every built-in aggregation x user-defined non-commutative ones,
against the brute-force oracle over fixed, sawtooth, fill-and-drain and random-walk shapes with
window sizes 0, 1, 2, 2^k - 1, 2^k, 2^k + 1; ``query(last=r)`` checked the same way."""

from __future__ import annotations

import pytest

import windowagg
from tests.fifo.traces import AGG_NAMES, RANGES, make_agg, pairings, replay, trace

ALGORITHMS = tuple(windowagg.FIFO_ALGORITHMS)


def build(algorithm: str, agg):
    options = {"ranges": RANGES} if algorithm == "slickdeque" else {}
    return windowagg.fifo(algorithm, agg, backend="python", **options)


CASES = pairings(AGG_NAMES)


@pytest.mark.parametrize(("algorithm", "agg_name"), CASES)
def test_matches_oracle(algorithm: str, agg_name: str) -> None:
    replay(build(algorithm, make_agg(agg_name)), trace(agg_name))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_query_last_of_all_and_none(algorithm: str) -> None:
    w = build(algorithm, "collect")
    for x in range(10):
        w.insert(x)
    if not w.shares_windows:
        with pytest.raises(ValueError, match="window sharing"):
            w.query(last=3)
        return
    assert w.query(last=17) == list(range(10))  # more than the window: all of it
    if algorithm != "slickdeque":
        assert w.query(last=0) == []
        assert w.query(last=10) == list(range(10))
        assert w.query(last=4) == [6, 7, 8, 9]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_long_fixed_window_with_resizing(algorithm: str) -> None:
    """A window that grows past several capacities and shrinks back (resizing paths)."""
    agg = make_agg("concat") if algorithm not in ("soe", "slickdeque") else make_agg("matmul")
    w = build(algorithm, agg)
    window: list[int] = []
    for k in range(300):
        w.insert(k)
        window.append(k)
    for _ in range(290):
        w.evict()
        window.pop(0)
        if len(window) % 37 == 0:
            w.check_invariants()
    expect = agg.identity
    for x in window:
        expect = agg.combine(expect, agg.lift(x))
    assert w.query() == agg.lower(expect)
