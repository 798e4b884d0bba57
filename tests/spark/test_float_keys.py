"""Float keys as Spark's: -0.0 the same key as 0.0, and every NaN (whatever its bits) one key
(Spark's ``NormalizeFloatingNumbers`` on partition and grouping keys), against Spark's own
window functions and ``groupBy(key, window)`` on the same rows: windowagg's local tables,
``windowagg.spark``, point-in-time requests and an online state. Compared by their bits,
as windowagg had them, -0.0's rows and a NaN of other bits were keys of their own."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

import windowagg
from windowagg import spark as wspark
from windowagg.online import OnlineFeatures

#: a NaN of other bits than the usual one
OTHER_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
KEYS = [0.0, -0.0, math.nan, OTHER_NAN, 1.5, None]


def _rows(n: int = 120) -> list[tuple]:
    rng = np.random.default_rng(41)
    keys = rng.integers(0, len(KEYS), n)
    return [
        (KEYS[k], int(t), float(v))
        for k, t, v in zip(keys, rng.permutation(n) * 7, rng.integers(0, 50, n))
    ]


def _table(rows: list[tuple]) -> pa.Table:
    k, t, v = zip(*rows)
    return pa.table({"k": pa.array(k, pa.float64()), "t": pa.array(t, pa.int64()), "v": v})


def _same_key(a: float | None, b: float | None) -> bool:
    """Whether two keys are one key for Spark."""
    if a is None or b is None:
        return a is None and b is None
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_rolling_frames_over_float_keys_equal_spark(spark) -> None:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = _rows()
    df = spark.createDataFrame(rows, "k double, t long, v double")
    w = Window.partitionBy("k").orderBy("t")
    theirs = df.select(
        "t",
        F.sum("v").over(w.rangeBetween(-100, 0)).alias("s"),
        F.count("v").over(w.rowsBetween(-2, 0)).alias("c"),
    )
    want = {r["t"]: (r["s"], r["c"]) for r in theirs.collect()}
    aggs = {"s": ("sum", "v", "range:100"), "c": ("count", "v", "rows:3")}
    local = windowagg.rolling_aggregate(_table(rows), time="t", key="k", aggs=aggs)
    got = dict(zip(local["t"].to_pylist(), zip(local["s"].to_pylist(), local["c"].to_pylist())))
    assert got == want
    ours = wspark.rolling_aggregate(df, time="t", key="k", aggs=aggs).collect()
    assert {r["t"]: (r["s"], r["c"]) for r in ours} == want
    # -0.0's rows share their frames with 0.0's: the sums hold both
    assert any(k is not None and k == 0 and math.copysign(1, k) < 0 for k, _, _ in rows)


def test_windows_over_float_keys_equal_spark(spark) -> None:
    """One window row per key as Spark groups them, its key as Spark shows it (0.0, NaN)."""
    from pyspark.sql import functions as F

    rows = _rows()
    df = spark.createDataFrame(rows, "k double, t long, v double")
    theirs = (
        df.withColumn("ts", F.timestamp_seconds("t"))
        .groupBy("k", F.window("ts", "200 seconds").alias("w"))
        .agg(F.sum("v").alias("s"))
        .select("k", F.unix_seconds(F.col("w.start")).alias("start"), "s")
    )

    def key(x: float | None) -> tuple:
        return (x is None, x is not None and math.isnan(x), x if x is not None and x == x else 0.0)

    want = sorted(
        ((key(r["k"]), r["start"], r["s"]) for r in theirs.collect()), key=lambda x: x[:2]
    )
    table = _table(rows).append_column(
        "ts", pa.array(np.array([r[1] for r in rows], "datetime64[s]")).cast(pa.timestamp("us"))
    )
    local = windowagg.window_aggregate(
        table, time="ts", key="k", windows=["tumbling:200s"], aggs={"s": ("sum", "v")}
    )
    starts = local["window_start"].cast(pa.int64()).to_numpy() // 10**6
    got = sorted(
        (
            (key(k), int(s), v)
            for k, s, v in zip(local["k"].to_pylist(), starts, local["s"].to_pylist())
        ),
        key=lambda x: x[:2],
    )
    assert got == want
    shown = [k for k in local["k"].to_pylist() if k is not None and k == 0]
    assert shown and all(math.copysign(1, k) > 0 for k in shown)  # 0.0, as Spark shows it
    timed = df.withColumn("ts", F.timestamp_seconds("t"))
    ours = wspark.window_aggregate(
        timed, time="ts", key="k", windows=["tumbling:200s"], aggs={"s": ("sum", "v")}
    )
    rows_ = [(key(r["k"]), int(r["window_start"].timestamp()), r["s"]) for r in ours.collect()]
    assert sorted(rows_, key=lambda x: x[:2]) == want


def test_requests_and_an_online_state_match_float_keys_as_spark() -> None:
    """A request for -0.0 or for a NaN of other bits reads the events of 0.0 and of every
    NaN, through the batch call and an online state (its index codes the key as Spark's)."""
    rows = _rows()
    events = _table(rows)
    asked = pa.table({"k": pa.array([-0.0, 0.0, OTHER_NAN, math.nan, 1.5, None]), "t": [900] * 6})
    aggs = {"s": ("sum", "v", "range:1000"), "c": ("count", "v", "range:1000")}
    want = [
        (
            sum(v for k, t, v in rows if _same_key(k, q) and k is not None and t <= 900) or None,
            sum(1 for k, t, _ in rows if _same_key(k, q) and k is not None and t <= 900),
        )
        for q in asked["k"].to_pylist()
    ]
    want = [(s if c else None, c) for s, c in want]
    batch = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=asked)
    assert list(zip(batch["s"].to_pylist(), batch["c"].to_pylist())) == want
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=10**6)
    state.update(events)
    assert state._held is not None and state._held.codes is not None  # through the index
    got = state.query(asked)
    assert list(zip(got["s"].to_pylist(), got["c"].to_pylist())) == want
