"""rolling_aggregate on local tables against SQL's definition row by row (tests/engine/
sql_oracle.py): random tables with several keys (a null key too), equal times, null and NaN
values, null times, integer, float, decimal and timestamp columns, range and rows frames with
preceding, following and unbounded bounds; every SQL aggregation, library aggregations and a
non-commutative user aggregation; the stream of batches (Spark's workers) equal to the whole
table; every bad input refused before any work."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg
from tests.aggs import Concat
from tests.engine.sql_oracle import frames, sql_aggregate
from windowagg.aggregations import resolve
from windowagg.engine.columns import arrange
from windowagg.engine.rolling.plan import plan_rolling
from windowagg.engine.rolling.stream import RollingStream
from windowagg.engine.rolling.table import compute
from windowagg.frames import FrameError, frame

SQL = ["sum", "count", "mean", "min", "max", "stddev", "first", "last"]
FRAMES = [
    "range:6",
    "range:-4,+3",
    "range:unbounded,0",
    "range:0,unbounded",
    "range:+2,+5",
    "rows:4",
    "rows:-2,+2",
    "rows:+1,+3",
    "rows:unbounded,0",
    "rows:-1,unbounded",
    "range:unbounded,unbounded",
]


def cents(rng) -> Decimal:
    return Decimal(int(rng.integers(-(10**6), 10**6))).scaleb(-2)


def random_rows(seed: int, n: int = 160) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        v = round(float(rng.normal()), 2)
        r = rng.random()
        v = None if r < 0.1 else math.nan if r < 0.15 else v
        t = int(rng.integers(0, 40))
        rows.append(
            {
                "k": None if rng.random() < 0.05 else int(rng.integers(0, 4)),
                "t": None if rng.random() < 0.04 else t,
                "id": i,
                "x": v,
                "i": None if rng.random() < 0.1 else int(rng.integers(-50, 50)),
                "d": None if rng.random() < 0.1 else cents(rng),
            }
        )
    return rows


def arrow(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [
                ("k", pa.int64()),
                ("t", pa.int64()),
                ("id", pa.int64()),
                ("x", pa.float64()),
                ("i", pa.int64()),
                ("d", pa.decimal128(10, 2)),
            ]
        ),
    )


def same(got, want) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, Decimal):
        return got == want
    if isinstance(want, float):
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)
    return got == want and type(got) is type(want)


def check(rows, table, aggs, **kw) -> None:
    out = windowagg.rolling_aggregate(
        table, time="t", key=kw.get("key", "k"), aggs=aggs, order_by=kw.get("order_by", "id")
    )
    keys = [kw.get("key", "k")] if isinstance(kw.get("key", "k"), str) else kw.get("key") or []
    for name, (agg, column, text) in aggs.items():
        got = out.column(name).to_pylist()
        f = frame(text)
        a = windowagg.aggregation(agg) if isinstance(agg, str) and agg not in SQL else agg
        sql = agg if agg in SQL else None
        for i, picked in enumerate(frames(rows, keys, "t", ["id"], f)):
            vals = [rows[j][column] if column != "*" else 1 for j in picked]
            want = sql_aggregate(sql or "library", vals, a)
            assert same(got[i], want), (name, i, got[i], want, vals)


@pytest.mark.parametrize("text", FRAMES)
def test_sql_aggregations_equal_the_definition(text) -> None:
    rows = random_rows(len(text) * 7 + ord(text[-1]))
    aggs = {f"{a}_{c}": (a, c, text) for a in SQL for c in ("x", "i")}
    aggs |= {
        "n": ("count", "*", text),
        "dsum": ("sum", "d", text),
        "dmin": ("min", "d", text),
        "davg": ("mean", "d", text),
        "dlast": ("last", "d", text),
    }
    check(rows, arrow(rows), aggs)


@pytest.mark.parametrize("text", ["range:-4,+3", "rows:-3,0", "range:unbounded,0"])
def test_library_and_user_aggregations_see_the_non_null_values(text) -> None:
    rows = [
        r | {"x": None if r["x"] is not None and math.isnan(r["x"]) else r["x"]}
        for r in random_rows(5)
    ]
    aggs = {
        "med": (windowagg.aggregation("median"), "x", text),
        "mc": (windowagg.aggregation("maxcount"), "i", text),
        "cat": (Concat(), "i", text),
        "gm": ("Quantile(q=0.9)", "x", text),
        "cd": ("count_distinct", "i", text),
    }
    out = windowagg.rolling_aggregate(arrow(rows), time="t", key="k", aggs=aggs, order_by="id")
    f = frame(text)
    for name, (agg, column, _) in aggs.items():
        got = out.column(name).to_pylist()
        for i, picked in enumerate(frames(rows, ["k"], "t", ["id"], f)):
            vals = [rows[j][column] for j in picked if rows[j][column] is not None]
            want = sql_aggregate("library", [float(v) for v in vals], resolve(agg))
            if name == "cat":
                assert got[i] == want, (i, got[i], want)
            else:
                assert same(got[i], None if want is None else float(want)), (name, i)


def test_result_types_are_sparks() -> None:
    rows = random_rows(1, 40)
    aggs = {
        "a": ("sum", "i", "rows:3"),
        "b": ("sum", "x", "rows:3"),
        "c": ("sum", "d", "rows:3"),
        "e": ("avg", "d", "rows:3"),
        "f": ("avg", "i", "rows:3"),
        "g": ("max", "d", "rows:3"),
        "h": ("count", "x", "rows:3"),
        "j": ("first", "i", "rows:3"),
        "k2": ("stddev", "i", "rows:3"),
        "l": ("argmax", "x", "rows:3"),
    }
    out = windowagg.rolling_aggregate(arrow(rows), time="t", key="k", aggs=aggs)
    types = {n: str(out.schema.field(n).type) for n in aggs}
    assert types == {
        "a": "int64",
        "b": "double",
        "c": "decimal128(20, 2)",
        "e": "decimal128(14, 6)",
        "f": "double",
        "g": "decimal128(10, 2)",
        "h": "int64",
        "j": "int64",
        "k2": "double",
        "l": "int64",
    }


def test_integer_sums_are_exact_beyond_doubles() -> None:
    big = 2**60
    t = pa.table({"t": [1, 2, 3], "v": [big, 1, -big]})
    out = windowagg.rolling_aggregate(
        t, time="t", aggs={"s": ("sum", "v", "rows:unbounded,0"), "m": ("max", "v", "rows:2")}
    )
    assert out.column("s").to_pylist() == [big, big + 1, 1]
    assert out.column("m").to_pylist() == [big, big, 1]


def test_timestamps_dates_and_pandas() -> None:
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ts = [base + dt.timedelta(minutes=m) for m in (0, 20, 50, 59, 61, 130)]
    amount = [1.0, 2.0, np.nan, 4.0, 5.0, 6.0]
    pdf = pd.DataFrame({"ts": ts, "card": list("abaaba"), "amount": amount}, index=list("uvwxyz"))
    out = windowagg.rolling_aggregate(
        pdf,
        time="ts",
        key="card",
        aggs={
            "s": ("sum", "amount", "range:1h"),
            "n": ("count", "amount", "range:-30m,+30m"),
            "last_ts": ("max", "ts", "range:1h"),
        },
    )
    assert list(out.index) == list("uvwxyz")  # the input's rows, order and index
    assert out["s"].tolist() == [1.0, 2.0, 1.0, 5.0, 7.0, 6.0]  # pandas' NaN is missing
    assert out["n"].tolist() == [1, 1, 1, 1, 1, 1]
    assert out["last_ts"].tolist() == [
        pd.Timestamp(x) for x in (ts[0], ts[1], ts[2], ts[3], ts[4], ts[5])
    ]
    dates = windowagg.rolling_aggregate(
        {
            "day": np.array(["2026-01-01", "2026-01-03", "2026-01-04"], "datetime64[D]"),
            "v": np.array([1, 2, 3]),
        },
        time="day",
        aggs={"s": ("sum", "v", "range:2d")},
    )
    assert dates["s"].tolist() == [1, 3, 5]


PLAN_AGGS = {
    "s": ("sum", "x", "range:-3,+2"),
    "m": ("max", "i", "rows:-2,+1"),
    "c": ("count", "*", "range:unbounded,0"),
    "f": ("first", "d", "rows:3"),
    "md": (windowagg.aggregation("median"), "x", "range:5"),
}


def by_time(table: pa.Table) -> pa.Table:
    """Time order only, keys interleaved, as Spark hands a partition to a worker."""
    import pyarrow.compute as pc

    order = pc.sort_indices(
        table, sort_keys=[("t", "ascending", "at_start"), ("id", "ascending", "at_start")]
    )
    return table.take(order)


def run_stream(plan, table, cuts, min_rows) -> dict:
    stream = RollingStream(plan, table.column_names, min_rows=min_rows)
    out, at = [], 0
    for c in [*cuts, table.num_rows]:
        piece = table.slice(at, max(0, min(c, table.num_rows - at)))
        at += piece.num_rows
        for b in piece.to_batches():
            out += stream.feed(b)
    out += stream.finish()
    rows = [r for b in out for r in b.to_pylist()]
    got = {r["id"]: r for r in rows}
    assert len(got) == len(rows) == table.num_rows  # every row once
    return got


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6), st.lists(st.integers(1, 60), min_size=1, max_size=8), st.integers(1, 50)
)
def test_a_stream_of_batches_equals_the_whole_table(seed, cuts, min_rows) -> None:
    """Spark's workers see a partition sorted by time as batches: answers equal the whole
    table's, every row once, whatever the cuts and however often the stream rounds."""
    table = arrow(random_rows(seed, 150))
    plan = plan_rolling(table.schema, time="t", key="k", order_by="id", aggs=PLAN_AGGS)
    order = arrange(plan, table)[0]
    whole = table if order is None else table.take(order)
    cols = compute(plan, whole.combine_chunks())
    want = {
        r["id"]: r
        for r in pa.Table.from_arrays(
            [*whole.columns, *cols], names=[*whole.column_names, *PLAN_AGGS]
        ).to_pylist()
    }
    got = run_stream(plan, by_time(table), cuts, min_rows)
    assert got.keys() == want.keys()
    for i, w in want.items():
        assert all(same(got[i][c], w[c]) for c in w), (i, got[i], w)


