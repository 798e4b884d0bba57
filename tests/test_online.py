"""Online features (windowagg.online): an event log and a query log replayed in arrival order
through the online state equal the batch ``rolling_aggregate(at=)`` over the events that had
arrived by each query, value and type, on pandas, Polars and Arrow; late events dropped and
counted; history let go in bulk and a query that reaches it refused; save/load."""

from __future__ import annotations

import datetime as dt
import decimal
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import windowagg
from windowagg.engine.rolling.key_codes import HELD_AS_CODES
from windowagg.online import HistoryEvictedError, OnlineFeatures, replay

from .threads import alone_and_in_ranges

T0 = np.datetime64("2024-01-01T00:00:00", "us")
#: range frames with and without the query's instant, a rows frame, a non-commutative
#: aggregation (first, last), a null rule (count of a column with nulls), Spark's types
AGGS = {
    "s": ("sum", "v", "range:1h"),
    "c": ("count", "v", "range:-1h,-1us"),
    "n": ("count", "*", "range:10m"),
    "m": ("max", "v", "rows:10"),
    "f": ("first", "v", "range:30m"),
    "l": ("last", "v", "rows:3"),
    "a": ("avg", "i", "range:1h"),
    "si": ("sum", "i", "range:-30m,-1us"),
}


def logs(n=2400, q=300, keys=6, disorder=40, seed=1):
    """Events over six hours (ties, null values, a null key, late arrivals: each event's
    arrival is its rank in time plus up to ``disorder``), queries at event times (exactly
    an event's instant) and between, arriving when the events up to their time have."""
    rng = np.random.default_rng(seed)
    secs = np.sort(rng.integers(0, 6 * 3600, n))
    secs[1::7] = secs[0::7][: len(secs[1::7])]  # ties
    secs.sort()
    v = rng.normal(size=n)
    v_valid = rng.random(n) > 0.1
    k = rng.integers(0, keys, n).astype(object)
    k[rng.random(n) < 0.02] = None
    events = pa.table(
        {
            "k": pa.array(k, pa.int64()),
            "ts": pa.array(T0 + (secs * 1_000_000).astype("timedelta64[us]")),
            "v": pa.array(v, mask=~v_valid),
            "i": pa.array(rng.integers(-5, 50, n)),
            "arrival": pa.array(np.arange(n) + rng.integers(0, disorder, n)),
        }
    )
    at = rng.integers(0, n, q)
    shift = np.where(
        rng.random(q) < 0.5, 0, rng.integers(1, 120, q)
    )  # an event's instant, or after
    queries = pa.table(
        {
            "k": pa.array(rng.integers(0, keys + 1, q)),  # a key with no event too
            "ts": pa.array(T0 + ((secs[at] + shift) * 1_000_000).astype("timedelta64[us]")),
            "arrival": pa.array(at),
            "qid": pa.array(np.arange(q)),
        }
    )
    return events, queries


def _kind(table: pa.Table, kind: str):
    if kind == "nanoseconds":  # epochs beyond what a double holds exactly
        return table.set_column(1, "ts", table.column("ts").cast(pa.timestamp("ns")))
    if kind == "pandas":
        return table.to_pandas()
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(table)
    return table


def _brute(events: pa.Table, query_k, query_t, spec) -> object:
    """One feature by its definition over ``events`` (held, in arrival order)."""
    agg, col, text = spec
    rows = [e for e in events.to_pylist() if e["k"] is not None and e["k"] == query_k and e["ts"]]
    kind, _, span = text.partition(":")
    if kind == "range":
        lo, _, hi = span.partition(",")
        back = _td(lo.lstrip("-"))
        end = -_td(hi.lstrip("-")) if hi else dt.timedelta(0)
        inside = [e for e in rows if query_t - back <= e["ts"] <= query_t + end]
        inside.sort(key=lambda e: e["ts"])  # stable: ties in arrival order
    else:
        past = sorted((e for e in rows if e["ts"] <= query_t), key=lambda e: e["ts"])
        inside = past[-int(span) :]
    values = [e[col] for e in inside] if col != "*" else [1] * len(inside)
    present = [x for x in values if x is not None]
    if agg == "count":
        return len(present)
    if not present:
        return None
    if agg == "sum":
        return sum(present)
    if agg == "avg":
        return sum(present) / len(present)
    if agg == "max":
        return max(present)
    return {"first": values[0], "last": values[-1]}[agg]


def _td(text: str) -> dt.timedelta:
    number, unit = float(text[:-2] if text.endswith("us") else text[:-1]), text[-1]
    if text.endswith("us"):
        return dt.timedelta(microseconds=number)
    return dt.timedelta(**{{"h": "hours", "m": "minutes", "s": "seconds"}[unit]: number})


@pytest.mark.parametrize("kind", ["arrow", "pandas", "polars", "nanoseconds"])
def test_replay_equals_the_backfill_value_and_type(kind) -> None:
    events, queries = logs()
    got = replay(
        _kind(events, kind),
        _kind(queries, kind),
        time="ts",
        key="k",
        aggs=AGGS,
        arrival="arrival",
        allowed_lateness="2m",
    )
    assert got.features == len(AGGS) * queries.num_rows
    assert got.differences == 0
    assert got.dropped > 0  # some events came later than the lateness
    assert got.served.schema == got.backfill.schema
    assert got.served.column("qid").to_pylist() == list(range(queries.num_rows))


def test_served_features_equal_their_definition_and_late_events_are_dropped() -> None:
    """An independent check of the state: features by definition over the events that
    arrived in time (the mark set by the earlier updates), and the late ones counted."""
    events, queries = logs(n=600, q=60, disorder=25, seed=4)
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="90s")
    order = np.argsort(events.column("arrival").to_numpy(), kind="stable")
    newest, held, dropped = None, [], 0
    qa = queries.column("arrival").to_numpy()
    at = 0
    for start in range(0, len(order), 37):  # updates of 37 events in arrival order
        batch = events.take(pa.array(order[start : start + 37]))
        mark = None if newest is None else newest - dt.timedelta(seconds=90)
        for e in batch.to_pylist():
            if mark is not None and e["ts"] < mark:
                dropped += 1
                continue
            newest = e["ts"] if newest is None else max(newest, e["ts"])
            if e["k"] is not None:
                held.append(e)
        state.update(batch)
        arrived = batch.column("arrival").to_numpy().max()
        due = [i for i in range(at, queries.num_rows) if qa[i] <= arrived]
        if not due:
            continue
        due = [
            i for i in due if queries.column("ts")[i].as_py() >= newest - dt.timedelta(seconds=90)
        ]
        q = queries.take(pa.array(due, pa.int64()))
        got = state.query(q).to_pylist()
        log = pa.Table.from_pylist(held, schema=events.schema)
        for row in got:
            for name, spec in AGGS.items():
                want = _brute(log, row["k"], row["ts"], spec)
                if isinstance(want, float):
                    assert row[name] == pytest.approx(want), (name, row)
                else:
                    assert row[name] == want, (name, row)
    assert state.dropped == dropped > 0


