"""The command line: the demo's output and its argument errors."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from windowagg.cli import main
from windowagg.demo import taxi_stream


@pytest.mark.spark
def test_demo_runs_the_spark_pipeline_and_agrees_with_spark(capsys, tmp_path) -> None:
    pytest.importorskip("pyspark")
    assert main(["demo", "--events", "3000", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3,000 taxi trips" in out
    assert out.count("Spark's own query agrees (values, types): yes, yes") == 3
    assert "per-trip rolling features" in out
    assert "Spark's window functions (rangeBetween, rowsBetween) agree: yes" in out
    assert "point-in-time features" in out
    assert "Spark's range join and group by agree: yes" in out
    assert "busy spells (no 3-minute gap between trips)" in out
    assert (
        "the features served equal the backfill over the trips arrived by each request: yes" in out
    )
    assert "by get(zone, time), the same features: yes" in out
    assert any((tmp_path / "per-trip").glob("*.parquet"))
    assert (tmp_path / "results").is_dir() and any((tmp_path / "results").glob("*.parquet"))
    assert (tmp_path / "zone5.png").stat().st_size > 10_000
    assert not list(tmp_path.glob(".*tmp*"))  # no temporary directory left behind


def test_demo_stream_is_seeded_and_disordered() -> None:
    a, b = taxi_stream(500, seed=3), taxi_stream(500, seed=3)
    assert a == b
    assert [t.arrival for t in a] == list(range(500))
    assert any(x.pickup_s > y.pickup_s for x, y in itertools.pairwise(a))


@pytest.mark.parametrize(
    "bad",
    [
        ["demo", "--events", "0"],
        ["demo", "--events", "x"],
        ["nope"],
        ["run", "x.csv"],
        ["bench", "spark", "--events", "0"],
        ["bench", "fifo", "--events", "1000"],
    ],
)
def test_bad_arguments_exit_nonzero_with_one_message(bad: list[str]) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "windowagg.cli", *bad], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert "error:" in r.stderr
    assert r.stdout == ""


def test_version() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "windowagg.cli", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.startswith("windowagg ")
