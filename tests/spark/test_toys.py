"""Each way of adding an aggregation, end to end on Spark (the local side:
tests/test_toys.py): the toys of :mod:`tests.toys` on Spark windows, rolling frames,
point-in-time queries, against their definitions, value and type. Spark's
workers import :mod:`tests.toys` to unpickle the toys, which joins the toy strategy's
evaluator there too."""

from __future__ import annotations

import pytest

from tests.test_toys import AGGS, FRAMES, frame_brute, queries, rows, windows_brute
from windowagg import spark as wspark

pytest.importorskip("pyspark")

SCHEMA = "k long, ts timestamp, v double"


def test_toys_on_spark_windows_rolling_frames_and_at(spark, named) -> None:
    from pyspark.sql.types import DoubleType

    events = rows()
    df = spark.createDataFrame(events, SCHEMA)
    w = wspark.window_aggregate(df, time="ts", key="k", windows="tumbling:60s", aggs=AGGS)
    r = wspark.rolling_aggregate(df, time="ts", key="k", aggs=FRAMES)
    qs = spark.createDataFrame(queries(), "qid long, k long, ts timestamp")
    a = wspark.rolling_aggregate(df, time="ts", key="k", aggs=FRAMES, at=qs)
    for out in (w, r, a):
        assert out.schema["drift"].dataType == out.schema["spread"].dataType == DoubleType()
    got_w, got_r, got_a = (out.collect() for out in (w, r, a))
    for kind in AGGS:
        got = {(x.k, x.window_start): x[kind] for x in got_w}
        assert got == pytest.approx(windows_brute(events, kind))
        got = {(x.k, x.ts): x[kind] for x in got_r}
        want = {(e["k"], e["ts"]): frame_brute(events, e["k"], e["ts"], kind) for e in events}
        assert got == pytest.approx(want)
        got = {x.qid: x[kind] for x in got_a}
        want = {q["qid"]: frame_brute(events, q["k"], q["ts"], kind) for q in queries()}
        assert got == pytest.approx(want)