def test_history_let_go_in_bulk_and_a_query_reaching_it_refused() -> None:
    events, _ = logs(n=3000, disorder=1)
    state = OnlineFeatures(
        time="ts", key="k", aggs={"s": ("sum", "v", "range:10m")}, allowed_lateness="1m"
    )
    for start in range(0, events.num_rows, 100):
        state.update(events.slice(start, 100))
    assert state.held < events.num_rows // 4  # six hours of events, 11 minutes reached
    newest = max(events.column("ts").to_pylist())
    fine = pa.table(
        {"k": [1], "ts": pa.array([newest - dt.timedelta(seconds=30)], pa.timestamp("us"))}
    )
    assert state.query(fine).num_rows == 1
    early = pa.table({"k": [1], "ts": pa.array([T0], pa.timestamp("us"))})
    with pytest.raises(HistoryEvictedError, match="2024-01-01 00:00:00 reaches events"):
        state.query(early)


def test_rows_frames_keep_each_keys_last_events() -> None:
    """A key quiet for longer than the range frames: its last events stay for rows frames."""
    quiet = pa.table(
        {
            "k": [1, 1, 1, 2],
            "ts": pa.array([T0, T0, T0 + np.timedelta64(1, "s"), T0]),
            "v": [1.0, 2.0, 3.0, 9.0],
        }
    )
    busy = pa.table(
        {
            "k": [2] * 100,
            "ts": pa.array(T0 + (np.arange(1, 101) * 3_600_000_000).astype("timedelta64[us]")),
            "v": [1.0] * 100,
        }
    )
    aggs = {"r": ("sum", "v", "rows:2"), "s": ("sum", "v", "range:1h")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs)
    state.update(quiet)
    for i in range(0, 100, 10):
        state.update(busy.slice(i, 10))
    assert state.held < 20
    late = busy.column("ts")[-1]
    got = state.query(pa.table({"k": [1], "ts": pa.array([late])}))
    assert got.column("r").to_pylist() == [5.0] and got.column("s").to_pylist() == [None]


@pytest.mark.parametrize("suffix", [".arrow", ".parquet"])
def test_save_and_load_lose_nothing(tmp_path, suffix) -> None:
    events, _ = logs(n=800, q=80)
    aggs = {
        "s": ("sum", "v", "range:1h"),
        "m": ("max", "v", "rows:5"),
        "f": ("first", "v", "range:20m"),
    }
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness=dt.timedelta(minutes=2))
    state.update(events.slice(0, 500))
    path = tmp_path / f"state{suffix}"
    state.save(path)
    again = OnlineFeatures.load(path)
    assert (again.held, again.dropped) == (state.held, state.dropped)
    late = events.slice(500)
    state.update(late)
    again.update(late)
    assert (again.held, again.dropped) == (state.held, state.dropped)
    newest = max(events.column("ts").to_pylist())
    q = pa.table({"k": range(7), "ts": pa.array([newest] * 7, pa.timestamp("us"))})  # now
    assert again.query(q).equals(state.query(q))


def test_a_loaded_state_holds_the_saved_parts_without_sorting_them(tmp_path, monkeypatch) -> None:
    """An Arrow file holds the state's parts, each in key and time order, as they are: a
    loaded state holds the same parts and sorts nothing (a sort of the whole state on every
    load would take seconds for millions of events), and answers as the saved one."""
    import windowagg.engine.rolling.online as held_module

    events, _ = logs(n=1200, q=10)
    aggs = {"s": ("sum", "v", "range:1h"), "l": ("last", "v", "rows:3")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    for lo in range(0, 1200, 100):
        state.update(events.slice(lo, 100))
    sizes = [p.num_rows for p in state._held.parts]
    assert len(sizes) > 1
    state.save(tmp_path / "state.arrow")

    def no_sort(*args):
        raise AssertionError("a loaded state sorted its events again")

    monkeypatch.setattr(held_module, "key_time_order", no_sort)
    again = OnlineFeatures.load(tmp_path / "state.arrow")
    assert [p.num_rows for p in again._held.parts] == sizes
    assert all(a.equals(b) for a, b in zip(again._held.parts, state._held.parts))
    index = again._held.index  # laid out in arrays of the events' size: none grown
    assert len(index.keys.data) == len(index.times.data) == sum(sizes)
    newest = max(events.column("ts").to_pylist())
    q = pa.table({"k": range(7), "ts": pa.array([newest] * 7, pa.timestamp("us"))})
    assert again.query(q).equals(state.query(q))


def test_a_crash_during_save_leaves_the_last_file(tmp_path, monkeypatch) -> None:
    events, _ = logs(n=200)
    state = OnlineFeatures(time="ts", key="k", aggs={"s": ("sum", "v", "range:1h")})
    state.update(events.slice(0, 100))
    path = tmp_path / "state.parquet"
    state.save(path)
    saved = state.held
    state.update(events.slice(100))

    def crash(*_, **__):
        raise OSError("disk gone")

    monkeypatch.setattr(pq, "write_table", crash)
    with pytest.raises(OSError, match="disk gone"):
        state.save(path)
    assert OnlineFeatures.load(path).held == saved > 0
    assert [p.name for p in tmp_path.iterdir()] == ["state.parquet"]


def test_bad_input_is_refused_before_any_work() -> None:
    with pytest.raises(TypeError, match="allowed_lateness"):
        OnlineFeatures(time="ts", aggs={"s": ("sum", "v", "range:1h")}, allowed_lateness=[1])
    with pytest.raises(ValueError, match="allowed_lateness"):
        OnlineFeatures(
            time="ts", aggs={"s": ("sum", "v", "range:1h")}, allowed_lateness="soon"
        ).update(pa.table({"ts": pa.array([T0]), "v": [1.0]}))
    state = OnlineFeatures(time="ts", key="k", aggs={"s": ("sum", "v", "range:1h")})
    with pytest.raises(ValueError, match="update"):
        state.query(pa.table({"k": [1], "ts": pa.array([T0])}))
    with pytest.raises(ValueError, match="no key column"):
        state.update(pa.table({"ts": pa.array([T0]), "v": [1.0]}))
    state.update(pa.table({"k": [1], "ts": pa.array([T0]), "v": [1.0]}))
    with pytest.raises(ValueError, match=r"lack column\(s\) \['v'\]"):
        state.update(pa.table({"k": [1], "ts": pa.array([T0])}))
    with pytest.raises(TypeError, match="'v' holds string"):
        state.update(pa.table({"k": [1], "ts": pa.array([T0]), "v": ["x"]}))
    with pytest.raises(TypeError, match="at_time"):
        state.query(pa.table({"k": [1], "ts": [1.5]}))
    # a query table of a schema checked before is not checked again; another one is
    assert state.query(pa.table({"k": [1], "ts": pa.array([T0])})).column("s").to_pylist() == [1.0]
    with pytest.raises(TypeError, match="at_time"):
        state.query(pa.table({"k": [1], "ts": [1.5]}))
    with pytest.raises(ValueError, match="at_key column 'q'"):
        state.query(pa.table({"k": [1], "ts": pa.array([T0])}), at_key="q")
    assert state.held == 1 and state.dropped == 0


def test_a_schema_answers_queries_before_the_first_event() -> None:
    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.float64())])
    state = OnlineFeatures(
        time="ts",
        key="k",
        aggs={"c": ("count", "v", "range:1h"), "s": ("sum", "v", "range:1h")},
        schema=schema,
    )
    got = state.query(pa.table({"k": [1], "ts": pa.array([T0])}))
    assert got.column("c").to_pylist() == [0] and got.column("s").to_pylist() == [None]
    assert got.schema.field("c").type == pa.int64()


