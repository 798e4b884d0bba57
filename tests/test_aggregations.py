"""The built-in aggregations against their definitions, the monoid laws, and bad input."""

from __future__ import annotations

import math
import pickle
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg
from tests.fifo.traces import make_agg, value
from tests.oracles import direct, fold, same
from windowagg.aggregations import M4, AggregationProtocol, flags

NAMES = tuple(windowagg.AGGREGATIONS)


def test_all_contract_names_are_built_in() -> None:
    assert set(NAMES) >= {
        "sum",
        "count",
        "mean",
        "stddev",
        "geomean",
        "min",
        "max",
        "argmin",
        "argmax",
        "mincount",
        "maxcount",
        "first",
        "last",
        "m4",
        "collect",
        "bloom",
        "median",
        "quantile",
        "hll",
        "count_distinct",
    }


@pytest.mark.parametrize("name", NAMES)
def test_protocol_and_flags(name: str) -> None:
    agg = windowagg.aggregation(name)
    assert isinstance(agg, AggregationProtocol)
    invertible, _, selective = flags(agg)
    assert agg == windowagg.aggregation(name) and hash(agg) == hash(windowagg.aggregation(name))
    assert pickle.loads(pickle.dumps(agg)) == agg
    assert not (invertible and selective)


EXPECTED_FLAGS = {  # (invertible, commutative, selective)
    "sum": (True, True, False),
    "count": (True, True, False),
    "mean": (True, True, False),
    "stddev": (True, True, False),
    "geomean": (True, True, False),
    "min": (False, True, True),
    "max": (False, True, True),
    "argmin": (False, False, True),
    "argmax": (False, False, True),
    "first": (False, False, True),
    "last": (False, False, True),
    "mincount": (False, True, False),
    "maxcount": (False, True, False),
    "m4": (False, False, False),
    "collect": (True, False, False),
    "count_distinct": (True, True, False),
    "bloom": (False, True, False),
    "hll": (False, True, False),
}


@pytest.mark.parametrize(("name", "expected"), EXPECTED_FLAGS.items())
def test_flags(name: str, expected: tuple[bool, bool, bool]) -> None:
    assert flags(windowagg.aggregation(name)) == expected


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(3))
def test_fold_matches_definition(name: str, seed: int) -> None:
    """lift/combine/lower over a list gives the aggregation's definition (api.md section 1)."""
    rng = random.Random(seed)
    agg = make_agg(name)
    for n in (0, 1, 2, 5, 40):
        xs = [value(name, rng, k) for k in range(n)]
        assert same(fold(agg, xs), direct(agg, xs)), (name, xs)


@pytest.mark.parametrize("name", NAMES)
def test_monoid_laws(name: str) -> None:
    """Identity on both sides, associativity, and the inverse where there is one."""
    rng = random.Random(name)
    agg = make_agg(name)
    for _ in range(60):
        a, b, c = (
            fold_partial(agg, [value(name, rng, k) for k in range(rng.randint(0, 4))])
            for _ in range(3)
        )
        assert same(agg.combine(agg.identity, a), a) and same(agg.combine(a, agg.identity), a)
        assert same(agg.combine(agg.combine(a, b), c), agg.combine(a, agg.combine(b, c)))
        if getattr(agg, "commutative", False) and name not in ("argmin", "argmax"):
            assert same(agg.lower(agg.combine(a, b)), agg.lower(agg.combine(b, a)))
        if getattr(agg, "invertible", False):
            assert same(agg.lower(agg.inverse(agg.combine(b, c), b)), agg.lower(c))
        if getattr(agg, "selective", False):
            r = agg.combine(a, b)
            assert r is a or r is b


def fold_partial(agg, xs):
    acc = agg.identity
    for x in xs:
        acc = agg.combine(acc, agg.lift(x))
    return acc


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=0, max_size=30))
def test_stddev_and_mean_against_statistics(xs: list[float]) -> None:
    for name in ("stddev", "mean", "sum"):
        agg = windowagg.aggregation(name)
        got, want = fold(agg, xs), direct(agg, xs)
        if want is None:
            assert got is None
        else:
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-6)


