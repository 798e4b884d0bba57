"""rolling_aggregate(events, ..., at=queries) on Spark: range frames equal Spark's own range join
and groupBy (value and type), rows frames and every frame equal the local engine's answer
(itself held to a nested loop in tests/engine/test_rolling_at.py)."""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest

import windowagg
from tests.engine.test_rolling_at import T0, queries
from tests.engine.test_rolling_table import random_rows, same
from windowagg import spark as wspark

pytest.importorskip("pyspark")


def tables() -> tuple[pa.Table, pa.Table]:
    events = random_rows(31, n=300)
    ev = pa.table(
        {
            "k": pa.array([r["k"] for r in events], pa.int64()),
            "ts": pa.array(
                [None if r["t"] is None else T0 + dt.timedelta(seconds=r["t"]) for r in events],
                pa.timestamp("us"),
            ),
            "id": pa.array([r["id"] for r in events], pa.int64()),
            "x": pa.array([r["x"] for r in events], pa.float64(), from_pandas=False),
            "i": pa.array([r["i"] for r in events], pa.int64()),
        }
    )
    qrows = queries(31, n=120)
    qs = pa.table(
        {
            "qid": pa.array([q["qid"] for q in qrows], pa.int64()),
            "card": pa.array([q["key"] for q in qrows], pa.int64()),
            "when": pa.array(
                [
                    None if q["when"] is None else T0 + dt.timedelta(seconds=q["when"])
                    for q in qrows
                ],
                pa.timestamp("us"),
            ),
        }
    )
    return ev, qs


def frames_of(spark, ev: pa.Table, qs: pa.Table):
    events = spark.createDataFrame(
        ev.to_pylist(), "k long, ts timestamp, id long, x double, i long"
    )
    queries_ = spark.createDataFrame(qs.to_pylist(), "qid long, card long, when timestamp")
    return events, queries_


@pytest.mark.parametrize(
    "text,lo,hi",
    [("range:6s", "6 SECONDS", "0 SECONDS"), ("range:-6s,-1us", "6 SECONDS", "-1 MICROSECONDS")],
)
def test_range_frames_equal_sparks_range_join(spark, text, lo, hi) -> None:
    from pyspark.sql import functions as F

    ev, qs = tables()
    events, queries_ = frames_of(spark, ev, qs)
    aggs = {
        "s": ("sum", "i", text),
        "n": ("count", "*", text),
        "nx": ("count", "x", text),
        "hi": ("max", "x", text),
        "avg": ("avg", "i", text),
    }
    got = wspark.rolling_aggregate(
        events, time="ts", key="k", aggs=aggs, at=queries_, at_time="when", at_key="card"
    )
    e, q = events.alias("e"), queries_.alias("q")
    cond = (
        (F.col("e.k") == F.col("q.card"))
        & (F.col("e.ts") >= F.col("q.when") - F.expr(f"INTERVAL {lo}"))
        & (F.col("e.ts") <= F.col("q.when") + F.expr(f"INTERVAL {hi}"))
    )
    want = (
        q.join(e, cond, "left")
        .groupBy("q.qid")
        .agg(
            F.sum("e.i").alias("s"),
            F.count("e.id").alias("n"),
            F.count("e.x").alias("nx"),
            F.max("e.x").alias("hi"),
            F.avg("e.i").alias("avg"),
        )
    )
    for name in aggs:
        assert got.schema[name].dataType == want.schema[name].dataType, name
    assert got.columns == ["qid", "card", "when", *aggs]
    rows = {r.qid: r for r in got.collect()}
    expected = {r.qid: r for r in want.collect()}
    assert rows.keys() == expected.keys() and len(rows) == qs.num_rows
    for qid, r in expected.items():
        for name in aggs:
            assert same(rows[qid][name], r[name]), (qid, name, rows[qid][name], r[name])


def test_every_frame_equals_the_local_engine(spark) -> None:
    ev, qs = tables()
    events, queries_ = frames_of(spark, ev, qs)
    aggs = {
        "s4": ("sum", "i", "rows:4"),
        "m": ("max", "x", "rows:-2,+2"),
        "f": ("first", "x", "range:-4s,+3s"),
        "sd": ("stddev", "x", "range:unbounded,0"),
        "med": ("median", "i", "range:10s"),
    }
    kw = {
        "time": "ts",
        "key": "k",
        "aggs": aggs,
        "order_by": "id",
        "at_time": "when",
        "at_key": "card",
    }
    got = {r.qid: r for r in wspark.rolling_aggregate(events, at=queries_, **kw).collect()}
    local = windowagg.rolling_aggregate(ev, at=qs, **kw).to_pylist()
    assert len(got) == len(local)
    for row in local:
        for name in aggs:
            want, have = row[name], got[row["qid"]][name]
            if isinstance(want, float) and math.isnan(want):
                assert isinstance(have, float) and math.isnan(have), (row, name)
            else:
                assert have == pytest.approx(want) if want is not None else have is None, (
                    row,
                    name,
                )
