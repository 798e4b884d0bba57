"""Edges of point-in-time frames and of the holistic aggregations, against a nested loop, on
Arrow, Polars and pandas: columns holding only nulls (``mode``, ``collect_set``), no events at
all, events without a time (in no frame, whatever the frame), output names that only the
events table has, keys of other types between events and queries (compared by value), and
nested keys (refused, by name)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import windowagg
from windowagg.frames import frame

KINDS = ["arrow", "polars", "pandas"]
INT64 = pa.int64()


def as_kind(table: pa.Table, kind: str) -> Any:
    if kind == "polars":
        return pl.from_arrow(table)
    if kind == "pandas":
        return table.to_pandas()
    return table


def rows_of(out: Any) -> list[dict]:
    """Any table kind back as Arrow rows (pandas' NaN read as null: its own rule)."""
    if isinstance(out, pl.DataFrame):
        out = out.to_arrow()
    elif isinstance(out, pd.DataFrame):
        out = pa.Table.from_pandas(out, preserve_index=False)
    rows = out.to_pylist()
    return [{k: _none(v) for k, v in r.items()} for r in rows]


def _none(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, list):
        return [_none(x) for x in v]
    return v


def spark_percentile(xs: list[float], p: float) -> float | None:
    """Spark's percentile: the values at the floor and the ceiling of rank (n - 1) * p,
    interpolated."""
    if not xs:
        return None
    s = sorted(xs)
    pos = (len(s) - 1) * p
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (pos - lo) * (s[hi] - s[lo])


def definition(agg: str, values: list[Any]) -> Any:
    """What Spark answers over a frame's values (nulls skipped, but by ``first``)."""
    xs = [v for v in values if v is not None]
    if agg == "count":
        return len(xs)
    if agg == "collect_list":
        return xs
    if agg == "collect_set":
        return sorted(set(xs))
    if agg == "first":
        return values[0] if values else None
    if not xs:
        return None
    if agg == "sum":
        return sum(xs)
    if agg == "min":
        return min(xs)
    if agg == "median":
        return float(statistics.median(xs))
    if agg == "percentile(p=0.25)":
        return spark_percentile([float(x) for x in xs], 0.25)
    if agg == "mode":
        counts = Counter(xs)
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)
    raise AssertionError(agg)


def in_frame(events: list[dict], q: dict, text: str) -> list[dict]:
    """A query's events by the definition: the same key by value (a null matches nothing), a
    time (an event without one is in no frame), then the frame placed at the query's time."""
    f = frame(text)
    if q["key"] is None or q["when"] is None:
        return []
    group = sorted(
        (e for e in events if e["k"] is not None and e["k"] == q["key"] and e["t"] is not None),
        key=lambda e: (e["t"], e["id"]),
    )
    if f.kind == "range":
        return [
            e
            for e in group
            if (f.start is None or e["t"] >= q["when"] + f.start)
            and (f.end is None or e["t"] <= q["when"] + f.end)
        ]
    p = sum(1 for e in group if e["t"] <= q["when"]) - 1
    lo = 0 if f.start is None else max(p + int(f.start), 0)
    hi = len(group) - 1 if f.end is None else min(p + int(f.end), len(group) - 1)
    return group[lo : hi + 1]


def events_table(rows: list[dict], key: pa.DataType = INT64) -> pa.Table:
    return pa.table(
        {
            "k": pa.array([r["k"] for r in rows], key),
            "t": pa.array([r["t"] for r in rows], pa.int64()),
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "x": pa.array([r["x"] for r in rows], pa.float64()),
        }
    )


def queries_table(rows: list[dict], key: pa.DataType = INT64) -> pa.Table:
    return pa.table(
        {
            "qid": pa.array([q["qid"] for q in rows], pa.int64()),
            "key": pa.array([q["key"] for q in rows], key),
            "when": pa.array([q["when"] for q in rows], pa.int64()),
        }
    )


def check_at(events, qrows, out, aggs) -> None:
    got = rows_of(out)
    assert [r["qid"] for r in got] == [q["qid"] for q in qrows]
    for name, (agg, column, text) in aggs.items():
        for r, q in zip(got, qrows):
            vals = [e[column] for e in in_frame(events, q, text)]
            want = definition(agg, vals)
            assert (
                r[name] == pytest.approx(want) if isinstance(want, float) else (r[name] == want)
            ), (name, q, r[name], want, vals)


def at(events, queries, aggs, **kw):
    args = {"time": "t", "key": "k", "order_by": "id", "at_time": "when", "at_key": "key"}
    return windowagg.rolling_aggregate(events, aggs=aggs, at=queries, **(args | kw))


