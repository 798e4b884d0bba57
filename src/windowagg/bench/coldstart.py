"""``windowagg bench coldstart``: the first call of each public entry point, in a fresh
process with an empty kernel cache (``cold``), in a fresh process whose cache a cold run filled
(``cached``), and a second call in the same process (``warm``). Process start and
``import windowagg`` are not counted; a Spark session is started before its call is timed.

Each case runs in its own process (``NUMBA_CACHE_DIR`` pointing at a directory of its own),
so one case's compiled kernels do not warm another's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable

from .core import Row

#: case name -> the code of one call (``wa`` is windowagg, ``np`` numpy, ``x``, ``t`` data)
CASES = {
    "sliding_aggregate in order, sum": "wa.sliding_aggregate(x, size=100, times=t)",
    "sliding_aggregate in order, max": "wa.sliding_aggregate(x, size=100, times=t, agg='max')",
    "sliding_aggregate out of order, sum": "wa.sliding_aggregate(x, size=100, times=u)",
    "sliding_aggregate out of order, max": "wa.sliding_aggregate(x, size=100, times=u, agg='max')",
    "fifo('daba', 'sum')": "w = wa.fifo('daba', 'sum'); w.insert_many(x); w.query()",
    "ooo('fiba', 'sum')": "w = wa.ooo('fiba', 'sum'); w.insert_many(u, x); w.query(0, 500)",
    "WindowOperator sliding sum": (
        "op = wa.WindowOperator('sum'); op.add_window(wa.Sliding(60, 10)); "
        "op.process_batch(u, x); op.flush()"
    ),
    "window_aggregate, sliding, five aggregations": (
        "wa.window_aggregate(tab, time='t', key='k', windows='sliding:60/10', "
        "aggs={'s': ('sum', 'x'), 'n': ('count', '*'), 'a': ('mean', 'x'), "
        "'lo': ('min', 'x'), 'hi': ('max', 'x')})"
    ),
    "rolling_aggregate, range sum and max": (
        "wa.rolling_aggregate(tab, time='t', key='k', "
        "aggs={'s': ('sum', 'x', 'range:60'), 'hi': ('max', 'x', 'range:60')})"
    ),
    "rolling_aggregate at queries, range sum": (
        "wa.rolling_aggregate(tab, time='t', key='k', aggs={'s': ('sum', 'x', 'range:60')}, "
        "at=queries)"
    ),
    "spark window_aggregate": (
        "from windowagg.spark import window_aggregate; "
        "window_aggregate(df, time='t', value='x', windows=['sliding:60/10'], agg='sum')"
        ".collect()"
    ),
    "spark rolling_aggregate": (
        "from windowagg.spark import rolling_aggregate; "
        "rolling_aggregate(df, time='t', aggs={'s': ('sum', 'x', 'range:60')}).collect()"
    ),
    "spark built-in window (baseline)": (
        "from pyspark.sql import functions as F; "
        "df.groupBy(F.window(F.col('t').cast('timestamp'), '60 seconds', '10 seconds'))"
        ".agg(F.sum('x')).collect()"
    ),
}

_CHILD = r"""
import json, sys, time
import numpy as np
import windowagg as wa
rng = np.random.default_rng(1)
x = rng.random(10_000)
t = np.arange(10_000, dtype=float)
u = t + rng.integers(0, 30, 10_000)
tab = {"k": rng.integers(0, 10, 10_000), "t": u, "x": x}
queries = {"k": rng.integers(0, 10, 1_000), "t": rng.uniform(0, 10_000, 1_000)}
df = None
if "spark" in sys.argv[1]:
    from windowagg.spark import spark_session
    spark = spark_session()
    df = spark.createDataFrame([(float(a), float(b)) for a, b in zip(u, x)], "t double, x double")
times = []
for _ in range(2):
    start = time.perf_counter()
    exec(sys.argv[1])
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def _run(code: str, cache: str) -> list[float]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def coldstart(quick: bool, report: Callable[[str], None]) -> list[Row]:
    rows: list[Row] = []
    cases = {k: v for k, v in CASES.items() if not quick or "spark" not in k}
    for name, code in cases.items():
        with tempfile.TemporaryDirectory(prefix="windowagg-cold-") as cache:
            cold, warm = _run(code, cache)
            cached, _ = _run(code, cache)
        report(f"{name:40s} cold {cold:7.2f} s  cached {cached:6.2f} s  warm {warm:6.3f} s")
        for kind, secs in (("cold", cold), ("cached", cached), ("warm", warm)):
            rows.append(Row("coldstart", name, "first call", "start", kind, secs, 0.0, 1, 0.0))
    return rows
