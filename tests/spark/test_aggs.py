"""window_aggregate with several aggregations over several columns of different types in one
call, against Spark's own ``groupBy(key, window(...)).agg(...)`` on the same rows: values and
result types column by column; tumbling, sliding and session windows; several keys (a null
key too); int, bigint, double with nulls and NaN, decimal(12, 2) with nulls, timestamp and
string columns. Plus the library's aggregations and a non-commutative user aggregation,
against the definition."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import pytest

pytest.importorskip("pyspark")

import windowagg
from tests.aggs import Concat
from tests.oracles import direct
from windowagg.aggregations import resolve
from windowagg.spark import window_aggregate

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)
SCHEMA = "k int, g string, ts timestamp, i int, b bigint, x double, d decimal(12,2), s string"


def rows(seed: int, n: int = 500) -> list[tuple]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = None if rng.random() < 0.03 else rng.randrange(3)
        sec = rng.choice([rng.randrange(0, 1200), 300, rng.uniform(0, 1200)])
        r = rng.random()
        x = None if r < 0.08 else math.nan if r < 0.11 else float(rng.randrange(-40, 90))
        d = None if rng.random() < 0.1 else Decimal(rng.randrange(-(10**6), 10**6)).scaleb(-2)
        i = None if rng.random() < 0.05 else rng.randrange(-100, 100)
        b, s = rng.randrange(-(2**40), 2**40), rng.choice(["a", "bb", "c", None])
        out.append((k, f"g{rng.randrange(2)}", T0 + dt.timedelta(seconds=sec), i, b, x, d, s))
    return out


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(rows(3), SCHEMA).cache()


# output name -> (windowagg's aggregation and column, Spark's expression)
ENTRIES = {
    "n": (("count", "*"), "count(*)"),
    "nx": (("count", "x"), "count(x)"),
    "si": (("sum", "i"), "sum(i)"),
    "sb": (("sum", "b"), "sum(b)"),
    "sx": (("sum", "x"), "sum(x)"),
    "sd": (("sum", "d"), "sum(d)"),
    "ai": (("avg", "i"), "avg(i)"),
    "ad": (("mean", "d"), "avg(d)"),
    "ax": (("mean", "x"), "avg(x)"),
    "mx": (("max", "x"), "max(x)"),
    "lx": (("min", "x"), "min(x)"),
    "md": (("min", "d"), "min(d)"),
    "mt": (("max", "ts"), "max(ts)"),
    "ms": (("max", "s"), "max(s)"),
    "li": (("MIN", "i"), "min(i)"),
}
SD = {"sdx": (("stddev_samp", "x"), "stddev_samp(x)"), "sdi": (("stddev", "i"), "stddev(i)")}

CASES = [
    ("tumbling:1m", "window(ts, '1 minute')"),
    ("sliding:5m/1m", "window(ts, '5 minutes', '1 minute')"),
    ("session:20s", "session_window(ts, '20 seconds')"),
]


def norm(v):
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else round(v, 6)
    return v


def compare(ours_df, theirs_df, keys, names) -> None:
    got = {(*tuple(r[k] for k in keys), r.window_start): r for r in ours_df.collect()}
    want = {(*tuple(r[k] for k in keys), r.window_start): r for r in theirs_df.collect()}
    assert got.keys() == want.keys() and got
    for at, w in want.items():
        for name in names:
            assert norm(got[at][name]) == norm(w[name]), (at, name, got[at][name], w[name])
        assert got[at].window_end == w.window_end


@pytest.mark.parametrize("spec,wexpr", CASES, ids=[c[0] for c in CASES])
def test_many_entries_in_one_call_equal_spark_values_and_types(df, spec, wexpr):
    from pyspark.sql import functions as F

    entries = ENTRIES | SD
    aggs = {name: e for name, (e, _) in entries.items()}
    ours = window_aggregate(df, time="ts", windows=[spec], aggs=aggs, key=["k", "g"])
    theirs = (
        df.groupBy("k", "g", F.expr(wexpr).alias("w"))
        .agg(*[F.expr(sql).alias(name) for name, (_, sql) in entries.items()])
        .select(
            "k",
            "g",
            F.col("w.start").alias("window_start"),
            F.col("w.end").alias("window_end"),
            *entries,
        )
    )
    assert ours.columns == ["k", "g", "window", "window_start", "window_end", *entries]
    ours_types = {f.name: f.dataType for f in ours.schema.fields}
    for f in theirs.schema.fields:  # Spark's own types, column by column
        assert ours_types[f.name] == f.dataType, f.name
    compare(ours, theirs, ["k", "g"], entries)


@pytest.mark.parametrize(
    "spec,key", [("sliding:2m/30s", None), ("session:7s", "k"), ("session:1s", None)]
)
def test_the_sql_partials_path_and_the_rows_path_agree(df, spec, key):
    """The same entries: answered from (key, slice) partials in Spark SQL, and (with stddev
    added, which needs the rows) from the rows; equal."""
    aggs = {name: e for name, (e, _) in ENTRIES.items()}
    fast = window_aggregate(df, time="ts", windows=[spec], aggs=aggs, key=key)
    rows_path = window_aggregate(
        df, time="ts", windows=[spec], key=key, aggs=aggs | {"sdx": ("stddev", "x")}
    )
    compare(fast, rows_path, [key] if key else [], ENTRIES)


def test_library_and_user_aggregations_on_spark(spark):
    data = [
        (k, T0 + dt.timedelta(seconds=s), float(s % 7)) for k in (1, 2) for s in range(0, 120, 3)
    ]
    df = spark.createDataFrame(data, "k int, ts timestamp, v double")
    aggs = {
        "cat": (Concat(), "v"),
        "med": ("median", "v"),
        "p9": ("quantile(q=0.9)", "v"),
        "col": ("collect", "v"),
        "hll": ("approx_count_distinct", "v"),
        "cd": ("countDistinct", "v"),
        "mc": (windowagg.aggregation("maxcount"), "v"),
    }
    out = window_aggregate(
        df, time="ts", windows=["tumbling:30s", "session:5s"], aggs=aggs, key="k"
    )
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert [types[n] for n in aggs] == [
        "string",
        "double",
        "double",
        "array<double>",
        "bigint",
        "bigint",
        "bigint",
    ]
    got = out.collect()
    assert len(got) == 2 * 4 + 2  # four tumbling windows and one session per key
    for r in got:
        vals = [v for k, t, v in data if k == r.k and r.window_start <= t < r.window_end]
        assert r.cat == "".join(f"{v}," for v in vals)  # in time order: not commutative
        assert r.col == vals
        assert math.isclose(r.med, direct(resolve("median"), vals))
        assert math.isclose(r.p9, direct(resolve("quantile(q=0.9)"), vals))
        assert r.cd == r.hll == len(set(vals))
        assert r.mc == vals.count(max(vals))


def test_nan_is_a_value_on_every_path(spark):
    """One window holding 1.0, NaN and 2.0: sum, mean and max NaN (as Spark's own), min 1.0,
    count 3, whether the call has one window type or several (the SQL partials path, and the
    rows path for a median beside them)."""
    from pyspark.sql import functions as F

    rows = [(T0 + dt.timedelta(seconds=s), v) for s, v in ((1, 1.0), (2, math.nan), (3, 2.0))]
    df = spark.createDataFrame(rows, "ts timestamp, v double")
    aggs = {
        "s": ("sum", "v"),
        "m": ("mean", "v"),
        "hi": ("max", "v"),
        "lo": ("min", "v"),
        "n": ("count", "v"),
    }
    ref = (
        df.groupBy(F.window("ts", "10 seconds"))
        .agg(F.sum("v"), F.avg("v"), F.max("v"), F.min("v"), F.count("v"))
        .first()[1:]
    )
    for windows, extra in [
        (["tumbling:10s"], {}),
        (["tumbling:10s", "session:5s"], {}),
        (["tumbling:10s"], {"md": ("median", "v")}),
    ]:
        out = window_aggregate(df, time="ts", windows=windows, aggs=aggs | extra).collect()
        assert len(out) == len(windows)
        for r in out:
            got = (r.s, r.m, r.hi, r.lo, r.n)
            expected = ["NaN", "NaN", "NaN", 1.0, 3]
            assert [norm(x) for x in got] == [norm(x) for x in ref] == expected, windows


@pytest.mark.parametrize(
    "windows",
    [["count-tumbling:7"], ["count-sliding:10/4"], ["count-sliding:6/3", "count-tumbling:4"]],
)
def test_count_windows_from_runs_of_rows_equal_the_rows_path(spark, windows):
    """Count windows of sums, counts, means, minima and maxima: from per-key runs of rows
    reduced in Spark SQL (a row number per key), and from the rows themselves (a median added:
    it needs them); equal, null keys and a key shorter than the window included. Times are
    distinct, so that both order each key's rows alike."""
    rng = random.Random(4)
    data = []
    for i in range(400):
        r = rng.random()
        x = None if r < 0.08 else math.nan if r < 0.11 else float(rng.randrange(-40, 90))
        k = None if i % 37 == 0 else rng.randrange(3)
        d = None if r > 0.93 else Decimal(rng.randrange(-9999, 9999)) / 100
        data.append((k, T0 + dt.timedelta(milliseconds=370 * i), x, rng.randrange(-9, 9), d))
    data.append((7, T0, 1.0, 1, None))  # a key with one row: in no window
    df = spark.createDataFrame(data, "k int, ts timestamp, x double, i int, d decimal(12, 2)")
    aggs = {
        "n": ("count", "*"),
        "nx": ("count", "x"),
        "sx": ("sum", "x"),
        "si": ("sum", "i"),
        "ax": ("mean", "x"),
        "mx": ("max", "x"),
        "li": ("min", "i"),
        "sd": ("sum", "d"),
        "ad": ("mean", "d"),
        "xd": ("max", "d"),
    }
    from pyspark.sql import functions as F

    fast = window_aggregate(df, time="ts", windows=windows, aggs=aggs, key="k")
    rows_path = window_aggregate(
        df, time="ts", windows=windows, key="k", aggs=aggs | {"dev": ("median", "x")}
    )
    assert fast.schema.fields == rows_path.schema.fields[:-1]  # the same types
    planned = fast._jdf.queryExecution().analyzed().toString()
    assert "row_number" in planned  # runs of rows reduced in SQL, not the rows path
    assert "row_number" not in rows_path._jdf.queryExecution().analyzed().toString()
    # one tumbling count window is answered in SQL alone: no Python stage
    assert ("MapInArrow" in planned) == (windows != ["count-tumbling:7"])
    # one shuffle: the row numbers' partitioning by key also places each key's runs
    assert fast._jdf.queryExecution().executedPlan().toString().count("Exchange ") == 1
    for spec in windows:
        compare(
            fast.where(F.col("window") == spec),
            rows_path.where(F.col("window") == spec),
            ["k"],
            aggs,
        )
