"""rolling_aggregate(events, ..., at=queries): point-in-time frames against a nested loop over
both tables (every query scans its key's events), on Arrow, Polars and pandas: several keys, a
null key in both tables, keys without events, queries before any event, ties between query
and event times, null times, null and NaN values, int, double and decimal columns, numeric and
timestamp times, range and rows frames ending before, at and after the query's time."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import windowagg
from tests.engine.sql_oracle import _order_key, sql_aggregate
from tests.engine.test_rolling_table import SQL, arrow, random_rows, same
from windowagg.engine import sweep
from windowagg.frames import frame

FRAMES = [
    "range:6",
    "range:-4,-1",
    "range:-4,+3",
    "range:unbounded,0",
    "range:+2,+5",
    "rows:4",
    "rows:-2,+2",
    "rows:unbounded,0",
    "rows:+1,+3",
]
T0 = dt.datetime(2024, 3, 1)


def queries(seed: int, n: int = 90) -> list[dict]:
    """Query rows: keys 0-5 (4 and 5 have no events), a null key, null times, times from
    before the first event to after the last, many equal to an event's."""
    rng = np.random.default_rng(seed)
    return [
        {
            "key": None if rng.random() < 0.05 else int(rng.integers(0, 6)),
            "when": None if rng.random() < 0.05 else int(rng.integers(-5, 46)),
            "qid": i,
        }
        for i in range(n)
    ]


def query_table(rows: list[dict], timestamps: bool = False) -> pa.Table:
    when = [None if r["when"] is None else r["when"] for r in rows]
    if timestamps:
        when = [None if w is None else T0 + dt.timedelta(seconds=w) for w in when]
    return pa.table(
        {
            "qid": [r["qid"] for r in rows],
            "key": pa.array([r["key"] for r in rows], pa.int64()),
            "when": pa.array(when, pa.timestamp("us") if timestamps else pa.int64()),
        }
    )


def picked(events: list[dict], q: dict, text: str) -> list[int]:
    """The events of a query's frame, by the definition: same non-null key and a time (an
    event without one is in no frame); range frames by time, rows frames counted from the last
    event at or before the query's time."""
    f = frame(text)
    if q["key"] is None or q["when"] is None:
        return []
    group = sorted(
        (j for j, e in enumerate(events) if e["k"] == q["key"] and e["t"] is not None),
        key=lambda j: (_order_key(events[j]["t"]), events[j]["id"]),
    )

    def t(j):
        return -math.inf if events[j]["t"] is None else events[j]["t"]

    if f.kind == "range":
        return [
            j
            for j in group
            if (f.start is None or t(j) >= q["when"] + f.start)
            and (f.end is None or t(j) <= q["when"] + f.end)
        ]
    p = sum(1 for j in group if t(j) <= q["when"]) - 1
    lo = 0 if f.start is None else max(p + int(f.start), 0)
    hi = len(group) - 1 if f.end is None else min(p + int(f.end), len(group) - 1)
    return group[lo : hi + 1]


def at_queries(events, queries_, aggs):
    """``rolling_aggregate`` of the events (key k, time t, ties by id) at the query rows."""
    kw = {"time": "t", "key": "k", "order_by": "id", "at_time": "when", "at_key": "key"}
    return windowagg.rolling_aggregate(events, aggs=aggs, at=queries_, **kw)


def aggs_for(text: str) -> dict:
    aggs = {f"{a}_{c}": (a, c, text) for a in SQL for c in ("x", "i")}
    return aggs | {
        "n": ("count", "*", text),
        "dsum": ("sum", "d", text),
        "dmax": ("max", "d", text),
        "davg": ("mean", "d", text),
    }


def check(events, qrows, out_columns, aggs) -> None:
    for name, (agg, column, text) in aggs.items():
        got = out_columns(name)
        for i, q in enumerate(qrows):
            vals = [events[j][column] if column != "*" else 1 for j in picked(events, q, text)]
            want = sql_aggregate(agg, vals)
            assert same(got[i], want), (name, q, got[i], want, vals)


@pytest.mark.parametrize("text", FRAMES)
def test_arrow_and_polars_equal_the_definition(text) -> None:
    events, qrows = random_rows(len(text) * 11 + ord(text[-1])), queries(len(text))
    aggs = aggs_for(text)
    out = at_queries(arrow(events), query_table(qrows), aggs)
    assert out.column_names[:3] == ["qid", "key", "when"]
    assert out.column("qid").to_pylist() == [q["qid"] for q in qrows]  # the queries' order
    check(events, qrows, lambda n: out.column(n).to_pylist(), aggs)
    polars = at_queries(pl.from_arrow(arrow(events)), pl.from_arrow(query_table(qrows)), aggs)
    assert isinstance(polars, pl.DataFrame) and polars.columns == out.column_names
    assert polars["qid"].to_list() == [q["qid"] for q in qrows]
    check(events, qrows, lambda n: polars[n].to_list(), aggs)


