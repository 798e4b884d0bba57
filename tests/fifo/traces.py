"""Seeded operation traces in the shapes of the literature, with their oracle answers."""

from __future__ import annotations

import functools
import random
from typing import Any

import windowagg
from tests.aggs import Concat, MatMul
from tests.oracles import direct

SIZES = (0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33)  # 0, 1, 2, 2^k - 1, 2^k, 2^k + 1
RANGES = (1, 2, 3, 8, 17)  # for query(last=r)

USER_AGGS = {"concat": Concat, "matmul": MatMul}
AGG_NAMES = (*windowagg.AGGREGATIONS, *USER_AGGS)


def make_agg(name: str) -> Any:
    if name in USER_AGGS:
        return USER_AGGS[name]()
    if name == "quantile":
        return windowagg.aggregation("quantile", q=0.9)
    if name == "bloom":
        return windowagg.aggregation("bloom", bits=256, hashes=3)
    return windowagg.aggregation(name)


def pairings(agg_names) -> list:
    """pytest parameters (algorithm, aggregation name) for every FIFO algorithm that serves
    the aggregation."""
    import pytest

    from windowagg.fifo import serves

    return [
        pytest.param(alg, name, id=f"{alg}-{name}")
        for alg in windowagg.FIFO_ALGORITHMS
        for name in agg_names
        if serves(alg, make_agg(name))
    ]


#: aggregations of (arg, value) pairs, and of (x, y) pairs of numbers
PAIRS = ("argmin", "argmax", "max_by", "min_by")
XY = ("covar_samp", "covar_pop", "corr")
#: aggregations of truth values
TRUTHS = ("count_if", "bool_and", "bool_or")


def value(name: str, rng: random.Random, seq: int) -> Any:
    """A raw input for aggregation ``name``: small numbers (ties are common), some missing."""
    if rng.random() < 0.06 and name not in ("concat", "matmul"):
        return (seq, float("nan")) if name in PAIRS + XY else float("nan")
    if name in PAIRS:
        return (seq, rng.choice((rng.randint(0, 6), rng.randint(0, 6) + 0.5)))
    if name in XY:
        return (rng.randint(-5, 20), rng.choice((rng.randint(0, 6), rng.randint(0, 6) + 0.5)))
    if name in TRUTHS:
        return rng.random() < 0.6
    if name == "geomean":
        return rng.randint(1, 20)
    if name == "product":
        return rng.choice((1, 2, -1, 0.5, 3))
    if name in (
        "sum",
        "mean",
        "stddev",
        "min",
        "max",
        "m4",
        "median",
        "quantile",
        "var_samp",
        "var_pop",
        "stddev_pop",
        "skewness",
        "kurtosis",
        "percentile",
        "percentile_disc",
        "percentile_approx",
    ):
        return rng.choice((rng.randint(-5, 20), rng.randint(-5, 20) + 0.25))
    return rng.randint(0, 12)


def shapes(size: int, rng: random.Random) -> list[list[str]]:
    """Insert/evict sequences: fixed window, sawtooth, fill-and-drain, random walk."""
    fixed: list[str] = []
    for _ in range(2 * size + 12):
        fixed.append("i")
        fixed.extend("e" * (fixed.count("i") - fixed.count("e") > size))
    saw: list[str] = []
    n = 0
    for _ in range(3):
        saw.extend("i" * (size - n) + "e" * (size // 2))
        n = size - size // 2
    drain = ("i" * size + "e" * size) * 2
    walk: list[str] = []
    n = 0
    for _ in range(3 * size + 10):
        if n and rng.random() < 0.45:
            walk.append("e")
            n -= 1
        else:
            walk.append("i")
            n += 1
    return [fixed, saw, list(drain), walk]


@functools.cache
def trace(agg_name: str, seed: int = 0) -> list[tuple[str, Any, Any, dict[int, Any]]]:
    """Operations ``(op, x, answer, answers_for_last_r)`` over every shape and size."""
    rng = random.Random(f"{agg_name}-{seed}")
    agg = make_agg(agg_name)
    out = []
    seq = 0

    def record(op: str, x: Any) -> None:
        last = {r: direct(agg, window[-r:]) for r in RANGES}
        out.append((op, x, direct(agg, window), last))

    for size in SIZES:
        window: list[Any] = []
        for shape in shapes(size, rng):
            for op in shape:
                x = None
                if op == "i":
                    x = value(agg_name, rng, seq)
                    seq += 1
                    window.append(x)
                else:
                    window.pop(0)
                record(op, x)
            while window:  # drain between shapes so each starts empty
                window.pop(0)
                record("e", None)
    return out


def replay(w: Any, steps: list, last_every: int = 1) -> None:
    """Run a trace on an aggregator, checking len() and query() after every step and
    query(last=r) every ``last_every`` steps (when it shares windows) against the oracle."""
    from tests.oracles import same

    model_len = 0
    for step, (op, x, answer, last) in enumerate(steps):
        if op == "i":
            w.insert(x)
            model_len += 1
        else:
            w.evict()
            model_len -= 1
        assert len(w) == model_len
        got = w.query()
        assert same(got, answer), f"step {step}: query() = {got!r}, oracle {answer!r}"
        if w.shares_windows and step % last_every == 0:
            for r in RANGES:
                got = w.query(last=r)
                assert same(got, last[r]), f"step {step}: query(last={r}) = {got!r}"
    w.check_invariants()
