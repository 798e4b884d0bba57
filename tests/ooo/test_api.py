"""windowagg.ooo: construction, options, bad input (nothing half-applied), empty windows."""

from __future__ import annotations

import pickle
import re

import pytest

import windowagg

ALL = [("fiba", {}), ("fiba", {"min_arity": 2}), ("bclassic", {}), ("recalc", {})]
IDS = ["fiba", "fiba2", "bclassic", "recalc"]


def filled(algorithm: str, options: dict):
    w = windowagg.ooo(algorithm, "collect", **options)
    w.bulk_insert([(float(t), t) for t in range(0, 60, 3)])
    return w


def test_names_match_the_contract() -> None:
    assert tuple(windowagg.OOO_ALGORITHMS) == ("fiba", "bclassic", "recalc")


def test_unknown_algorithm() -> None:
    with pytest.raises(ValueError, match="unknown out-of-order algorithm 'fibba'.*bclassic"):
        windowagg.ooo("fibba", "sum")


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "4", True, None])
def test_min_arity_must_be_an_integer_of_at_least_two(bad) -> None:
    with pytest.raises(
        ValueError, match=re.escape(f"min_arity must be an integer >= 2, got {bad!r}")
    ):
        windowagg.ooo("fiba", "sum", min_arity=bad)


@pytest.mark.parametrize("min_arity", [2, 3, 5, 16])
def test_any_min_arity(min_arity: int) -> None:
    w = windowagg.ooo("fiba", "sum", min_arity=min_arity)
    assert (w.min_arity, w.max_arity) == (min_arity, 2 * min_arity)
    w.bulk_insert([(t, t) for t in range(500)])
    w.check_invariants()
    assert w.query() == sum(range(500))


def test_unknown_option_and_backend() -> None:
    with pytest.raises(TypeError, match="recalc takes no option.*min_arity"):
        windowagg.ooo("recalc", "sum", min_arity=3)
    with pytest.raises(ValueError, match="unknown backend"):
        windowagg.ooo("fiba", "sum", backend="cuda")


@pytest.mark.parametrize(("algorithm", "options"), ALL, ids=IDS)
def test_bulk_insert_not_increasing(algorithm: str, options: dict) -> None:
    w = filled(algorithm, options)
    before = w.items()
    for items in ([(100, 1), (100, 2)], [(100, 1), (99, 2)], [(5, 1), (70, 1), (64, 1)]):
        with pytest.raises(ValueError, match="strictly increasing"):
            w.bulk_insert(items)
        assert w.items() == before  # nothing half-applied
    w.check_invariants()


@pytest.mark.parametrize(("algorithm", "options"), ALL, ids=IDS)
def test_times_that_do_not_compare(algorithm: str, options: dict) -> None:
    w = filled(algorithm, options)
    before = w.items()
    with pytest.raises(TypeError, match="time 'noon' \\(str\\) does not compare"):
        w.insert("noon", 1)
    with pytest.raises(TypeError, match="time 'noon' \\(str\\) does not compare"):
        w.bulk_insert([(100.0, 1), ("noon", 2)])
    with pytest.raises(TypeError, match="does not compare"):
        w.bulk_evict("noon")
    with pytest.raises(TypeError, match="does not compare"):
        w.query("a", "b")
    with pytest.raises(ValueError, match="must not be NaN"):
        w.insert(float("nan"), 1)
    with pytest.raises(TypeError, match="bulk_insert needs \\(t, x\\) pairs"):
        w.bulk_insert([(1.0, 2, 3)])
    with pytest.raises(TypeError, match="sum needs a number|collect"):
        windowagg.ooo(algorithm, "sum", **options).bulk_insert([(1, 2), (2, "x")])
    assert w.items() == before
    w.check_invariants()


def test_bad_value_leaves_window_unchanged() -> None:
    w = windowagg.ooo("fiba", "sum")
    w.bulk_insert([(1, 1), (2, 2)])
    with pytest.raises(TypeError, match="sum needs a number, got 'x'"):
        w.bulk_insert([(3, 3), (4, "x")])
    assert w.items() == [(1, 1), (2, 2)]


@pytest.mark.parametrize(("algorithm", "options"), ALL, ids=IDS)
def test_empty_window(algorithm: str, options: dict) -> None:
    w = windowagg.ooo(algorithm, "sum", **options)
    assert (len(w), w.query(), w.oldest(), w.youngest()) == (0, 0, None, None)
    assert w.evict(3) is False and w.bulk_evict(3) == 0
    assert w.query(0, 10) == 0
    w.insert(5, 2)
    assert w.bulk_evict(5) == 1
    assert (len(w), w.query(), w.oldest()) == (0, 0, None)
    w.check_invariants()


@pytest.mark.parametrize(("algorithm", "options"), ALL, ids=IDS)
def test_ranges_with_open_and_empty_bounds(algorithm: str, options: dict) -> None:
    w = filled(algorithm, options)  # times 0, 3, ..., 57
    assert w.query(None, 7) == [0, 3, 6]
    assert w.query(50, None) == [51, 54, 57]
    assert w.query(10, 5) == []
    assert w.query(4, 5) == []
    assert w.query(-100, 100) == list(range(0, 60, 3))
    assert (w.oldest(), w.youngest()) == (0.0, 57.0)


@pytest.mark.parametrize(("algorithm", "options"), ALL, ids=IDS)
def test_pickles(algorithm: str, options: dict) -> None:
    w = filled(algorithm, options)
    w2 = pickle.loads(pickle.dumps(w))
    w2.check_invariants()
    assert w2.query() == w.query()
    w2.insert(1.5, "late")
    assert w2.query(0, 3) == [0, "late", 3]


def test_datetimes_are_times() -> None:
    from datetime import datetime, timedelta

    w = windowagg.ooo("fiba", "max", min_arity=2)
    t0 = datetime(2021, 1, 1)
    for k in range(50):
        w.insert(t0 + timedelta(minutes=(k * 7) % 50), k)
    assert w.bulk_evict(t0 + timedelta(minutes=9)) == 10
    assert w.query(t0 + timedelta(minutes=10), t0 + timedelta(minutes=12)) == max(
        k for k in range(50) if 10 <= (k * 7) % 50 <= 12
    )
    with pytest.raises(TypeError, match="does not compare"):
        w.insert(3.0, 1)