def test_stream_memory_is_bounded_by_the_frames() -> None:
    """100 interleaved keys of 2000 rows each, in batches of 10k: what the stream keeps never
    exceeds the keys' frames (101 rows back, 2 ahead) and the rows waiting for theirs."""
    n = 200_000
    i = np.arange(n)
    table = pa.table({"k": i % 100, "t": i // 100, "v": np.ones(n)})
    plan = plan_rolling(
        table.schema, time="t", key="k", order_by=None, aggs={"s": ("sum", "v", "range:-100,+2")}
    )
    stream = RollingStream(plan, table.column_names, min_rows=10_000)
    held, rows = 0, 0
    for b in table.to_batches(max_chunksize=10_000):
        for o in stream.feed(b):
            rows += o.num_rows
            t, s = o.column("t").to_numpy(), o.column("s").to_numpy()
            assert (s == np.minimum(t, 100) + 3).all()  # rows t - 100 .. t + 2 of the key
        held = max(held, 0 if stream.carry is None else stream.carry.num_rows)
    rows += sum(o.num_rows for o in stream.finish())
    assert rows == n and 0 < held <= 100 * 105


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        ({"aggs": {"s": ("sum", "nope", "rows:3")}}, ValueError, "no column 'nope'"),
        ({"aggs": {"s": ("nope", "x", "rows:3")}}, ValueError, "unknown aggregation"),
        ({"aggs": {"s": ("sum", "x", "range:1h")}}, FrameError, "plain numbers"),
        ({"aggs": {"s": ("sum", "x", "window:3")}}, FrameError, "range or rows"),
        ({"aggs": {"s": ("sum", "x")}}, TypeError, "(aggregation, column, frame)"),
        ({"aggs": {}}, TypeError, "non-empty dict"),
        ({"aggs": {"x": ("sum", "x", "rows:3")}}, ValueError, "already exists"),
        ({"aggs": {"s": ("sum", "*", "rows:3")}}, ValueError, "only count"),
        ({"aggs": {"s": ("sum", "name", "rows:3")}}, TypeError, "numeric column"),
        ({"aggs": {"s": ("bloom", "x", "rows:3")}}, ValueError, "filter"),
        ({"aggs": {"s": ("sum", "x", "rows:3")}, "time": "name"}, TypeError, "timestamp, a date"),
        ({"aggs": {"s": ("sum", "x", "rows:3")}, "key": "kk"}, ValueError, "no key column"),
        (
            {"aggs": {"s": ("sum", "x", "rows:3")}, "order_by": ["id", "zz"]},
            ValueError,
            "no order_by column",
        ),
    ],
)
def test_bad_input_is_one_clear_error(kw, error, message) -> None:
    table = pa.table({"t": [1, 2], "x": [1.0, 2.0], "name": ["a", "b"], "id": [1, 2]})
    kw = {"time": "t"} | kw
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        windowagg.rolling_aggregate(table, **kw)
    with pytest.raises(TypeError, match="pandas DataFrame, a Polars DataFrame, a pyarrow Table"):
        windowagg.rolling_aggregate([1, 2], time="t", aggs={"s": ("sum", "x", "rows:3")})


