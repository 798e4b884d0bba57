"""Every Spark aggregate function windowagg accepts under Spark's name, against Spark's own
function on the same random rows (several keys and a null key, ties, nulls and NaN, int, double,
decimal and boolean columns, empty frames): value and type equal to
``groupBy(key, window(...)).agg(F.<name>(...))`` and to ``F.<name>(...).over(Window...)``, for
windowagg's local tables and for ``windowagg.spark`` alike.

``percentile_approx`` is compared on columns without NaN: Spark's sketch places a NaN where its
insertion order leaves it (a window of six numbers and a NaN gave the sixth number at p = 0.9,
another the NaN's neighbour), windowagg sorts NaN above every number, as ``percentile_disc``.

Functions whose answer depends on the order of a window's rows (first, last, any_value,
collect_list, max_by and min_by on ties) are compared where Spark's order is defined: over
ordered frames on rows with distinct times. The frames' engine is the one windows use.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

import windowagg
from windowagg import spark as wspark

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)
SCHEMA = "k int, ts timestamp, i int, x double, y double, d decimal(12,2), b boolean"
ARROW = pa.schema(
    [
        ("k", pa.int32()),
        ("ts", pa.timestamp("us")),
        ("i", pa.int32()),
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("d", pa.decimal128(12, 2)),
        ("b", pa.bool_()),
    ]
)


def rows(seed: int, n: int = 300, distinct: bool = False) -> list[tuple]:
    """Random rows in random order; ``distinct``: no two rows of a key share a time and no two
    share a ``y`` (Spark's order of ties is its own)."""
    rng = random.Random(seed)
    out, used = [], set()
    for j in range(n):
        k = None if rng.random() < 0.05 else rng.randrange(3)
        ms = rng.randrange(0, 600_000) if distinct else rng.randrange(0, 600) * 1000
        if distinct and (k, ms) in used:
            continue
        used.add((k, ms))
        r = rng.random()
        x = None if r < 0.08 else math.nan if r < 0.11 else float(rng.randrange(-20, 40))
        y = (
            None
            if rng.random() < 0.06
            else (j + rng.random() if distinct else float(rng.randrange(8)))
        )
        i = None if rng.random() < 0.05 else rng.randrange(-9, 30)
        d = None if rng.random() < 0.1 else Decimal(rng.randrange(-(10**5), 10**5)).scaleb(-2)
        b = None if rng.random() < 0.1 else rng.random() < 0.6
        out.append((k, T0 + dt.timedelta(milliseconds=ms), i, x, y, d, b))
    return out


def arrow(data: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in data], schema=ARROW)