@pytest.mark.parametrize("text", ["range:-30,-1", "rows:3"])
def test_without_a_key_every_query_sees_every_event(text) -> None:
    events = [e | {"k": 0} for e in random_rows(17)]
    qrows = [q | {"key": 0} for q in queries(5)]
    aggs = aggs_for(text)
    kw = {"time": "t", "order_by": "id", "at_time": "when"}
    out = windowagg.rolling_aggregate(arrow(events), aggs=aggs, at=query_table(qrows), **kw)
    assert sum(v > 0 for v in out.column("n").to_pylist()) > len(qrows) // 2
    check(events, qrows, lambda n: out.column(n).to_pylist(), aggs)


def test_pandas_queries_come_back_as_pandas_in_their_order() -> None:
    events = [
        r | {"x": None if r["x"] is not None and math.isnan(r["x"]) else r["x"]}
        for r in random_rows(3)
    ]
    qrows = queries(3)
    aggs = {
        "s": ("sum", "x", "range:6"),
        "n": ("count", "*", "rows:4"),
        "m": ("max", "x", "range:-4,-1"),
    }
    qdf = query_table(qrows).to_pandas().set_index("qid", drop=False)
    out = at_queries(arrow(events).to_pandas(), qdf, aggs)
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(qdf.index)
    for name, (agg, column, text) in aggs.items():
        for i, q in enumerate(qrows):
            vals = [events[j][column] if column != "*" else 1 for j in picked(events, q, text)]
            want = sql_aggregate(agg, vals)
            got = out[name].iloc[i]
            assert (want is None and pd.isna(got)) or math.isclose(got, want), (name, q, got, want)


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("range:6s", "range:6"),
        ("range:-6s,-1us", "range:-6,-0.000001"),
        ("rows:4", "rows:4"),
        ("range:-3s,+2s", "range:-3,+2"),
    ],
)
def test_timestamp_times(text, seconds) -> None:
    events = random_rows(21)
    stamps = [None if r["t"] is None else T0 + dt.timedelta(seconds=r["t"]) for r in events]
    table = arrow(events).append_column("ts", pa.array(stamps, pa.timestamp("us")))
    qrows = queries(21)
    aggs = {"s": ("sum", "i", text), "n": ("count", "x", text), "hi": ("max", "x", text)}
    out = windowagg.rolling_aggregate(
        table,
        time="ts",
        key="k",
        aggs=aggs,
        order_by="id",
        at=query_table(qrows, timestamps=True),
        at_time="when",
        at_key="key",
    )
    brute = {n: (a, c, seconds) for n, (a, c, _) in aggs.items()}
    check(events, qrows, lambda n: out.column(n).to_pylist(), brute)
    assert out.schema.field("s").type == pa.int64() and out.schema.field("n").type == pa.int64()


@pytest.mark.parametrize("text", ["range:6", "range:-4,+3", "range:unbounded,0"])
def test_at_the_events_themselves_equals_rolling_aggregate(text) -> None:
    """Range frames at the events' own rows are rolling_aggregate's frames (peers included)."""
    events = random_rows(8)
    table = arrow(events)
    aggs = aggs_for(text)
    timed = table.filter(pc.is_valid(table.column("t")))  # events without a time: in no frame
    plain = windowagg.rolling_aggregate(timed, time="t", key="k", aggs=aggs, order_by="id")
    at = windowagg.rolling_aggregate(table, time="t", key="k", aggs=aggs, order_by="id", at=table)
    # a row with a null key or time is a query that matches nothing (its own frame: empty);
    # in rolling_aggregate it has the frame of its null key's rows, as Spark partitions them
    known = [i for i, r in enumerate(events) if r["k"] is not None and r["t"] is not None]
    assert len(known) > 100
    rows = np.cumsum([r["t"] is not None for r in events]) - 1  # each timed row's place
    for name in aggs:
        a, b = at.column(name).to_pylist(), plain.column(name).to_pylist()
        assert all(same(a[i], b[rows[i]]) for i in known), name


def test_the_compiled_path_ran(monkeypatch) -> None:
    def fail(*a):
        raise AssertionError("the Python reference ran")

    monkeypatch.setattr(sweep, "_reference", fail)
    events, qrows = random_rows(4), queries(4)
    aggs = {"s": ("sum", "x", "range:6"), "m": ("mean", "i", "rows:4")}
    out = at_queries(arrow(events), query_table(qrows), aggs)
    check(events, qrows, lambda n: out.column(n).to_pylist(), aggs)


