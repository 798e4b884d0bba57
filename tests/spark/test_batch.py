"""Batch window_aggregate against Spark's own window() and session_window(): the same rows,
exactly (integer-valued doubles, so sums do not depend on the order of addition)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import functions as F  # noqa: E402

from windowagg import Session, Sliding, Tumbling  # noqa: E402
from windowagg.spark import window_aggregate  # noqa: E402

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)
SPARK_AGG = {"sum": F.sum, "min": F.min, "max": F.max, "count": F.count, "mean": F.avg}


def events(seed: int, n: int = 600, keys: int = 3) -> list[tuple]:
    """Keyed events over about half an hour with bursts of equal times, gaps, nulls and
    sub-second times."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        k = rng.randrange(keys)
        if rng.random() < 0.02:
            sec = rng.uniform(3000, 3600)  # far after the rest: gaps
        else:
            sec = rng.choice([rng.randrange(0, 1800), rng.uniform(0, 1800), 600.0])
        v = None if rng.random() < 0.05 else float(rng.randrange(-50, 100))
        rows.append((k, f"g{k % 2}", T0 + dt.timedelta(seconds=sec), v))
    return rows


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(events(1), "k int, g string, ts timestamp, v double").cache()


def ours(df, spec, agg, key):
    out = window_aggregate(df, time="ts", value="v", windows=[spec], agg=agg, key=key)
    return sorted(tuple(r) for r in out.drop("window").collect())


def theirs(df, wcol, agg, key):
    keys = [key] if isinstance(key, str) else key
    ref = df.groupBy(*keys, wcol.alias("w")).agg(SPARK_AGG[agg]("v").alias("value"))
    ref = ref.select(*keys, "w.start", "w.end", "value")
    return sorted(tuple(r) for r in ref.collect())


CASES = [
    ("tumbling:1m", lambda: F.window("ts", "1 minute")),
    ("sliding:5m/1m", lambda: F.window("ts", "5 minutes", "1 minute")),
    ("sliding:90s/20s", lambda: F.window("ts", "90 seconds", "20 seconds")),
    ("session:30s", lambda: F.session_window("ts", "30 seconds")),
]


@pytest.mark.parametrize("agg", ["sum", "min", "max", "count", "mean"])
@pytest.mark.parametrize("spec,wcol", CASES, ids=[c[0] for c in CASES])
def test_equals_spark(df, spec, wcol, agg):
    got, want = ours(df, spec, agg, "k"), theirs(df, wcol(), agg, "k")
    assert got == want


def test_several_windows_in_one_call_and_keys_of_several_columns(df):
    specs = [spec for spec, _ in CASES]
    out = window_aggregate(df, time="ts", value="v", windows=specs, agg="sum", key=["k", "g"])
    rows = out.collect()
    for spec, wcol in CASES:
        got = sorted(
            (r.k, r.g, r.window_start, r.window_end, r.value) for r in rows if r.window == spec
        )
        assert got == theirs(df, wcol(), "sum", ["k", "g"]), spec
    assert {r.window for r in rows} == set(specs)


def test_fast_path_keys_of_several_columns_with_nulls(spark):
    """Sliding and tumbling only (the pre-aggregated path): string and int keys, null keys."""
    rows = [(k if i % 17 else None, g, ts, v) for i, (k, g, ts, v) in enumerate(events(5))]
    df = spark.createDataFrame(rows, "k int, g string, ts timestamp, v double")
    specs = [spec for spec, _ in CASES if not spec.startswith("session")]
    out = window_aggregate(df, time="ts", value="v", windows=specs, agg="mean", key=["g", "k"])
    got = out.collect()
    for spec, wcol in CASES[:3]:
        mine = sorted(
            ((r.k, r.g, r.window_start, r.window_end, r.value) for r in got if r.window == spec),
            key=repr,
        )
        ref = df.groupBy("k", "g", wcol().alias("w")).agg(F.avg("v").alias("value"))
        want = sorted(
            (tuple(r) for r in ref.select("k", "g", "w.start", "w.end", "value").collect()),
            key=repr,
        )
        assert mine == want, spec
    assert out.columns == ["g", "k", "window", "window_start", "window_end", "value"]


def test_fast_path_no_key_and_numeric_time(spark):
    rows = [(float(t), None if t % 11 == 0 else float(t % 7)) for t in range(0, 200, 3)]
    df = spark.createDataFrame(rows, "t double, v double")
    out = window_aggregate(
        df, time="t", value="v", windows=[Tumbling(50), Sliding(20, 10)], agg="sum"
    )
    got = {(r.window, r.window_start, r.window_end): r.value for r in out.collect()}
    want = {}
    for name, size, slide in [("tumbling:50", 50, 50), ("sliding:20/10", 20, 10)]:
        for start in range(-size, 200, slide):
            inside = [v for t, v in rows if start <= t < start + size]
            if inside:
                vals = [v for v in inside if v is not None]
                want[(name, float(start), float(start + size))] = sum(vals) if vals else None
    assert got == want
    assert out.columns == ["window", "window_start", "window_end", "value"]


