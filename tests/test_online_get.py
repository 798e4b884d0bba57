"""``OnlineFeatures.get(key, at)``: one request's features as a dict, equal, value and Python
type, to the batch ``rolling_aggregate(at=)`` over the events held (the oracle) on random logs
(several parts, events out of order, late ones dropped, ties, null values, keys and times, a
key never seen, requests at an event's instant and frames that leave it out), whether the
parts' sums, tables and groups answer it with no table (a key of one integer, string or
binary column, whose entries they all serve) or a one-row table does (keys of several
columns, entries evaluated over the events)."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg.engine.rolling.online as held_module
from windowagg import rolling_aggregate
from windowagg.engine.rolling import summaries
from windowagg.online import HistoryEvictedError, OnlineFeatures

from .test_online_summaries import AGGS, MIXED, _log


def _same(got: dict, want: dict) -> bool:
    """Equal value by value and in Python type (a NaN equal to a NaN)."""

    def value(x: object) -> object:
        return "NaN" if isinstance(x, float) and x != x else x

    return got.keys() == want.keys() and all(
        value(got[k]) == value(want[k]) and type(got[k]) is type(want[k]) for k in got
    )


def _state(events: pa.Table, cuts: np.ndarray, aggs: dict, key="k") -> OnlineFeatures:
    state = OnlineFeatures(time="ts", key=key, aggs=aggs, allowed_lateness="1m")
    for batch in np.split(np.arange(events.num_rows), cuts):
        if len(batch):
            state.update(events.take(pa.array(batch)))
    return state


@pytest.fixture
def fast(monkeypatch) -> list[bool]:
    """Whether each ``get`` was answered with no table (the parts served it), the parts
    weighed as serving any request."""
    took: list[bool] = []
    one = held_module.Held.one

    def spied(self, key, at):
        got = one(self, key, at)
        took.append(got is not None)
        return got

    monkeypatch.setattr(held_module.Held, "one", spied)
    monkeypatch.setattr(held_module, "SUMMED_PER_REQUEST", 0)
    monkeypatch.setattr(summaries, "GROUP_COST", 0)
    monkeypatch.setattr(summaries, "GROUP_REQUEST", 0)
    return took


@pytest.mark.parametrize(
    ("aggs", "keys"),
    [(AGGS, pa.int64()), (MIXED, pa.int64()), (AGGS, pa.string()), (AGGS, pa.int16())],
    ids=["served", "mixed", "string keys", "int16 keys"],
)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 300))
def test_get_equals_the_backfill_value_and_type(aggs, keys, seed, n) -> None:
    events, queries, cuts = _log(seed, n, "whole")
    events = events.set_column(0, "k", events["k"].cast(keys))
    queries = queries.set_column(0, "k", queries["k"].cast(keys))
    state = _state(events, cuts, aggs)
    assert state._held is not None
    want = rolling_aggregate(state._held.table(), time="ts", key="k", aggs=aggs, at=queries)
    names = list(aggs)
    with pytest.MonkeyPatch.context() as patch:
        took: list[bool] = []
        one = held_module.Held.one
        patch.setattr(
            held_module.Held, "one", lambda s, k, t: took.append(one(s, k, t)) or took[-1]
        )
        patch.setattr(held_module, "SUMMED_PER_REQUEST", 0)
        patch.setattr(summaries, "GROUP_COST", 0)
        patch.setattr(summaries, "GROUP_REQUEST", 0)
        for j, (k, t) in enumerate(zip(queries["k"].to_pylist(), queries["ts"].to_pylist())):
            row = want.slice(j, 1).select(names).to_pylist()[0]
            assert _same(state.get(k, t), row), (j, k, t, state.get(k, t), row)
    answered = [x is not None for x in took]
    if aggs is AGGS and state._held.parts:
        # every request of a key and a time was answered with no table
        asked = [k is not None and t is not None for k, t in zip(*queries.to_pydict().values())]
        assert answered == asked
    else:
        assert not any(answered)


def test_a_served_request_builds_no_table(fast, monkeypatch) -> None:
    """The parts answer an integer key's request: neither the one-row table's path nor
    Arrow's table is made (``answer`` refused here)."""
    events, queries, cuts = _log(3, 2000, "whole")
    state = _state(events, cuts, AGGS)
    at = queries["ts"][0].as_py()
    before = state.get(1, at)

    def refused(*args):
        raise AssertionError("a table's path")

    monkeypatch.setattr(held_module.Held, "answer", refused)
    assert _same(state.get(1, at), before)
    assert fast == [True, True]