def test_nan_and_none_are_missing() -> None:
    nan = float("nan")
    assert fold(windowagg.aggregation("sum"), [1, nan, 2, None]) == 3
    assert fold(windowagg.aggregation("count"), [1, nan, 2, None]) == 2
    assert fold(windowagg.aggregation("mean"), [1, nan, 3]) == 2
    assert fold(windowagg.aggregation("max"), [nan]) is None
    assert fold(windowagg.aggregation("first"), [nan, 4, 5]) == 4
    assert fold(windowagg.aggregation("collect"), [nan, 4, None, 5]) == [4, 5]
    assert fold(windowagg.aggregation("argmax"), [(1, nan), (2, 3.0), nan]) == 2
    # in a count-based window a NaN keeps its place: the window of 2 is [nan, 7]
    w = windowagg.fifo("daba_lite", "mean")
    for x in (5, nan, 7):
        w.insert(x)
        if len(w) > 2:
            w.evict()
    assert w.query() == 7


def test_empty_results() -> None:
    for name in ("sum", "count", "mincount", "maxcount"):
        assert fold(windowagg.aggregation(name), []) == 0
    assert fold(windowagg.aggregation("collect"), []) == []
    assert fold(windowagg.aggregation("hll"), []) == 0
    for name in (
        "mean",
        "stddev",
        "geomean",
        "min",
        "max",
        "argmin",
        "argmax",
        "first",
        "last",
        "m4",
        "median",
        "quantile",
        "bloom",
    ):
        assert fold(windowagg.aggregation(name), []) is None, name


def test_argmin_argmax_ties_go_to_the_oldest() -> None:
    xs = [("a", 3), ("b", 1), ("c", 3), ("d", 1)]
    assert fold(windowagg.aggregation("argmax"), xs) == "a"
    assert fold(windowagg.aggregation("argmin"), xs) == "b"


def test_m4_result() -> None:
    r = fold(windowagg.aggregation("m4"), [3, 1, 4, 1, 5, 9, 2, 6])
    assert r == M4(min=1, max=9, first=3, last=6)
    assert r.max == 9


def test_quantile_nearest_rank() -> None:
    xs = [15, 20, 35, 40, 50]  # the classic nearest-rank example
    assert fold(windowagg.aggregation("quantile", q=0.05), xs) == 15
    assert fold(windowagg.aggregation("quantile", q=0.3), xs) == 20
    assert fold(windowagg.aggregation("quantile", q=0.4), xs) == 20
    assert fold(windowagg.aggregation("quantile", q=0.5), xs) == 35
    assert fold(windowagg.aggregation("quantile", q=1.0), xs) == 50
    # Spark's percentile_disc and percentile_approx are the same rank
    assert fold(windowagg.aggregation("percentile_disc", p=0.3), xs) == 20.0
    assert fold(windowagg.aggregation("percentile_disc", p=0), xs) == 15.0
    assert fold(windowagg.aggregation("percentile_approx", p=0.4), xs) == 20


def test_median_and_percentile_interpolate_as_spark() -> None:
    """Spark's percentile: between the values at the floor and the ceiling of rank (n - 1) * p
    (0-based); its median is percentile(0.5)."""
    assert fold(windowagg.aggregation("median"), [4, 1, 3, 2]) == 2.5
    assert fold(windowagg.aggregation("median"), [4, 1, 3]) == 3.0
    assert fold(windowagg.aggregation("percentile", p=0.3), [1, 2, 3, 4]) == pytest.approx(1.9)
    assert fold(windowagg.aggregation("percentile", p=1), [1, 2, 3, 4]) == 4.0
    assert fold(windowagg.aggregation("median"), []) is None


@pytest.mark.parametrize("q", [0, -0.1, 1.5, "0.5", None, True])
def test_quantile_q_out_of_range(q) -> None:
    with pytest.raises(ValueError, match=r"quantile needs q in \(0, 1\], got q="):
        windowagg.aggregation("quantile", q=q)


def test_bloom_membership_and_false_positive_rate() -> None:
    agg = windowagg.aggregation("bloom", bits=4096, hashes=3)
    present = list(range(0, 600, 2))
    f = fold(agg, present)
    assert all(x in f for x in present)  # no false negatives
    absent = range(1, 20001, 2)
    fp = sum(x in f for x in absent) / len(absent)
    k, m, n = 3, 4096, len(present)
    theory = (1 - math.exp(-k * n / m)) ** k
    assert fp < 2 * theory + 0.01
    assert 2.0 in f  # numbers hash by value: 2 and 2.0 are the same element
    assert len(f) <= k * n


