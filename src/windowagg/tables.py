"""Rolling frames on local tables: a pandas DataFrame, a pyarrow Table, or a dict of numpy
arrays, with the same vocabulary, output columns and rules as
:func:`windowagg.spark.rolling_aggregate` (one engine: :mod:`windowagg.engine.rolling_table`
runs here and inside every Spark worker)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .engine.rolling_plan import plan_rolling
from .engine.rolling_table import compute, sort_order

__all__ = ["rolling_aggregate"]


def _to_arrow(table: Any) -> tuple[Any, str]:
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table, "arrow"
    if isinstance(table, dict):
        return pa.table({k: np.asarray(v) for k, v in table.items()}), "dict"
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is installed with pyarrow's extra
        pd = None
    if pd is not None and isinstance(table, pd.DataFrame):
        return pa.Table.from_pandas(table, preserve_index=False), "pandas"
    raise TypeError("rolling_aggregate takes a pandas DataFrame, a pyarrow Table or a dict of "
                    f"numpy arrays, got {type(table).__name__}")  # fmt: skip


def rolling_aggregate(table: Any, *, time: str, key: Any = None, aggs: dict,
                      order_by: Any = None) -> Any:  # fmt: skip
    """Per-row window functions: every row of ``table``, plus one column per entry of ``aggs``.

    Parameters
    ----------
    table : pandas.DataFrame, pyarrow.Table or dict of numpy arrays
        The rows, in any order; in pandas, NaN in a float column is missing (pandas' own
        convention), in Arrow and numpy it is a value.
    time : str
        The column that orders rows and measures range frames: timestamps, dates or numbers.
    key : str, list of str or None
        Each key's rows have their own frames (SQL's ``PARTITION BY``).
    aggs : dict
        ``output name -> (aggregation, column, frame)``: ``("sum", "amount", "range:1h")``;
        ``count`` may take ``None`` or ``"*"`` as its column (rows). Frames: ``range:<start>,
        <end>`` and ``rows:<start>,<end>`` (:mod:`windowagg.frames`).
    order_by : str, list of str or None
        Orders rows with equal times (rows frames, ``first`` and ``last``).

    Returns
    -------
    The same kind of table, rows in the input's order, with the new columns after the input's.
    ``sum``, ``count``, ``mean``/``avg``, ``min``, ``max``, ``stddev``, ``first`` and ``last``
    follow Spark's rules and types (:mod:`windowagg.engine.rolling_plan`).

    Complexity
    ----------
    A sort by key and time, then O(rows) per entry whatever the frame's length (each row enters
    and leaves a FIFO window once); a frame's bounds are found once for all its entries.
    """
    arrow, kind = _to_arrow(table)
    plan = plan_rolling(arrow.schema, time=time, key=key, aggs=aggs, order_by=order_by)
    import pyarrow as pa

    order = sort_order(plan, arrow)
    columns = compute(plan, (arrow if order is None else arrow.take(order)).combine_chunks())
    if order is None:
        new = columns
    else:  # back to the input's order
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        new = [c.take(pa.array(back)) for c in columns]
    names = [e.name for e in plan.entries]
    if kind == "arrow":
        return pa.Table.from_arrays([*arrow.columns, *new], names=[*arrow.column_names, *names])
    if kind == "dict":
        out = dict(table)
        out.update({n: c.to_numpy(zero_copy_only=False) for n, c in zip(names, new)})
        return out
    out = table.copy()
    for n, c in zip(names, new):
        out[n] = pa.chunked_array([c]).to_pandas().set_axis(table.index)
    return out
