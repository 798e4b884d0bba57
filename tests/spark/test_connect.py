"""Spark Connect is a first-class session: the same job (windows, rolling frames, point-in-time
frames, streaming windows and streaming rolling frames) and the command line give on a Connect
session what they give on a classic one; and no Spark path reaches for what Connect does not
have (the SparkContext, RDDs, the JVM gateway).

A Connect client in a process switches pyspark's functions to Connect for the whole process,
so the Connect side runs in its own process (``remote("local[2]")``: pyspark starts a Connect
server there, its workers on this interpreter)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from windowagg.cli import main

from . import cluster_job
from .test_cluster import rows

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def one_server_at_a_time(tmp_path_factory):
    """A local Connect server listens on pyspark's fixed port: a test holds a lock shared by
    the test processes while its server runs, so that two never start at once."""
    with open(tmp_path_factory.getbasetemp().parent / "connect.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _env() -> dict[str, str]:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}


def test_the_job_on_spark_connect_equals_a_classic_session(spark, job_input, tmp_path):
    (src, classic), connect = job_input, tmp_path / "connect"
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.cluster_job", "connect:local[2]", src, connect],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    for part in cluster_job.PARTS:
        want = rows(spark, classic / part)
        assert len(want) > 100, part
        assert rows(spark, connect / part) == want, part


def _trips(tmp_path: Path) -> tuple[Path, Path]:
    csv, asked = tmp_path / "trips.csv", tmp_path / "asked.csv"
    lines = [
        f"2024-01-01 00:{m:02d}:{s:02d},{(m * 7 + s) % 4},{(m * 13 + s) % 50}.0"
        for m in range(30)
        for s in range(0, 60, 5)
    ]
    csv.write_text("pickup,zone,fare\n" + "\n".join(lines) + "\n")
    queries = [f"2024-01-01 00:{m:02d}:30,{m % 5}" for m in range(0, 30, 2)]
    asked.write_text("asked,zone\n" + "\n".join(queries) + "\n")
    return csv, asked


def _cli_args(csv: Path, asked: Path) -> list[list[str]]:
    common = [str(csv), "--time", "pickup", "--key", "zone"]
    return [
        [*common, "--window", "tumbling:5m", "--window", "session:1m", "--agg", "first:fare"],
        [*common, "--at", str(asked), "--at-time", "asked", "--rolling", "f=sum:fare:range:10m"],
    ]


#: the command line's ``main`` on each argument list in turn, in one process: the first run
#: starts the local Connect server, and the second finds it running (as a second command in a
#: session that keeps its server would)
_RUNS = """
import json, sys
from windowagg.cli import main
sys.exit(max(main(args) for args in json.loads(sys.argv[1])))
"""


def test_windowagg_run_with_remote_equals_a_classic_session(spark, tmp_path):
    csv, asked = _trips(tmp_path)
    runs = []
    for i, args in enumerate(_cli_args(csv, asked)):
        assert main(["run", *args, "--output", str(tmp_path / f"classic{i}")]) == 0
        runs.append(
            ["run", *args, "--output", str(tmp_path / f"connect{i}"), "--remote", "local[2]"]
        )
    done = subprocess.run(
        [sys.executable, "-c", _RUNS, json.dumps(runs)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    assert done.stdout.count("on Spark Connect (local[2])") == len(runs)
    for i in range(len(runs)):
        want = rows(spark, tmp_path / f"classic{i}")
        assert len(want) > 10
        assert rows(spark, tmp_path / f"connect{i}") == want


def test_remote_with_a_master_or_the_local_engine_is_an_error(tmp_path, capsys):
    csv, _ = _trips(tmp_path)
    base = ["run", str(csv), "--time", "pickup", "--window", "tumbling:5m", "--agg", "sum:fare"]
    for extra in (["--master", "local[1]"], ["--engine", "local"]):
        assert main([*base, "--output", str(tmp_path / "o"), "--remote", "sc://x", *extra]) == 1
        assert "--remote runs on a Spark Connect server" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.fixture
def no_context(spark, monkeypatch):
    """The classic session, with the SparkContext and RDDs out of reach of windowagg's code
    (pyspark's own internals still use them)."""
    from pyspark.sql import DataFrame, SparkSession

    def missing(what, real):
        def guarded(self):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.split(".")[0] in ("windowagg", "tests"):
                raise AssertionError(f"{what} is not there on Spark Connect")
            return real.__get__(self)

        return property(guarded)

    context = SparkSession.__dict__["sparkContext"]
    monkeypatch.setattr(SparkSession, "sparkContext", missing("SparkSession.sparkContext", context))
    for cls in {DataFrame, type(spark.range(1))}:
        if "rdd" in cls.__dict__:
            monkeypatch.setattr(cls, "rdd", missing("DataFrame.rdd", cls.__dict__["rdd"]))
    return spark


def test_no_spark_path_reaches_for_the_context_rdds_or_the_jvm(no_context, tmp_path):
    with pytest.raises(AssertionError, match="not there on Spark Connect"):
        no_context.sparkContext  # noqa: B018 (the guard holds)
    src = tmp_path / "in"
    cluster_job.write_events(src, n=600)
    cluster_job.run(no_context, src, tmp_path / "job")
    for part in cluster_job.PARTS:
        assert rows(no_context, tmp_path / "job" / part), part
    csv, asked = _trips(tmp_path)
    for i, args in enumerate(_cli_args(csv, asked)):
        assert main(["run", *args, "--output", str(tmp_path / f"cli{i}")]) == 0
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "windowagg").rglob("*.py"))
    for name in ("sparkContext", "SparkContext(", ".rdd", "_jvm", "_jdf", "_jsc", "_jspark"):
        assert name not in source, name
