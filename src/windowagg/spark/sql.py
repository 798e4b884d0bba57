"""What every Spark query of windowagg shares: column names as SQL identifiers, the time column as
numbers in Spark SQL, the keys under internal names, the partitions for a Python stage (one per
core), and the engine's threads inside a Python worker (the task's CPUs)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import pyarrow as pa

from ..engine.parallel import ENV, set_threads
from ..engine.windows.plan import WindowPlan

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

T, S, K, R = "__wa_t", "__wa_s", "__wa_k", "__wa_r"  # internal column names


def quoted(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def time_sql(plan: WindowPlan, col: str | None = None) -> str:
    """The time column (or ``col``, an expression of its type) as numbers, in Spark SQL:
    microseconds since the epoch for timestamps, longs for integer times with whole windows
    (exactly: slices by ``pmod``), doubles otherwise."""
    col = quoted(plan.time) if col is None else col
    if plan.timestamp:
        return f"unix_micros(CAST({col} AS TIMESTAMP))"
    if pa.types.is_integer(plan.bound):
        return f"CAST({col} AS BIGINT)"
    return f"CAST({col} AS DOUBLE)"


def task_threads() -> None:
    """In a Spark Python worker: the engine's threads are the task's CPUs
    (``spark.task.cpus``, 1 unless the user set more), so that an executor of n cores running
    n tasks runs n threads, not n times n; ``WINDOWAGG_THREADS`` in the workers' environment
    (``spark.executorEnv.WINDOWAGG_THREADS``) sets them instead."""
    if os.environ.get(ENV):
        return
    from pyspark import TaskContext

    task = TaskContext.get()
    if task is not None:
        set_threads(task.cpus())


def cores(df: DataFrame) -> int:
    """Partitions for a Python stage: one per core, since every Python task has a fixed cost
    (window_aggregate's partials and rolling_aggregate's rows). Read from the session's
    settings alone, as Spark Connect allows (no SparkContext): ``spark.default.parallelism``,
    else a local master's threads, else the executors' cores, else the shuffle partitions."""
    conf = df.sparkSession.conf
    if (n := conf.get("spark.default.parallelism", None)) is not None:
        return max(1, int(n))
    master = conf.get("spark.master", None) or ""
    if m := re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", master):
        threads = m.group(1) or "1"
        return (os.cpu_count() or 1) if threads == "*" else int(threads)
    executors, each = (conf.get(f"spark.executor.{k}", None) for k in ("instances", "cores"))
    if executors is not None and each is not None:
        return max(1, int(executors) * int(each))
    return max(1, int(conf.get("spark.sql.shuffle.partitions") or 1))


def key_names(plan: WindowPlan) -> list[str]:
    """Internal names of the key columns (PySpark's mapped and grouped Python functions cannot
    take input columns whose names hold a dot); the output has the user's names."""
    return [f"{K}{i}" for i in range(len(plan.keys))]


def key_columns(plan: WindowPlan) -> list[Column]:
    """The key columns under their internal names."""
    from pyspark.sql import functions as F

    return [F.col(quoted(k)).alias(n) for k, n in zip(plan.keys, key_names(plan))]