@pytest.mark.parametrize("params", [{"bits": 0}, {"hashes": 0}, {"bits": 2.5}, {"hashes": "x"}])
def test_bloom_bad_params(params) -> None:
    with pytest.raises(ValueError, match="bloom needs a positive integer"):
        windowagg.aggregation("bloom", **params)


def test_hll_estimates_distinct_count() -> None:
    agg = windowagg.aggregation("hll")
    xs = [i % 5000 for i in range(20000)]
    acc = agg.identity
    for chunk in range(0, len(xs), 1000):  # merge per chunk, as a window would
        part = fold_partial(agg, xs[chunk : chunk + 1000])
        acc = agg.combine(acc, part)
    assert abs(agg.lower(acc) - 5000) / 5000 < 0.05
    assert agg.lower(agg.identity) == 0


@pytest.mark.parametrize(
    ("name", "x"),
    [
        ("sum", "abc"),
        ("mean", "1.5"),
        ("stddev", [1]),
        ("max", "z"),
        ("min", object),
        ("geomean", "2"),
        ("mincount", b"1"),
        ("quantile", "3"),
        ("m4", "x"),
    ],
)
def test_strings_where_numbers_are_needed(name: str, x) -> None:
    with pytest.raises(TypeError, match=re.escape(f"{name} needs a number, got {x!r}")):
        windowagg.aggregation(name).lift(x)


def test_argmax_needs_a_numeric_value() -> None:
    with pytest.raises(TypeError, match="argmax needs a number, got 'high' \\(str\\)"):
        windowagg.aggregation("argmax").lift(("a", "high"))


def test_argmax_needs_pairs() -> None:
    with pytest.raises(TypeError, match=r"argmax needs \(arg, value\) pairs, got 5"):
        windowagg.aggregation("argmax").lift(5)


@pytest.mark.parametrize("x", [0, -1.5])
def test_geomean_needs_positive_values(x) -> None:
    with pytest.raises(ValueError, match=f"geomean needs positive values, got {x!r}"):
        windowagg.aggregation("geomean").lift(x)


def test_unknown_name_and_bad_params() -> None:
    with pytest.raises(ValueError, match="unknown aggregation 'average'; valid names: argmax"):
        windowagg.aggregation("average")
    with pytest.raises(ValueError, match="bad parameters for aggregation 'sum'"):
        windowagg.aggregation("sum", q=3)


def test_user_defined_aggregation_works_everywhere() -> None:
    """Any object with the four members is an aggregation; flags default to False."""

    class Product:
        identity = 1

        def lift(self, x):
            return x

        def combine(self, a, b):
            return a * b

        def lower(self, p):
            return p

    for algorithm in windowagg.FIFO_ALGORITHMS:
        if algorithm in ("soe", "slickdeque"):
            with pytest.raises(ValueError):
                windowagg.fifo(algorithm, Product())
            continue
        w = windowagg.fifo(algorithm, Product())
        for x in (2, 3, 5, 7):
            w.insert(x)
        w.evict()
        assert w.query() == 105


@pytest.mark.parametrize(
    ("text", "name", "params"),
    [
        ("quantile(q=0.95)", "quantile", {"q": 0.95}),
        (" Quantile( q = 0.25 ) ", "quantile", {"q": 0.25}),
        ("AVG", "mean", {}),
        ("stddev_samp", "stddev", {}),
        ("approx_count_distinct", "hll", {}),
        ("countDistinct", "count_distinct", {}),
        ("Max", "max", {}),
    ],
)
def test_names_with_parameters_and_sparks_aliases(text, name, params) -> None:
    from windowagg.aggregations import resolve

    agg = resolve(text)
    assert agg == windowagg.aggregation(name, **params)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("quantile(0.95)", "by name"),
        ("quantile(q=", "name(param=value"),
        ("quantile(q=x)", "literal values"),
        ("quantile(z=1)", "bad parameters"),
        ("quantil(q=0.5)", "unknown aggregation"),
    ],
)
def test_bad_aggregation_texts(text, message) -> None:
    from windowagg.aggregations import resolve

    with pytest.raises(ValueError, match=re.escape(message)):
        resolve(text)
