"""Streaming window_aggregate over a file source: out-of-order and late files, a stop and a
restart from the checkpoint, and the result compared with the batch answer over the same
events (minus those Spark drops as too late, which its progress counts)."""

from __future__ import annotations

import datetime as dt
import json
import random
import time

import pytest

pytest.importorskip("pyspark")
from pyspark.sql import functions as F

from windowagg.spark import window_aggregate

T0 = dt.datetime(2024, 5, 1, 9, 0, 0)
DELAY_S, LATENESS_S = 30, 90
WINDOWS = ["tumbling:1m", "sliding:2m/30s", "session:20s"]
SCHEMA = "k string, ts timestamp, v double"


def make_files(seed: int) -> list[list[tuple]]:
    """Files in arrival order: (key, second, value); positive values, so a window's latest
    report is its largest."""
    rng = random.Random(seed)

    def ev(lo, hi, n):
        return [
            (rng.choice("ab"), rng.randrange(lo, hi), float(rng.randrange(1, 9))) for _ in range(n)
        ]

    f1 = ev(0, 240, 120)
    f2 = ev(240, 420, 90) + ev(200, 240, 10) + ev(0, 40, 8)  # late within lateness, too late
    rng.shuffle(f2)
    f3 = ev(420, 600, 90) + ev(330, 400, 10)
    f4 = [("z", 100_000, 1.0)]  # far ahead: the watermark passes every window above
    return [f1, f2, f3, f4]


def kept(files, lateness=LATENESS_S):
    """Events Spark keeps: t >= watermark - lateness, the watermark of the previous files."""
    out, top = [], None
    for f in files:
        wm = None if top is None else top - DELAY_S
        for k, s, v in f:
            if wm is None or s >= wm - lateness:
                out.append((k, s, v))
        top = max([s for _, s, _ in f] + ([top] if top is not None else []))
    return out


def write(folder, i, rows):
    with open(folder / f"part-{i}.json", "w") as f:
        for k, s, v in rows:
            f.write(json.dumps({"k": k, "ts": str(T0 + dt.timedelta(seconds=s)), "v": v}) + "\n")


def sink(res, out, ck):
    """``res`` written to parquet files in ``out`` (append, a micro-batch every 300 ms)."""
    return (
        res.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(ck))
        .outputMode("append")
        .trigger(processingTime="300 milliseconds")
        .start()
    )


def start(spark, src, ck, out):
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
    stream = stream.withWatermark("ts", f"{DELAY_S} seconds")
    res = window_aggregate(
        stream,
        time="ts",
        value="v",
        windows=WINDOWS,
        agg="sum",
        key="k",
        allowed_lateness=LATENESS_S,
    )
    return sink(res, out, ck)


def settle(q, seconds=4.0):
    q.processAllAvailable()
    time.sleep(seconds)  # no-data batches: the watermark moves, timeouts fire


def live_windows(rows):
    """The last report of each window; session bounds superseded by a larger report dropped."""
    best = {}
    for r in rows:
        key = (r.k, r.window, r.window_start, r.window_end)
        best[key] = max(best.get(key, 0.0), r.value)
    out = {}
    for (k, w, a, b), v in best.items():
        covered = w.startswith("session") and any(
            k2 == k and w2 == w and (a2, b2) != (a, b) and a2 <= a and b2 >= b
            for (k2, w2, a2, b2) in best
        )
        if not covered:
            out[(k, w, a, b)] = v
    return out


