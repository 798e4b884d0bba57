"""Out-of-order aggregators against the oracle under random traces mixing insert (with repeated
times), evict of present and absent times, bulk evict, bulk insert and range queries, for
min_arity 2, 3, 4 and 8, with non-commutative and collecting aggregations; check_invariants()
after every step."""

from __future__ import annotations

import random

import pytest

import windowagg
from tests.fifo.traces import make_agg, value
from tests.ooo.model import Model
from tests.oracles import same

CONFIGS = [("recalc", None)] + [(alg, m) for alg in ("bclassic", "fiba") for m in (2, 3, 4, 8)]


def build(algorithm: str, min_arity: int | None, agg):
    options = {} if min_arity is None else {"min_arity": min_arity}
    return windowagg.ooo(algorithm, agg, backend="python", **options)


def run_trace(w, agg_name: str, seed: int, steps: int, check_every: int = 1) -> None:
    rng = random.Random(f"{agg_name}-{seed}")
    model = Model(w.agg)
    span = rng.choice((40, 300, 5000))  # many repeats, some, almost none
    seq = 0
    for step in range(steps):
        r = rng.random()
        if r < 0.45:
            t = rng.randint(0, span)
            x = value(agg_name, rng, seq)
            seq += 1
            w.insert(t, x)
            model.insert(t, x)
        elif r < 0.55:
            t = rng.randint(0, span)  # present or absent
            assert w.evict(t) == model.evict(t), f"step {step}: evict({t})"
        elif r < 0.60:
            t = rng.randint(-5, span + 5)
            assert w.bulk_evict(t) == model.bulk_evict(t), f"step {step}: bulk_evict({t})"
        elif r < 0.68:
            base = rng.randint(0, span)
            width = rng.choice((5, 60, 600))
            times = sorted({rng.randint(base, base + width) for _ in range(rng.randint(1, 70))})
            items = []
            for t in times:
                items.append((t, value(agg_name, rng, seq)))
                seq += 1
            w.bulk_insert(items)
            for t, x in items:
                model.insert(t, x)
        else:
            lo = rng.randint(-5, span)
            hi = lo + rng.randint(-3, span // 3)
            got = w.query(lo, hi)
            assert same(got, model.query(lo, hi)), f"step {step}: query({lo}, {hi}) = {got!r}"
        if step % check_every == 0:
            w.check_invariants()
        assert len(w) == len(model)
        got = w.query()
        assert same(got, model.query()), f"step {step}: query() = {got!r}"
    w.check_invariants()


@pytest.mark.parametrize(("algorithm", "min_arity"), CONFIGS)
@pytest.mark.parametrize("agg_name", ["collect", "concat", "matmul"])
@pytest.mark.parametrize("seed", range(3))
def test_random_traces(algorithm: str, min_arity: int | None, agg_name: str, seed: int) -> None:
    w = build(algorithm, min_arity, make_agg(agg_name))
    run_trace(w, agg_name, seed, steps=700)


@pytest.mark.parametrize(("algorithm", "min_arity"), [("fiba", 2), ("fiba", 4), ("bclassic", 3)])
@pytest.mark.parametrize("agg_name", [a for a in windowagg.AGGREGATIONS if a != "collect"])
def test_every_builtin_aggregation(algorithm: str, min_arity: int, agg_name: str) -> None:
    w = build(algorithm, min_arity, make_agg(agg_name))
    run_trace(w, agg_name, seed=7, steps=250, check_every=5)


@pytest.mark.parametrize("min_arity", [2, 3])
def test_long_trace_with_large_bulks(min_arity: int) -> None:
    """Bulks far larger than a node: bulk split into many pieces, cuts through many levels."""
    rng = random.Random(min_arity)
    w = build("fiba", min_arity, make_agg("collect"))
    model = Model(w.agg)
    for rnd in range(12):
        base = rng.randint(0, 20_000)
        times = sorted({rng.randint(base, base + 5000) for _ in range(rng.randint(100, 900))})
        w.bulk_insert([(t, (rnd, t)) for t in times])
        for t in times:
            model.insert(t, (rnd, t))
        w.check_invariants()
        cut = rng.randint(0, 25_000)
        assert w.bulk_evict(cut) == model.bulk_evict(cut)
        w.check_invariants()
        assert w.query() == model.query()
        lo = rng.randint(0, 25_000)
        assert w.query(lo, lo + 3000) == model.query(lo, lo + 3000)


@pytest.mark.parametrize(("algorithm", "min_arity"), CONFIGS)
def test_time_window_adapter(algorithm: str, min_arity: int | None) -> None:
    """TimeWindow keeps now - size < t <= now over any out-of-order aggregator."""
    rng = random.Random(3)
    agg = make_agg("concat")
    tw = windowagg.TimeWindow(build(algorithm, min_arity, agg), size=50)
    events: list[tuple[int, int]] = []
    now = None
    for k in range(600):
        t = max(0, (k // 2) + rng.randint(-40, 5))
        accepted = tw.insert(t, k)
        if now is not None and t <= now - 50:
            assert not accepted
        else:
            events.append((t, k))
            now = t if now is None else max(now, t)
        window = [x for (tt, x) in sorted(events, key=lambda e: (e[0], e[1])) if now - 50 < tt]
        expect = "".join(f"{x}," for x in window)
        assert tw.query() == expect
    assert tw.dropped == 600 - len(events)
