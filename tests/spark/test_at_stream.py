"""Point-in-time frames on two streams (``rolling_aggregate(events, at=queries)`` with both
streaming): each query emitted once, when the watermark passes its frames, with the values
the batch call gives on the same rows; several micro-batches, out-of-order files and a
restart from the checkpoint in the middle."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import time

import pytest

pytest.importorskip("pyspark")

from tests.spark.settings import restored
from tests.spark.test_streaming import sink
from windowagg.spark import rolling_aggregate

T0 = dt.datetime(2024, 5, 1, 9, 0, 0)
EVENTS = "k string, ts timestamp, v double"
QUERIES = "qid long, k string, asked timestamp"
#: range frames with and without the query's instant, a rows frame, a non-commutative
#: aggregation (last), a null rule (count of a column with nulls)
AGGS = {
    "s": ("sum", "v", "range:60s"),
    "c": ("count", "v", "range:-90s,-1us"),
    "m": ("max", "v", "rows:3"),
    "l": ("last", "v", "range:45s"),
}


def logs(seed: int = 5):
    """Files of events and of queries in arrival order; one event per key and second (rows
    frames need no tie order), values with nulls, queries at event instants and between."""
    rng = random.Random(seed)
    seconds = {k: rng.sample(range(0, 600), 150) for k in "ab"}
    events = [
        (k, s, None if rng.random() < 0.1 else float(rng.randrange(1, 9)))
        for k in "ab"
        for s in seconds[k]
    ]
    events.sort(key=lambda e: e[1] + rng.randrange(0, 20))  # out of order, within 20 s
    queries = [
        (i, rng.choice("abc"), rng.randrange(0, 600) + rng.choice([0, 0.5])) for i in range(80)
    ]
    queries.sort(key=lambda q: q[2] + rng.randrange(0, 20))
    parts = 4
    ev = [events[i * len(events) // parts : (i + 1) * len(events) // parts] for i in range(parts)]
    qs = [
        queries[i * len(queries) // parts : (i + 1) * len(queries) // parts] for i in range(parts)
    ]
    return ev, qs


def _write(folder, i, rows, row) -> None:
    staged = folder.parent / f".part-{folder.name}-{i}.json"
    staged.write_text("".join(json.dumps(row(*r)) + "\n" for r in rows))
    staged.replace(folder / f"part-{i}.json")  # whole, never half written


def _event(k, s, v):
    return {"k": k, "ts": str(T0 + dt.timedelta(seconds=s)), "v": v}


def _query(i, k, s):
    return {"qid": i, "k": k, "asked": str(T0 + dt.timedelta(seconds=s))}


def test_queries_on_a_stream_equal_the_batch_call_and_survive_a_restart(spark, tmp_path) -> None:
    ev_dir, q_dir, ck, out = (tmp_path / n for n in ("ev", "q", "ck", "out"))
    ev_dir.mkdir()
    q_dir.mkdir()
    ev_files, q_files = logs()
    # far ahead on both streams: the watermark (the slower stream's) passes every frame
    ev_files.append([("z", 100_000, 1.0)])
    q_files.append([(10_000, "z", 100_000)])

    def begin():
        events = (
            spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(ev_dir))
        ).withWatermark("ts", "30 seconds")
        queries = (
            spark.readStream.schema(QUERIES).option("maxFilesPerTrigger", 1).json(str(q_dir))
        ).withWatermark("asked", "30 seconds")
        res = rolling_aggregate(events, time="ts", key="k", aggs=AGGS, at=queries, at_time="asked")
        return sink(res, out, ck)

    halves = [range(0, 2), range(2, len(ev_files))]
    for half in halves:
        q = begin()
        try:
            for i in half:
                _write(ev_dir, i, ev_files[i], _event)
                _write(q_dir, i, q_files[i], _query)
                q.processAllAvailable()
        finally:
            q.stop()  # the second half starts again from the checkpoint
    q = begin()  # batches without data: the watermark moves, the last queries go out
    try:
        want_n = sum(len(f) for f in q_files[:-1])
        deadline = time.monotonic() + 120
        while _written(spark, out) < want_n and time.monotonic() < deadline:
            time.sleep(0.5)
        # an event far behind the watermark: dropped, and counted in the query's progress
        _write(ev_dir, len(ev_files), [("a", 10, 5.0)], _event)
        q.processAllAvailable()
        dropped = sum(
            p["stateOperators"][0].get("numRowsDroppedByWatermark", 0)
            for p in q.recentProgress
            if p["stateOperators"]
        )
    finally:
        q.stop()
    assert dropped == 1
    got = sorted(
        tuple(r)
        for r in spark.read.parquet(str(out)).where("k != 'z'").select("qid", *AGGS).collect()
    )
    events = spark.createDataFrame(
        [(k, T0 + dt.timedelta(seconds=s), v) for f in ev_files[:-1] for k, s, v in f], EVENTS
    )
    queries = spark.createDataFrame(
        [(i, k, T0 + dt.timedelta(seconds=s)) for f in q_files[:-1] for i, k, s in f], QUERIES
    )
    want = _batch(events, queries)
    assert len(got) == len(want) == want_n  # each query once
    assert got == want


def _batch(events, queries) -> list[tuple]:
    """The batch call's answers (the oracle), sorted."""
    out = rolling_aggregate(events, time="ts", key="k", aggs=AGGS, at=queries, at_time="asked")
    return sorted(tuple(r) for r in out.select("qid", *AGGS).collect())