def test_plain_number_times_and_a_number_of_lateness() -> None:
    events = pa.table(
        {"t": [1.0, 5.0, 3.0, 2.5, 9.0, 4.0], "v": [1, 2, 3, 4, 5, 6], "a": [0, 1, 2, 4, 5, 6]}
    )
    queries = pa.table({"t": [5.0, 9.0, 9.5], "a": [3, 5, 7]})
    got = replay(
        events,
        queries,
        time="t",
        aggs={"s": ("sum", "v", "range:4")},
        arrival="a",
        allowed_lateness=2,
    )
    assert got.differences == 0 and got.dropped == 2  # 2.5 after 5 - 2, 4 after 9 - 2
    assert got.served.column("s").to_pylist() == [6, 7, 5]


def test_the_public_names() -> None:
    assert windowagg.OnlineFeatures is OnlineFeatures


def test_int64_times_nan_values_and_nan_times() -> None:
    """Whole-number times beyond what a double holds, exactly; NaN a value on Arrow (a sum
    with it is NaN, as the batch call's); a NaN time refused before anything is held."""
    big = 2**60
    events = pa.table(
        {
            "t": pa.array([big, big + 1, big + 3, big + 2, big + 9], pa.int64()),
            "v": [1.0, float("nan"), 2.0, 4.0, 8.0],
            "a": [0, 1, 2, 3, 4],
        }
    )
    queries = pa.table({"t": pa.array([big, big + 2, big + 9], pa.int64()), "a": [0, 3, 4]})
    got = replay(
        events,
        queries,
        time="t",
        aggs={"s": ("sum", "v", "range:1")},
        arrival="a",
        allowed_lateness=1,
    )
    assert got.differences == 0 and got.dropped == 0
    s = got.served.column("s").to_pylist()
    assert s[0] == 1.0 and s[1] != s[1] and s[2] == 8.0  # NaN at big + 1 in the second frame
    state = OnlineFeatures(time="t", aggs={"s": ("sum", "v", "range:1")})
    floats = pa.table({"t": [1.0, float("nan")], "v": [1.0, 2.0]})
    with pytest.raises(ValueError, match="NaN"):
        state.update(floats)
    assert state.held == 0


@pytest.fixture
def seen(monkeypatch) -> list[int]:
    """The number of events each evaluation of the online state, or each compiled call that
    answered (:mod:`windowagg.engine.rolling.compiled_at`), was given; arranging them by key
    and time there fails the test (the state hands them over in that order, with
    their keys' segments)."""
    import windowagg.engine.columns as columns
    import windowagg.engine.rolling.at as at_module
    import windowagg.engine.rolling.online as held_module

    counts: list[int] = []
    evaluating = threading.local()  # set while this thread evaluates for the online state

    def no_sort(real):
        def sort(*args):
            if getattr(evaluating, "now", False):
                raise AssertionError("the online state's events were sorted again for a query")
            return real(*args)

        return sort

    monkeypatch.setattr(columns, "keyed_sort", no_sort(columns.keyed_sort))
    monkeypatch.setattr(at_module, "arrange", no_sort(at_module.arrange))

    def counting(real):
        def evaluation(plan, events, *args):
            counts.append(events.num_rows)
            evaluating.now = True
            try:
                return real(plan, events, *args)
            finally:
                evaluating.now = False

        return evaluation

    for name in ("compute_at", "evaluate_at"):
        monkeypatch.setattr(held_module, name, counting(getattr(held_module, name)))
    compiled = held_module.answered_at

    def answered(c, laid, runs, *args):  # the compiled calls: the runs' events, where they answer
        evaluating.now = True
        try:
            got = compiled(c, laid, runs, *args)
        finally:
            evaluating.now = False
        if got is not None:
            counts.append(int((runs[1] - runs[0]).sum()))
        return got

    monkeypatch.setattr(held_module, "answered_at", answered)
    return counts


def test_a_batch_is_answered_over_the_keys_it_asks_for(monkeypatch, seen) -> None:
    """A batch of queries is evaluated over the held events of the keys it asks for only, and
    answers what the batch call over every event answers, to the bit: float sums and means
    over a hot key with more queries than one sweep's block of answers, a rows frame, a key
    with no event."""
    import windowagg.engine.rolling.online as held_module

    rng = np.random.default_rng(4)
    n = 300_000
    keys = np.where(rng.random(n) < 0.3, 0, rng.integers(1, 2000, n))
    events = pa.table({"k": keys, "t": rng.integers(0, 10**9, n), "v": rng.random(n) * 1e3})
    aggs = {
        "s": ("sum", "v", "range:50000000"),
        "m": ("mean", "v", "rows:1000"),
        "c": ("count", "v", "range:-1000000,-1"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=10**9)
    state.update(events)
    q = 140_000
    asked = np.r_[np.zeros(q, np.int64), np.arange(1, 301), [5000]]
    queries = pa.table({"k": asked, "t": rng.integers(0, 10**9, len(asked))})
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    # in one evaluation, or one per range of keys on each thread (they hold the same events)
    assert sum(seen) == int(np.isin(keys, asked).sum()) < n // 2
    assert all(got.column(name).equals(want.column(name)) for name in aggs)
    # a batch asking for the keys of most events: the parts' sorted keys say so, and no pass
    # is made over every held key
    import pyarrow.compute as pc

    lengths: list[int] = []

    class Counting:
        def __getattr__(self, name):
            return getattr(pc, name)

        def is_in(self, values, **kw):
            lengths.append(len(values))
            return pc.is_in(values, **kw)

    monkeypatch.setattr(held_module, "pc", Counting())
    most = pa.table({"k": np.arange(0, 2000), "t": rng.integers(0, 10**9, 2000)})
    seen.clear()
    got = state.query(most)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=most)
    assert sum(seen) == n and lengths == []
    assert all(got.column(name).equals(want.column(name)) for name in aggs)