def test_stream_with_late_files_and_a_restart_equals_batch(spark, tmp_path):
    src, ck, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    src.mkdir()
    files = make_files(5)
    q = start(spark, src, ck, out)
    dropped = 0
    try:
        for i, f in enumerate(files[:2]):
            write(src, i, f)
            settle(q, 1.0)
        dropped += sum(
            p["stateOperators"][0].get("numRowsDroppedByWatermark", 0)
            for p in q.recentProgress
            if p["stateOperators"]
        )
    finally:
        q.stop()
    q = start(spark, src, ck, out)  # restart from the checkpoint
    try:
        for i, f in enumerate(files[2:], start=2):
            write(src, i, f)
            settle(q, 1.0)
        settle(q)
        dropped += sum(
            p["stateOperators"][0].get("numRowsDroppedByWatermark", 0)
            for p in q.recentProgress
            if p["stateOperators"]
        )
    finally:
        q.stop()

    rows = spark.read.parquet(str(out)).where(F.col("k") != "z").collect()
    firsts = [(r.k, r.window, r.window_start, r.window_end) for r in rows if not r.update]
    assert len(firsts) == len(set(firsts)), "a window emitted twice"
    assert any(r.update for r in rows), "late events should have updated emitted windows"

    events = [e for e in kept(files) if e[0] != "z"]
    assert dropped == sum(len(f) for f in files) - len(kept(files)) > 0
    batch_df = spark.createDataFrame(
        [(k, T0 + dt.timedelta(seconds=s), v) for k, s, v in events], SCHEMA
    )
    batch = window_aggregate(batch_df, time="ts", value="v", windows=WINDOWS, agg="sum", key="k")
    want = {(r.k, r.window, r.window_start, r.window_end): r.value for r in batch.collect()}
    assert live_windows(rows) == want


MANY_ROLLING = {"s": ("sum", "v", "range:60s"), "hi": ("max", "v", "range:-90s,-10s")}


@pytest.mark.parametrize("kind", ["windows", "rolling"])
def test_many_keys_run_in_groups_and_equal_batch(spark, tmp_path, kind):
    """300 keys (a null key among them) in two micro-batches: every window (every row's
    frames) equals the batch answer, and the query keeps one state row per group of keys, not
    one per key (each micro-batch runs the engine once per group)."""
    from windowagg.spark import rolling_aggregate
    from windowagg.spark.state import GROUPS

    def run(df):
        if kind == "rolling":
            return rolling_aggregate(df, time="ts", key="k", aggs=MANY_ROLLING)
        return window_aggregate(df, time="ts", value="v", windows=WINDOWS, agg="sum", key="k")

    rng = random.Random(3)
    keys = [f"k{i}" for i in range(299)] + [None]
    files = [
        [
            (rng.choice(keys), rng.randrange(a, a + 300), float(rng.randrange(1, 9)))
            for _ in range(3000)
        ]
        for a in (0, 300)
    ]
    src, ck, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    src.mkdir()
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
    q = sink(run(stream.withWatermark("ts", f"{DELAY_S} seconds")), out, ck)
    try:
        for i, f in enumerate(files):
            write(src, i, f)
            settle(q, 1.0)
        state_rows = max(
            p["stateOperators"][0]["numRowsTotal"] for p in q.recentProgress if p["stateOperators"]
        )
        write(src, 2, [("z", 100_000, 1.0)])  # the watermark passes every row above
        settle(q)
    finally:
        q.stop()
    assert 1 < state_rows <= GROUPS < len(keys)
    got = spark.read.parquet(str(out)).where(F.col("k").isNull() | (F.col("k") != "z"))
    events = [e for e in kept(files) if e[0] != "z"]
    batch = run(
        spark.createDataFrame([(k, T0 + dt.timedelta(seconds=s), v) for k, s, v in events], SCHEMA)
    )
    if kind == "rolling":
        assert got.count() == len(events)
        assert sorted(map(repr, got.collect())) == sorted(map(repr, batch.collect()))
        return
    rows = got.collect()
    assert len({r.k for r in rows}) == len(keys)
    want = {(r.k, r.window, r.window_start, r.window_end): r.value for r in batch.collect()}
    assert live_windows(rows) == want


def test_a_checkpoint_with_another_number_of_groups_is_refused():
    """A group's state records the number of groups it was written with: keys hashed into
    another number would be looked for in other groups, so such a state stops the query."""
    import pickle

    from windowagg.spark import state as stream

    class State:
        exists = True
        get = (pickle.dumps(("kept", stream.GROUPS)),)

    assert stream.kept_state(State()) == "kept"
    State.get = (pickle.dumps(("kept", stream.GROUPS * 2)),)
    with pytest.raises(ValueError, match="start the query from a new checkpoint"):
        stream.kept_state(State())
    # the events a stream of queries against a batch of events keeps, chunk by chunk, too
    assert stream.unpacked(stream.packed("chunk")) == "chunk"
    with pytest.raises(ValueError, match="start the query from a new checkpoint"):
        stream.unpacked(pickle.dumps(("chunk", stream.GROUPS * 2)))