def test_times_as_python_numpy_and_arrow_give_the_same_request(fast) -> None:
    events, _, cuts = _log(4, 1000, "whole")
    state = _state(events, cuts, AGGS)
    stamp = events["ts"][500]
    want = state.get(2, stamp.as_py())
    micros = stamp.cast(pa.int64()).as_py()
    for at in (
        stamp,
        micros,
        np.datetime64(micros, "us"),
        dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros),
    ):
        assert _same(state.get(2, at), want)
    assert all(fast)


@pytest.mark.parametrize("type_", [pa.large_string(), pa.binary()])
def test_string_and_binary_keys_by_their_bytes(type_, fast) -> None:
    """A request's key given as ``str`` or ``bytes`` is found by the code of its bytes, as a
    one-row table's is; a key never seen holds no event."""
    events, queries, cuts = _log(8, 1500, "whole")
    events = events.set_column(0, "k", events["k"].cast(pa.string()).cast(type_))
    queries = queries.set_column(0, "k", queries["k"].cast(pa.string()).cast(type_))
    state = _state(events, cuts, AGGS)
    want = rolling_aggregate(state._held.table(), time="ts", key="k", aggs=AGGS, at=queries)
    asked = list(zip(queries["k"].to_pylist(), queries["ts"].to_pylist()))
    for j, (k, t) in enumerate(asked):
        assert _same(state.get(k, t), want.slice(j, 1).select(list(AGGS)).to_pylist()[0])
    assert fast == [k is not None and t is not None for k, t in asked]
    assert isinstance(asked[0][0], bytes if type_ == pa.binary() else str)
    t = asked[0][1]
    never = state.get(b"never" if type_ == pa.binary() else "never", t)
    assert never["c"] == 0 and never["s"] is None and fast[-1]


def test_several_column_keys_take_a_tuple(fast) -> None:
    events, queries, cuts = _log(6, 800, "whole")
    events = events.append_column("g", pa.array(np.arange(800) % 2))
    state = _state(events, cuts, AGGS, key=["k", "g"])
    asked = queries.append_column("g", pa.array(np.arange(queries.num_rows) % 2))
    want = rolling_aggregate(state._held.table(), time="ts", key=["k", "g"], aggs=AGGS, at=asked)
    for j, (k, g, t) in enumerate(zip(*asked.select(["k", "g", "ts"]).to_pydict().values())):
        assert _same(state.get((k, g), t), want.slice(j, 1).select(list(AGGS)).to_pylist()[0])
    assert not any(fast)  # the one-row table's path
    with pytest.raises(ValueError, match="give a tuple"):
        state.get(1, queries["ts"][0].as_py())


def test_bad_requests_are_refused_clearly() -> None:
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    with pytest.raises(ValueError, match="no events yet"):
        state.get(1, 0)
    events, _, cuts = _log(7, 300, "whole")
    state = _state(events, cuts, AGGS)
    at = events["ts"][0].as_py()
    with pytest.raises(ValueError, match="key 'one' is not a value of column 'k'"):
        state.get("one", at)
    with pytest.raises(ValueError, match="time 'noon' is not a value of column 'ts'"):
        state.get(1, "noon")
    with pytest.raises(ValueError, match="1 columns"):
        state.get((1, 2), at)


