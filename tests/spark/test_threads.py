"""Inside a Spark Python worker the engine runs on the task's CPUs (``spark.task.cpus``, 1 by
default), not on every core of the machine: an executor of n cores runs n tasks of one thread
each. A user's aggregation reads the count in the worker that ran it."""

from __future__ import annotations

import datetime as dt

import pytest

import windowagg
from windowagg import spark as wspark

pytest.importorskip("pyspark")


class ThreadsSeen:
    """Lowers to the engine's thread count where it runs."""

    name = "threads_seen"
    identity = 0.0

    def lift(self, v):
        return 0.0

    def combine(self, a, b):
        return a

    def lower(self, p):
        return float(windowagg.get_threads())


def test_a_worker_runs_the_tasks_cpus(spark) -> None:
    rows = [(k, dt.datetime(2026, 1, 1, 0, 0, s), float(s)) for k in range(4) for s in range(5)]
    df = spark.createDataFrame(rows, "k int, ts timestamp, v double")
    assert spark.conf.get("spark.task.cpus", "1") == "1"
    rolled = wspark.rolling_aggregate(
        df, time="ts", key="k", aggs={"n": (ThreadsSeen(), "v", "rows:2")}
    )
    windows = wspark.window_aggregate(
        df, time="ts", key="k", windows="tumbling:1m", aggs={"n": (ThreadsSeen(), "v")}
    )
    for out in (rolled, windows):
        assert {r.n for r in out.collect()} == {1.0}
    local = windowagg.rolling_aggregate(
        df.toArrow(), time="ts", key="k", aggs={"n": (ThreadsSeen(), "v", "rows:2")}
    )
    assert set(local.column("n").to_pylist()) == {float(windowagg.get_threads())}
