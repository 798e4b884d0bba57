"""``windowagg run``: windows or rolling frames of the user's files (docs/guides/cli.md).

Reads CSV (with a header), JSON lines or Parquet (a file or a directory of them), checks every
argument before any work (:mod:`windowagg.run_args`), runs ``window_aggregate`` (``--window``)
or ``rolling_aggregate`` (``--rolling NAME=AGG:COLUMN:FRAME``: every input row with the new
columns) on Spark (:mod:`windowagg.pipeline_spark`, local mode or ``--master``) or, with
``--engine local``, the same engine without Spark (:mod:`windowagg.pipeline_local`), and
writes Parquet or CSV into a temporary directory beside the output, renamed into place only
when complete: a failed run leaves nothing at the output path.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import pipeline_local, pipeline_spark
from .run_args import RunArgs, UserError, check

__all__ = ["RunArgs", "UserError", "run"]


def run(args: RunArgs, log: Callable[[str], None] | None = None) -> dict:
    """The pipeline; returns a small summary. Raises UserError for the user's mistakes."""
    log = log or (lambda msg: print(msg, flush=True))  # progress: stdout; errors: stderr
    src, fmt = check(args)
    if args.format not in ("parquet", "csv"):
        raise UserError(f"--format must be parquet or csv, got {args.format!r}")
    start = time.perf_counter()
    engine = pipeline_local if args.engine == "local" else pipeline_spark
    rows = engine.compute(args, src, fmt, log)
    return {
        "rows": rows,
        "seconds": time.perf_counter() - start,
        "kind": "rows" if args.rolling else "window rows",
    }
