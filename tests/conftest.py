"""Fixtures every test folder shares."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from windowagg.aggregations import AGGREGATIONS


def pytest_configure(config: pytest.Config) -> None:
    """Every JVM the tests start (Spark's driver, a standalone cluster's processes, Connect
    servers) runs with two settings for two cores shared by two test processes:

    - the serial collector: the default collector's threads cost more CPU than they save (the
      streaming and batch Spark tests: 171 core-seconds before, 142 after; the benchmark
      suites' Spark sides 109 and 102);
    - the JIT's thresholds three times the default (``CompileThresholdScaling``): a test's
      short jobs end before most of what the optimizing compiler would compile pays back, and
      its compiler threads took 43 of the JVM's 110 core-seconds in the batch Spark tests.
      Measured one run after the other (core-seconds, this setting against the default): the
      batch Spark files 129 against 139 and 144; the benchmark suites' Spark sides 162 and
      166 against 180 and 194; the streaming files 158 against 173; the cluster's and
      Connect's jobs 205 and 205 against 213 and 207. Five times the default cost more (169
      on the suites' sides), and the first tier alone (121 on the batch files) slowed the
      suites' longer jobs by a third, so neither was kept.

    A ``JAVA_TOOL_OPTIONS`` already set wins."""
    os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:+UseSerialGC -XX:CompileThresholdScaling=3")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that run Spark (``tests/spark``, and those marked ``spark``) first, then the
    others in reverse collection order. ``make test``'s ``pytest -n 2`` hands each process a
    first batch of an eighth of the tests from the front of this order: the first process runs
    the Spark tests one after another (a Spark session runs its own threads and Python
    workers), while the second runs the compiled kernels' tests, instead of two Spark sessions
    contending for two cores. The Spark tests are fewer than that batch; the rest of it comes
    from the end of the collection (the package-level tests, quick ones), so that the heavy
    tests of the engine and the benchmark suites wait for whichever process is free, not
    behind the Spark tests (a clean clone's run: 232 s of them behind the Spark tests while
    the other process sat idle for 143 s)."""
    here = Path(__file__).parent / "spark"
    spark = [i for i in items if i.path.is_relative_to(here) or i.get_closest_marker("spark")]
    chosen = {id(i) for i in spark}
    items[:] = spark + [i for i in reversed(items) if id(i) not in chosen]


@pytest.fixture
def named(monkeypatch):
    """The toy aggregations of :mod:`tests.toys` registered under their names, as built-ins
    are (and only for the test that asks)."""
    from tests import toys

    monkeypatch.setitem(AGGREGATIONS, "drift", toys.Drift)
    monkeypatch.setitem(AGGREGATIONS, "average", toys.Average)
    monkeypatch.setitem(AGGREGATIONS, "spread", toys.Spread)