@pytest.mark.parametrize("served", [True, False], ids=["no table", "one-row table"])
def test_a_request_before_what_was_let_go_is_refused(served) -> None:
    aggs = {"s": ("sum", "v", "range:1h"), "x": ("max", "w", "range:10m")}
    if not served:  # one the parts do not serve
        aggs["sd"] = ("stddev", "v", "range:1h")
    events = pa.table(
        {
            "k": pa.array(np.arange(400) % 3),
            "ts": pa.array(np.arange(400) * 60_000_000, pa.timestamp("us")),
            "v": pa.array(np.ones(400)),
            "w": pa.array(np.ones(400, np.int64)),
        }
    )
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    for lo in range(0, 400, 50):
        state.update(events.slice(lo, 50))
    assert state._held is not None and state._held.answers_from is not None
    with pytest.raises(HistoryEvictedError, match="reaches events the online state has let go"):
        state.get(1, 0)
    newest = events["ts"][-1].as_py()
    got = state.get(1, newest)
    want = rolling_aggregate(
        state._held.table(),
        time="ts",
        key="k",
        aggs=aggs,
        at=pa.table({"k": [1], "ts": pa.array([newest], pa.timestamp("us"))}),
    )
    assert _same(got, want.select(list(aggs)).to_pylist()[0])
    assert math.isfinite(got["s"])


@pytest.mark.parametrize("times", ["floats", "int64 beyond doubles", "nanosecond timestamps"])
def test_plain_number_int64_and_nanosecond_times_exactly(times, fast) -> None:
    """Float times (a NaN request time after every time, through the one-row table), whole
    numbers beyond what a double holds, and nanosecond timestamps beyond doubles (frames of
    a few nanoseconds: exact), each request with no table where its time is a number."""
    big = 2**61 if times != "floats" else 0
    t = np.array([1, 2, 2, 5, 9, 3, 7], np.int64) + big
    ns = times == "nanosecond timestamps"
    kind = pa.timestamp("ns") if ns else None
    events = pa.table(
        {
            "k": pa.array([1, 1, 2, 1, 1, 2, 1], pa.int64()),
            "t": pa.array(t.astype(float) if times == "floats" else t, kind),
            "v": [1.0, 2.0, 3.0, 4.0, 5.0, None, -6.0],
        }
    )
    asked: list = [2.0, 9.0, float("nan"), None] if times == "floats" else [2, 9, 5, None]
    if times != "floats":
        asked = [None if x is None else x + big for x in asked]
    aggs = {
        "s": ("sum", "v", "range:3ns" if ns else "range:3"),
        "n": ("count", "v", "range:-2ns,0" if ns else "range:-2,0"),
        "hi": ("max", "v", "range:3ns" if ns else "range:3"),
        "r": ("mean", "v", "rows:2"),
        "d": ("count_distinct", "v", "range:unbounded,0"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness="3ns" if ns else 3)
    state.update(events.slice(0, 4))
    state.update(events.slice(4))
    keys = [1, 1, 2, 1]
    queries = pa.table({"k": pa.array(keys, pa.int64()), "t": pa.array(asked, events["t"].type)})
    want = rolling_aggregate(state._held.table(), time="t", key="k", aggs=aggs, at=queries)
    for j, (k, at) in enumerate(zip(keys, asked)):
        assert _same(state.get(k, at), want.slice(j, 1).select(list(aggs)).to_pylist()[0])
    numbers = [x is not None and not (isinstance(x, float) and math.isnan(x)) for x in asked]
    assert fast == numbers


def test_a_nan_value_from_a_polars_table_is_a_value(fast) -> None:
    """A NaN is a value on a Polars (or Arrow) table, not a null: the part holding it has
    no table of best rows, so ``get`` asks through a one-row table, and equals the batch."""
    import polars as pl

    events = pa.table(
        {
            "k": pa.array([1, 1, 1, 2], pa.int64()),
            "ts": pa.array([0, 60, 120, 60], pa.timestamp("us")),
            "v": pa.array([1.0, float("nan"), 3.0, None]),
        }
    )
    aggs = {"hi": ("max", "v", "range:1h"), "n": ("count", "v", "range:1h")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    state.update(pl.from_arrow(events))
    for k in (1, 2):
        at = pa.table({"k": pa.array([k], pa.int64()), "ts": pa.array([120], pa.timestamp("us"))})
        want = rolling_aggregate(state._held.table(), time="ts", key="k", aggs=aggs, at=at)
        assert _same(state.get(k, 120), want.select(list(aggs)).to_pylist()[0])
    assert fast == [False, False]
    assert math.isnan(state.get(1, 120)["hi"])