@pytest.mark.parametrize("times", ["numbers", "nanoseconds"])
def test_a_batch_is_split_by_keys_across_threads(monkeypatch, times) -> None:
    """On several threads, a batch's asked keys are cut into ranges of about equal events,
    each range with its queries evaluated on a thread of its own (the first on the calling
    thread); the answers, in the queries' order, are those of one thread and of the batch
    call: a hot key, a key with no event, a null key, a string column, an order-sensitive
    aggregation, NaN values and null values included, on plain numbers and on nanosecond
    times beyond doubles (an index that does not lay them as doubles)."""
    import windowagg.engine.rolling.online as held_module

    rng = np.random.default_rng(12)
    n = 6000
    keys = np.where(rng.random(n) < 0.4, 3, rng.integers(0, 300, n))
    values = rng.integers(0, 50, n).astype(float)
    values[rng.random(n) < 0.05] = np.nan
    t = rng.integers(0, 10**6, n)
    qt = rng.integers(0, 10**6, 3003)
    if times == "nanoseconds":  # beyond 2**53: only int64 holds them exactly
        t = pa.array(t + 2**60, pa.timestamp("ns"))
        qt = pa.array(qt + 2**60, pa.timestamp("ns"))
    events = pa.table(
        {
            "k": keys,
            "t": t,
            "v": pa.array(values, mask=rng.random(n) < 0.05),
            "s": pa.array([f"s{i % 7}" for i in range(n)]),
        }
    )
    unit = "ns" if times == "nanoseconds" else ""
    aggs = {
        "sum": ("sum", "v", f"range:100000{unit}"),
        "last": ("last", "v", f"range:-200000{unit},-1{unit}"),
        "list": ("collect_list", "v", "rows:3"),
        "first_s": ("first", "s", "rows:5"),
        "distinct": ("count_distinct", "v", f"range:300000{unit}"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=10**6)
    for part in np.array_split(np.arange(n), 5):  # several parts
        state.update(events.take(pa.array(part)))
    asked = pa.array([*rng.integers(0, 320, 3000).tolist(), None, 3, 3], pa.int64())
    queries = pa.table({"k": asked, "t": qt})
    assert state._held.index.doubles == (times == "numbers")
    distinct = len(pc.unique(asked.drop_null()))  # every key asked for, in one range
    alone, split = alone_and_in_ranges(
        monkeypatch,
        held_module.Held,
        "_of_runs",
        lambda: state.query(queries),
        distinct,
        held_module.RANGES_PER_THREAD,
    )
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert split.schema == alone.schema == want.schema  # types as the batch call's
    for name in aggs:  # value for value, NaN equal to NaN
        got = repr(split[name].to_pylist())
        assert got == repr(alone[name].to_pylist()) == repr(want[name].to_pylist()), name


def test_each_range_hands_the_evaluation_its_requests_in_key_order(monkeypatch) -> None:
    """A batch over the events in ranges of keys on three threads: each range puts its
    requests in key order (ties in the batch's order) before the evaluation, which then
    neither sorts them nor puts its answers back; the batch's answers, back in its order,
    equal the batch call's. On one thread too (its ranges one after another); a batch of
    fewer events than a range needs is not cut, and the evaluation sorts it as it comes."""
    from windowagg.engine.rolling import at as at_module

    from .threads import few_rows_on_threads

    rng = np.random.default_rng(21)
    n = 6000
    events = pa.table(
        {"k": rng.integers(0, 200, n), "t": rng.integers(0, 1000, n), "v": rng.random(n)}
    )
    # a standard deviation: evaluated over the events (not one compiled call, compiled_at)
    aggs = {"s": ("sum", "v", "range:100"), "l": ("last", "v", "rows:3")}
    aggs["sd"] = ("stddev", "v", "range:100")
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=1000)  # all held
    for part in np.array_split(np.arange(n), 4):
        state.update(events.take(pa.array(part)))
    keys = rng.permutation(np.repeat(np.arange(-5, 200), 2))  # some keys twice, some unheld
    queries = pa.table({"k": pa.array(keys), "t": pa.array(np.full(len(keys), 990))})
    sorts = []
    keyed_sort = at_module.keyed_sort
    monkeypatch.setattr(at_module, "keyed_sort", lambda *a: sorts.append(1) or keyed_sort(*a))
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    sorts.clear()
    for threads, sorted_here in ((3, 0), (1, 0), (None, 1)):
        if threads is None:  # the engine's own threshold: 6,000 events make no ranges
            got = state.query(queries)
        else:
            with few_rows_on_threads(threads):
                got = state.query(queries)
        assert len(sorts) == sorted_here, threads
        sorts.clear()
        for name in aggs:
            assert got[name].to_pylist() == want[name].to_pylist(), (threads, name)


@pytest.mark.parametrize("listed", [False, True])
def test_each_range_puts_its_answers_in_the_batchs_order(listed, monkeypatch) -> None:
    """On three threads each range of keys writes its answers at its requests' rows of the
    batch, so nothing is put back afterwards; a column without a fixed width (a list) is put
    back once from the ranges' pieces. Both equal the batch call's, nulls among them."""
    from windowagg.engine.rolling import online as held_module

    from .threads import few_rows_on_threads

    rng = np.random.default_rng(5)
    n = 6000
    events = pa.table(
        {
            "k": rng.integers(0, 200, n),
            "t": rng.integers(0, 1000, n),
            "v": pa.array(rng.random(n), mask=rng.random(n) < 0.1),
        }
    )
    aggs = {
        "s": ("sum", "v", "range:20"),
        "x": ("max", "v", "rows:3"),
        "c": ("count", "*", "range:5"),
    }
    if listed:
        aggs["l"] = ("collect_list", "v", "rows:2")
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=1000)
    for part in np.array_split(np.arange(n), 4):
        state.update(events.take(pa.array(part)))
    queries = pa.table({"k": rng.integers(-5, 205, 900), "t": rng.integers(0, 1000, 900)})
    moves = []
    moved = held_module.moved
    monkeypatch.setattr(held_module, "moved", lambda *a: moves.append(1) or moved(*a))
    with few_rows_on_threads(3):
        got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert got.equals(want)
    assert moves == ([1] if listed else [])


def test_small_updates_leave_few_parts_and_a_query_reads_its_keys_alone(seen) -> None:
    """Many small updates are merged into O(log n) parts, each in key and time order with
    ties in arrival order (merged from its two parts' as they merge); a query for a few keys
    reads those keys' events alone, in that order over every part (so the evaluation does
    not sort them), and answers what the batch call over every event answers."""

    rng = np.random.default_rng(8)
    n = 20_000
    events = pa.table(
        {"k": rng.integers(0, 300, n), "t": rng.integers(0, 400, n), "v": rng.random(n)}
    )
    aggs = {
        "s": ("sum", "v", "range:50"),
        "l": ("last", "v", "rows:4"),
        "c": ("count", "v", "range:9"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=10**6)
    for lo in range(0, n, 40):
        state.update(events.slice(lo, 40))
    assert state.held == n and len(state._held.parts) <= 16
    queries = pa.table({"k": [7, 7, 12, 299, 1000], "t": [0, 399, 200, 400, 5]})
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert seen == [int(np.isin(events["k"].to_numpy(), [7, 12, 299]).sum())]
    assert all(got.column(name).equals(want.column(name)) for name in aggs)
    # each part holds a run of the arrivals, in what a fresh stable sort by key and time
    # gives (the values tell the events apart), and its keys and times beside it
    held, arrived = state._held, 0
    assert held.index.parts == len(held.parts)
    for p, part in enumerate(held.parts):
        keys, times = held.index.part(p)
        run = events.slice(arrived, part.num_rows)
        order = np.lexsort((run["t"].to_numpy(), run["k"].to_numpy()))
        assert part.equals(run.select(part.column_names).take(order))
        assert np.array_equal(keys, part["k"].to_numpy())
        assert np.array_equal(times, part["t"].to_numpy())
        arrived += part.num_rows
    assert arrived == n


def test_each_request_alone_equals_one_backfill_of_all_requests() -> None:
    """Requests answered one at a time by the state equal, to the last bit, one batch call
    over every request: float sums and means are exactly rounded, and the moments come from
    each frame's values alone (:mod:`windowagg.kernels.exact_moments`), so a frame's answer
    does not depend on which other requests were asked with it (values of every magnitude,
    so that a sum or a merge in another order would round otherwise: with the moments from
    the sweep's merges, this test fails)."""
    rng = np.random.default_rng(13)
    n = 3000
    t0 = dt.datetime(2026, 1, 1)
    events = pa.table(
        {
            "card": rng.integers(0, 4, n),
            "ts": pa.array([t0 + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 86_400, n)]),
            "amount": rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n),
            "other": rng.standard_normal(n) + 1e6 * (rng.random(n) < 0.3),
        }
    )
    aggs = {
        "spend_1h": ("sum", "amount", "range:1h"),
        "mean_3h": ("mean", "amount", "range:-3h,-1us"),
        "last_50": ("sum", "amount", "rows:50"),
        "sd_1h": ("stddev", "amount", "range:1h"),
        "var_50": ("var_pop", "other", "rows:50"),
        "skew_3h": ("skewness", "other", "range:-3h,-1us"),
        "kurt_3h": ("kurtosis", "amount", "range:3h"),
        "corr_2h": ("corr", ("amount", "other"), "range:2h"),
        "covar_20": ("covar_samp", ("other", "amount"), "rows:20"),
    }
    asked = pa.table(
        {
            "card": rng.integers(0, 4, 60),
            "ts": pa.array(
                [t0 + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 86_400, 60)]
            ),
        }
    )
    state = OnlineFeatures(time="ts", key="card", aggs=aggs, allowed_lateness="1d")
    state.update(events)
    backfill = windowagg.rolling_aggregate(events, time="ts", key="card", aggs=aggs, at=asked)
    for i in range(asked.num_rows):
        alone = state.query(asked.slice(i, 1))
        for name in aggs:
            assert alone[name][0].as_py() == backfill[name][i].as_py(), (i, name)


