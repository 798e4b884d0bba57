"""windowagg on Apache Spark (api.md section 6): ``window_aggregate`` runs the window operator
per key, in batch (``applyInPandas``) and in Structured Streaming (``applyInPandasWithState``,
each key's operator one binary state value). The only package that imports pyspark, lazily."""

from __future__ import annotations

from typing import Any

from .session import SparkUnavailable, require_pyspark, spark_session

__all__ = ["SparkUnavailable", "spark_session", "window_aggregate"]


def window_aggregate(df: Any, *, time: str, value: str, windows: Any, agg: Any, key: Any = None,
                     allowed_lateness: Any = 0) -> Any:  # fmt: skip
    """Windowed aggregates per key.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Batch or streaming (declared with ``withWatermark(time, delay)``).
    time : str
        Event time: a timestamp column, or numbers (then windows are in the same unit).
    value : str
        The numeric column to aggregate.
    windows : window objects or spec strings
        ``"tumbling:1m"``, ``"sliding:30s/5s"``, ``"session:90s"``, ``"count-sliding:100/10"``,
        or ``Tumbling(60)`` etc. (sizes in seconds for a timestamp column).
    agg : str or aggregation
        A built-in with one number per window (sum, count, mean, min, max, ...).
    key : str, list of str or None
        Grouping columns.
    allowed_lateness : number
        Streaming: late events this far behind the watermark (seconds for timestamps) update
        windows already emitted.

    Returns
    -------
    pyspark.sql.DataFrame
        Key columns, ``window`` (canonical spec), ``window_start``, ``window_end`` (the time
        column's type), ``value``; streaming adds ``update`` and reports dropped events (see the
        README).

    Complexity
    ----------
    Per key, O(events) slicing plus O(log slices) per window (the operator's cost model);
    tumbling and sliding windows over built-in numeric aggregations cross into Python as one
    row per (key, slice).
    """
    require_pyspark()
    from .plan import make_plan

    plan = make_plan(df, time, value, windows, agg, key, allowed_lateness)
    if df.isStreaming:
        from .stream import run_stream

        return run_stream(df, plan)
    from .batch import run_batch

    return run_batch(df, plan)