#: output name -> (windowagg's aggregation and column, Spark's expression): order-independent
ENTRIES = {
    "med_x": (("median", "x"), "median(x)"),
    "med_i": (("median", "i"), "median(i)"),
    "med_d": (("median", "d"), "median(d)"),
    "pct_x": (("percentile(p=0.3)", "x"), "percentile(x, 0.3)"),
    "pct_i": (("percentile(p=0.9)", "i"), "percentile(i, 0.9)"),
    "disc_x": (("percentile_disc(p=0.3)", "x"), "percentile_disc(0.3) WITHIN GROUP (ORDER BY x)"),
    "disc_i": (("percentile_disc(p=0)", "i"), "percentile_disc(0.0) WITHIN GROUP (ORDER BY i)"),
    "apx_i": (("percentile_approx(p=0.25)", "i"), "percentile_approx(i, 0.25)"),
    "apx_y": (("approx_percentile(p=0.9)", "y"), "approx_percentile(y, 0.9)"),
    "apx_d": (("percentile_approx(p=0.5)", "d"), "percentile_approx(d, 0.5)"),
    "vs_x": (("var_samp", "x"), "var_samp(x)"),
    "v_i": (("variance", "i"), "variance(i)"),
    "vp_d": (("var_pop", "d"), "var_pop(d)"),
    "sp_x": (("stddev_pop", "x"), "stddev_pop(x)"),
    "sd_i": (("stddev_samp", "i"), "stddev_samp(i)"),
    "std_x": (("std", "x"), "std(x)"),
    "sk_x": (("skewness", "x"), "skewness(x)"),
    "sk_i": (("skewness", "i"), "skewness(i)"),
    "ku_x": (("kurtosis", "x"), "kurtosis(x)"),
    "ku_d": (("kurtosis", "d"), "kurtosis(d)"),
    "pr_i": (("product", "i"), "product(i)"),
    "pr_x": (("product", "x"), "product(x)"),
    "ci": (("count_if", "b"), "count_if(b)"),
    "ba": (("bool_and", "b"), "bool_and(b)"),
    "bo": (("bool_or", "b"), "bool_or(b)"),
    "ev": (("every", "b"), "every(b)"),
    "so": (("some", "b"), "some(b)"),
    "an": (("any", "b"), "any(b)"),
    "mo_i": (("mode", "i"), "mode(i, true)"),
    "mo_x": (("mode", "x"), "mode(x, true)"),
    "cs_i": (("collect_set", "i"), "collect_set(i)"),
    "cs_x": (("collect_set", "x"), "collect_set(x)"),
    "co_xy": (("corr", ("x", "y")), "corr(x, y)"),
    "co_iy": (("corr", ("i", "y")), "corr(i, y)"),
    "cv_xi": (("covar_samp", ("x", "i")), "covar_samp(x, i)"),
    "cp_dy": (("covar_pop", ("d", "y")), "covar_pop(d, y)"),
    "s_i": (("sum", "i"), "sum(i)"),
    "a_d": (("avg", "d"), "avg(d)"),
    "m_x": (("mean", "x"), "mean(x)"),
    "n_x": (("count", "x"), "count(x)"),
    "mx_x": (("max", "x"), "max(x)"),
    "mn_d": (("min", "d"), "min(d)"),
    "sd_x": (("stddev", "x"), "stddev(x)"),
}
#: order-dependent: compared over ordered frames on rows with distinct times and ys
ORDERED = {
    "f_x": (("first", "x"), "first(x)"),
    "fi_x": (("first(ignorenulls=True)", "x"), "first(x, true)"),
    "l_i": (("last", "i"), "last(i)"),
    "li_x": (("last(ignorenulls=True)", "x"), "last(x, true)"),
    "fv_x": (("first_value", "d"), "first_value(d)"),
    "lv_x": (("last_value", "b"), "last_value(b)"),
    "av_x": (("any_value", "x"), "any_value(x)"),
    "cl_x": (("collect_list", "x"), "collect_list(x)"),
    "cl_d": (("collect_list", "d"), "collect_list(d)"),
    "mb_x": (("max_by", ("x", "y")), "max_by(x, y)"),
    "nb_d": (("min_by", ("d", "y")), "min_by(d, y)"),
    "mb_b": (("max_by", ("b", "i")), "max_by(b, i)"),
}
#: window functions Spark refuses over a frame (its percentiles take the whole partition)
NOT_IN_FRAMES = ("disc_x", "disc_i", "mo_i", "mo_x", "med_x", "med_i", "med_d", "pct_x", "pct_i")


def spark_expr(sql: str):
    from pyspark.sql import functions as F

    if sql.startswith("product("):  # a DataFrame function only
        return F.product(sql[len("product(") : -1])
    return F.expr(sql)


def same(a, b) -> bool:
    """Equal values: numbers to 1e-9 relative (Spark and windowagg merge in other orders),
    NaN equal to NaN, lists element by element, anything else exactly, types included."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def spark_type(t):
    """A Spark type with arrays' element nullability dropped (Arrow's lists do not carry
    Spark's ``containsNull``)."""
    from pyspark.sql.types import ArrayType

    return ArrayType(t.elementType, True) if isinstance(t, ArrayType) else t


def check(got_rows, got_types, theirs, keys: list[str], names) -> None:
    """Rows equal by ``keys``, value by value (sets compared sorted), and Spark's types."""
    want_types = {f.name: f.dataType for f in theirs.schema.fields}
    for n in names:
        assert spark_type(got_types[n]) == spark_type(want_types[n]), n
    want = {tuple(r[k] for k in keys): r.asDict() for r in theirs.collect()}
    got = {tuple(r[k] for k in keys): r for r in got_rows}
    assert got.keys() == want.keys() and got
    for at, w in want.items():
        for n in names:
            a, b = got[at][n], w[n]
            if n.startswith("cs_"):  # Spark's set order is its hash set's
                b = sorted(b, key=lambda v: (isinstance(v, float) and math.isnan(v), v))
            assert same(a, b), (at, n, a, b)


