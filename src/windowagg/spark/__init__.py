"""windowagg on Apache Spark: ``window_aggregate`` and ``rolling_aggregate`` run the local
engine (:mod:`windowagg.engine`) inside Spark's Python workers, in batch (``mapInArrow``, after
Spark SQL's per-slice partials where they serve) and in Structured Streaming
(``applyInPandasWithState``, each key's recent rows one binary state value). The only package
that imports pyspark, lazily."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..aggregations import AggLike
from ..engine.entries import names
from .batch import run_batch
from .plan import make_plan, make_rolling_plan
from .rolling import run_rolling
from .rolling_at import run_at
from .session import SparkUnavailable, require_pyspark, spark_session
from .stream import run_stream

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..slicing import Window

__all__ = ["SparkUnavailable", "rolling_aggregate", "spark_session", "window_aggregate"]


def window_aggregate(
    df: DataFrame,
    *,
    time: str,
    windows: str | Window | Iterable[str | Window],
    aggs: dict | None = None,
    value: str | None = None,
    agg: AggLike | None = None,
    key: str | Iterable[str] | None = None,
    allowed_lateness: float = 0,
) -> DataFrame:
    """Windowed aggregates per key, several in one pass: what
    ``df.groupBy(key, F.window(time, ...)).agg(...)`` computes, for every window type.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Batch or streaming (declared with ``withWatermark(time, delay)``).
    time : str
        Event time: a timestamp or date column, or numbers (then windows are in the same
        unit).
    windows : window objects or spec strings
        ``"tumbling:1m"``, ``"sliding:30s/5s"``, ``"session:90s"``, ``"count-sliding:100/10"``,
        or ``Tumbling(60)`` etc. (sizes in seconds for a timestamp column).
    aggs : dict
        ``output name -> (aggregation, column)``: ``{"fare": ("sum", "fare_amount"),
        "trips": ("count", "*"), "p95": ("quantile(q=0.95)", "fare_amount")}``. An
        aggregation is a name (Spark's own names too: ``avg``, ``stddev_samp``,
        ``approx_count_distinct``...), a name with parameters, or an aggregation object, the
        user's own included; ``count`` takes ``None`` or ``"*"`` to count rows.
    value, agg : str, and a name or aggregation
        The one-aggregation shorthand, ``aggs={"value": (agg, value)}``.
    key : str, list of str or None
        Grouping columns.
    allowed_lateness : number
        Streaming: late events this far behind the watermark (seconds for timestamps) update
        windows already emitted.

    Returns
    -------
    pyspark.sql.DataFrame
        Key columns, ``window`` (canonical spec), ``window_start``, ``window_end`` (timestamps,
        or doubles for a numeric time), then one column per entry, in the given order. Sum,
        count, mean/avg, min, max, stddev, first and last have Spark's values and types (count
        long, sum of ints long, of ``decimal(p, s)`` ``decimal(p + 10, s)``, exactly; min, max,
        first and last the column's type); streaming adds ``update`` and reports dropped
        events (see docs/guides/streaming.md).

    Complexity
    ----------
    Sum, count, mean, min and max over tumbling and sliding windows: one Spark SQL aggregate
    per (key, slice), then O(slices + windows) per entry in Python. Everything else: a shuffle
    by key and a sort within partitions, then O(rows + windows) per entry (a FIFO sweep over
    each key's rows).
    """
    require_pyspark()

    if (value is None) != (agg is None) or (aggs is None) == (agg is None):
        raise TypeError(
            "give aggs={name: (aggregation, column), ...}, or value= with agg= for one aggregation"
        )
    if aggs is None:
        aggs = {"value": (agg, value)}
    plan = make_plan(
        df, time=time, windows=windows, aggs=aggs, key=key, allowed_lateness=allowed_lateness
    )
    if df.isStreaming:
        return run_stream(df, plan)

    return run_batch(df, plan)


def rolling_aggregate(
    df: DataFrame,
    *,
    time: str,
    key: str | Iterable[str] | None = None,
    aggs: dict,
    order_by: str | Iterable[str] | None = None,
    at: DataFrame | None = None,
    at_time: str | None = None,
    at_key: str | Iterable[str] | None = None,
) -> DataFrame:
    """Per-row window functions: ``df`` with every row and column, plus one column per entry
    of ``aggs``, a dict ``output name -> (aggregation, column, frame)``; with ``at``, the same
    frames over ``df``'s rows placed at the rows of another DataFrame (point-in-time
    features).

    The same vocabulary, rules and types as :func:`windowagg.rolling_aggregate` on local
    tables; the values equal Spark's
    ``F.<agg>(column).over(Window.partitionBy(key).orderBy(F.unix_micros(time))
    .rangeBetween(start, end))`` (or ``rowsBetween``) for the aggregations Spark also has.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A batch DataFrame, or a streaming one with a watermark on ``time``.
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
    at : pyspark.sql.DataFrame, optional
        The query rows: each gets every entry over the rows of ``df`` with the same key
        whose time lies in the frame placed at the query's time
        (:func:`windowagg.rolling_aggregate` says what ``range`` and ``rows`` mean there). A
        batch DataFrame where ``df`` is one; where ``df`` is a stream, a stream with a
        watermark on ``at_time``: each query row is emitted once (append mode), when the
        watermark has passed the end of its frames, with the values the batch call gives on
        the same rows (where no event came later than the watermark); the state per key
        holds the events its open queries and later ones can reach. A stream of queries
        against a batch ``df``: each query answered in its own micro-batch (no watermark
        needed), the events kept as the initial state of ``transformWithStateInPandas``
        (the RocksDB state store; read when the query first starts).
    at_time : str, optional
        The query DataFrame's time column (default: ``time``).
    at_key : str, list of str or None
        The query DataFrame's key columns, matched to ``key`` in order (default: ``key``).

    Returns
    -------
    pyspark.sql.DataFrame
        Every input row, the input's columns, then the new ones; with ``at``, every query row
        with its columns, then the new ones.

    Complexity
    ----------
    A shuffle by key and a sort within partitions, then O(rows) per entry whatever the frame
    (Spark's built-in evaluation: O(rows x rows per frame)); memory per Python worker bounded
    by the frames, not by a key's row count.
    """
    require_pyspark()

    plan = make_rolling_plan(
        df, time=time, key=key, aggs=aggs, order_by=order_by, onto_events=at is None
    )
    if at is not None:
        at_keys = plan.keys if at_key is None else names(at_key, "at_key")
        return run_at(df, at, plan, time if at_time is None else at_time, at_keys)
    return run_rolling(df, plan)
