"""ooo(..., backend="compiled"): FiBA and the classic tree in compiled storage under the same
random traces as the Python reference (insert with repeated times, evict of present and
absent times, bulk evict, bulk insert, range queries) against the model, for every compiled
aggregation (Spark's statistics where :data:`tests.aggs.STATISTICS` says), the
non-commutative first and last among them; the batch methods against the reference; times it
holds and the clear errors for those it cannot."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import windowagg
from tests.aggs import COMPILED, crossed
from tests.fifo.traces import value
from tests.ooo.test_differential import run_trace
from tests.oracles import same
from windowagg.ooo.compiled_tree import CompiledTree

CONFIGS = [("fiba", 2), ("fiba", 3), ("fiba", 4), ("fiba", 8), ("bclassic", 3)]


@pytest.mark.parametrize(
    ("algorithm", "min_arity", "agg_name"),
    [(a, m, g) for g in sorted(COMPILED) for a, m in CONFIGS if crossed(a, g)],
)
def test_random_traces_against_the_model(algorithm: str, min_arity: int, agg_name: str) -> None:
    w = windowagg.ooo(algorithm, agg_name, backend="compiled", min_arity=min_arity)
    assert isinstance(w, CompiledTree)
    run_trace(w, agg_name, seed=min_arity, steps=400)


@pytest.mark.parametrize("seed", range(4))
def test_long_non_commutative_trace(seed: int) -> None:
    """first and last see the order of the entries: a long trace through many levels."""
    for agg_name in ("first", "last"):
        w = windowagg.ooo("fiba", agg_name, backend="compiled", min_arity=2)
        run_trace(w, agg_name, seed=seed, steps=2500, check_every=50)


def _ref_and_compiled(agg_name: str, min_arity: int = 2):
    return (
        windowagg.ooo("fiba", agg_name, backend="python", min_arity=min_arity),
        windowagg.ooo("fiba", agg_name, backend="compiled", min_arity=min_arity),
    )


@pytest.mark.parametrize("agg_name", ["sum", "last", "argmax", "stddev"])
def test_batch_methods_match_single_operations_of_the_reference(agg_name: str) -> None:
    rng = random.Random(agg_name)
    ref, w = _ref_and_compiled(agg_name)
    seq = 0
    for _ in range(30):
        times = [rng.randint(0, 3000) for _ in range(rng.randint(0, 200))]
        values = []
        for t in times:
            values.append(value(agg_name, rng, seq))
            seq += 1
            ref.insert(t, values[-1])
        w.insert_many(np.array(times), values)
        gone = [rng.randint(0, 3000) for _ in range(40)]
        want = [ref.evict(t) for t in gone]
        assert w.evict_many(gone).tolist() == want
        lo = np.array([rng.randint(-10, 3000) for _ in range(25)])
        hi = lo + np.array([rng.randint(-5, 800) for _ in range(25)])
        got = w.query_many(lo, hi)
        for a, b, g in zip(lo, hi, got):
            r = ref.query(int(a), int(b))
            assert same(None if np.isnan(g) else g, r) or (r == 0 and g == 0), (a, b, g, r)
        cut = rng.randint(0, 400)
        assert w.bulk_evict(cut) == ref.bulk_evict(cut)
        assert len(w) == len(ref)
        assert same(w.query(), ref.query())
        w.check_invariants()


def test_pool_growth_and_clearing() -> None:
    """Far more nodes than the initial pool, cleared by bulk evicts again and again."""
    ref, w = _ref_and_compiled("max")
    for r in range(6):
        ts = np.arange(r * 10_000, r * 10_000 + 5000, dtype=float)[::-1]  # youngest first
        w.insert_many(ts, ts % 97)
        ref.bulk_insert([(t, t % 97) for t in ts[::-1]])
        assert w.query(r * 10_000 + 100.0, r * 10_000 + 300.0) == ref.query(
            r * 10_000 + 100.0, r * 10_000 + 300.0
        )
        w.check_invariants()
        assert w.bulk_evict(r * 10_000 + 4999.0) == 5000
        assert len(w) == 0 and w.query() is None


def test_time_window_adapter_over_compiled_storage() -> None:
    rng = random.Random(5)
    tw = windowagg.TimeWindow(windowagg.ooo("fiba", "last", backend="compiled"), size=50)
    ref = windowagg.TimeWindow(windowagg.ooo("fiba", "last", backend="python"), size=50)
    for k in range(3000):
        t = max(0, k // 2 + rng.randint(-70, 5))
        assert tw.insert(t, k) == ref.insert(t, k)
        assert tw.query() == ref.query()
    assert tw.dropped == ref.dropped > 0


def test_auto_backend() -> None:
    assert isinstance(windowagg.ooo("fiba", "mean"), CompiledTree)
    assert isinstance(windowagg.ooo("bclassic", "min"), CompiledTree)
    assert not isinstance(windowagg.ooo("fiba", "median"), CompiledTree)
    assert not isinstance(windowagg.ooo("recalc", "sum"), CompiledTree)
    assert not isinstance(windowagg.ooo("fiba", "sum", backend="python"), CompiledTree)
    with pytest.raises(ValueError, match="backend='compiled' serves fiba and bclassic"):
        windowagg.ooo("recalc", "sum", backend="compiled")
    with pytest.raises(ValueError, match="backend='compiled' serves fiba and bclassic"):
        windowagg.ooo("fiba", "collect", backend="compiled")


def test_times_it_holds() -> None:
    w = windowagg.ooo("fiba", "sum", backend="compiled")
    w.insert(2**53, 1)
    w.insert(-(2**53), 2)
    w.insert(0.5, 3)
    assert (w.oldest(), w.youngest(), w.query(0, 1)) == (-(2**53), 2**53, 3)
    i = windowagg.ooo("fiba", "sum", backend="compiled")
    i.insert_many(np.array([5, 3], np.int64), [1, 2])
    assert (i.oldest(), type(i.oldest())) == (3, int)
    zone = timezone(timedelta(hours=2))
    d = windowagg.ooo("fiba", "max", backend="compiled")
    t0 = datetime(2030, 5, 1, 12, 0, 0, 7, tzinfo=zone)
    d.insert(t0 + timedelta(minutes=3), 9)
    d.insert(t0, 4)
    assert d.oldest() == t0 and d.youngest() == t0 + timedelta(minutes=3)
    assert d.query(t0, t0 + timedelta(minutes=1)) == 4


@pytest.mark.parametrize(
    ("t", "error", "match"),
    [
        (2**53 + 1, ValueError, "cannot hold 9007199254740993 exactly"),
        (float("inf"), ValueError, "cannot hold inf exactly"),
        (Fraction(1, 3), ValueError, "cannot hold Fraction\\(1, 3\\) exactly"),
        (Decimal("1.5"), TypeError, "real numbers or datetimes.*Decimal"),
        (float("nan"), ValueError, "must not be NaN"),
    ],
)
def test_times_it_cannot_hold_raise_before_any_change(t, error, match) -> None:
    w = windowagg.ooo("fiba", "sum", backend="compiled")
    w.insert(1, 1)
    with pytest.raises(error, match=match):
        w.insert(t, 5)
    with pytest.raises(error, match=match):
        w.insert_many([2, t], [1, 1])
    with pytest.raises(error, match=match):
        w.bulk_insert([(2, 1), (t, 1)])
    assert (len(w), w.query()) == (1, 1)


def test_bad_batches() -> None:
    w = windowagg.ooo("fiba", "sum", backend="compiled")
    with pytest.raises(ValueError, match="as many values \\(1\\) as times \\(2\\)"):
        w.insert_many([1, 2], [3])
    with pytest.raises(TypeError, match="sum needs a number, got 'x'"):
        w.insert_many([1, 2], [3, "x"])
    with pytest.raises(ValueError, match="cannot hold inf"):
        w.insert_many(np.array([1.0, np.inf]), [3, 4])
    assert len(w) == 0
    with pytest.raises(TypeError, match="backend='python'"):
        w.query_partial()
    with pytest.raises(ValueError, match="cannot hold inf"):
        w.evict_many([1.0, math.inf])
    assert w.evict_many(t for t in (1, 2)).tolist() == [False, False]
    assert w.query_many([3, 1], [2, 1]).tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("algorithm", "min_arity"), [("fiba", 2), ("fiba", 3), ("bclassic", 2)])
def test_evict_everything_in_random_order(algorithm: str, min_arity: int) -> None:
    """Single evicts at every depth (inner entries replaced from a leaf, merges and moves
    up to the root) until the tree is empty, against the reference."""
    rng = random.Random(min_arity)
    times = list(range(3000))
    w = windowagg.ooo(algorithm, "last", backend="compiled", min_arity=min_arity)
    ref = windowagg.ooo(algorithm, "last", backend="python", min_arity=min_arity)
    rng.shuffle(times)
    w.insert_many(times, times)
    for t in times:
        ref.insert(t, t)
    rng.shuffle(times)
    for k, t in enumerate(times):
        assert w.evict(t) and not w.evict(t)
        ref.evict(t)
        lo = rng.randint(0, 3000)
        assert (w.query(), w.query(lo, lo + 300), w.oldest()) == (
            ref.query(),
            ref.query(lo, lo + 300),
            ref.oldest(),
        )
        if k % 100 == 0:
            w.check_invariants()
    assert len(w) == 0 and w.query() is None


def test_pickles() -> None:
    import pickle

    w = windowagg.ooo("fiba", "argmin", backend="compiled", min_arity=2)
    w.insert_many([5, 1, 9, 3], [(10, 2.0), (11, 7.0), (12, -1.0), (13, 0.5)])
    w2 = pickle.loads(pickle.dumps(w))
    w2.check_invariants()
    assert (w2.query(), w2.query(0, 4), w2.oldest()) == (12, 13, 1)
    w2.insert(2, (14, -5.0))
    assert (w2.query(), w.query()) == (14, 12)
