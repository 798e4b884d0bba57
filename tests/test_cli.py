"""The command line: the demo's output and its argument errors."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from windowagg.cli import main
from windowagg.demo import taxi_stream


def test_demo_runs_and_all_algorithms_agree(capsys) -> None:
    assert main(["demo", "--events", "3000", "--size", "50"]) == 0
    out = capsys.readouterr().out
    assert "3,000 taxi trips" in out
    for line in ("max(fare)", "mean(minutes)", "stddev(fare)", "maxcount(fare)"):
        row = next(r for r in out.splitlines() if r.startswith(line))
        agreed, total = row.split()[1], row.split()[3]
        assert agreed == total


def test_demo_stream_is_seeded_and_disordered() -> None:
    a, b = taxi_stream(500, seed=3), taxi_stream(500, seed=3)
    assert a == b
    assert [t.arrival for t in a] == list(range(500))
    assert any(x.pickup_s > y.pickup_s for x, y in itertools.pairwise(a))


@pytest.mark.parametrize("bad", [["demo", "--size", "0"], ["demo", "--events", "x"], ["nope"]])
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
