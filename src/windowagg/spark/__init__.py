"""windowagg on Apache Spark (api.md section 6): ``window_aggregate`` runs the window operator
per key, in batch (``applyInPandas``) and in Structured Streaming (``applyInPandasWithState``,
each key's operator one binary state value). The only package that imports pyspark, lazily."""

from __future__ import annotations

from typing import Any

from .session import SparkUnavailable, require_pyspark, spark_session

__all__ = ["SparkUnavailable", "rolling_aggregate", "spark_session", "window_aggregate"]


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


def rolling_aggregate(df: Any, *, time: str, key: Any = None, aggs: dict,
                      order_by: Any = None) -> Any:  # fmt: skip
    """Per-row window functions: ``df`` with every row and column, plus one column per entry
    of ``aggs``, a dict ``output name -> (aggregation, column, frame)``.

    The same vocabulary, rules and types as :func:`windowagg.rolling_aggregate` on local
    tables; the values equal Spark's
    ``F.<agg>(column).over(Window.partitionBy(key).orderBy(F.unix_micros(time))
    .rangeBetween(start, end))`` (or ``rowsBetween``) for the aggregations Spark also has.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A batch DataFrame.
    time : str
        Orders rows and measures range frames: a timestamp, a date or a number column.
    key : str, list of str or None
        ``PARTITION BY``: each key's rows have their own frames (without a key, all rows are
        one partition, as in Spark).
    aggs : dict
        ``{"sum_1h": ("sum", "amount", "range:1h"), "n": ("count", "*", "rows:100")}``;
        frames ``range:<start>,<end>`` / ``rows:<start>,<end>`` with signed bounds (``-1h``,
        ``0``, ``+30m``, ``unbounded``; numbers in the time column's unit when it is numeric),
        shorthands ``range:1h`` and ``rows:100``.
    order_by : str, list of str or None
        Orders rows with equal times (rows frames, ``first``, ``last``).

    Returns
    -------
    pyspark.sql.DataFrame
        Every input row, the input's columns, then the new ones.

    Complexity
    ----------
    A shuffle by key and a sort within partitions, then O(rows) per entry whatever the frame
    (Spark's built-in evaluation: O(rows x rows per frame)); memory per Python worker bounded
    by the frames, not by a key's row count.
    """
    require_pyspark()
    from .rolling import run_rolling

    return run_rolling(df, time=time, key=key, aggs=aggs, order_by=order_by)