@pytest.mark.parametrize("span", ["narrow", "extreme", "floats"])
def test_the_order_a_part_is_held_in_is_a_stable_sort_by_key_and_time(span) -> None:
    """A part's order by key and time (one sort of the two packed into a word where they
    fit, else two stable sorts) is what a stable sort of the pair gives: ties keep their
    order, keys and times at the ends of int64, float times."""
    from windowagg.engine.keys import in_key_order
    from windowagg.engine.rolling.online import key_time_order

    rng = np.random.default_rng(21)
    n = 5000
    keys = rng.integers(-3, 4, n)
    times = rng.integers(0, 50, n)
    if span == "extreme":
        big = np.iinfo(np.int64)
        keys = np.where(rng.random(n) < 0.5, big.min, big.max)
        times = np.where(rng.random(n) < 0.5, big.min, big.max - rng.integers(0, 3, n))
    if span == "floats":
        times = rng.integers(0, 50, n) / 4.0
    order = np.lexsort((times, keys))
    assert np.array_equal(key_time_order(keys, times), order)
    assert in_key_order(keys[order], times[order])
    assert not in_key_order(keys, times)
    if span == "extreme":  # a step from the largest key to the smallest is out of order
        big = np.iinfo(np.int64)
        assert not in_key_order(np.array([big.max, big.min]), np.array([0, 0]))
        assert not in_key_order(np.array([0, 0]), np.array([big.max, big.min]))


@pytest.mark.parametrize("span", ["narrow", "extreme", "arrival"])
def test_the_index_finds_each_asked_keys_rows_in_every_part(span) -> None:
    """The parts' index (keys, times and fixed-width columns laid one after another) finds the
    asked keys' rows in every part, key by key in time order with ties in arrival order (an
    earlier part's first), as a stable sort of every part's rows one after another gives:
    keys without rows (before, between and after a part's) and a part merged again (laid
    anew at the end) included; a column's nulls, first seen in a later part, gathered with
    it; parts that overlap in time, or hardly (in arrival order), alike."""
    from windowagg.engine.rolling.online import key_time_order
    from windowagg.engine.rolling.part_index import PartIndex

    rng = np.random.default_rng(29)
    big = np.iinfo(np.int64)
    schema = pa.schema([("k", pa.int64()), ("t", pa.int64()), ("v", pa.float64())])
    index = PartIndex(np.int64, schema, ["t", "v"])
    parts = []
    for p, n in enumerate([3000, 1500, 700, 0, 40]):
        keys = rng.integers(-20, 20, n) * 3
        if span == "extreme":
            keys = np.where(
                rng.random(n) < 0.1, np.where(rng.random(n) < 0.5, big.min, big.max), keys
            )
        times = rng.integers(0, 30, n)
        if span == "arrival":  # each part a little later than the one before: few overlaps
            times = rng.integers(10 * p, 10 * p + 14, n)
        order = key_time_order(keys, times)
        v = pa.array(rng.random(n), mask=(rng.random(n) < 0.2) if p == 2 else None)
        part = pa.table({"k": keys, "t": times, "v": v}).take(pa.array(order))
        index.push(keys[order], times[order], part)
        parts.append(part)
    index.pop(2)  # the last two parts laid again, as a merge lays them
    for part in parts[-2:]:
        index.push(part["k"].to_numpy(), part["t"].to_numpy(), part)
    every = pa.concat_tables(parts)
    wanted = np.arange(-70, 70)
    if span == "extreme":
        wanted = np.r_[big.min, big.min + 1, wanted, big.max - 1, big.max]
    runs = index.runs(wanted)
    stretches, times, counts = index.merged(runs)
    rows = stretches.rows()
    keys = every["k"].to_numpy()
    asked = np.flatnonzero(np.isin(keys, wanted))
    want = asked[np.lexsort((every["t"].to_numpy()[asked], keys[asked]))]  # stable
    assert np.array_equal(rows, want)
    if span == "arrival":  # parts in about time order: far fewer stretches than rows
        assert len(stretches.starts) < len(rows) // 4
    assert np.array_equal(times, every["t"].to_numpy()[want])
    assert np.array_equal(counts, [(keys == w).sum() for w in wanted]) and (counts == 0).any()
    assert np.array_equal(runs.each, counts) and runs.n == len(rows)  # found with the runs
    assert runs.keys(3, 50).each.tolist() == counts[3:50].tolist()
    assert index.gathered("v", stretches).equals(every["v"].combine_chunks().take(pa.array(want)))
    assert index.gathered("k", stretches) is None  # not read


def test_dense_keys_are_found_through_a_table_at_the_ends_of_int64() -> None:
    """A part whose distinct keys are dense gets a table of them: keys found at once, keys
    before, between and after them not found, also where a key minus the table's first
    wraps past 2**63 (dense keys at both ends of int64); sparse keys are searched."""
    from windowagg.engine.rolling.part_index import PartIndex

    lo, hi = -(2**63), 2**63 - 1
    schema = pa.schema([("k", pa.int64()), ("t", pa.int64())])
    index = PartIndex(np.int64, schema, [])
    for keys in ([lo, lo, lo + 1, lo + 3], [hi - 2, hi], [0, 10**12]):  # the last sparse
        part = pa.table({"k": keys, "t": list(range(len(keys)))})
        index.push(np.array(keys), np.arange(len(keys)), part)
    assert index.kmin[:2] == [lo, hi - 2] and index.toff[1] - index.toff[0] == 4
    assert index.toff[3] == index.toff[2]  # no table for sparse keys
    wanted = np.array([lo, lo + 2, lo + 3, -1, 0, 10**12, hi - 1, hi])
    _, _, counts = index.merged(index.runs(wanted))
    assert counts.tolist() == [2, 0, 1, 0, 1, 1, 0, 1]


