"""windowagg on a real Spark standalone cluster (a master and a worker started by the test,
see :mod:`tests.spark.standalone`): windows, rolling frames, a streaming query and
``windowagg run --master`` give the same answers as local mode; and windowagg shipped to the
cluster as a packed environment runs there, its executors starting from an empty kernel cache
and compiling their kernels themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from windowagg.cli import main

from . import cluster_job, standalone

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = standalone.start(tmp_path_factory.mktemp("cluster"))
    yield c
    c.stop()
    for p in c.procs:  # each process group started, the executors in it, is gone
        with pytest.raises(ProcessLookupError):
            os.killpg(p.pid, 0)


def driver_env() -> dict[str, str]:
    """A driver process's environment: the worker's executors run this interpreter, and no
    Spark settings come on the command line (``PYSPARK_SUBMIT_ARGS``) from outside."""
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_SUBMIT_ARGS": "pyspark-shell"}


def rows(spark, path: Path) -> list[tuple]:
    got = [
        tuple(tuple(x) if isinstance(x, list) else x for x in r)
        for r in spark.read.parquet(str(path)).collect()
    ]
    return sorted(got, key=repr)


def test_windows_rolling_frames_and_a_stream_on_the_cluster_equal_local_mode(
    spark, cluster, job_input, tmp_path
):
    (src, local), remote = job_input, tmp_path / "cluster"
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.cluster_job", cluster.url, str(src), str(remote)],
        cwd=ROOT,
        env=driver_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    for part in cluster_job.PARTS:
        want = rows(spark, local / part)
        assert len(want) > 100, part
        assert rows(spark, remote / part) == want, part
    assert list(cluster.work.glob("app-*/*/stderr"))  # the work ran in the worker's executors


def test_windowagg_run_with_a_cluster_master_equals_local_mode(spark, cluster, tmp_path):
    csv = tmp_path / "trips.csv"
    lines = [
        f"2024-01-01 00:{m:02d}:{s:02d},{(m * 7 + s) % 4},{(m * 13 + s) % 50}.0"
        for m in range(30)
        for s in range(0, 60, 5)
    ]
    csv.write_text("pickup,zone,fare\n" + "\n".join(lines) + "\n")
    args = [
        "run",
        str(csv),
        "--time",
        "pickup",
        "--key",
        "zone",
        "--window",
        "tumbling:5m",
        "--window",
        "sliding:10m/1m",
        "--agg",
        "sum:fare",
        "--agg",
        "first:fare",
    ]
    assert main([*args, "--output", str(tmp_path / "local")]) == 0  # this process's session
    exe = Path(sys.executable).parent / "windowagg"
    done = subprocess.run(
        [str(exe), *args, "--output", str(tmp_path / "remote"), "--master", cluster.url],
        env=driver_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    want = rows(spark, tmp_path / "local")
    assert len(want) > 50
    assert rows(spark, tmp_path / "remote") == want


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory):
    """windowagg as a user ships it to a cluster: its wheel and dependencies installed into a
    new virtual environment (CI's pinned versions; interpreter copied, not linked: Spark
    unpacks no link that points out of the archive), packed with venv-pack, uncompressed (a
    local file: packing takes 3 s instead of 7 s at gzip's fastest level)."""
    root = tmp_path_factory.mktemp("packed")

    def run(*argv):
        done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-5000:]

    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", ROOT)
    run(sys.executable, "-m", "venv", "--copies", root / "env")
    (wheel,) = (root / "dist").glob("windowagg-*.whl")
    run(
        root / "env/bin/python",
        "-m",
        "pip",
        "install",
        "-q",
        "-c",
        ROOT / "constraints.txt",
        wheel,
        "pandas",
    )
    run(
        Path(sys.executable).parent / "venv-pack",
        "-q",
        "-p",
        root / "env",
        "-o",
        root / "windowagg-env.tar.gz",
        "--compress-level",
        "0",
    )
    return root / "windowagg-env.tar.gz"


def test_a_packed_environment_shipped_with_archives_runs_on_the_cluster(
    spark, cluster, packed_env, job_input, tmp_path
):
    """The cluster guide's route: ``spark-submit --archives env.tar.gz#environment`` with
    ``PYSPARK_PYTHON`` pointing into the unpacked copy. The route, not the job, is under test
    here (the test above runs every part on the cluster): the windows alone."""
    (src, local), remote = job_input, tmp_path / "cluster"
    env = {
        **os.environ,
        "PYSPARK_PYTHON": "./environment/bin/python",
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    submit = Path(sys.executable).parent / "spark-submit"
    done = subprocess.run(
        [
            str(submit),
            "--master",
            cluster.url,
            "--archives",
            f"{packed_env}#environment",
            cluster_job.__file__,
            cluster.url,
            str(src),
            str(remote),
            "windows",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    assert sorted(p.name for p in remote.iterdir() if not p.name.startswith(".")) == ["windows"]
    assert rows(spark, remote / "windows") == rows(spark, local / "windows")
    # the executors ran the archive's interpreter and windowagg, compiling into its copy
    app = max(cluster.work.glob("app-*"), key=lambda p: p.stat().st_mtime)
    (unpacked,) = {p.parent.parent for p in app.glob("*/environment/bin/python")}
    assert list(unpacked.glob("lib/python*/site-packages/windowagg/**/*.nbi"))
