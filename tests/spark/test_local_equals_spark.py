"""The local table functions equal ``windowagg.spark``'s on the same rows, value and type:
every window kind and rolling frame, several keys with a null key, ties and out-of-order times,
nulls and NaN in values, int, double and decimal values, timestamp and numeric times; and a
pandas DataFrame, a Polars DataFrame and an Arrow table give the same answers."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pytest

import windowagg
from tests.aggs import Concat
from windowagg import spark as wspark

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)
SCHEMA = "k int, g string, ts timestamp, t double, i int, x double, d decimal(12,2)"
ARROW = pa.schema(
    [
        ("k", pa.int32()),
        ("g", pa.string()),
        ("ts", pa.timestamp("us")),
        ("t", pa.float64()),
        ("i", pa.int32()),
        ("x", pa.float64()),
        ("d", pa.decimal128(12, 2)),
    ]
)


def rows(seed: int, n: int = 400, distinct: bool = False) -> list[tuple]:
    """Random rows in random order; ``distinct``: no two rows of a key share a time (count
    windows, first and last: the order of ties is Spark's own choice)."""
    rng = random.Random(seed)
    out, used = [], set()
    for _ in range(n):
        k = None if rng.random() < 0.05 else rng.randrange(3)
        g = rng.choice(["a", "b"])
        ms = (
            rng.randrange(0, 900_000)
            if distinct
            else rng.choice([rng.randrange(0, 900) * 1000, 300_000])
        )
        if distinct and (k, g, ms) in used:
            continue
        used.add((k, g, ms))
        r = rng.random()
        x = None if r < 0.08 else math.nan if r < 0.11 else float(rng.randrange(-40, 90))
        d = None if rng.random() < 0.1 else Decimal(rng.randrange(-(10**6), 10**6)).scaleb(-2)
        i = None if rng.random() < 0.05 else rng.randrange(-100, 100)
        out.append((k, g, T0 + dt.timedelta(milliseconds=ms), ms / 1000, i, x, d))
    return out


def arrow(data: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in data], schema=ARROW)


def norm(v):
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else round(v, 6)
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None)
    return v


def same(local: pa.Table, theirs, keys: list[str]) -> None:
    """Equal rows (by key, window, start) and equal Spark types, column by column."""
    from pyspark.sql.pandas.types import from_arrow_type

    assert local.column_names == theirs.columns
    for f in theirs.schema.fields:
        assert (
            from_arrow_type(local.schema.field(f.name).type, prefer_timestamp_ntz=False)
            == f.dataType
        ), f.name
    got = sorted((tuple(norm(v) for v in r.values()) for r in local.to_pylist()), key=repr)
    want = sorted((tuple(norm(v) for v in r) for r in theirs.collect()), key=repr)
    assert len(got) == len(want) and got
    assert got == want


SQL = {
    "n": ("count", "*"),
    "nx": ("count", "x"),
    "sx": ("sum", "x"),
    "si": ("sum", "i"),
    "sd": ("sum", "d"),
    "ax": ("mean", "x"),
    "ad": ("mean", "d"),
    "hx": ("max", "x"),
    "li": ("min", "i"),
    "md": ("max", "d"),
}
ROWS = {"dev": ("stddev", "x"), "med": ("median", "x")}


@pytest.mark.parametrize("time", ["ts", "t"])
@pytest.mark.parametrize(
    "windows",
    [["tumbling:60s"], ["sliding:120s/30s"], ["session:20s"], ["tumbling:60s", "session:20s"]],
)
@pytest.mark.parametrize("extra", [{}, ROWS], ids=["partials", "rows"])
def test_windows_equal_spark(spark, time, windows, extra) -> None:
    data = rows(5)
    if time == "t":  # seconds as numbers: windows in the time's unit
        windows = [w.split(":")[0] + ":" + w.split(":")[1].replace("s", "") for w in windows]
    aggs = SQL | extra
    kw = {"time": time, "windows": windows, "aggs": aggs, "key": ["k", "g"]}
    local = windowagg.window_aggregate(arrow(data), **kw)
    theirs = wspark.window_aggregate(spark.createDataFrame(data, SCHEMA), **kw)
    same(local, theirs, ["k", "g"])


@pytest.mark.parametrize("windows", [["count-tumbling:7"], ["count-sliding:10/4"]])
def test_count_windows_and_order_equal_spark(spark, windows) -> None:
    data = rows(6, distinct=True)
    aggs = SQL | {"f": ("first", "x"), "l": ("last", "i"), "c": (Concat(), "i")}
    kw = {"time": "ts", "windows": windows, "aggs": aggs, "key": ["k", "g"]}
    local = windowagg.window_aggregate(arrow(data), **kw)
    theirs = wspark.window_aggregate(spark.createDataFrame(data, SCHEMA), **kw)
    same(local, theirs, ["k", "g"])


@pytest.mark.parametrize(
    "frame", ["range:30s", "range:-10s,+20s", "rows:5", "rows:-3,+2", "range:unbounded,0"]
)
def test_rolling_equals_spark(spark, frame) -> None:
    data = rows(7, distinct=frame.startswith("rows"))
    aggs = {name: (a, c, frame) for name, (a, c) in (SQL | {"dev": ("stddev", "x")}).items()}
    kw = {"time": "ts", "aggs": aggs, "key": ["k", "g"]}
    local = windowagg.rolling_aggregate(arrow(data), **kw)
    theirs = wspark.rolling_aggregate(spark.createDataFrame(data, SCHEMA), **kw)
    same(local, theirs, ["k", "g"])


def test_pandas_polars_and_arrow_give_the_same_answers() -> None:
    """The same rows as an Arrow table, a Polars DataFrame and a pandas DataFrame without
    missing floats (pandas' NaN is missing): equal results, each in its own kind of table."""
    data = [(*r[:5], 0.5 if r[5] is None or r[5] != r[5] else r[5], r[6]) for r in rows(8)]
    table = arrow(data)
    kw = {
        "time": "ts",
        "windows": ["sliding:120s/30s", "session:20s"],
        "key": ["k", "g"],
        "aggs": SQL | ROWS,
    }
    want = windowagg.window_aggregate(table, **kw)
    from_polars = windowagg.window_aggregate(pl.from_arrow(table), **kw)
    from_pandas = windowagg.window_aggregate(table.to_pandas(), **kw)
    assert isinstance(from_polars, pl.DataFrame)
    assert from_polars.to_arrow().to_pylist() == want.to_pylist()
    assert from_pandas.to_dict("list").keys() == set(want.column_names)
    assert pa.Table.from_pandas(from_pandas, preserve_index=False).to_pylist() == want.to_pylist()
    frames = {"s": ("sum", "x", "range:30s"), "m": ("max", "d", "rows:3")}
    rolled = windowagg.rolling_aggregate(pl.from_arrow(table), time="ts", key="k", aggs=frames)
    assert isinstance(rolled, pl.DataFrame)
    assert (
        rolled.to_arrow().to_pylist()
        == windowagg.rolling_aggregate(table, time="ts", key="k", aggs=frames).to_pylist()
    )