def local_rows(table: pa.Table) -> tuple[list[dict], dict]:
    from pyspark.sql.pandas.types import from_arrow_type

    types = {f.name: from_arrow_type(f.type, prefer_timestamp_ntz=False) for f in table.schema}
    return table.to_pylist(), types


def spark_rows(df) -> tuple[list, dict]:
    return df.collect(), {f.name: f.dataType for f in df.schema.fields}


@pytest.mark.parametrize(
    "spec,wexpr",
    [
        ("tumbling:60s", "window(ts, '60 seconds')"),
        ("sliding:90s/30s", "window(ts, '90 seconds', '30 seconds')"),
        ("session:10s", "session_window(ts, '10 seconds')"),
    ],
)
def test_windows_equal_spark(spark, spec, wexpr) -> None:
    from pyspark.sql import functions as F

    data = rows(11)
    df = spark.createDataFrame(data, SCHEMA)
    theirs = (
        df.groupBy("k", F.expr(wexpr).alias("w"))
        .agg(*[spark_expr(sql).alias(n) for n, (_, sql) in ENTRIES.items()])
        .select("k", F.col("w.start").alias("window_start"), *ENTRIES)
    )
    kw = {
        "time": "ts",
        "windows": [spec],
        "key": "k",
        "aggs": {n: e for n, (e, _) in ENTRIES.items()},
    }
    local = windowagg.window_aggregate(arrow(data), **kw)
    check(*local_rows(local), theirs, ["k", "window_start"], ENTRIES)
    check(*spark_rows(wspark.window_aggregate(df, **kw)), theirs, ["k", "window_start"], ENTRIES)


FRAMES = [
    ("range:30s", lambda w: w.rangeBetween(-30 * 10**6, 0)),
    ("range:-20s,+10s", lambda w: w.rangeBetween(-20 * 10**6, 10 * 10**6)),
    ("rows:4", lambda w: w.rowsBetween(-3, 0)),
    ("rows:-5,-1", lambda w: w.rowsBetween(-5, -1)),
]


@pytest.mark.parametrize("frame,between", FRAMES, ids=[f[0] for f in FRAMES])
def test_rolling_frames_equal_spark(spark, frame, between) -> None:
    """Spark's own window function over the same frame (range frames over the time in
    microseconds), on rows with distinct times: every entry, the order-dependent ones too."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    data = [(*r, j) for j, r in enumerate(rows(12, distinct=True))]
    entries = {n: v for n, v in (ENTRIES | ORDERED).items() if n not in NOT_IN_FRAMES}
    df = spark.createDataFrame(data, SCHEMA + ", id int")
    w = between(Window.partitionBy("k").orderBy(F.expr("unix_micros(ts)")))
    theirs = df.select("id", *[spark_expr(sql).over(w).alias(n) for n, (_, sql) in entries.items()])
    aggs = {n: (*e, frame) for n, (e, _) in entries.items()}
    table = arrow([r[:-1] for r in data]).append_column("id", pa.array([r[-1] for r in data]))
    local = windowagg.rolling_aggregate(table, time="ts", key="k", aggs=aggs)
    check(*local_rows(local), theirs, ["id"], entries)
    ours = wspark.rolling_aggregate(df, time="ts", key="k", aggs=aggs)
    check(*spark_rows(ours), theirs, ["id"], entries)


def test_percentiles_over_whole_partitions_equal_spark(spark) -> None:
    """The percentiles and the mode, which Spark computes over a whole partition (no frame):
    windowagg's unbounded frame."""
    from pyspark.sql import Window

    data = [(*r, j) for j, r in enumerate(rows(13))]
    entries = {n: ENTRIES[n] for n in NOT_IN_FRAMES}
    df = spark.createDataFrame(data, SCHEMA + ", id int")
    w = Window.partitionBy("k")
    theirs = df.select("id", *[spark_expr(sql).over(w).alias(n) for n, (_, sql) in entries.items()])
    aggs = {n: (*e, "range:unbounded,unbounded") for n, (e, _) in entries.items()}
    table = arrow([r[:-1] for r in data]).append_column("id", pa.array([r[-1] for r in data]))
    check(
        *local_rows(windowagg.rolling_aggregate(table, time="ts", key="k", aggs=aggs)),
        theirs,
        ["id"],
        entries,
    )
    check(
        *spark_rows(wspark.rolling_aggregate(df, time="ts", key="k", aggs=aggs)),
        theirs,
        ["id"],
        entries,
    )


