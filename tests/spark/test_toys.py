"""Each way of adding an aggregation, end to end on Spark (the local side:
tests/test_toys.py): the toys of :mod:`tests.toys` on Spark windows, rolling frames,
point-in-time queries and a stream, against their definitions, value and type. Spark's
workers import :mod:`tests.toys` to unpickle the toys, which joins the toy strategy's
evaluator there too."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from tests.spark.test_streaming import sink
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


def test_toys_on_a_spark_stream(spark, named, tmp_path) -> None:
    """Rolling frames of both toys on a stream of files, each row emitted once the watermark
    passes it, equal to their definitions over the rows (none late)."""
    src, ck, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    src.mkdir()
    events = sorted(rows(120, seed=3), key=lambda e: e["ts"])
    last = {"k": 9, "ts": events[-1]["ts"] + dt.timedelta(hours=1), "v": 0.0}  # moves the mark
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
    res = wspark.rolling_aggregate(
        stream.withWatermark("ts", "10 seconds"), time="ts", key="k", aggs=FRAMES
    )
    q = sink(res, out, ck)
    try:  # one file at a time: files written together are read in no fixed order
        for i, part in enumerate((events[:60], events[60:], [last])):
            staged = tmp_path / f"part-{i}.json"
            staged.write_text("".join(json.dumps({**e, "ts": str(e["ts"])}) + "\n" for e in part))
            staged.replace(src / staged.name)  # whole, never half written
            q.processAllAvailable()
        deadline = time.monotonic() + 120  # batches without data: the mark moves, rows go out
        while _written(spark, out) < len(events) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        q.stop()
    got = [x for x in spark.read.parquet(str(out)).collect() if x.k != 9]
    assert len(got) == len(events)
    for kind in AGGS:
        mine = {(x.k, x.ts): x[kind] for x in got}
        want = {(e["k"], e["ts"]): frame_brute(events, e["k"], e["ts"], kind) for e in events}
        assert mine == pytest.approx(want)


def _written(spark, out) -> int:
    """Rows the sink has written so far (0 before its first file)."""
    try:
        return spark.read.parquet(str(out)).where("k != 9").count()
    except Exception:  # AnalysisException: no file yet
        return 0
