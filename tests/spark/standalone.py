"""A Spark standalone cluster for the tests: one master and one worker started with the
pyspark installation's ``bin/spark-class`` (pip's pyspark ships no ``sbin/start-*.sh``) on
127.0.0.1 with free ports, each in its own process group, and stopped with exactly those
groups (the worker's executors and their Python workers included)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@dataclass
class Cluster:
    url: str
    work: Path  # the worker's directory: one folder per application, executors' logs inside
    procs: list[subprocess.Popen]

    def stop(self) -> None:
        """Stop the worker, then the master, each with every process in its group (the
        worker's executors and their Python workers outlive it for a moment)."""
        for p in reversed(self.procs):
            _signal(p.pid, signal.SIGTERM)
            end = time.monotonic() + 30
            while p.poll() is None or _signal(p.pid, 0):  # the leader reaped, then the rest
                if time.monotonic() > end:
                    _signal(p.pid, signal.SIGKILL)
                time.sleep(0.1)


def _signal(group: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False once no process of it is left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True


def _wait_for(log: Path, text: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name} exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    raise TimeoutError(f"no {text!r} in {log} after {seconds} s:\n{log.read_text()[-3000:]}")


def start(root: Path, cores: int = 2, memory: str = "2g") -> Cluster:
    """A master and a worker (``cores``, ``memory``) logging into ``root``."""
    launcher = str(spark_home() / "bin" / "spark-class")
    # a worker stands for another machine: numba caches where its own interpreter's copy of
    # windowagg is, not under a NUMBA_CACHE_DIR of the process that runs the tests
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env |= {"SPARK_HOME": str(spark_home()), "SPARK_NO_DAEMONIZE": "1"}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    cluster = Cluster(url, root / "work", procs)

    def launch(name: str, args: list[str]) -> tuple[subprocess.Popen, Path]:
        log = root / f"{name}.log"
        with open(log, "wb") as f:
            p = subprocess.Popen(
                [launcher, *args],
                stdout=f,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        procs.append(p)
        return p, log

    try:
        master, log = launch(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(free_port()),
            ],
        )
        _wait_for(log, "I have been elected leader", master)
        worker, log = launch(
            "worker",
            [
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                "127.0.0.1",
                "--port",
                str(free_port()),
                "--webui-port",
                str(free_port()),
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--work-dir",
                str(cluster.work),
            ],
        )
        _wait_for(log, "Successfully registered with master", worker)
    except BaseException:
        cluster.stop()
        raise
    return cluster
