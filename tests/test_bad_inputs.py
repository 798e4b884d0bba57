"""Bad inputs a new user gives, each refused before any work with an error that names the
argument, or answered as SQL answers: a key that is not a column name, a dict of columns of
different lengths, a key column holding only nulls (one partition, as Spark's
``partitionBy`` groups nulls), against a nested loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import windowagg


@pytest.mark.parametrize("key", [5, 2.5, object()])
def test_a_key_that_is_no_column_name(key) -> None:
    table = pa.table({"t": [1, 2], "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="key must be a column name or a list of them, got"):
        windowagg.rolling_aggregate(table, time="t", key=key, aggs={"s": ("sum", "x", "rows:2")})
    with pytest.raises(TypeError, match="key must be a column name or a list of them, got"):
        windowagg.window_aggregate(
            table, time="t", key=key, windows="tumbling:2", aggs={"s": ("sum", "x")}
        )


def test_a_dict_of_columns_of_different_lengths() -> None:
    ragged = {"t": np.array([1, 2, 3]), "x": np.array([1.0, 2.0])}
    match = r"the dict's columns have different lengths \('t': 3, 'x': 2\)"
    with pytest.raises(ValueError, match=match):
        windowagg.rolling_aggregate(ragged, time="t", aggs={"s": ("sum", "x", "rows:2")})
    with pytest.raises(ValueError, match=match):
        windowagg.window_aggregate(ragged, time="t", windows="tumbling:2", aggs={"s": ("sum", "x")})


def _null_keyed(kind: str):
    t, x = [3, 1, 2, 5], [10.0, 20.0, 40.0, 80.0]
    if kind == "arrow":
        return pa.table({"t": t, "k": pa.array([None] * 4, pa.null()), "x": x})
    if kind == "polars":
        return pl.DataFrame({"t": t, "k": [None] * 4, "x": x})
    if kind == "pandas":
        return pd.DataFrame({"t": t, "k": [None] * 4, "x": x})
    return {"t": np.array(t), "k": np.array([None] * 4), "x": np.array(x)}


@pytest.mark.parametrize("kind", ["arrow", "polars", "pandas", "dict"])
def test_a_key_of_only_nulls_is_one_partition(kind) -> None:
    table = _null_keyed(kind)
    out = windowagg.rolling_aggregate(
        table, time="t", key="k", order_by="x", aggs={"s": ("sum", "x", "rows:2")}
    )
    got = list(out["s"]) if kind != "arrow" else out.column("s").to_pylist()
    t, x = [3, 1, 2, 5], [10.0, 20.0, 40.0, 80.0]
    by_time = sorted(range(4), key=lambda i: t[i])
    want = {i: sum(x[j] for j in by_time[max(0, p - 1) : p + 1]) for p, i in enumerate(by_time)}
    assert [float(v) for v in got] == [want[i] for i in range(4)]
    w = windowagg.window_aggregate(
        table, time="t", key="k", windows="tumbling:10", aggs={"s": ("sum", "x")}
    )
    total = list(w["s"]) if kind != "arrow" else w.column("s").to_pylist()
    assert [float(v) for v in total] == [sum(x)]


def _as(table: pa.Table, kind: str):
    return {"arrow": table, "polars": pl.from_arrow(table), "pandas": table.to_pandas()}[kind]


@pytest.mark.parametrize("kind", ["arrow", "polars", "pandas"])
def test_an_integer_sum_past_a_long_raises_on_every_path(kind) -> None:
    """Spark's ANSI rule (its default) on every local path: rolling frames, point-in-time
    frames and every kind of window."""
    from windowagg.errors import ArithmeticOverflowError

    arrow = pa.table({"t": [1, 2, 3], "x": pa.array([2**62] * 3, pa.int64())})
    table, queries = _as(arrow, kind), _as(arrow.select(["t"]), kind)
    sums = {"s": ("sum", "x")}
    with pytest.raises(ArithmeticOverflowError, match="beyond a long's range"):
        windowagg.rolling_aggregate(table, time="t", aggs={"s": ("sum", "x", "rows:3")})
    with pytest.raises(ArithmeticOverflowError, match="beyond a long's range"):
        windowagg.rolling_aggregate(
            table, time="t", aggs={"s": ("sum", "x", "range:5")}, at=queries
        )
    for w in ["tumbling:10", "sliding:10/5", "session:5", "count-tumbling:3"]:
        with pytest.raises(ArithmeticOverflowError, match="beyond a long's range"):
            windowagg.window_aggregate(table, time="t", windows=w, aggs=sums)
