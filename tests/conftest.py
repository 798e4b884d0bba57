"""Fixtures every test folder shares."""

from __future__ import annotations

from pathlib import Path

import pytest

from windowagg.aggregations import AGGREGATIONS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that run Spark (``tests/spark``, and those marked ``spark``) first, else as
    collected (a stable sort). ``make test``'s ``pytest -n 2`` hands the first process its
    first batch from the front of this order: the Spark tests run there one after another
    (a Spark session runs its own threads and Python workers), while the second process runs
    the compiled kernels' tests, instead of two Spark sessions contending for two cores."""
    here = Path(__file__).parent / "spark"
    items.sort(
        key=lambda item: not (item.path.is_relative_to(here) or item.get_closest_marker("spark"))
    )


@pytest.fixture
def named(monkeypatch):
    """The toy aggregations of :mod:`tests.toys` registered under their names, as built-ins
    are (and only for the test that asks)."""
    from tests import toys

    monkeypatch.setitem(AGGREGATIONS, "drift", toys.Drift)
    monkeypatch.setitem(AGGREGATIONS, "average", toys.Average)
    monkeypatch.setitem(AGGREGATIONS, "spread", toys.Spread)
