"""Fixtures every test folder shares."""

from __future__ import annotations

import pytest

from windowagg.aggregations import AGGREGATIONS


@pytest.fixture
def named(monkeypatch):
    """The toy aggregations of :mod:`tests.toys` registered under their names, as built-ins
    are (and only for the test that asks)."""
    from tests import toys

    monkeypatch.setitem(AGGREGATIONS, "drift", toys.Drift)
    monkeypatch.setitem(AGGREGATIONS, "average", toys.Average)
    monkeypatch.setitem(AGGREGATIONS, "spread", toys.Spread)


#: the slowest tests of a run from a clean clone (CONTRIBUTING, "Slow tests, and why"),
#: slowest first: they start first, so that the two workers finish together rather than one
#: of them running these alone at the end
SLOW_FIRST = (
    "tests/spark/test_cluster.py",
    "tests/bench/test_suites.py::test_checksums_agree_across_algorithms",
    "tests/ooo/test_api.py::test_datetimes_are_times",
    "tests/spark/test_connect.py",
    "tests/bench/test_suites.py",
    "tests/ooo/test_compiled.py::test_random_traces_against_the_model",
    "tests/test_cli.py::test_demo",
    "tests/kernels/test_btree.py::test_compiled_tree_matches_python_fiba",
    "tests/ooo/test_papers.py",
    "tests/spark/test_streaming.py",
)


def pytest_collection_modifyitems(items) -> None:
    """The slow tests of :data:`SLOW_FIRST` first, in its order; the others as collected."""

    def rank(item) -> int:
        return next(
            (i for i, p in enumerate(SLOW_FIRST) if item.nodeid.startswith(p)), len(SLOW_FIRST)
        )

    items.sort(key=rank)
