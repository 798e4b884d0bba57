"""One local Spark session per test process."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from windowagg.spark import spark_session

    s = spark_session("local[2]", progress=False)
    yield s


@pytest.fixture(scope="session")
def job_input(spark, tmp_path_factory):
    """The cluster and Connect tests' job (:mod:`tests.spark.cluster_job`): its events, and its
    answers in local mode on this process's session, for every test that compares with them."""
    from . import cluster_job

    root = tmp_path_factory.mktemp("job")
    cluster_job.write_events(root / "in")
    cluster_job.run(spark, root / "in", root / "local")
    return root / "in", root / "local"