def test_window_objects_no_key_and_numeric_time(spark):
    rows = [(float(t), float(t % 7)) for t in range(0, 200, 3)]
    df = spark.createDataFrame(rows, "t double, v double")
    out = window_aggregate(
        df, time="t", value="v", windows=[Tumbling(50), Sliding(20, 10), Session(4)], agg="max"
    )
    got = {(r.window, r.window_start, r.window_end): r.value for r in out.collect()}
    assert got[("tumbling:50", 0.0, 50.0)] == max(t % 7 for t in range(0, 50, 3))
    assert got[("sliding:20/10", 10.0, 30.0)] == max(t % 7 for t in range(12, 30, 3))
    assert got[("session:4", 0.0, 202.0)] == 6.0  # steps of 3 <= 4: one session
    assert out.columns == ["window", "window_start", "window_end", "value"]


def test_count_windows_and_a_non_slicing_aggregation(spark):
    rows = [("a", T0 + dt.timedelta(seconds=s), float(s)) for s in (5, 1, 3, 2, 4, 9, 7)]
    df = spark.createDataFrame(rows, "k string, ts timestamp, v double")
    out = window_aggregate(
        df, time="ts", value="v", windows=["count-sliding:3/2"], agg="median", key="k"
    )
    got = sorted((r.window_start, r.window_end, r.value) for r in out.collect())
    sec = lambda s: T0 + dt.timedelta(seconds=s)  # noqa: E731
    # time order 1 2 3 4 5 7 9: windows of positions [0,3) [2,5) [4,7); bounds: first, last time
    assert got == [(sec(1), sec(3), 2.0), (sec(3), sec(5), 4.0), (sec(5), sec(9), 7.0)]


@pytest.mark.parametrize(
    "kwargs,err",
    [
        ({"time": "nope"}, "no time column 'nope'"),
        ({"value": "g"}, "needs a numeric column, 'g' is string"),
        ({"key": ["k", "zz"]}, "no key column 'zz'"),
        ({"windows": ["tumbling:1x"]}, "bad duration"),
        ({"windows": ["tumbling:60"]}, "needs a unit"),
        ({"agg": "bloom"}, "filter object"),
        ({"aggs": {"s": ("sum", "v")}}, "give aggs=.*or value= with agg="),
        (
            {"aggs": {"s": ("sum", "v", "range:1h")}, "value": None, "agg": None},
            "must be \\(aggregation, column\\)",
        ),
        ({"agg": "nope"}, "unknown aggregation"),
    ],
)
def test_errors_before_any_work(df, kwargs, err):
    args = {"time": "ts", "value": "v", "windows": ["tumbling:1m"], "agg": "sum", "key": "k"}
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=err):
        window_aggregate(df, **args)


@pytest.mark.parametrize("spec", ["sliding:5m/1m", "session:30s"])
def test_no_events_no_windows(spark, spec):
    df = spark.createDataFrame([], "k int, ts timestamp, v double")
    out = window_aggregate(df, time="ts", value="v", windows=[spec], agg="sum", key="k")
    assert out.collect() == []
    assert out.columns == ["k", "window", "window_start", "window_end", "value"]


def test_fast_path_values_all_null_give_null_sum_and_zero_count(spark):
    rows = [("a", T0 + dt.timedelta(seconds=s), None) for s in (1, 2, 70)]
    df = spark.createDataFrame(rows, "k string, ts timestamp, v double")
    for agg in ("sum", "count", "mean", "max"):
        out = window_aggregate(df, time="ts", value="v", windows=["tumbling:1m"], agg=agg, key="k")
        got = sorted(tuple(r) for r in out.drop("window").collect())
        assert got == theirs(df, F.window("ts", "1 minute"), agg, "k") and len(got) == 2, agg
        assert [r[-1] for r in got] == ([0, 0] if agg == "count" else [None, None])


def test_fast_path_drops_events_without_time(spark):
    """Events with a null time belong to no window (as in Spark's window())."""
    rows = [(k, ts if i % 9 else None, v) for i, (k, _g, ts, v) in enumerate(events(7))]
    df = spark.createDataFrame(rows, "k int, ts timestamp, v double")
    timed = df.where(F.col("ts").isNotNull())
    for spec, wcol in CASES[:3]:
        assert ours(df, spec, "sum", "k") == theirs(timed, wcol(), "sum", "k"), spec


def test_fast_path_other_session_time_zone(spark):
    """Window bounds are instants: a session time zone other than UTC changes nothing."""
    df = spark.createDataFrame(events(8), "k int, g string, ts timestamp, v double")
    saved = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        for spec, wcol in CASES[:3]:
            assert ours(df, spec, "max", "k") == theirs(df, wcol(), "max", "k"), spec
    finally:
        spark.conf.set("spark.sql.session.timeZone", saved)


def test_column_names_that_need_quoting(spark):
    """Names with a dot, a space and a backtick are column names, not expressions."""
    rows = [(k, g, ts, v) for k, g, ts, v in events(9)]
    plain = spark.createDataFrame(rows, "k int, g string, ts timestamp, v double")
    odd = plain.toDF("zone id", "g.x", "event`time", "v.v")
    for spec, wcol in [CASES[1], CASES[3]]:  # the pre-aggregated path and the general one
        out = window_aggregate(
            odd, time="event`time", value="v.v", windows=[spec], agg="sum", key=["zone id", "g.x"]
        )
        assert out.columns == ["zone id", "g.x", "window", "window_start", "window_end", "value"]
        got = sorted(tuple(r) for r in out.drop("window").collect())
        assert got == theirs(plain, wcol(), "sum", ["k", "g"]), spec
