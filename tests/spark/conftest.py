"""One local Spark session per test process."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from windowagg.spark import spark_session

    s = spark_session("local[2]", progress=False)
    yield s
