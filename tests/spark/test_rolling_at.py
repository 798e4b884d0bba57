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


def test_edges_equal_the_definition(spark) -> None:
    """Events without a time (in no frame), keys of other types compared by value (1.5 and
    257 match no tinyint key), an output named as an events column, a column holding only
    nulls and no events at all: each against the nested loop of tests/engine/test_at_edges."""
    from tests.engine.test_at_edges import TIMELESS, definition, in_frame

    events = [e | {"y": None} for e in TIMELESS] + [
        {"k": 1, "t": 6, "id": 7, "x": 8.0, "y": None},
        {"k": -3, "t": 2, "id": 8, "x": 16.0, "y": None},
    ]
    qrows = [
        {"key": k, "when": w, "qid": i}
        for i, (k, w) in enumerate(
            [(1.0, 0), (1.0, 6), (1.5, 6), (257.0, 6), (-3.0, 4), (2.0, 5), (None, 4), (1.0, None)]
        )
    ]
    schema = "k tinyint, t long, id long, x double, y double"
    ev = spark.createDataFrame([tuple(e.values()) for e in events], schema)
    qs = spark.createDataFrame(
        [(q["qid"], q["key"], q["when"]) for q in qrows], "qid long, key double, when long"
    )
    aggs = {
        "x": ("sum", "x", "rows:unbounded,0"),
        "n": ("count", "x", "range:unbounded,unbounded"),
        "l": ("collect_list", "x", "rows:-1,+1"),
        "mode": ("mode", "y", "range:5"),
        "collect_set": ("collect_set", "y", "range:5"),
        "median": ("median", "x", "range:unbounded,0"),
    }
    kw = {"time": "t", "key": "k", "order_by": "id", "at_time": "when", "at_key": "key"}
    got = {
        r.qid: r.asDict() for r in wspark.rolling_aggregate(ev, aggs=aggs, at=qs, **kw).collect()
    }
    none = spark.createDataFrame([], schema)
    empty = {
        r.qid: r.asDict() for r in wspark.rolling_aggregate(none, aggs=aggs, at=qs, **kw).collect()
    }
    assert len(got) == len(empty) == len(qrows)
    for q in qrows:
        for name, (agg, column, text) in aggs.items():
            want = definition(agg, [e[column] for e in in_frame(events, q, text)])
            assert got[q["qid"]][name] == want, (q, name, got[q["qid"]][name], want)
            assert empty[q["qid"]][name] == definition(agg, []), (q, name)
    assert got[1]["x"] == 1.0 + 2.0 + 8.0 and got[2]["n"] == got[3]["n"] == 0


def test_covariances_of_frames_holding_an_infinity_equal_sparks(spark) -> None:
    """Point-in-time frames holding an infinity: the covariances and the correlation are
    Spark's own (its update in the frame's order gives -inf in one frame and NaN in the next),
    against Spark's window function over the same rows frames, not the infinity left out. The
    correlation of rolling frames too: NaN there, not null."""
    xs = [1.0, 2.0, math.inf, 4.0, 5.0, 6.0, -math.inf, 2.5, 3.0]
    ys = [1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 1.0, math.inf, 2.0]
    rows = [(0, float(t), x, y) for t, (x, y) in enumerate(zip(xs, ys))]
    df = spark.createDataFrame(rows, "k long, t double, x double, y double")
    df.createOrReplaceTempView("inf_pairs")
    want = spark.sql(
        "SELECT t, covar_samp(x, y) OVER w AS c, covar_pop(x, y) OVER w AS p, "
        "corr(x, y) OVER w AS r FROM inf_pairs "
        "WINDOW w AS (PARTITION BY k ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
        "ORDER BY t"
    ).collect()
    events = {"k": [r[0] for r in rows], "t": [r[1] for r in rows], "x": xs, "y": ys}
    aggs = {
        "c": ("covar_samp", ("x", "y"), "rows:3"),
        "p": ("covar_pop", ("x", "y"), "rows:3"),
        "r": ("corr", ("x", "y"), "rows:3"),
    }
    at = {"k": events["k"], "t": events["t"]}
    got = windowagg.rolling_aggregate(
        pa.table(events), time="t", key="k", aggs=aggs, at=pa.table(at)
    )
    for name in aggs:
        mine = got.column(name).to_pylist()
        theirs = [r[name] for r in want]
        if name != "r":  # the case under test: an infinite covariance
            assert any(v is not None and math.isinf(v) for v in theirs)
        assert all(same(a, b) for a, b in zip(mine, theirs)), (name, mine, theirs)
    rolled = windowagg.rolling_aggregate(pa.table(events), time="t", key="k", aggs=aggs)
    mine, theirs = rolled.column("r").to_pylist(), [r["r"] for r in want]
    assert all(same(a, b) for a, b in zip(mine, theirs)), (mine, theirs)