# one key's values all null, another's some null: empty frames beside full ones
NULLS = [{"k": 1, "t": t, "id": i, "x": None} for i, t in enumerate([1, 2, 2, 5, 9, 14])] + [
    {"k": 2, "t": t, "id": 10 + i, "x": x} for i, (t, x) in enumerate([(1, 3.0), (3, None)])
]
HOLISTIC = ["mode", "collect_set", "median", "percentile(p=0.25)", "count", "collect_list"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("text", ["range:5", "rows:3", "range:unbounded,unbounded"])
def test_only_nulls_in_rolling_frames(kind, text) -> None:
    for rows in (NULLS, [r for r in NULLS if r["k"] == 1]):  # the column all null, or not
        aggs = {a: (a, "x", text) for a in HOLISTIC}
        out = windowagg.rolling_aggregate(
            as_kind(events_table(rows), kind), time="t", key="k", order_by="id", aggs=aggs
        )
        queries = [{"key": r["k"], "when": r["t"], "qid": r["id"]} for r in rows]
        for name, (agg, column, _) in aggs.items():
            for r, q in zip(rows_of(out), queries):
                group = sorted((e for e in rows if e["k"] == q["key"]), key=lambda e: e["id"])
                f = frame(text)
                if f.kind == "rows":
                    p = group.index(next(e for e in group if e["id"] == q["qid"]))
                    vals = group[max(p + int(f.start or -len(group)), 0) : p + 1]
                else:
                    vals = [e for e in group if f.start is None or e["t"] >= q["when"] + f.start]
                    vals = [e for e in vals if f.end is None or e["t"] <= q["when"] + f.end]
                want = definition(agg, [e[column] for e in vals])
                assert r[name] == want, (name, q, r[name], want)
        if len(rows) == 6:
            assert {tuple(r["collect_set"]) for r in rows_of(out)} == {()}
            assert {r["mode"] for r in rows_of(out)} == {None}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("window", ["tumbling:4", "sliding:6/2", "session:2"])
def test_only_nulls_in_windows(kind, window) -> None:
    for rows in (NULLS, [r for r in NULLS if r["k"] == 1]):
        out = windowagg.window_aggregate(
            as_kind(events_table(rows), kind),
            time="t",
            key="k",
            windows=[window],
            aggs={a: (a, "x") for a in HOLISTIC},
        )
        got = rows_of(out)
        assert got
        for r in got:
            vals = [
                e["x"]
                for e in sorted(rows, key=lambda e: (e["t"], e["id"]))
                if e["k"] == r["k"] and r["window_start"] <= e["t"] < r["window_end"]
            ]
            assert vals or window.startswith("sliding")
            for agg in HOLISTIC:
                assert r[agg] == definition(agg, vals), (agg, r, vals)


EMPTY_AGGS = [*HOLISTIC, "sum", "min", "first", "percentile_approx(p=0.5)"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("text", ["range:5", "rows:2", "range:unbounded,unbounded"])
def test_no_events_at_all(kind, text) -> None:
    events = events_table([])
    qrows = [
        {"key": k, "when": w, "qid": i} for i, (k, w) in enumerate([(1, 5), (2, 0), (None, 1)])
    ]
    aggs = {a: (a, "x", text) for a in EMPTY_AGGS}
    out = at(as_kind(events, kind), as_kind(queries_table(qrows), kind), aggs)
    for r in rows_of(out):
        assert r["count"] == 0
        assert r["collect_set"] == [] and r["collect_list"] == []
        for a in ["mode", "median", "percentile(p=0.25)", "sum", "min", "first"]:
            assert r[a] is None, (a, r)
        assert r["percentile_approx(p=0.5)"] is None


TIMELESS = [
    {"k": 1, "t": None, "id": 0, "x": 100.0},
    {"k": 1, "t": 3, "id": 1, "x": 1.0},
    {"k": 1, "t": None, "id": 2, "x": 200.0},
    {"k": 1, "t": 5, "id": 3, "x": 2.0},
    {"k": 1, "t": 8, "id": 4, "x": 4.0},
    {"k": 2, "t": None, "id": 5, "x": 300.0},
    {"k": None, "t": 4, "id": 6, "x": 400.0},
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "text",
    [
        "rows:2",
        "rows:unbounded,0",
        "rows:-1,+1",
        "range:unbounded,0",
        "range:unbounded,unbounded",
        "range:5",
    ],
)
def test_events_without_a_time_lie_in_no_frame(kind, text) -> None:
    qrows = [
        {"key": k, "when": w, "qid": i}
        for i, (k, w) in enumerate([(1, 0), (1, 3), (1, 6), (1, 20), (2, 5), (None, 4), (1, None)])
    ]
    aggs = {"n": ("count", "x", text), "s": ("sum", "x", text), "l": ("collect_list", "x", text)}
    out = at(as_kind(events_table(TIMELESS), kind), as_kind(queries_table(qrows), kind), aggs)
    check_at(TIMELESS, qrows, out, aggs)
    got = rows_of(out)
    assert all(v < 100 for r in got for v in r["l"])  # no timeless event in any frame
    if text in ("rows:2", "rows:unbounded,0", "range:unbounded,0"):  # up to the query
        assert got[0]["n"] == 0 and got[4]["n"] == 0  # before every event; a timeless key


@pytest.mark.parametrize("kind", KINDS)
def test_an_output_may_take_an_events_column_name(kind) -> None:
    events = [{"k": 1, "t": t, "id": t, "x": float(t)} for t in range(6)]
    qrows = [{"key": 1, "when": w, "qid": w} for w in (2, 4)]
    aggs = {"x": ("sum", "x", "range:2"), "t": ("count", "x", "rows:3")}
    out = at(as_kind(events_table(events), kind), as_kind(queries_table(qrows), kind), aggs)
    assert list(rows_of(out)[0]) == ["qid", "key", "when", "x", "t"]
    check_at(events, qrows, out, aggs)
    with pytest.raises(ValueError, match=r"\['when'\] already exist in the query table"):
        at(events_table(events), queries_table(qrows), {"when": ("sum", "x", "range:2")})


KEYED = [
    {"k": k, "t": t, "id": i, "x": float(i + 1)}
    for i, (k, t) in enumerate([(1, 1), (1, 2), (2, 2), (-128, 3), (127, 3), (1, 4), (None, 4)])
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "events_key,query_key,keys",
    [
        (pa.int64(), pa.float64(), [1.5, 1.0, 2.0, -128.0, None, 1e300, 2.5]),
        (pa.int8(), pa.int64(), [257, 1, -129, 127, -128, 2**40, 2]),
        (pa.float64(), pa.int64(), [2**53 + 1, 1, 2, 127, 2**53, 3, -128]),
        (pa.int16(), pa.uint64(), [2**64 - 1, 1, 2, 127, 65537, 2**63, 2]),
        (pa.decimal128(5, 1), pa.float64(), [1.0, 1.05, 2.0, -128.0, None, 127.0, 0.1]),
    ],
)
def test_keys_of_other_types_compare_by_value(kind, events_key, query_key, keys) -> None:
    events = list(KEYED)
    if pa.types.is_floating(events_key):  # a key that doubles hold, beside the one they don't
        events = [*events, {"k": 2.0**53, "t": 1, "id": 20, "x": 50.0}]
    table = events_table(
        [e | {"k": None if e["k"] is None else _in(e["k"], events_key)} for e in events],
        key=events_key,
    )
    qrows = [{"key": k, "when": 5, "qid": i} for i, k in enumerate(keys)]
    aggs = {"n": ("count", "x", "rows:unbounded,0"), "s": ("sum", "x", "range:10")}
    out = at(as_kind(table, kind), as_kind(queries_table(qrows, query_key), kind), aggs)
    check_at(events, qrows, out, aggs)
    assert sum(r["n"] > 0 for r in rows_of(out)) >= 3  # some match, some do not


def _in(k, t: pa.DataType):
    from decimal import Decimal

    return Decimal(k) if pa.types.is_decimal(t) else k


@pytest.mark.parametrize("kind", ["arrow", "polars"])
@pytest.mark.parametrize("nested", [pa.list_(pa.int64()), pa.struct([("a", pa.int64())])])
def test_nested_keys_are_refused_by_name(kind, nested) -> None:
    value = [1] if pa.types.is_list(nested) else {"a": 1}
    table = pa.table(
        {"k": pa.array([value] * 3, nested), "t": [1, 2, 3], "id": [0, 1, 2], "x": [1.0] * 3}
    )
    with pytest.raises(TypeError, match=r"key column .k. holds (large_)?(list|struct)"):
        windowagg.rolling_aggregate(
            as_kind(table, kind), time="t", key="k", aggs={"s": ("sum", "x", "rows:2")}
        )
    with pytest.raises(TypeError, match=r"key column .k. holds (large_)?(list|struct)"):
        windowagg.window_aggregate(
            as_kind(table, kind),
            time="t",
            key="k",
            windows=["tumbling:2"],
            aggs={"s": ("sum", "x")},
        )
    queries = pa.table({"key": pa.array([value], nested), "when": [3], "qid": [0]})
    with pytest.raises(TypeError, match="at_key column 'key'"):
        at(events_table(KEYED[:2]), as_kind(queries, kind), {"s": ("sum", "x", "rows:2")})
