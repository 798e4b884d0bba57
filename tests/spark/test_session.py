"""A missing Java or pyspark is one clear message, not a stack trace from the JVM; the session
runs its workers on this interpreter."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys

import pytest

from windowagg.spark import session


def test_no_java(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(session.shutil, "which", lambda name: None)
    with pytest.raises(session.SparkUnavailable, match="Java 17 or newer .no Java found"):
        session.check_java()


def test_old_java(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(session.shutil, "which", lambda name: "/usr/bin/java")

    def fake_run(*a, **k):
        return subprocess.CompletedProcess(a, 0, "", 'openjdk version "11.0.2" 2019-01-15\n')

    monkeypatch.setattr(session.subprocess, "run", fake_run)
    with pytest.raises(session.SparkUnavailable, match="found Java 11"):
        session.check_java()


def test_no_pyspark(monkeypatch):
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "pyspark":
            raise ImportError("No module named 'pyspark'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(session.SparkUnavailable, match=r"pip install 'windowagg\[spark\]'"):
        session.require_pyspark()


def test_run_reports_spark_unavailable_in_one_line(monkeypatch, tmp_path, capsys):
    from windowagg.cli import main

    csv = tmp_path / "a.csv"
    csv.write_text("t,v\n1,2\n")

    def unavailable(*a, **k):
        raise session.SparkUnavailable("Spark needs Java 17 or newer (no Java found): ...")

    monkeypatch.setattr("windowagg.pipeline_spark.spark_session", unavailable)
    code = main(
        [
            "run",
            str(csv),
            "--time",
            "t",
            "--value",
            "v",
            "--window",
            "tumbling:10s",
            "--agg",
            "sum",
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert code == 1
    assert capsys.readouterr().err.strip() == (
        "error: Spark needs Java 17 or newer (no Java found): ..."
    )
    assert not (tmp_path / "out").exists()


def test_session_workers_on_this_interpreter_over_unix_sockets(spark):
    assert spark.conf.get("spark.python.unix.domain.socket.enabled") == "true"
    exe = spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()
    assert [os.path.realpath(e) for e in exe] == [os.path.realpath(sys.executable)]
