"""windowagg.fifo: construction by name, invalid pairings, bad arguments, empty windows."""

from __future__ import annotations

import pickle

import pytest

import windowagg
from tests.aggs import Concat, MatMul

ALL = tuple(windowagg.FIFO_ALGORITHMS)


def test_names_match_the_contract() -> None:
    assert ALL == (
        "recalc",
        "soe",
        "two_stacks",
        "two_stacks_lite",
        "daba",
        "daba_lite",
        "flatfat",
        "bint",
        "flatfit",
        "slickdeque",
    )


def test_unknown_algorithm_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown FIFO algorithm 'dabba'.*daba_lite"):
        windowagg.fifo("dabba", "sum")


def test_unknown_aggregation_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown aggregation 'summ'.*maxcount"):
        windowagg.fifo("daba", "summ")


def test_not_an_aggregation() -> None:
    with pytest.raises(TypeError, match="lacks .*combine"):
        windowagg.fifo("daba", object())


@pytest.mark.parametrize("agg", ["max", "maxcount", "m4", "bloom", "hll", Concat()])
def test_soe_needs_an_inverse(agg) -> None:
    with pytest.raises(ValueError, match="soe .*needs an invertible aggregation"):
        windowagg.fifo("soe", agg)


@pytest.mark.parametrize("agg", ["maxcount", "mincount", "m4", "bloom", "hll", Concat()])
def test_slickdeque_needs_inverse_or_selective(agg) -> None:
    with pytest.raises(ValueError, match="slickdeque needs .*invertible.*selective"):
        windowagg.fifo("slickdeque", agg)


@pytest.mark.parametrize("algorithm", ALL)
def test_evict_on_empty_window(algorithm: str) -> None:
    w = windowagg.fifo(algorithm, MatMul())
    with pytest.raises(windowagg.EmptyWindowError):
        w.evict()
    w.insert(3)
    w.evict()
    with pytest.raises(IndexError):  # EmptyWindowError is an IndexError
        w.evict()
    assert len(w) == 0
    assert w.query() == MatMul.identity


@pytest.mark.parametrize("algorithm", ALL)
def test_empty_window_results(algorithm: str) -> None:
    expected = {"sum": 0, "count": 0, "collect": [], "max": None, "mean": None}
    for name, empty in expected.items():
        try:
            w = windowagg.fifo(algorithm, name)
        except ValueError:
            continue  # an invalid pairing, tested above
        assert w.query() == empty
        w.insert(5)
        w.evict()
        assert w.query() == empty


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_backends(backend: str) -> None:
    w = windowagg.fifo("daba_lite", "sum", backend=backend)
    w.insert(2)
    assert w.query() == 2


def test_bad_backend() -> None:
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        windowagg.fifo("daba", "sum", backend="gpu")
    with pytest.raises(ValueError, match="compiled"):
        windowagg.fifo("daba", MatMul(), backend="compiled")


def test_unknown_option() -> None:
    with pytest.raises(TypeError, match="daba takes no option.*ranges"):
        windowagg.fifo("daba", "sum", ranges=[3])


def test_slickdeque_ranges() -> None:
    w = windowagg.fifo("slickdeque", "sum", ranges=[5, 3])
    for x in range(10):
        w.insert(x)
    assert w.query(last=3) == 7 + 8 + 9
    with pytest.raises(ValueError, match=r"only for the ranges it was built with \[3, 5\]"):
        w.query(last=4)
    with pytest.raises(ValueError, match="integers >= 1"):
        windowagg.fifo("slickdeque", "sum", ranges=[0])


@pytest.mark.parametrize("algorithm", ["recalc", "flatfat", "bint", "flatfit"])
@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_query_last_bad_argument(algorithm: str, bad) -> None:
    w = windowagg.fifo(algorithm, "sum")
    w.insert(1)
    with pytest.raises(ValueError, match="integer r >= 0"):
        w.query(last=bad)


@pytest.mark.parametrize("algorithm", ALL)
def test_pickles(algorithm: str) -> None:
    w = windowagg.fifo(algorithm, "sum", **({"ranges": [2]} if algorithm == "slickdeque" else {}))
    for x in range(40):
        w.insert(x)
    for _ in range(15):
        w.evict()
    w2 = pickle.loads(pickle.dumps(w))
    assert w2.query() == w.query() == sum(range(15, 40))
    w2.insert(100)
    w2.check_invariants()
    assert w2.query() == sum(range(15, 40)) + 100


def test_bad_input_type_names_value() -> None:
    w = windowagg.fifo("daba_lite", "sum")
    with pytest.raises(TypeError, match="sum needs a number, got 'abc' \\(str\\)"):
        w.insert("abc")
    assert len(w) == 0  # nothing half-applied


def test_serves_matches_construction() -> None:
    """windowagg.fifo.serves says in advance what fifo() accepts."""
    from windowagg.fifo import serves

    for algorithm in ALL:
        for agg in [*windowagg.AGGREGATIONS, Concat(), MatMul()]:
            expected = serves(algorithm, agg)
            try:
                windowagg.fifo(algorithm, agg, backend="python")
            except ValueError:
                assert not expected, (algorithm, agg)
            else:
                assert expected, (algorithm, agg)