def test_streaming_needs_a_watermark(spark, tmp_path):
    (tmp_path / "in").mkdir()
    stream = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
    with pytest.raises(ValueError, match="needs a watermark"):
        window_aggregate(stream, time="ts", value="v", windows=WINDOWS, agg="sum", key="k")
    with pytest.raises(ValueError, match="count windows"):
        window_aggregate(
            stream.withWatermark("ts", "1 minute"),
            time="ts",
            value="v",
            windows=["count-tumbling:5"],
            agg="sum",
        )


STREAM_SCHEMA = (
    "k string, ts timestamp, v double, d decimal(12,2), i int, b bigint, t2 timestamp, s string"
)
#: output name -> (windowagg's entry, Spark's expression)
STREAM_AGGS = {
    "n": (("count", "*"), "count(*)"),
    "nv": (("count", "v"), "count(v)"),
    "sv": (("sum", "v"), "sum(v)"),
    "hv": (("max", "v"), "max(v)"),
    "lv": (("min", "v"), "min(v)"),
    "ad": (("avg", "d"), "avg(d)"),
    "sd": (("sum", "d"), "sum(d)"),
    "si": (("sum", "i"), "sum(i)"),
    "li": (("min", "i"), "min(i)"),
    "sb": (("sum", "b"), "sum(b)"),
    "ht": (("max", "t2"), "max(t2)"),
    "hs": (("max", "s"), "max(s)"),
    "sdv": (("stddev", "i"), "stddev(i)"),
    "mdv": (("median", "v"), "median(v)"),
    "pi": (("percentile(p=0.3)", "i"), "percentile(i, 0.3)"),
    "vpi": (("var_pop", "i"), "var_pop(i)"),
    "ski": (("skewness", "i"), "skewness(i)"),
    "moi": (("mode", "i"), "mode(i, true)"),
    "mbt": (("max_by", ("i", "t2")), "max_by(i, t2)"),
    "cib": (("corr", ("i", "b")), "corr(i, b)"),
}
STREAM_WINDOWS = {
    "tumbling:1m": "window(ts, '1 minute')",
    "sliding:2m/30s": "window(ts, '2 minutes', '30 seconds')",
    "session:20s": "session_window(ts, '20 seconds')",
}


def _norm(v):
    if isinstance(v, float):
        return "NaN" if v != v else round(v, 6)
    return v