def test_a_user_aggregation_sees_each_frame_in_time_order() -> None:
    from tests.aggs import Concat

    events = [
        r | {"x": None if r["x"] is not None and math.isnan(r["x"]) else r["x"]}
        for r in random_rows(9)
    ]
    qrows = queries(9)
    out = at_queries(arrow(events), query_table(qrows), {"c": (Concat(), "i", "range:-4,+3")})
    got = out.column("c").to_pylist()
    for i, q in enumerate(qrows):
        vals = [
            float(events[j]["i"])
            for j in picked(events, q, "range:-4,+3")
            if events[j]["i"] is not None
        ]
        want = sql_aggregate("library", vals, Concat())
        assert got[i] == want, (q, got[i], want)


@pytest.mark.parametrize(
    "kw,error,match",
    [
        ({"at_time": "nope"}, ValueError, "at_time column 'nope'"),
        ({"at_key": "nope"}, ValueError, "at_key column 'nope'"),
        ({"at_key": ["key", "qid"]}, ValueError, "at_key names 2"),
        (
            {
                "at_time": "key",
                "at_key": "qid",
                "time": "ts",
                "aggs": {"s": ("sum", "x", "range:6s")},
            },
            TypeError,
            "both timestamps",
        ),
        ({"aggs": {"qid": ("sum", "x", "range:6")}}, ValueError, "already exist in the query"),
    ],
)
def test_bad_queries_are_refused_before_any_work(kw, error, match) -> None:
    events = random_rows(2)
    table = arrow(events).append_column("ts", pa.array([T0] * len(events), pa.timestamp("us")))
    args = {
        "time": "t",
        "key": "k",
        "aggs": {"s": ("sum", "x", "range:6")},
        "at_time": "when",
        "at_key": "key",
    }
    args |= kw
    with pytest.raises(error, match=match):
        windowagg.rolling_aggregate(table, at=query_table(queries(2)), **args)


def test_queries_in_key_and_time_order_are_not_sorted_again(monkeypatch) -> None:
    """Queries that come in (key, time) order (one query, or queries asked in turn) are
    evaluated in that order with no sort of them, and answer what the same queries in any
    other order answer (a non-commutative aggregation, a rows frame, ties, a key without
    events: its queries come first in that order, as they are sorted)."""
    import windowagg.engine.rolling.at as at_module

    rng = np.random.default_rng(5)
    n = 4000
    events = pa.table(
        {"k": rng.integers(0, 5, n), "t": rng.integers(0, 500, n), "v": rng.normal(size=n)}
    )
    aggs = {
        "s": ("sum", "v", "range:40"),
        "f": ("first", "v", "range:-30,-1"),
        "l": ("last", "v", "rows:3"),
    }
    ordered = pa.table(
        {"k": np.repeat(np.arange(-1, 5), 30), "t": np.tile(np.sort(rng.integers(0, 520, 30)), 6)}
    )
    shuffled = ordered.take(rng.permutation(ordered.num_rows))
    back = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=shuffled)
    sorts: list[int] = []
    real = at_module.keyed_sort

    def counted(keyed, *args):
        sorts.append(len(keyed.codes))
        return real(keyed, *args)

    monkeypatch.setattr(at_module, "keyed_sort", counted)
    got = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=ordered)
    assert sorts == []
    want = back.sort_by([("k", "ascending"), ("t", "ascending")])  # ties: equal rows
    assert got.equals(want)
    windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=shuffled)
    assert sorts == [shuffled.num_rows]  # the same queries out of order are sorted


def test_the_times_are_read_where_an_entry_needs_them() -> None:
    """The evaluation reads the time column only where an entry does: an ``arg`` result (the
    FIFO sweep's argmax: the time of the row) equals its definition over the events, with the
    time read; a distinct count (not an SQL aggregate, but counted per value) reads only its
    column."""
    from windowagg.engine.rolling.at import entries_read
    from windowagg.engine.rolling.plan import plan_rolling

    rng = np.random.default_rng(31)
    n = 400
    events = pa.table(
        {"k": rng.integers(0, 3, n), "t": rng.integers(0, 100, n), "v": rng.random(n)}
    )
    queries = pa.table({"k": [0, 1, 2, 5], "t": [50, 60, 99, 3]})

    def read(aggs: dict) -> list[str]:
        plan = plan_rolling(
            events.schema, time="t", key="k", aggs=aggs, order_by=None, onto_events=False
        )
        return entries_read(plan, events).column_names

    assert read({"d": ("count_distinct", "v", "range:30")}) == ["v"]
    assert read({"am": ("argmax", "v", "range:20")}) == ["t", "v"]
    got = windowagg.rolling_aggregate(
        events, time="t", key="k", aggs={"am": ("argmax", "v", "range:20")}, at=queries
    )
    for k, t, am in zip(*(got.column(c).to_pylist() for c in ("k", "t", "am"))):
        inside = [
            (v, -i, tt)  # the largest value, the oldest on ties
            for i, (kk, tt, v) in enumerate(zip(*(events.column(c).to_pylist() for c in "ktv")))
            if kk == k and t - 20 <= tt <= t
        ]
        assert am == (max(inside)[2] if inside else None)