def _written(spark, out) -> int:
    try:
        return spark.read.parquet(str(out)).where("k != 'z'").count()
    except Exception:  # no file yet
        return 0


@pytest.fixture
def rocksdb(spark):
    """The RocksDB state store for one test (transformWithStateInPandas needs it), the
    session's own store again after."""
    from windowagg.spark.rolling_at import ROCKSDB

    key = "spark.sql.streaming.stateStore.providerClass"
    with restored(spark, key):
        spark.conf.set(key, ROCKSDB)
        yield


def test_a_stream_of_queries_against_batch_events_equals_the_batch_call(
    spark, rocksdb, tmp_path
) -> None:
    """Queries arrive as a stream (several micro-batches, a restart from the checkpoint in
    the middle), the events are a batch DataFrame: each query comes out once, in its own
    micro-batch (no watermark needed), with the batch call's values; a NaN among the events
    crosses the state as NaN, not null."""
    q_dir, ck, out = (tmp_path / n for n in ("q", "ck", "out"))
    q_dir.mkdir()
    ev_files, q_files = logs(seed=11)
    rows = [(k, T0 + dt.timedelta(seconds=s), v) for f in ev_files for k, s, v in f]
    rows.append(("a", T0 + dt.timedelta(seconds=700), float("nan")))
    q_files[-1].append((999, "a", 720))  # its sum and max are NaN
    events = spark.createDataFrame(rows, EVENTS)

    def begin():
        queries = spark.readStream.schema(QUERIES).option("maxFilesPerTrigger", 1).json(str(q_dir))
        res = rolling_aggregate(events, time="ts", key="k", aggs=AGGS, at=queries, at_time="asked")
        return sink(res, out, ck)

    for half in (range(0, 2), range(2, len(q_files))):
        q = begin()
        try:
            for i in half:
                _write(q_dir, i, q_files[i], _query)
                q.processAllAvailable()
        finally:
            q.stop()  # the second half starts again from the checkpoint
    got = sorted(tuple(r) for r in spark.read.parquet(str(out)).select("qid", *AGGS).collect())
    queries = spark.createDataFrame(
        [(i, k, T0 + dt.timedelta(seconds=s)) for f in q_files for i, k, s in f], QUERIES
    )
    want = _batch(events, queries)
    assert len(got) == len(want) == sum(len(f) for f in q_files)  # each query once
    nan = [r for r in got if r[0] == 999]
    assert len(nan) == 1 and math.isnan(nan[0][1]) and math.isnan(nan[0][3])
    assert _no_nan(got) == _no_nan(want)


def _no_nan(rows: list[tuple]) -> list[tuple]:
    """NaN as a string, so that rows holding it compare equal."""
    return [tuple("NaN" if isinstance(x, float) and math.isnan(x) else x for x in r) for r in rows]


def test_a_stream_of_events_needs_a_stream_of_queries_and_batch_events_need_rocksdb(
    spark, tmp_path
) -> None:
    (tmp_path / "q").mkdir()
    queries = spark.readStream.schema(QUERIES).json(str(tmp_path / "q"))
    batch_queries = spark.createDataFrame([(1, "a", T0)], QUERIES)
    events = spark.createDataFrame([("a", T0, 1.0)], EVENTS)
    stream = spark.readStream.schema(EVENTS).json(str(tmp_path / "q"))
    with pytest.raises(ValueError, match="takes a stream of queries"):
        rolling_aggregate(stream, time="ts", key="k", aggs=AGGS, at=batch_queries, at_time="asked")
    with pytest.raises(ValueError, match="needs the RocksDB state store"):
        rolling_aggregate(events, time="ts", key="k", aggs=AGGS, at=queries, at_time="asked")
    with pytest.raises(ValueError, match="needs a watermark"):
        rolling_aggregate(stream, time="ts", key="k", aggs=AGGS, at=queries, at_time="asked")