def test_the_index_hands_out_times_as_doubles_while_every_time_is_one() -> None:
    """The index's times, found for a batch, come out as the engine reads them: doubles,
    converted as they are copied, while every time laid is a double exactly; int64 once a
    time beyond 2**52 is laid (then the engine's own conversion decides)."""
    from windowagg.engine.rolling.part_index import PartIndex

    schema = pa.schema([("k", pa.int64()), ("t", pa.int64()), ("v", pa.float64())])
    index = PartIndex(np.int64, schema, ["v"])
    part = pa.table({"k": [1, 1, 2], "t": [5, 9, -(2**52)], "v": [1.0, 2.0, 3.0]})
    index.push(part["k"].to_numpy(), part["t"].to_numpy(), part)
    _, times, _ = index.merged(index.runs(np.array([1, 2])))
    assert index.doubles and times.dtype == np.float64 and times.tolist() == [5, 9, -(2**52)]
    wide = pa.table({"k": [2], "t": [2**52 + 1], "v": [4.0]})
    index.push(wide["k"].to_numpy(), wide["t"].to_numpy(), wide)
    _, times, _ = index.merged(index.runs(np.array([1, 2])))
    assert not index.doubles and times.dtype == np.int64
    assert times.tolist() == [5, 9, -(2**52), 2**52 + 1]


@pytest.mark.parametrize("spread", ["narrow", "wide"])
def test_each_request_finds_its_keys_segment(spread, monkeypatch) -> None:
    """The keys asked for, sorted and distinct, and each request's place among them (by a
    table of the keys' span, or by a sort where the span is wide: the same), then the
    segments of those that hold rows, and each request's: -1 for a null key or a key
    without rows; a key asked twice shares its segment."""
    from windowagg.engine.rolling import online
    from windowagg.kernels.key_order import query_segments

    tabled: list[int] = []
    table = online.asked_keys
    monkeypatch.setattr(online, "asked_keys", lambda *a: tabled.append(1) or table(*a))
    ends = (-(2**63), 2**63 - 1) if spread == "wide" else (-40, 70)
    q = np.array([9, 2, 0, 5, ends[1], 9, ends[0]])
    valid = np.array([True, True, False, True, True, True, True])
    wanted, place = online.asked_of(q, valid)
    assert bool(tabled) == (spread == "narrow")
    assert wanted.tolist() == [ends[0], 2, 5, 9, ends[1]]
    assert place.tolist() == [3, 1, -1, 2, 4, 3, 0]
    counts = np.array([1, 3, 0, 2, 4])
    seg, qseg = np.full(6, 99), np.full(7, 99)
    m = query_segments(place, counts, seg, qseg, np.empty(5, np.int64))
    assert m == 4 and seg[: m + 1].tolist() == [0, 1, 4, 6, 10]
    assert qseg.tolist() == [2, 1, -1, -1, 3, 2, 0]
    one, at = online.asked_of(np.array([7]), np.array([False]))  # one request, a null key
    assert one.tolist() == [] and at.tolist() == [-1]
    none, at = online.asked_of(np.array([7, 8]), np.array([False, False]))
    assert none.tolist() == [] and at.tolist() == [-1, -1]
    # no mask: every key holds a value, as a mask of every one would say
    kept = np.ones(len(q), bool)
    for alone in (q, q[:1]):
        got, at = online.asked_of(alone, None)
        want, want_at = online.asked_of(alone, kept[: len(alone)])
        assert got.tolist() == want.tolist() and at.tolist() == want_at.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_the_keys_asked_through_their_spans_table_equal_a_sort(seed, monkeypatch) -> None:
    """The table of the keys' span finds the keys asked for, sorted and distinct, and each
    request's place among them, as a sort does: keys at both ends of the span, most of the
    span asked or a few keys of it, some requests' keys null (their place -1). A narrow
    span is found through the table (watched), a wide one by the sort."""
    from windowagg.engine.rolling import online

    tabled: list[int] = []
    table = online.asked_keys
    monkeypatch.setattr(online, "asked_keys", lambda *a: tabled.append(1) or table(*a))
    rng = np.random.default_rng(seed)
    span = (5, 100, 100_000)[seed % 3]  # the last beyond a table for these few requests
    q = rng.integers(-span, span, int(rng.integers(2, 3000)))
    q[:2] = -span, span - 1  # both ends of the span
    valid = rng.random(len(q)) < (1.0, 0.9, 0.3)[seed // 2]
    wanted, place = online.asked_of(q, valid)
    want = np.unique(q[valid])
    assert bool(tabled) == (2 * span <= online.SPAN_PER_QUERY * len(q) + online.SPAN_FLOOR)
    assert wanted.tolist() == want.tolist()
    assert np.array_equal(place, np.where(valid, np.searchsorted(want, q), -1))


def test_null_and_unknown_request_keys_on_integer_keys(seen) -> None:
    """Requests with a null key or a key without events, among others, through the integer
    key's path: what the batch call answers (count 0, every other entry null), value and
    type, with NaN values and nanosecond times beyond what a double holds."""
    rng = np.random.default_rng(17)
    n = 600
    base = 1_800_000_000_000_000_000
    events = pa.table(
        {
            "k": rng.integers(0, 4, n),
            "ts": pa.array(base + rng.integers(0, 10**12, n), pa.timestamp("ns")),
            "v": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
        }
    )
    aggs = {
        "s": ("sum", "v", "range:5m"),
        "c": ("count", "v", "rows:4"),
        "m": ("max", "v", "range:1m"),
    }
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    for lo in range(0, n, 150):
        state.update(events.slice(lo, 150))
    queries = pa.table(
        {
            "k": pa.array([2, None, 9, 0, None, 3], pa.int64()),
            "ts": pa.array(base + rng.integers(0, 10**12, 6), pa.timestamp("ns")),
        }
    )
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="ts", key="k", aggs=aggs, at=queries)
    assert len(seen) == 1  # answered through the integer key's path
    assert got.schema == want.schema
    for name in aggs:  # NaN equals NaN
        pairs = zip(got.column(name).to_pylist(), want.column(name).to_pylist())
        assert all(a == b or (a != a and b != b) for a, b in pairs)
    assert got.column("c").to_pylist()[1:3] == [0, 0]


#: key columns of every kind the index codes (strings differing only in a trailing zero
#: byte, the empty string, unsigned ints beyond int64, dates, booleans), alone and together
CODED = {
    "s": pa.array(["", "a", "a\x00", "é", "card-" + "9" * 30, "b"], pa.string()),
    "L": pa.array(["x", "", "y\x00"], pa.large_string()),
    "b": pa.array([b"", b"\x00", b"a", b"a\x00"], pa.binary()),
    "u": pa.array([2**64 - 1, 0, 2**63], pa.uint64()),
    "d": pa.array([19723, 19724], pa.date32()),
    "o": pa.array([True, False]),
    "i": pa.array([-1, 1]),
    "x": pa.array([0.0, -0.0, float("nan"), 1.5]),  # -0.0 the same key as 0.0, as Spark's
    "m": pa.array([decimal.Decimal(x) for x in ("1.10", "1.1", "-3.5")], pa.decimal128(6, 2)),
}


