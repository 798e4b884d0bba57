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