def test_many_aggregations_on_a_stream_equal_sparks_own_values_and_types(spark, tmp_path):
    """Several aggregations over columns of every type (double with NaN and nulls, decimal
    with nulls, int, bigint, timestamp, string) on a stream with late rows, in tumbling,
    sliding and session windows, two keys: every window's last report equals Spark's own
    batch aggregates over the same rows, in Spark's types."""
    from decimal import Decimal

    rng = random.Random(9)

    def ev(lo, hi, n):
        rows = []
        for _ in range(n):
            r = rng.random()
            v = None if r < 0.1 else float("nan") if r < 0.15 else float(rng.randrange(1, 9))
            d = None if rng.random() < 0.1 else Decimal(rng.randrange(-999, 999)).scaleb(-2)
            rows.append(
                (
                    rng.choice("ab"),
                    rng.randrange(lo, hi),
                    v,
                    d,
                    rng.randrange(-5, 9),
                    rng.randrange(-(2**40), 2**40),
                    rng.randrange(0, 10**6),
                    rng.choice(["x", "yy", None]),
                )
            )
        return rows

    files = [
        ev(0, 200, 80),
        ev(200, 400, 60) + ev(150, 200, 10),
        [("z", 100_000, 1.0, None, 0, 0, 0, None)],
    ]
    src, ck, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    src.mkdir()
    aggs = {name: e for name, (e, _) in STREAM_AGGS.items()}
    stream = spark.readStream.schema(STREAM_SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
    res = window_aggregate(
        stream.withWatermark("ts", f"{DELAY_S} seconds"),
        time="ts",
        windows=list(STREAM_WINDOWS),
        aggs=aggs,
        key="k",
        allowed_lateness=LATENESS_S,
    )
    q = sink(res, out, ck)
    try:
        for n, f in enumerate(files):
            with open(src / f"part-{n}.json", "w") as fh:
                for k, sec, v, d, i, b, t2, s in f:
                    fh.write(
                        json.dumps(
                            {
                                "k": k,
                                "ts": str(T0 + dt.timedelta(seconds=sec)),
                                "v": v,
                                "d": None if d is None else float(d),
                                "i": i,
                                "b": b,
                                "t2": str(T0 + dt.timedelta(microseconds=t2)),
                                "s": s,
                            }
                        )
                        + "\n"
                    )
            settle(q, 1.0)
        settle(q)
    finally:
        q.stop()
    got = spark.read.parquet(str(out)).where(F.col("k") != "z")
    events = [e for f in files for e in f if e[0] != "z"]
    batch = spark.createDataFrame(
        [
            (k, T0 + dt.timedelta(seconds=sec), v, d, i, b, T0 + dt.timedelta(microseconds=t2), s)
            for k, sec, v, d, i, b, t2, s in events
        ],
        STREAM_SCHEMA,
    )
    reports: dict = {}
    for r in got.collect():
        key = (r.k, r.window, r.window_start, r.window_end)
        reports.setdefault(key, []).append([_norm(r[n]) for n in STREAM_AGGS])
    types = dict(got.dtypes)
    for spec, wexpr in STREAM_WINDOWS.items():
        theirs = batch.groupBy("k", F.expr(wexpr).alias("w")).agg(
            *[F.expr(sql).alias(n) for n, (_, sql) in STREAM_AGGS.items()]
        )
        assert all(types[n] == t for n, t in theirs.drop("k", "w").dtypes), spec
        want = {
            (r.k, spec, r.w.start, r.w.end): [_norm(r[n]) for n in STREAM_AGGS]
            for r in theirs.collect()
        }
        bad = {w: (v, reports.get(w)) for w, v in want.items() if v not in reports.get(w, [])}
        assert want and not bad, bad
    firsts = [(r.k, r.window, r.window_start, r.window_end) for r in got.collect() if not r.update]
    assert len(firsts) == len(set(firsts))


ROLLING = {
    "s": ("sum", "v", "range:60s"),
    "n": ("count", "*", "rows:3"),
    "hi": ("max", "v", "range:unbounded,0"),
    "m": ("mean", "v", "range:-90s,-10s"),
    "md": ("median", "v", "range:60s"),
    "vp": ("var_pop", "v", "rows:3"),
    "cl": ("collect_list", "v", "rows:2"),
}


def test_rolling_frames_on_a_stream_equal_batch_on_the_rows_kept(spark, tmp_path):
    """Each row emitted once, when the watermark passes it, with the batch answer over the
    rows Spark keeps (out-of-order and late files, a restart from the checkpoint)."""
    from windowagg.spark import rolling_aggregate

    src, ck, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    src.mkdir()
    files, seen = [], set()
    for f in make_files(7):  # one row per key and second: rows frames need no tie order
        files.append([e for e in f if (e[0], e[1]) not in seen and not seen.add((e[0], e[1]))])

    def begin():
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(src))
        res = rolling_aggregate(
            stream.withWatermark("ts", f"{DELAY_S} seconds"), time="ts", key="k", aggs=ROLLING
        )
        return sink(res, out, ck)

    for part in (files[:2], files[2:]):
        q = begin()
        try:
            for f in part:
                write(src, len(list(src.glob("*.json"))), f)
                settle(q, 1.0)
            settle(q)
        finally:
            q.stop()
    got = sorted(
        tuple(r)
        for r in spark.read.parquet(str(out))
        .where(F.col("k") != "z")
        .select("k", "ts", "v", *ROLLING)
        .collect()
    )
    events = [e for e in kept(files, lateness=0) if e[0] != "z"]
    assert len(events) < sum(len(f) for f in files) - 1  # some rows were too late
    batch_df = spark.createDataFrame(
        [(k, T0 + dt.timedelta(seconds=s), v) for k, s, v in events], SCHEMA
    )
    want = sorted(
        tuple(r)
        for r in rolling_aggregate(batch_df, time="ts", key="k", aggs=ROLLING)
        .select("k", "ts", "v", *ROLLING)
        .collect()
    )
    assert got == want
