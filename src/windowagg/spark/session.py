"""A Spark session for windowagg: local mode by default, workers on this interpreter, one clear
message when Java or pyspark is missing."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SparkUnavailable(RuntimeError):
    """Spark cannot start here (no pyspark, or no Java 17+)."""


def require_pyspark() -> ModuleType:
    try:
        import pyspark
    except ImportError:
        raise SparkUnavailable(
            "pyspark is not installed: pip install 'windowagg[spark]' (or run make install)"
        ) from None
    return pyspark


def _java_version() -> int | None:
    java = shutil.which("java")
    if os.environ.get("JAVA_HOME"):
        candidate = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
        java = candidate if os.path.exists(candidate) else java
    if not java:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stderr + out.stdout

    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def check_java() -> None:
    """Raise SparkUnavailable, with what to do, unless Java 17 or newer is here."""
    version = _java_version()
    if version is None or version < 17:
        found = "no Java found" if version is None else f"found Java {version}"
        raise SparkUnavailable(
            f"Spark needs Java 17 or newer ({found}): install a JRE, e.g. "
            "apt-get install openjdk-17-jre-headless (make install does it), or set JAVA_HOME"
        )


def require_connect() -> None:
    """Raise SparkUnavailable, with what to do, unless Spark Connect's client can load."""
    require_pyspark()
    for module in ("grpc", "grpc_status", "google.rpc", "zstandard"):  # pyspark[connect]'s
        try:
            importlib.import_module(module)
        except ImportError:
            raise SparkUnavailable(
                f"Spark Connect's client needs {module.split('.')[0]}: "
                "pip install 'windowagg[connect]'"
            ) from None


#: windowagg's settings of a session it starts: times in UTC, Arrow between Spark and Python,
#: a partition per core's worth of work (runtime settings, which a Spark Connect session takes)
RUNTIME = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}


def _static(progress: bool) -> dict[str, str]:
    """The settings of a Spark driver windowagg starts in this process."""
    log4j = os.path.join(os.path.dirname(__file__), "log4j2.properties")
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        # Python workers over Unix domain sockets: on loopback TCP every small exchange with a
        # worker can wait for a delayed acknowledgement (tens of ms per Python stage)
        "spark.python.unix.domain.socket.enabled": "true",
        "spark.driver.memory": "2g",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
    }


def _start(builder: SparkSession.Builder, settings: dict[str, str]) -> SparkSession:
    """``builder``'s session with ``settings``. The JVM inherits standard error: it points at
    a log file while the JVM starts, so that its chatter stays out of a command's stderr
    (Python's errors still go there)."""
    for k, v in settings.items():
        builder = builder.config(k, v)
    log = os.path.join(tempfile.gettempdir(), f"windowagg-spark-{os.getpid()}.log")
    saved = os.dup(2)
    try:
        with open(log, "ab") as f:
            os.dup2(f.fileno(), 2)
            return builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def connect_session(remote: str, progress: bool = True) -> SparkSession:
    """A Spark Connect session on ``remote``: ``sc://host:port``, a server running elsewhere
    (windowagg installed where its workers run), or ``local[N]``, a Connect server pyspark
    starts in this process with its workers on this interpreter. windowagg's
    :data:`RUNTIME` settings hold in the session."""
    require_connect()
    from pyspark.sql import SparkSession

    if remote.startswith("sc://"):
        return _start(SparkSession.builder.remote(remote), RUNTIME)
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    return _start(SparkSession.builder.remote(remote), RUNTIME | _static(progress))


def spark_session(
    master: str = "local[2]",
    app: str = "windowagg",
    progress: bool = True,
    remote: str | None = None,
) -> SparkSession:
    """The active Spark session, or a new one (``master``: ``local[N]`` or a cluster URL;
    ``progress``: Spark's console progress bar for long stages; ``remote``: a Spark Connect
    server instead, :func:`connect_session`)."""
    if remote is not None:
        return connect_session(remote, progress)
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers: this interpreter
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app)
    return _start(builder, RUNTIME | _static(progress))