@pytest.mark.parametrize(
    "key",
    [
        ["s"],
        ["L"],
        ["b"],
        ["u"],
        ["d"],
        ["o"],
        ["x"],
        ["m"],
        ["s", "i"],
        ["i", "b", "d"],
        ["o", "i", "x"],
    ],
)
def test_keys_of_strings_binary_and_several_columns_through_the_index(
    key, seen, monkeypatch, tmp_path
) -> None:
    """A key of strings, binary, unsigned, temporal, float or decimal values, or of several
    columns, is held in parts by its codes and found through the index, never by a pass over
    every event: updates that merge parts, history let go (codes started afresh), a save and
    a load, and requests with a key never seen (a string) or a null one answer what the
    batch call over the held events answers, value and type; served entries (sum, rows
    count, distinct count, first) and a standard deviation evaluated over the events."""
    import windowagg.engine.rolling.online as held_module

    def no_pass(*args):
        raise AssertionError("the events of every key were read for a request")

    monkeypatch.setattr(held_module, "of_keys", no_pass)
    rng = np.random.default_rng(23)
    n = 3000
    secs = np.sort(rng.integers(0, 4 * 3600, n))
    events = pa.table(
        {c: CODED[c].take(rng.integers(0, len(CODED[c]), n)) for c in key}
        | {
            "ts": pa.array(T0 + (secs * 1_000_000).astype("timedelta64[us]")),
            "v": pa.array(rng.normal(size=n), mask=rng.random(n) < 0.1),
            "w": rng.integers(0, 9, n),
        }
    )
    aggs = {
        "sv": ("sum", "v", "range:1h"),
        "c": ("count", "v", "rows:5"),
        "dw": ("count_distinct", "w", "range:30m"),
        "f": ("first", "w", "range:20m"),
        "sd": ("stddev", "v", "range:1h"),
    }
    state = OnlineFeatures(time="ts", key=key, aggs=aggs, allowed_lateness="40m")
    for lo in range(0, n, 400):
        state.update(events.slice(lo, 400))
    held = state._held
    assert held.answers_from is not None  # history let go: codes started afresh
    # string and binary keys held as their codes, put back as they were
    coded = [k for k in key if CODED[k].type in HELD_AS_CODES]
    assert all(p.schema.field(k).type == pa.int64() for p in held.parts for k in coded)
    assert held.table().schema == events.schema and coded == [k for k in key if k in "sLb"]
    q = 60
    asked = {c: CODED[c].take(rng.integers(0, len(CODED[c]), q)) for c in key}
    first, type_ = key[0], CODED[key[0]].type
    column = asked[first].to_pylist()
    column[1] = None  # a null key
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        column[0] = "never"  # a string never seen
    asked[first] = pa.array(column, type_)
    newest = T0 + np.timedelta64(int(secs[-1]), "s")
    times = newest - (rng.integers(0, 1800, q) * 1_000_000).astype("timedelta64[us]")
    queries = pa.table(asked | {"ts": pa.array(times)})
    held = state._held.table()
    want = windowagg.rolling_aggregate(held, time="ts", key=key, aggs=aggs, at=queries)
    got = state.query(queries)
    assert got.schema == want.schema
    for name in aggs:  # NaN equals NaN
        pairs = zip(got.column(name).to_pylist(), want.column(name).to_pylist())
        assert all(a == b or (a != a and b != b) for a, b in pairs), name
    assert got.column("c")[1].as_py() == 0  # a null key: no event
    assert len(seen) == 1  # the standard deviation, over the asked keys' events alone
    state.save(tmp_path / "state.arrow")
    again = OnlineFeatures.load(tmp_path / "state.arrow").query(queries)
    assert again.select(list(aggs)).equals(got.select(list(aggs)))  # no NaN among them


@pytest.mark.parametrize("times", ["nanoseconds", "int64"])
def test_string_keys_over_times_beyond_doubles(times, seen) -> None:
    """String keys through the index over nanosecond timestamps and int64 times beyond what
    a double holds, NaN values (a value) and nulls (skipped), a null and an unseen request
    key: what the batch call answers, value and type."""
    rng = np.random.default_rng(31)
    n = 1200
    base = 1_800_000_000_000_000_001
    stamps = base + np.sort(rng.integers(0, 10**12, n))
    col = pa.array(stamps, pa.timestamp("ns")) if times == "nanoseconds" else pa.array(stamps)
    v = np.where(rng.random(n) < 0.1, np.nan, rng.random(n))
    events = pa.table(
        {
            "k": pa.array(np.array(["x", "y", "zz"])[rng.integers(0, 3, n)]),
            "t": col,
            "v": pa.array(v, mask=rng.random(n) < 0.1),
        }
    )
    window = "range:5m" if times == "nanoseconds" else "range:300000000000"
    aggs = {"s": ("sum", "v", window), "c": ("count", "v", "rows:4"), "m": ("max", "v", window)}
    lateness = "1h" if times == "nanoseconds" else 3_600_000_000_000
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=lateness)
    for lo in range(0, n, 300):
        state.update(events.slice(lo, 300))
    asked = stamps[rng.integers(0, n, 6)] + np.array([0, 1, 0, 7, 0, 0])  # at an event, after
    queries = pa.table(
        {
            "k": pa.array(["x", None, "y", "zz", "never", "x"]),
            "t": pa.array(asked, col.type),
        }
    )
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert len(seen) == 1  # through the index: the asked keys' events alone, not sorted again
    assert got.schema == want.schema
    for name in aggs:  # NaN equals NaN
        pairs = zip(got.column(name).to_pylist(), want.column(name).to_pylist())
        assert all(a == b or (a != a and b != b) for a, b in pairs), name
    assert got.column("c").to_pylist()[1] == 0 and got.column("c").to_pylist()[4] == 0