def test_every_spark_name_windowagg_accepts_is_compared_here() -> None:
    from windowagg.aggregations import SPARK_FUNCTIONS

    used = {e[0].split("(")[0] for e, _ in (ENTRIES | ORDERED).values()}
    assert used == set(SPARK_FUNCTIONS)


#: the functions Spark SQL pre-aggregates per (key, slice) before windowagg merges the slices
MERGED = {
    n: ENTRIES[n]
    for n in (
        *("vs_x", "v_i", "vp_d", "sp_x", "sd_i", "std_x", "pr_i", "pr_x", "ci", "ba", "bo"),
        *("ev", "so", "an", "s_i", "a_d", "m_x", "n_x", "mx_x", "mn_d", "sd_x"),
        *("sk_x", "sk_i", "ku_x", "ku_d", "co_xy", "co_iy", "cv_xi", "cp_dy"),
    )
} | {n: ORDERED[n] for n in ("mb_x", "nb_d")}


def merged_call(spec: str) -> dict:
    """window_aggregate's arguments for every entry of :data:`MERGED` over ``spec``."""
    return {
        "time": "ts",
        "windows": [spec],
        "key": "k",
        "aggs": {n: e for n, (e, _) in MERGED.items()},
    }


def spied(monkeypatch) -> list:
    """The plans that ran on Spark SQL's partials (``partials_by_key``)."""
    from windowagg.spark import batch

    seen, real = [], batch.partials_by_key

    def spy(df, plan):
        seen.append(plan)
        return real(df, plan)

    monkeypatch.setattr(batch, "partials_by_key", spy)
    return seen


@pytest.mark.parametrize(
    "spec,wexpr",
    [
        ("sliding:90s/30s", "window(ts, '90 seconds', '30 seconds')"),
        ("session:10s", "session_window(ts, '10 seconds')"),
    ],
)
def test_windows_on_spark_sql_partials_equal_spark(spark, monkeypatch, spec, wexpr) -> None:
    """The functions windowagg answers from Spark SQL's partials per (key, slice), the
    moments and co-moments merged by their family's formulas and max_by/min_by from each
    slice's extreme: the
    partials path runs, and gives Spark's own values and types (rows with distinct times and
    ys, so that max_by has one answer)."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(rows(14, distinct=True), SCHEMA)
    theirs = (
        df.groupBy("k", F.expr(wexpr).alias("w"))
        .agg(*[spark_expr(sql).alias(n) for n, (_, sql) in MERGED.items()])
        .select("k", F.col("w.start").alias("window_start"), *MERGED)
    )
    seen = spied(monkeypatch)
    kw = merged_call(spec)
    check(*spark_rows(wspark.window_aggregate(df, **kw)), theirs, ["k", "window_start"], MERGED)
    assert len(seen) == 1


@pytest.mark.parametrize("spec", ["count-tumbling:7", "count-sliding:6/3"])
def test_count_windows_on_spark_sql_partials_equal_the_rows(spark, monkeypatch, spec) -> None:
    """Count windows of the same functions (Spark has none): the partials path (Spark SQL
    alone for one tumbling window) equal to the local engine over the rows, which the tests
    above hold to Spark's answers."""
    data = rows(15, distinct=True)
    seen = spied(monkeypatch)
    kw = merged_call(spec)
    ours = wspark.window_aggregate(spark.createDataFrame(data, SCHEMA), **kw)
    got = {(r["k"], r["window_start"]): r.asDict() for r in ours.collect()}
    local = windowagg.window_aggregate(arrow(data), **kw).to_pylist()
    assert got.keys() == {(r["k"], r["window_start"]) for r in local} and got
    for r in local:
        for n in MERGED:
            assert same(got[(r["k"], r["window_start"])][n], r[n]), (r["k"], n)
    assert len(seen) == (spec != "count-tumbling:7")