def test_sql_aggregations_run_compiled(monkeypatch) -> None:
    """Not only equal numbers: sum, mean, min, max, stddev and quantiles over doubles take the
    kernels, never the Python reference."""
    from windowagg.engine import sweep as module

    def refuse(*a, **k):
        raise AssertionError("the reference ran")

    monkeypatch.setattr(module, "_reference", refuse)
    rows = random_rows(9)
    aggs = {
        a: (a, "x", "range:-4,+3")
        for a in (
            "sum",
            "mean",
            "min",
            "max",
            "stddev",
            "median",
            "quantile(q=0.25)",
            "count_distinct",
            "hll",
        )
    }
    out = windowagg.rolling_aggregate(arrow(rows), time="t", key="k", aggs=aggs)
    assert all(out.column(a).null_count < len(rows) for a in aggs)


def test_frames_ending_together_share_one_deque(monkeypatch) -> None:
    """min/max over frames that end together (the last 3, 10 and all time units; the last 2,
    5 and all rows) run one shared deque per column and aggregation, and equal the
    definition; a frame ending elsewhere gets its own."""
    import windowagg.kernels.select_frames as kernel

    calls = []
    real = kernel.select_frames

    def counted(keys, lo, *rest):
        calls.append(lo.shape[0])
        return real(keys, lo, *rest)

    monkeypatch.setattr(kernel, "select_frames", counted)
    rows = random_rows(21, 200)
    frames_ = [
        "range:3",
        "range:10",
        "range:unbounded,0",
        "rows:2",
        "rows:5",
        "rows:unbounded,0",
        "range:-2,+4",
    ]
    aggs = {
        f"{a}{j}": (a, c, f) for j, f in enumerate(frames_) for a in ("max", "min") for c in ("x",)
    }
    check(rows, arrow(rows), aggs)
    assert sorted(calls) == [1, 1, 3, 3, 3, 3]  # per aggregation: 3 range, 3 rows, 1 alone