def test_categorical_keys_through_the_index(monkeypatch) -> None:
    """A pandas categorical key (dictionary-encoded, each update's frame and the requests'
    with categories of their own) is coded by its values and found through the index:
    requests (a category never seen, a null) answer what the batch call over the held
    events answers. (Such a state's requests had failed: Arrow's ``is_in`` refused a
    dictionary against plain values; and the batch call, a null among a dictionary's
    codes.)"""
    import pandas as pd

    import windowagg.engine.rolling.online as held_module

    def no_pass(*args):
        raise AssertionError("the events of every key were read for a request")

    monkeypatch.setattr(held_module, "of_keys", no_pass)

    def frame(cards: list[str], hour: int, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        secs = np.sort(rng.integers(0, 3600, 1500)) + 3600 * hour
        return pd.DataFrame(
            {
                "card": pd.Categorical(rng.choice(cards, 1500)),
                "ts": pd.Timestamp("2024-01-01") + pd.to_timedelta(secs, "s"),
                "v": rng.normal(size=1500),
            }
        )

    aggs = {"s": ("sum", "v", "range:30m"), "c": ("count", "v", "rows:5")}
    state = OnlineFeatures(time="ts", key="card", aggs=aggs, allowed_lateness="3h")
    state.update(frame(["a", "b", "c"], 0, 1))
    state.update(frame(["c", "d", "a"], 1, 2))
    held = state._held
    assert held is not None and held.codes is not None  # through the index
    at = pd.Timestamp("2024-01-01 01:50")
    for cards in (["a", "d", "z", None, "c"], ["z", "a", "d", None, "c"]):
        asked = pd.DataFrame({"card": pd.Categorical(cards), "ts": at})
        got = state.query(asked)
        want = windowagg.rolling_aggregate(
            held.table(), time="ts", key="card", aggs=aggs, at=pa.Table.from_pandas(asked)
        )
        assert got["c"].tolist() == want["c"].to_pylist() and got["c"].tolist()[3] == 0
        assert got["s"].fillna(-1).tolist() == pc.fill_null(want["s"], -1).to_pylist()


@pytest.mark.parametrize(
    ("key", "asked"),
    [
        ("i", pa.array([0, 1, 2, 3, 4, 5, None, 2**40], pa.int64())),  # int32 events
        ("i", pa.array([0.0, 1.5, 2.0, -0.0, 4.0, float("nan"), None, 1.0])),
        ("f", pa.array([0, 2, 1, 3, 0, 2, 5, None], pa.int64())),  # float events
        (
            "m",
            pa.array(
                [decimal.Decimal(x) for x in ["1.1", "2", "-3.5", "0", "9", "1.10", "2", "0"]]
            ),
        ),
    ],
    ids=["ints", "floats to ints", "ints to floats", "decimals of another scale"],
)
def test_request_keys_of_another_type_are_compared_by_value(key, asked, monkeypatch) -> None:
    """A request's key of another type than the events' is put in their type by value, as
    the batch call compares them (a value no key of that type equals matches none), and
    found through the index: the batch call's answers, value and type."""
    import windowagg.engine.rolling.online as held_module

    def no_pass(*args):
        raise AssertionError("the events of every key were read for a request")

    monkeypatch.setattr(held_module, "of_keys", no_pass)
    rng = np.random.default_rng(29)
    n = 2000
    values = {
        "i": pa.array(rng.integers(0, 5, n), pa.int32()),
        "f": pa.array(np.array([0.0, -0.0, 1.0, 2.0, np.nan])[rng.integers(0, 5, n)]),
        "m": pa.array(
            [
                decimal.Decimal(x)
                for x in np.array(["1.10", "2.00", "-3.50", "0"])[rng.integers(0, 4, n)]
            ],
            pa.decimal128(6, 2),
        ),
    }
    secs = np.sort(rng.integers(0, 3600, n))
    events = pa.table(
        {
            key: values[key],
            "ts": pa.array(T0 + (secs * 1_000_000).astype("timedelta64[us]")),
            "v": rng.normal(size=n),
        }
    )
    aggs = {"s": ("sum", "v", "range:10m"), "c": ("count", "v", "rows:3")}
    state = OnlineFeatures(time="ts", key=key, aggs=aggs, allowed_lateness="2h")
    for lo in range(0, n, 500):
        state.update(events.slice(lo, 500))
    times = pa.array(np.full(len(asked), T0 + np.timedelta64(3600, "s")))
    queries = pa.table({key: asked, "ts": times})
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="ts", key=key, aggs=aggs, at=queries)
    assert got.schema == want.schema and got.select(list(aggs)).equals(want.select(list(aggs)))
    assert sum(got.column("c").to_pylist()) > 0  # some keys found


def test_columns_of_every_kind_gathered_across_parts(monkeypatch) -> None:
    """A batch gathers the columns its entries read from every part: those of a fixed width
    as words with their nulls, others (strings, decimals, truth values) with Arrow's take;
    what the batch call answers, value and type, for each."""
    import decimal

    import windowagg.engine.rolling.online as held_module

    rng = np.random.default_rng(23)
    n = 3000
    hole = rng.random(n) < 0.15  # nulls in every column but the key and the time
    events = pa.table(
        {
            "k": rng.integers(0, 40, n),
            "t": rng.integers(0, 5000, n),
            "i8": pa.array(rng.integers(-100, 100, n).astype(np.int8), mask=hole),
            "f32": pa.array(rng.random(n).astype(np.float32)),
            "ts": pa.array(
                T0 + rng.integers(0, 10**9, n).astype("timedelta64[us]"), mask=hole
            ).cast(pa.timestamp("us", "UTC")),
            "d": pa.array(rng.integers(0, 20000, n).astype("datetime64[D]"), pa.date32()),
            "dec": pa.array(
                [
                    None if h else decimal.Decimal(int(x)) / 100
                    for x, h in zip(rng.integers(0, 10**6, n), hole)
                ],
                pa.decimal128(9, 2),
            ),
            "s": pa.array([None if h else f"w{x}" for x, h in zip(rng.integers(0, 50, n), hole)]),
            "b": pa.array(rng.random(n) < 0.5, mask=hole),
        }
    )
    aggs = {
        "i8_last": ("last", "i8", "rows:5"),
        "f32_max": ("max", "f32", "range:300"),
        "ts_first": ("first", "ts", "range:400"),
        "d_min": ("min", "d", "range:800"),
        "dec_sum": ("sum", "dec", "range:600"),
        "s_max": ("max", "s", "range:700"),
        "b_or": ("bool_or", "b", "range:500"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=10**6)
    for lo in range(0, n, 700):  # several parts
        state.update(events.slice(lo, 700))
    assert len(state._held.parts) > 1
    arrow_taken: list[pa.DataType] = []
    original = held_module.taken

    def recording(columns, spans, local, at, type_):
        arrow_taken.append(type_)
        return original(columns, spans, local, at, type_)

    monkeypatch.setattr(held_module, "taken", recording)
    queries = pa.table({"k": rng.integers(0, 45, 400), "t": rng.integers(0, 5500, 400)})
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert got.schema == want.schema
    for name in aggs:
        assert got.column(name).equals(want.column(name)), name
    assert sorted(map(str, arrow_taken)) == ["bool", "decimal128(9, 2)", "string"]


@pytest.mark.parametrize("times", ["floats", "huge whole numbers"])
def test_plain_number_times_through_the_integer_keys_index(seen, times) -> None:
    """Times that are plain numbers go through the index as they are: floats (ties, negative
    times, -0.0 beside 0.0) and whole numbers beyond what a double holds exactly (2**62 and
    neighbours one apart); what the batch call answers, over several parts."""
    rng = np.random.default_rng(37)
    n = 2000
    if times == "floats":
        t = rng.integers(-40, 40, n) / 4.0
        t[rng.random(n) < 0.05] = -0.0
        frame, lateness = "range:2.5", 100.0
    else:
        t = 2**62 + rng.integers(0, 200, n)
        frame, lateness = "range:7", 10**3
    events = pa.table({"k": rng.integers(0, 12, n), "t": t, "v": rng.random(n)})
    aggs = {"s": ("sum", "v", frame), "c": ("count", "v", frame), "m": ("max", "v", "rows:5")}
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness=lateness)
    for lo in range(0, n, 300):
        state.update(events.slice(lo, 300))
    assert len(state._held.parts) > 1
    q = 60
    qt = rng.choice(t, q)  # an event's own instant
    queries = pa.table({"k": rng.integers(0, 14, q), "t": pa.array(qt, events["t"].type)})
    got = state.query(queries)
    want = windowagg.rolling_aggregate(events, time="t", key="k", aggs=aggs, at=queries)
    assert len(seen) == 1  # through the integer key's index
    assert got.schema == want.schema
    for name in aggs:
        assert got.column(name).equals(want.column(name)), name
