"""One local Spark session per test process."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    """windowagg's session on ``local[2]``, with as many shuffle partitions as cores, as the
    streaming guide advises (the session's default of 8 costs a task and a state store per
    partition in every stage and micro-batch: the streaming and batch tests took 200
    core-seconds at 8 and 127 at 2, one run after the other). Every stage still runs on two
    partitions; so does the cluster's and Connect's job (:mod:`tests.spark.cluster_job`), on
    two cores too, while the command-line subprocesses run windowagg's default of 8."""
    from windowagg.spark import spark_session

    s = spark_session("local[2]", progress=False)
    s.conf.set("spark.sql.shuffle.partitions", "2")
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
