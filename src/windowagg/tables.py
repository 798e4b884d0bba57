"""Window aggregates and rolling frames on local tables: a pandas DataFrame, a Polars
DataFrame (Polars is imported only when one is passed), a pyarrow Table, or a dict of numpy
arrays, with the same vocabulary, output columns and rules as
:func:`windowagg.spark.window_aggregate` and :func:`windowagg.spark.rolling_aggregate` (one
engine: :mod:`windowagg.engine` runs here and inside every Spark worker)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypeAlias, TypeVar, cast, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from .engine.columns import ArrowColumn
from .engine.entries import names as names_of
from .engine.memory import engine_memory
from .engine.rolling.at import check_queries, compute_at
from .engine.rolling.plan import plan_rolling
from .engine.rolling.table import read_columns, rolling_columns
from .engine.stages import stage
from .engine.windows.plan import plan_windows
from .engine.windows.table import window_table
from .slicing import Window

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

__all__ = ["rolling_aggregate", "window_aggregate"]

#: any kind of table the functions take (``at=`` may be of another kind than the events)
AnyTable: TypeAlias = "pd.DataFrame | pl.DataFrame | pa.Table | Mapping[str, npt.ArrayLike]"
#: a table the functions take; the result is a table of the same kind
Table = TypeVar("Table", bound=AnyTable)
#: grouping or ordering columns: one name, several, or none
Columns: TypeAlias = str | Iterable[str] | None


def _polars(table: object) -> bool:
    """Whether ``table`` is a Polars DataFrame (without importing Polars for any other)."""
    return type(table).__module__.split(".")[0] == "polars" and hasattr(table, "to_arrow")


@stage("input")
def _to_arrow(table: object) -> tuple[pa.Table, str]:
    if isinstance(table, pa.Table):
        return table, "arrow"
    if _polars(table):
        return cast("pl.DataFrame", table).to_arrow(), "polars"
    if isinstance(table, dict):  # numpy's rule, as pandas': a NaN is missing (null)
        return _columns(table), "dict"
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is installed with pyarrow's extra
        pd = None
    if pd is not None and isinstance(table, pd.DataFrame):
        return _from_pandas(table), "pandas"
    raise TypeError(
        "windowagg's table functions take a pandas DataFrame, a Polars DataFrame, a pyarrow "
        f"Table or a dict of numpy arrays, got {type(table).__name__}"
    )


#: pandas frames of fewer rows are converted column by column (:func:`_from_pandas`)
BY_COLUMN_ROWS = 1 << 16


def _from_pandas(frame: pd.DataFrame) -> pa.Table:
    """A pandas frame as Arrow, as ``pyarrow.Table.from_pandas`` makes it (its index left
    out): a frame of fewer than :data:`BY_COLUMN_ROWS` rows whose every column is a NumPy
    array of numbers, truth values, times or durations under a string label of its own,
    column by column (NaN and NaT null, as there), without the pandas metadata and the
    threads ``from_pandas`` sets up (tens of microseconds for one row, hundreds from a
    thousand); else by it (its threads convert a large frame's columns faster)."""
    labels = frame.columns
    small = len(frame) < BY_COLUMN_ROWS
    if small and len(labels) and labels.is_unique and all(type(c) is str for c in labels):
        arrays = {}
        for c in labels:
            col = frame[c]
            if not (isinstance(col.dtype, np.dtype) and col.dtype.kind in "iufbmM"):
                break
            arrays[c] = pa.array(col.to_numpy(), from_pandas=True)
        else:
            return pa.table(arrays)
    return pa.Table.from_pandas(frame, preserve_index=False)


def _columns(table: Mapping[str, npt.ArrayLike]) -> pa.Table:
    """A dict of arrays as an Arrow table, a float NaN as null; columns of different lengths
    are refused by name."""
    if not all(isinstance(k, str) for k in table):
        raise TypeError("a dict of columns maps column names (strings) to arrays")
    arrays = {k: np.asarray(v) for k, v in table.items()}
    lengths = {k: len(v) if v.ndim else 0 for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{k!r}: {n}" for k, n in lengths.items())
        raise ValueError(f"the dict's columns have different lengths ({sizes})")
    return pa.table({k: pa.array(v, from_pandas=True) for k, v in arrays.items()})


@stage("output")
def _from_arrow(out: pa.Table, kind: str) -> AnyTable:
    """A result table in the kind of table the input was."""
    if kind == "arrow":
        return out
    if kind == "dict":
        return {n: c.to_numpy(zero_copy_only=False) for n, c in zip(out.column_names, out.columns)}
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(out)
    return out.to_pandas()


def window_aggregate(
    table: Table,
    *,
    time: str,
    windows: str | Window | Iterable[str | Window],
    aggs: Mapping[str, tuple],
    key: Columns = None,
) -> Table:
    """Windowed aggregates per key: one row per window that holds a row.

    Parameters
    ----------
    table : pandas.DataFrame, polars.DataFrame, pyarrow.Table or dict of numpy arrays
        The rows, in any order (pandas' NaN is missing, as in :func:`rolling_aggregate`).
    time : str
        Places rows in windows: timestamps, dates or numbers (then windows are in its unit).
    windows : spec strings or window objects
        ``"tumbling:1h"``, ``"sliding:60s/10s"``, ``"session:5m"``, ``"count-sliding:100/10"``.
    aggs : dict
        ``output name -> (aggregation, column)``: ``{"fare": ("sum", "fare"), "trips":
        ("count", "*"), "p95": ("quantile(q=0.95)", "fare")}``; an aggregation is a name, a
        name with parameters, or an aggregation object (the user's own too).
    key : str, list of str or None
        Grouping columns.

    Returns
    -------
    The same kind of table: the key columns, ``window`` (the canonical spec), ``window_start``,
    ``window_end``, then one column per entry, in Spark's types for the aggregations Spark has
    (:mod:`windowagg.engine.windows.plan`).

    Complexity
    ----------
    A sort by key and time, then per window spec O(rows + windows) to find every window's
    rows, and per entry O(rows + windows) (a FIFO sweep, exact prefix sums or a shared deque).
    """

    arrow, kind = _to_arrow(table)
    plan = plan_windows(arrow.schema, time=time, windows=windows, aggs=aggs, key=key)
    with engine_memory():
        out = window_table(plan, arrow.combine_chunks())
    return cast(Table, _from_arrow(out, kind))


@overload
def rolling_aggregate(
    table: Table,
    *,
    time: str,
    key: Columns = None,
    aggs: Mapping[str, tuple],
    order_by: Columns = None,
    at: None = None,
    at_time: str | None = None,
    at_key: Columns = None,
) -> Table: ...


@overload
def rolling_aggregate(
    table: AnyTable,
    *,
    time: str,
    key: Columns = None,
    aggs: Mapping[str, tuple],
    order_by: Columns = None,
    at: Table,
    at_time: str | None = None,
    at_key: Columns = None,
) -> Table: ...


def rolling_aggregate(
    table: AnyTable,
    *,
    time: str,
    key: Columns = None,
    aggs: Mapping[str, tuple],
    order_by: Columns = None,
    at: AnyTable | None = None,
    at_time: str | None = None,
    at_key: Columns = None,
) -> AnyTable:
    """Per-row window functions: every row of ``table``, plus one column per entry of ``aggs``;
    with ``at``, the same frames over ``table``'s rows placed at another table's rows
    (point-in-time features).

    Parameters
    ----------
    table : pandas.DataFrame, polars.DataFrame, pyarrow.Table or dict of numpy arrays
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
    at : a table of any of the kinds ``table`` may be, optional
        The query rows: each gets every entry over the rows of ``table`` with the same key
        whose time lies in the frame placed at the query's time, ``range:1d`` the events of
        ``[t - 1d, t]``, ``range:-1d,-1us`` the same without the query's own instant,
        ``rows:100`` the last 100 events at or before ``t``. A query whose key has no event,
        or whose key or time is null, gets an empty frame (count 0, the others null).
    at_time : str, optional
        The query table's time column (default: ``time``): of the same kind as ``time``.
    at_key : str, list of str or None
        The query table's key columns, matched to ``key`` in order (default: ``key``).

    Returns
    -------
    The same kind of table, rows in the input's order, with the new columns after the input's;
    with ``at``, the query table, whole and in its own order and kind, with the new columns.
    ``sum``, ``count``, ``mean``/``avg``, ``min``, ``max``, ``stddev``, ``first`` and ``last``
    follow Spark's rules and types (:mod:`windowagg.engine.rolling.plan`).

    Complexity
    ----------
    A sort by key and time, then O(rows) per entry whatever the frame's length (each row enters
    and leaves a FIFO window once); a frame's bounds are found once for all its entries.
    """

    arrow, kind = _to_arrow(table)
    plan = plan_rolling(
        arrow.schema, time=time, key=key, aggs=aggs, order_by=order_by, onto_events=at is None
    )
    if at is not None:
        queries, kind = _to_arrow(at)
        at_keys = plan.keys if at_key is None else names_of(at_key, "at_key")
        at_time = time if at_time is None else at_time
        check_queries(plan, arrow.schema, queries.schema, at_time, at_keys)
        with engine_memory():
            new = compute_at(plan, read_columns(plan, arrow), queries, at_time, at_keys)
        return _with_columns(at, queries, kind, [e.name for e in plan.entries], new)
    with engine_memory():
        names, new = rolling_columns(plan, arrow)
    return _with_columns(table, arrow, kind, names, new)


@stage("output")
def _with_columns(
    table: AnyTable, arrow: pa.Table, kind: str, names: list[str], new: list[ArrowColumn]
) -> AnyTable:
    """``table`` (``arrow`` as Arrow, of ``kind``) with the new columns after its own: a
    pandas or Polars table keeps its own columns as they are, and the new ones join it in
    one step (a column set at a time costs a single request hundreds of microseconds)."""
    if kind == "arrow":
        # the schema's names: the table's column_names costs a single request 1.5 us more
        return pa.Table.from_arrays([*arrow.columns, *new], names=[*arrow.schema.names, *names])
    if kind == "polars":
        import polars as pl

        frame = cast("pl.DataFrame", table)
        return frame.hstack([pl.Series(n, c) for n, c in zip(names, new)])
    if kind == "dict":
        out = dict(cast(Mapping[str, npt.ArrayLike], table))
        out.update({n: c.to_numpy(zero_copy_only=False) for n, c in zip(names, new)})
        return out
    import pandas as pd

    frame = cast("pd.DataFrame", table)
    if isinstance(frame.columns, pd.MultiIndex):  # each new column under its own label
        copy = frame.copy()
        for n, c in zip(names, new):
            copy[n] = _pandas_values(c)
        return copy
    values = {n: _pandas_values(c) for n, c in zip(names, new)}
    own = _own_arrays(frame, names)
    if own is not None:  # one frame of all the arrays: half the concatenation's cost or less
        for n, v in values.items():  # Arrow's own memory, read-only: the frame's own copy
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                values[n] = v.copy()
        out = pd.DataFrame(own | values, index=frame.index, copy=False)
        out.attrs = frame.attrs
        return out
    added = pd.DataFrame(values, index=frame.index)
    added.attrs = frame.attrs  # kept, as a copy of the frame keeps them
    return pd.concat([frame, added], axis=1)


def _own_arrays(frame: pd.DataFrame, names: list[str]) -> dict[str, np.ndarray] | None:
    """A copy of each of ``frame``'s columns as its NumPy array, where that is all the frame
    holds: columns of NumPy types under string labels of their own (not among ``names``)
    with no name over them, duplicate labels allowed; else None (the new columns are then
    joined to the frame by ``pd.concat``)."""
    labels = frame.columns
    if labels.name is not None or not labels.is_unique:
        return None
    if not frame.flags.allows_duplicate_labels or not all(type(c) is str for c in labels):
        return None
    if any(n in labels for n in names):
        return None
    own = {}
    for c in labels:
        col = frame[c]
        if not isinstance(col.dtype, np.dtype):
            return None
        own[c] = col.to_numpy(copy=True)
    return own


def _pandas_values(col: ArrowColumn) -> npt.ArrayLike:
    """A new column's values as pandas holds them (Arrow's conversion: a float null as NaN,
    a whole number or truth value column with a null as its own pandas type, ...): a float
    column, or a whole number or truth value column with no null, as NumPy's array of it
    (what that conversion gives, without its fixed cost)."""
    plain = pa.types.is_integer(col.type) or pa.types.is_boolean(col.type)
    if pa.types.is_floating(col.type) or (plain and not col.null_count):
        return col.to_numpy(zero_copy_only=False)
    return pa.chunked_array([col]).to_pandas().array
