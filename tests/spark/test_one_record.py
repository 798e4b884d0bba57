"""Adding an aggregation is one record (CONTRIBUTING.md, "Adding an aggregation"): a toy
aggregation, its class with its ``Facts`` and nothing else, registered under its name, runs by
that name on local windows, local rolling frames, Spark windows and Spark rolling frames, with
the value and type of its brute force."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyarrow as pa
import pytest

import windowagg
from tests.toys import Drift
from windowagg import spark as wspark
from windowagg.aggregations import AGGREGATIONS

pytest.importorskip("pyspark")

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)


@pytest.fixture
def drift(monkeypatch):
    monkeypatch.setitem(AGGREGATIONS, "drift", Drift)
    return "drift"


def _rows(n: int = 300, seed: int = 5) -> list[dict]:
    rng = np.random.default_rng(seed)
    seconds = rng.permutation(n * 3)[:n]  # distinct times, in random order
    return [
        {"k": int(k), "ts": T0 + dt.timedelta(seconds=int(s)), "v": float(v)}
        for k, s, v in zip(rng.integers(0, 4, n), seconds, rng.integers(-50, 50, n))
    ]


def _windows_brute(rows: list[dict]) -> dict:
    """(key, window start) -> last minus first of the key's values in each 60 s window."""
    out: dict = {}
    for r in sorted(rows, key=lambda r: r["ts"]):
        start = T0 + dt.timedelta(seconds=(r["ts"] - T0).total_seconds() // 60 * 60)
        first, _ = out.get((r["k"], start), (r["v"], None))
        out[(r["k"], start)] = (first, r["v"])
    return {k: last - first for k, (first, last) in out.items()}


def _rolling_brute(rows: list[dict]) -> dict:
    """(key, time) -> last minus first over the key's last three rows up to that time."""
    out = {}
    for k in {r["k"] for r in rows}:
        mine = sorted((r for r in rows if r["k"] == k), key=lambda r: r["ts"])
        for i, r in enumerate(mine):
            frame = mine[max(0, i - 2) : i + 1]
            out[(k, r["ts"])] = frame[-1]["v"] - frame[0]["v"]
    return out


def test_by_name_on_local_tables(drift) -> None:
    rows = _rows()
    table = pa.Table.from_pylist(rows)
    w = windowagg.window_aggregate(
        table, time="ts", key="k", windows="tumbling:60s", aggs={"d": (drift, "v")}
    )
    assert w.schema.field("d").type == pa.float64()
    got = {(r["k"], r["window_start"]): r["d"] for r in w.to_pylist()}
    assert got == pytest.approx(_windows_brute(rows))
    r = windowagg.rolling_aggregate(table, time="ts", key="k", aggs={"d": (drift, "v", "rows:3")})
    assert r.schema.field("d").type == pa.float64()
    got = {(x["k"], x["ts"]): x["d"] for x in r.to_pylist()}
    assert got == pytest.approx(_rolling_brute(rows))


def test_by_name_on_spark(drift, spark) -> None:
    from pyspark.sql.types import DoubleType

    rows = _rows()
    df = spark.createDataFrame(rows, "k long, ts timestamp, v double")
    w = wspark.window_aggregate(
        df, time="ts", key="k", windows="tumbling:60s", aggs={"d": (drift, "v")}
    )
    assert w.schema["d"].dataType == DoubleType()
    got = {(r.k, r.window_start): r.d for r in w.collect()}
    assert got == pytest.approx(_windows_brute(rows))
    r = wspark.rolling_aggregate(df, time="ts", key="k", aggs={"d": (drift, "v", "rows:3")})
    assert r.schema["d"].dataType == DoubleType()
    got = {(x.k, x.ts): x.d for x in r.collect()}
    want = _rolling_brute(rows)
    assert got.keys() == want.keys()
    assert all(math.isclose(got[k], want[k]) for k in want)
