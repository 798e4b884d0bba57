"""The operator against the brute-force oracle over random out-of-order traces: tumbling,
sliding, session, count and fixed-band windows at once; both stores; lateness zero and not;
a non-commutative aggregation (concat), a collecting one, and commutative built-ins."""

from __future__ import annotations

import pytest

from windowagg import FixedBand, Punctuation, Session, Sliding, Tumbling

from ..aggs import Concat
from .harness import check, random_trace

WINDOWS = [
    Tumbling(10),
    Sliding(10, 3),
    Sliding(7, 7),
    Session(4),
    Session(9),
    Tumbling(5, measure="count"),
    Sliding(6, 2, measure="count"),
    FixedBand(17, 20),
]
AGGS = [Concat(), "collect", "sum", "max", "first"]


@pytest.mark.parametrize("store", ["eager", "lazy"])
@pytest.mark.parametrize("lateness", [0, 7, 1000])
@pytest.mark.parametrize("agg", AGGS, ids=lambda a: a if isinstance(a, str) else a.name)
@pytest.mark.parametrize("seed", range(6))
def test_all_windows_at_once(seed, agg, lateness, store):
    check(random_trace(seed), WINDOWS, agg, lateness, store)


@pytest.mark.parametrize("seed", range(20))
def test_each_window_alone(seed):
    ops = random_trace(100 + seed, n=80)
    for w in WINDOWS:
        check(ops, [w], Concat(), lateness=5, store="eager" if seed % 2 else "lazy")


@pytest.mark.parametrize("seed", range(8))
def test_in_order(seed):
    ops = random_trace(200 + seed, late_max=0)
    ops = [o for o in ops if o[0] == "wm"] + [o for o in ops if o[0] == "ev"]
    ops = sorted(ops, key=lambda o: (o[1], o[0] == "wm"))  # events, each watermark after
    check(ops, WINDOWS, Concat(), 0, "eager")


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("store", ["eager", "lazy"])
def test_punctuation(seed, store):
    import random

    rng = random.Random(seed)
    ops = [o if o[0] == "wm" else (o[0], o[1], rng.choice("aab|")) for o in random_trace(seed)]
    check(ops, [Punctuation("|"), Tumbling(10), Session(4)], Concat(), 6, store)


@pytest.mark.parametrize("seed", range(6))
def test_pickled_at_every_watermark(seed):
    check(random_trace(300 + seed), WINDOWS, Concat(), 5, "eager", roundtrip=True)


GRID_WINDOWS = [Tumbling(10), Sliding(10, 3), Sliding(7, 7), Tumbling(25), Sliding(12, 5)]


@pytest.mark.parametrize("store", ["eager", "lazy"])
@pytest.mark.parametrize("lateness", [0, 7, 1000])
@pytest.mark.parametrize("agg", ["sum", "count", "mean", "min", "max"])
@pytest.mark.parametrize("seed", range(5))
def test_fast_path(seed, agg, lateness, store):
    """Tumbling and sliding windows with a built-in numeric aggregation take the compiled
    fast path (slices as arrays); the oracle is the same. A gap of 10^9 after the stream makes
    the reporting enumerate windows from the slices instead of the grids."""
    ops = random_trace(400 + seed)
    ops += [("ev", 10**9, 1), ("ev", 10**9 + 3, 2), ("wm", 10**9 + 1)]
    op = check(ops, GRID_WINDOWS, agg, lateness, store)
    assert op._vector is not None and op.slices is None
