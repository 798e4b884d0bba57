"""An online state whose entries are all counts, sums and means over range frames answers
from each part's prefix sums (windowagg.engine.rolling.summaries), reading no event of the
frames, and equals the batch ``rolling_aggregate(at=)`` over the events held, value and type:
against that oracle on random logs (several parts, events out of order within the lateness,
late ones dropped, ties, null values, null and unknown keys, null times, requests at an
event's instant and frames that leave it out); a part whose values are not whole numbers
has no sums, and the evaluation over the events answers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg.engine.rolling.online as held_module
from windowagg import rolling_aggregate
from windowagg.engine.rolling import summaries
from windowagg.online import OnlineFeatures

from .threads import alone_and_in_ranges

AGGS = {
    "s": ("sum", "v", "range:1h"),
    "c": ("count", "v", "range:-1h,-1us"),
    "n": ("count", "*", "range:10m"),
    "a": ("mean", "v", "range:30m"),
    "w": ("count", "w", "range:unbounded,0"),
    "ahead": ("sum", "v", "range:-5m,5m"),
    "iw": ("sum", "w", "range:1h"),  # an integer column's sum (an exact long) and mean
    "aw": ("mean", "w", "range:-1h,-1us"),
    "mx": ("max", "v", "range:1h"),  # from the parts' tables of their best rows
    "mn": ("min", "w", "range:-5m,5m"),
    "r": ("mean", "v", "rows:3"),  # rows frames: each part's rows of the frame found by pivots
    "rw": ("sum", "w", "rows:-2,+1"),
    "rx": ("max", "v", "rows:-4,0"),
    "rn": ("count", "*", "rows:+1,+3"),
    "ru": ("min", "w", "rows:-1,unbounded"),
    "rc": ("count", "v", "rows:unbounded,0"),
    "fv": ("first", "v", "range:1h"),  # the first or last row of the parts' frames
    "lw": ("last", "w", "rows:-2,+1"),
    "lv": ("last", "v", "range:-5m,5m"),
    "fw": ("first_value", "w", "rows:unbounded,0"),
    "dv": ("count_distinct", "v", "range:1h"),  # from each part's rows grouped by value
    "dw": ("count_distinct", "w", "rows:-3,+2"),
}


@pytest.fixture
def paths(monkeypatch) -> dict[str, int]:
    """How many batches each path answered: from the parts' sums, or by the evaluation."""
    calls = {"sums": 0, "evaluation": 0}
    answered, of_runs = held_module.answered, held_module.Held._evaluated

    def from_sums(*args):
        got = answered(*args)
        calls["sums"] += got is not None
        return got

    def evaluated(*args):
        calls["evaluation"] += 1
        return of_runs(*args)

    monkeypatch.setattr(held_module, "answered", from_sums)
    monkeypatch.setattr(held_module.Held, "_evaluated", evaluated)
    monkeypatch.setattr(held_module, "SUMMED_PER_REQUEST", 0)  # the sums for any batch
    monkeypatch.setattr(held_module, "MIXED_PER_REQUEST", 0)
    monkeypatch.setattr(summaries, "GROUP_COST", 0)  # the groups however few values repeat
    monkeypatch.setattr(summaries, "GROUP_REQUEST", 0)
    return calls


def _log(seed: int, n: int, values: str) -> tuple[pa.Table, pa.Table, np.ndarray]:
    """Events over two hours in arrival order (each up to 90 s late, ties, null values and
    keys), requests at event instants and between (null times and keys, a key never seen,
    several requests of one key at one time), and the batches the events arrive in."""
    rng = np.random.default_rng(seed)
    secs = np.sort(rng.integers(0, 7200, n))
    secs[1::5] = secs[0::5][: len(secs[1::5])]  # ties
    secs.sort()
    late = np.clip(secs - rng.integers(0, 90, n), 0, None)
    v = rng.integers(-50, 50, n).astype(float)
    if values == "fractions":
        v[rng.random(n) < 0.05] += 0.5
    if values == "nan":
        v[rng.integers(0, n)] = np.nan
    if values == "huge":
        v *= 2.0**55  # whole numbers whose sums over a part could leave int64
    w = rng.integers(0, 9, n)
    if values == "huge integers":  # sums over the parts could leave int64; no frame's does
        w <<= 50
    keys = rng.integers(0, 5, n).astype(object)
    keys[rng.random(n) < 0.03] = None
    events = pa.table(
        {
            "k": pa.array(keys, pa.int64()),
            "ts": pa.array(late * 1_000_000, pa.timestamp("us")),
            "v": pa.array(v, mask=rng.random(n) < 0.1),
            "w": pa.array(w, mask=rng.random(n) < 0.2),
        }
    )
    q = 60
    at = secs[rng.integers(0, n, q)] + np.where(rng.random(q) < 0.5, 0, rng.integers(1, 600, q))
    qkeys = rng.integers(0, 6, q).astype(object)
    qkeys[rng.random(q) < 0.05] = None
    untimed = rng.random(q) < 0.05
    cuts = np.unique(rng.integers(1, max(n, 2), rng.integers(1, 12)))
    again = rng.random(q) < 0.3  # another request's key and time again, anywhere in the log
    source = rng.integers(0, q, q)[again]
    at[again], qkeys[again], untimed[again] = at[source], qkeys[source], untimed[source]
    stamps = pa.array(at * 1_000_000, pa.timestamp("us"), mask=untimed)
    queries = pa.table({"k": pa.array(qkeys, pa.int64()), "ts": stamps})
    return events, queries, cuts


def _same(got: pa.Table, want: pa.Table) -> bool:
    """Equal in type, and value by value (a NaN equal to a NaN: Arrow's ``equals`` is not)."""

    def value(x: object) -> object:
        return "NaN" if isinstance(x, float) and x != x else x

    return got.schema == want.schema and all(
        [value(x) for x in a.to_pylist()] == [value(x) for x in b.to_pylist()]
        for a, b in zip(got.columns, want.columns)
    )


def _held(state: OnlineFeatures) -> pa.Table:
    held = state._held
    assert held is not None
    return held.table()


#: the entries above with others the parts do not serve (evaluated over the events)
MIXED = {
    "l": ("last", "w", "rows:3"),
    **AGGS,
    "d": ("count_distinct", "v", "range:30m"),
    "sd": ("stddev", "v", "range:1h"),
}


@pytest.mark.parametrize(
    ("aggs", "keys"),
    [(AGGS, pa.int64()), (MIXED, pa.int64()), (AGGS, pa.string())],
    ids=["served", "mixed", "string keys"],
)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 400))
def test_whole_number_sums_counts_and_means_from_the_parts_equal_the_backfill(
    aggs, keys, seed, n
) -> None:
    events, queries, cuts = _log(seed, n, "whole")
    if keys != pa.int64():  # the same keys as strings: coded (windowagg...key_codes)
        events = events.set_column(0, "k", events["k"].cast(keys))
        queries = queries.set_column(0, "k", queries["k"].cast(keys))
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    for batch in np.split(np.arange(n), cuts):
        if len(batch):
            state.update(events.take(pa.array(batch)))
    assert state._held is not None and state._held.summed == {"v": True, "w": True}
    assert state._held.codes is not None  # the key has numbers: the parts are indexed
    with pytest.MonkeyPatch.context() as patch:  # the sums for any batch
        patch.setattr(held_module, "SUMMED_PER_REQUEST", 0)
        patch.setattr(held_module, "MIXED_PER_REQUEST", 0)
        patch.setattr(summaries, "GROUP_COST", 0)
        patch.setattr(summaries, "GROUP_REQUEST", 0)
        served, answered = [], held_module.answered
        patch.setattr(held_module, "answered", lambda *a: served.append(answered(*a)) or served[-1])
        got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same(got, want), (got.to_pydict(), want.to_pydict())
    assert [x is not None for x in served] == [True] * bool(state._held.parts)  # the parts


@pytest.mark.parametrize("values", ["whole", "fractions", "nan", "huge", "huge integers"])
def test_the_parts_sums_serve_whole_numbers_alone(values, paths) -> None:
    events, queries, cuts = _log(5, 3000, values)
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    for batch in np.split(np.arange(3000), cuts):
        state.update(events.take(pa.array(batch)))
    assert len(state._held.parts) > 1  # several parts, each with its sums
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=AGGS, at=queries)
    assert _same(got, want)
    assert paths == (
        {"sums": 1, "evaluation": 0} if values == "whole" else {"sums": 0, "evaluation": 1}
    )


def test_batches_between_updates_read_the_parts_as_they_lie_then(paths) -> None:
    """A batch asked after each update (the parts grown, merged and laid again): each from
    the parts as they lie then, equal to the backfill over the events held then; what a
    batch found of the parts (their arrays, ``summaries._read``) is not
    kept past the next update."""
    events, queries, _ = _log(11, 2000, "whole")
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    for batch in np.array_split(np.arange(2000), 8):
        state.update(events.take(pa.array(batch)))
        got = state.query(queries)
        want = rolling_aggregate(_held(state), time="ts", key="k", aggs=AGGS, at=queries)
        assert _same(got, want), (got.to_pydict(), want.to_pydict())
    assert paths == {"sums": 8, "evaluation": 0}


def test_entries_the_sums_do_not_serve_are_evaluated_over_the_events_alone(
    paths, monkeypatch
) -> None:
    """A state with a ``first`` of the non-null values and a standard deviation beside the
    entries the parts serve: those
    from the parts, the two alone (and only the columns they read) over the events, each
    answer in its entry's place; a state of none the parts serve is evaluated whole."""
    events, queries, _ = _log(7, 500, "whole")
    events = events.append_column("u", events["w"].cast(pa.uint64()))
    evaluated, of_runs = [], held_module.Held._evaluated  # the entries each evaluation answers

    def noted(*args):
        evaluated.append([e.name for e in args[5].plan.entries])
        return of_runs(*args)

    monkeypatch.setattr(held_module.Held, "_evaluated", noted)
    mixed = {
        "f": ("first(ignorenulls=True)", "v", "range:1h"),  # a first of the non-null values
        **AGGS,
        "sd": ("stddev", "w", "rows:10"),  # a standard deviation
    }
    state = OnlineFeatures(time="ts", key="k", aggs=mixed, allowed_lateness="1m")
    state.update(events)
    held = state._held
    assert held.summed == {"v": True, "w": True} and [e.name for e in held.rest.plan.entries] == [
        "f",
        "sd",
    ]
    assert held.rest.read == ["v", "w"]
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=mixed, at=queries)
    assert _same(got, want) and got.column_names == want.column_names
    assert paths == {"sums": 1, "evaluation": 1} and evaluated == [["f", "sd"]]
    alone = {"u": ("sum", "u", "range:1h")}  # an unsigned long's sum (may not fit a long)
    state = OnlineFeatures(time="ts", key="k", aggs=alone, allowed_lateness="1m")
    state.update(events)
    assert state._held.summed is None and state._held.rest is None
    assert _same(
        state.query(queries),
        rolling_aggregate(_held(state), time="ts", key="k", aggs=alone, at=queries),
    )
    assert evaluated == [["f", "sd"], ["u"]]


@pytest.mark.parametrize("type_", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_sums_and_means_of_every_width_from_the_parts(type_, paths) -> None:
    events, queries, cuts = _log(11, 2000, "whole")
    signed = events["v"].cast(pa.int64()).cast(pa.int8())  # -50 to 49, nulls kept
    x = signed if type_.startswith("int") else pc.abs(signed)
    events = events.set_column(2, "v", x.cast(getattr(pa, type_)()))
    aggs = {"s": ("sum", "v", "range:1h"), "a": ("mean", "v", "range:-5m,5m")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    for batch in np.split(np.arange(2000), cuts):
        state.update(events.take(pa.array(batch)))
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same(got, want) and got.schema.field("s").type == pa.int64()
    assert paths == {"sums": 1, "evaluation": 0}


def _same_bits(got: pa.Table, want: pa.Table) -> bool:
    """Equal in type, and value by value as text: -0.0 is not 0.0, NaN is NaN."""
    return got.schema == want.schema and all(
        [str(x) for x in a.to_pylist()] == [str(x) for x in b.to_pylist()]
        for a, b in zip(got.columns, want.columns)
    )


@pytest.mark.parametrize("values", ["signed zeros", "longs beyond doubles", "a NaN"])
def test_max_and_min_from_the_parts_tables_equal_the_backfill(values, paths) -> None:
    """A max or min from each part's table of its best rows: ties to the youngest row (a
    -0.0 and a 0.0 at the same instant, in one part and across parts), long integers that
    doubles would merge; a part holding a NaN reads its events."""
    rng = np.random.default_rng(17)
    n = 3000
    secs = np.sort(rng.integers(0, 7200, n))
    secs[1::3] = secs[0::3][: len(secs[1::3])]  # ties
    secs.sort()
    stamps = pa.array((secs - rng.integers(0, 60, n)) * 1_000_000, pa.timestamp("us"))
    if values == "signed zeros":
        v = pa.array(np.where(rng.random(n) < 0.5, -0.0, 0.0) - (rng.random(n) < 0.02))
    elif values == "longs beyond doubles":
        v = pa.array(2**62 + rng.integers(-3, 3, n))
    else:
        x = rng.integers(-50, 50, n).astype(float)
        x[n // 2] = np.nan
        v = pa.array(x)
    events = pa.table({"k": rng.integers(0, 3, n), "ts": stamps, "v": v})
    aggs = {
        "hi": ("max", "v", "range:1h"),
        "lo": ("min", "v", "range:-10m,-1us"),
        "near": ("max", "v", "range:-1m,1m"),
    }
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    for batch in np.array_split(np.arange(n), 9):
        state.update(events.take(pa.array(batch)))
    assert len(state._held.parts) > 1
    at = pa.array(rng.integers(0, 7300, 200) * 1_000_000, pa.timestamp("us"))
    queries = pa.table({"k": rng.integers(0, 4, 200), "ts": at})
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same_bits(got, want), (got.to_pydict(), want.to_pydict())
    nan = values == "a NaN"
    assert paths == ({"sums": 0, "evaluation": 1} if nan else {"sums": 1, "evaluation": 0})


def test_max_ties_across_parts_go_to_the_later_time_then_the_later_part(paths) -> None:
    """Equal values in two parts (a 0.0 and a -0.0): the one with the later time wins, and
    at the same time the one that arrived later, in the later part, as the batch call has
    the events in arrival order."""
    filler = pa.table(
        {
            "k": np.full(64, 2),
            "ts": pa.array(np.arange(64) * 1_000_000, pa.timestamp("us")),
            "v": np.full(64, -1.0),
        }
    )

    def state_of(first: list, second: list) -> OnlineFeatures:
        state = OnlineFeatures(
            time="ts", key="k", aggs={"m": ("max", "v", "range:1h")}, allowed_lateness="1m"
        )
        for ts_v in (first, second):
            ts, v = zip(*ts_v)
            batch = pa.table(
                {"k": np.ones(len(ts), np.int64), "ts": pa.array(ts, pa.timestamp("s")), "v": v}
            )
            state.update(
                pa.concat_tables([filler.cast(batch.schema), batch]) if ts_v is first else batch
            )
        assert len(state._held.parts) == 2
        return state

    at = pa.table({"k": [1], "ts": pa.array([100], pa.timestamp("s"))})
    for first, second, sign in (
        ([(10, 0.0)], [(10, -0.0)], "-0.0"),  # the same time: the later arrival
        ([(10, -0.0)], [(10, 0.0)], "0.0"),
        ([(20, 0.0)], [(15, -0.0)], "0.0"),  # the later time, though it arrived first
        ([(20, -0.0)], [(15, 0.0)], "-0.0"),
    ):
        state = state_of(first, second)
        got = state.query(at)
        want = rolling_aggregate(_held(state), time="ts", key="k", aggs=state.aggs, at=at)
        assert str(got["m"][0].as_py()) == str(want["m"][0].as_py()) == sign
    assert paths == {"sums": 4, "evaluation": 0}


@pytest.mark.parametrize("frame", ["range:1h", "rows:3"])
def test_first_and_last_across_parts_are_the_merged_orders_ends(frame, paths) -> None:
    """Two parts whose rows of a key interleave in time and tie at the frame's ends: the
    first row is the earliest, the earlier part's on a tie; the last the latest, the later
    part's on a tie (the later arrival), as the batch call has the events in arrival order;
    a null value at an end is the answer."""
    aggs = {"f": ("first", "v", frame), "l": ("last", "v", frame), "lw": ("last", "w", frame)}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    for ts, v, w in (
        ([10, 20, 30, 40], [1.0, 2.0, 3.0, 4.0], [1, 2, 3, None]),
        ([10, 25, 40], [5.0, 6.0, 7.0], [5, None, 7]),
    ):
        state.update(
            pa.table(
                {
                    "k": np.ones(len(ts), np.int64),
                    "ts": pa.array(ts, pa.timestamp("s")),
                    "v": pa.array(v),
                    "w": pa.array(w, pa.int64()),
                }
            )
        )
    assert len(state._held.parts) == 2
    at = pa.table({"k": [1, 1, 1], "ts": pa.array([40, 30, 10], pa.timestamp("s"))})
    got = state.query(at)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=at)
    assert _same(got, want)
    if frame == "range:1h":  # the ties at 10 s and 40 s, each part's row
        assert got["f"].to_pylist() == [1.0, 1.0, 1.0] and got["l"].to_pylist() == [7.0, 3.0, 5.0]
    assert paths == {"sums": 1, "evaluation": 0}


def test_a_request_reads_no_event_of_its_frame(paths, monkeypatch) -> None:
    """The sums path merges and copies nothing: the index's merge is never called."""
    events, queries, _ = _log(9, 2000, "whole")
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    for lo in range(0, 2000, 100):
        state.update(events.slice(lo, 100))

    def refused(*args):
        raise AssertionError("the events of a frame were merged")

    monkeypatch.setattr(held_module.PartIndex, "merged", refused)
    for j in range(queries.num_rows):  # one request at a time, as a serving process asks
        state.query(queries.slice(j, 1))
    assert paths["sums"] == queries.num_rows


@pytest.mark.parametrize("kind", ["served", "mixed", "grouped"])
def test_a_batch_whose_keys_hold_few_events_reads_them(kind, monkeypatch) -> None:
    """The sums serve a batch unless it asks for so few events a request that reading them
    costs less: 500 requests for keys of a few events read them; one request, or 100 for a
    key of 30,000 events, take the sums. Beside an entry the parts do not serve, whose
    events are read anyway (2,048 events a request or more), one request for a key of two
    events reads them too; beside a distinct count, whose groups are walked (256 events'
    worth a request, against the events and what reading them costs a batch whatever its
    size), it takes the parts. Ten requests for the key of 30,000 take the parts."""
    rng = np.random.default_rng(13)
    keys = np.r_[np.zeros(30_000, np.int64), rng.integers(1, 1_000, 2_000)]
    stamps = pa.array(np.sort(rng.integers(0, 7200, 32_000)) * 10**6, pa.timestamp("us"))
    v, w = rng.integers(0, 9, 32_000) * 1.0, rng.integers(0, 9, 32_000)
    events = pa.table({"k": keys, "ts": stamps, "v": v, "w": w})
    aggs = {n: a for n, a in AGGS.items() if a[0] != "count_distinct"}
    aggs["w"] = ("count", "v", "range:1h")
    if kind == "mixed":
        aggs["sd"] = ("stddev", "w", "range:1h")
    if kind == "grouped":
        aggs["d"] = ("count_distinct", "w", "range:1h")
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    state.update(events)
    assert (state._held.rest is not None) == (kind == "mixed")
    assert bool(state._held.grouped) == (kind == "grouped")
    picked = []
    real = held_module.Held._from_summaries

    def from_parts(self, *args):  # noted where the parts answered
        got = real(self, *args)
        picked.extend([1] if got is not None else [])
        return got

    monkeypatch.setattr(held_module.Held, "_from_summaries", from_parts)
    at = pa.array(np.full(500, 7200 * 10**6), pa.timestamp("us"))
    few = pa.table({"k": pa.array(np.arange(1, 501)), "ts": at})  # 500 requests, 2 events each
    hot = pa.table({"k": pa.array(np.zeros(100, np.int64)), "ts": at[:100]})
    hot = hot if kind == "served" else hot.slice(0, 10)  # 3,000 events a request
    for queries, sums in ((few, False), (few.slice(0, 1), kind != "mixed"), (hot, True)):
        picked.clear()
        got = state.query(queries)
        assert picked == ([1] if sums else [])
        want = rolling_aggregate(_held(state), time="ts", key="k", aggs=state.aggs, at=queries)
        assert _same(got, want)


@pytest.mark.parametrize("repeats", [False, True])
def test_distinct_counts_come_from_the_groups_where_the_values_repeat(repeats, monkeypatch) -> None:
    """A key whose values repeat (seven values over 30,000 events) has its distinct counts
    from each part's groups of rows by value; one whose values never repeat would walk a
    group per event, and its events are read instead. Both equal the backfill."""
    n = 30_000
    v = np.arange(n) % 7 if repeats else np.arange(n)
    events = pa.table(
        {
            "k": np.zeros(n, np.int64),
            "ts": pa.array(np.arange(n) * 10**6, pa.timestamp("us")),
            "v": v.astype(float),
        }
    )
    aggs = {"d": ("count_distinct", "v", "range:1h"), "e": ("count_distinct", "v", "rows:500")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="10h")
    for lo in range(0, n, 7_000):
        state.update(events.slice(lo, 7_000))
    assert len(state._held.parts) > 1 and state._held.grouped == {"v"}
    found = []
    real = held_module.answered
    monkeypatch.setattr(held_module, "answered", lambda *a: found.append(real(*a)) or found[-1])
    stamps = np.array([n // 2, n, 2 * n]) * 10**6  # a frame of an hour, and none
    at = pa.table({"k": np.zeros(3, np.int64), "ts": pa.array(stamps, pa.timestamp("us"))})
    got = state.query(at)
    assert [x is not None for x in found] == ([True] if repeats else [])  # not even tried
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=at)
    assert _same(got, want)
    assert got["d"].to_pylist() == ([7, 7, 0] if repeats else [3601, 3600, 0])


def test_sums_survive_save_load_and_letting_go(tmp_path, paths) -> None:
    events, _, _ = _log(11, 3000, "whole")
    aggs = {"s": ("sum", "v", "range:10m"), "n": ("count", "v", "range:10m")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    for lo in range(0, 3000, 250):
        state.update(events.slice(lo, 250))
    start = state._held.answers_from
    assert start is not None  # history let go, the parts laid again
    rng = np.random.default_rng(3)
    late = pa.table(
        {
            "k": pa.array(rng.integers(0, 6, 50)),
            "ts": pa.array(rng.integers(int(start), 7300 * 10**6, 50), pa.timestamp("us")),
        }
    )
    path = tmp_path / "state.arrow"
    state.save(path)
    loaded = OnlineFeatures.load(path)
    laid = loaded._held.index
    assert len(laid.prefixes["v"].whole) == laid.parts  # every part's sums laid again
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=late)
    assert _same(state.query(late), want) and _same(loaded.query(late), want)
    assert paths == {"sums": 2, "evaluation": 0}


@pytest.mark.parametrize("times", ["floats", "int64 beyond doubles", "nanosecond timestamps"])
def test_plain_number_and_int64_times(times, paths) -> None:
    """Float times (a NaN request time after every time), whole numbers beyond what a
    double holds, and nanosecond timestamps beyond doubles (a frame of 3 ns: exact)."""
    big = 2**61 if times != "floats" else 0
    t = np.array([1, 2, 2, 5, 9, 3, 7], np.int64) + big
    qt = np.array([2, 9, 5, 0], np.int64) + big
    null = np.array([False, False, False, True])
    kind = pa.timestamp("ns") if times == "nanosecond timestamps" else None
    column = pa.array(t.astype(float) if times == "floats" else t, kind)
    events = pa.table(
        {
            "k": pa.array([1, 1, 2, 1, 1, 2, 1], pa.int64()),
            "t": column,
            "v": [1.0, 2.0, 3.0, 4.0, 5.0, None, -6.0],
        }
    )
    qtimes = pa.array(qt.astype(float) if times == "floats" else qt, kind, mask=null)
    if times == "floats":
        qtimes = pa.array([2.0, 9.0, float("nan"), None])  # NaN: after every time
    queries = pa.table({"k": pa.array([1, 1, 2, 1], pa.int64()), "t": qtimes})
    ns = times == "nanosecond timestamps"
    aggs = {
        "s": ("sum", "v", "range:3ns" if ns else "range:3"),
        "n": ("count", "v", "range:-2ns,0" if ns else "range:-2,0"),
        "a": ("mean", "v", "range:unbounded,0"),
        "hi": ("max", "v", "range:3ns" if ns else "range:3"),
        "lo": ("min", "v", "range:-2ns,0" if ns else "range:-2,0"),
        "r": ("mean", "v", "rows:2"),  # rows frames, first and last, distinct counts
        "f": ("first", "v", "range:3ns" if ns else "range:3"),
        "l": ("last", "v", "rows:-1,0"),
        "d": ("count_distinct", "v", "range:unbounded,0"),
    }
    state = OnlineFeatures(time="t", key="k", aggs=aggs, allowed_lateness="3ns" if ns else 3)
    state.update(events.slice(0, 4))
    state.update(events.slice(4))
    assert state._held.summed == {"v": True}
    want = rolling_aggregate(_held(state), time="t", key="k", aggs=aggs, at=queries)
    assert _same(state.query(queries), want)
    assert paths == {"sums": 1, "evaluation": 0}


def _polars_equal_to_the_batch(events: pa.Table, queries: pa.Table, aggs: dict) -> pa.Table:
    """A state of ``aggs`` fed ``events`` as a Polars frame, asked ``queries`` as one: its
    answers checked equal to the batch call's over the events held, which it returns."""
    import polars as pl

    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    state.update(pl.from_arrow(events))
    got = state.query(pl.from_arrow(queries))
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same(got.to_arrow(), pl.from_arrow(want).to_arrow())
    return want


def test_a_nan_value_in_a_polars_table_falls_back_to_the_events(paths) -> None:
    """A NaN is a value on Polars (and Arrow) tables, not a null: the part holding it has no
    sums, its requests read their events, and the sum is NaN as the batch call's."""
    events, queries, _ = _log(17, 2000, "whole")
    v = events["v"].to_numpy(zero_copy_only=False)
    v[np.flatnonzero(~np.isnan(v))[1000]] = np.nan  # a valid value: a NaN, not a null
    events = events.set_column(
        2, "v", pa.array(v, mask=events["v"].is_null().to_numpy(zero_copy_only=False))
    )
    want = _polars_equal_to_the_batch(events, queries, AGGS)
    assert paths == {"sums": 0, "evaluation": 1}
    assert any(x != x for x in want["s"].to_pylist() if x is not None)  # a NaN sum
    # a max and a min alone: the part holding the NaN has no table, and the max is NaN
    extremes = {"hi": ("max", "v", "range:1h"), "lo": ("min", "v", "range:1h")}
    want = _polars_equal_to_the_batch(events, queries, extremes)
    assert paths == {"sums": 0, "evaluation": 2}
    assert any(x != x for x in want["hi"].to_pylist() if x is not None)  # a NaN max
    # a first, a last and a distinct count need no sums: from the parts, a NaN as a value
    # (the first or last row's), and not a value a distinct count counts, as the batch call
    v[np.flatnonzero(~np.isnan(v))[::20]] = np.nan
    events = events.set_column(
        2, "v", pa.array(v, mask=events["v"].is_null().to_numpy(zero_copy_only=False))
    )
    ends = {
        "f": ("first", "v", "range:1h"),
        "l": ("last", "v", "rows:-2,0"),
        "d": ("count_distinct", "v", "range:1h"),
    }
    want = _polars_equal_to_the_batch(events, queries, ends)
    assert paths == {"sums": 1, "evaluation": 2}
    assert any(x != x for c in ("f", "l") for x in want[c].to_pylist() if x is not None)


def test_a_batch_from_the_parts_runs_in_ranges_of_keys_on_threads(monkeypatch) -> None:
    """On several threads, a batch answered from the parts is cut into ranges of its asked
    keys of about equal requests, each range on a thread of its own (the first on the calling
    thread); the answers, in the requests' order, are one thread's and the batch call's:
    keys never seen, a null key and requests with no time among them, every served kind."""
    rng = np.random.default_rng(21)
    n = 6000
    keys = np.where(rng.random(n) < 0.3, 7, rng.integers(0, 40, n))
    events = pa.table(
        {
            "k": keys,
            "ts": pa.array(rng.integers(0, 7200, n) * 10**6, pa.timestamp("us")),
            "v": pa.array(rng.integers(0, 9, n) * 1.0, mask=rng.random(n) < 0.05),
        }
    )
    aggs = {
        "s": ("sum", "v", "range:10m"),
        "m": ("max", "v", "range:-20m,-1us"),
        "a": ("mean", "v", "rows:-5,0"),
        "f": ("last", "v", "range:1h"),
        "d": ("count_distinct", "v", "range:30m"),
    }
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="2h")
    for part in np.array_split(np.arange(n), 4):  # several parts
        state.update(events.take(pa.array(part)))
    asked = pa.array([*rng.integers(0, 45, 3000).tolist(), None, 7], pa.int64())
    stamps = pa.array(rng.integers(0, 7200, len(asked)) * 10**6, pa.timestamp("us"))
    queries = pa.table({"k": asked, "ts": pc.if_else(rng.random(len(asked)) < 0.02, None, stamps)})
    monkeypatch.setattr(held_module, "PARALLEL_REQUESTS", 100)
    monkeypatch.setattr(summaries, "GROUP_COST", 0)  # the parts for this batch of few events
    monkeypatch.setattr(summaries, "GROUP_REQUEST", 0)
    keys = len(pc.unique(asked.drop_null()))
    alone, split = alone_and_in_ranges(
        monkeypatch, held_module.Held, "_summarized", lambda: state.query(queries), keys
    )
    want = rolling_aggregate(events, time="ts", key="k", aggs=aggs, at=queries)
    assert _same(split, want) and _same(alone, want)


def test_requests_of_one_key_at_one_time_are_answered_once(paths, monkeypatch) -> None:
    """A batch asking for five keys at one time each, eight times over in a shuffled order:
    each key and time walked once (five requests reach the distinct count), every request
    its answer, equal to the backfill."""
    events, _, cuts = _log(13, 2000, "whole")
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    for batch in np.split(np.arange(2000), cuts):
        state.update(events.take(pa.array(batch)))
    at = pa.array(np.full(40, 7_000_000_000), pa.timestamp("us"))
    keys = np.random.default_rng(3).permutation(np.repeat(np.arange(5), 8))
    queries = pa.table({"k": pa.array(keys, pa.int64()), "ts": at})
    walked = []
    distinct_at = summaries.distinct_at

    def counted(*args):
        walked.append(args[8].shape[1])  # the requests the walk is asked for
        return distinct_at(*args)

    monkeypatch.setattr(summaries, "distinct_at", counted)
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=AGGS, at=queries)
    assert _same(got, want)
    assert paths["sums"] == 1 and walked == [5, 5]  # two distinct counts, five requests each


def test_a_single_request_reuses_its_threads_frames_and_work_space(paths, monkeypatch) -> None:
    """Single requests, one after another and from two threads at once, each equal to the
    backfill: those of one thread hand the frames' kernel the same arrays each time (found
    once after each push or pop), those of the other thread arrays of their own, and a
    batch fresh ones; an update lays the parts again and the arrays are found afresh."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    events, _, cuts = _log(17, 3000, "whole")
    state = OnlineFeatures(time="ts", key="k", aggs=AGGS, allowed_lateness="1m")
    batches = np.split(np.arange(3000), cuts)
    for batch in batches[:-1]:
        state.update(events.take(pa.array(batch)))
    handed: dict[int, set[int]] = {}
    frames_at = summaries.frames_at

    def recorded(*args):
        handed.setdefault(threading.get_ident(), set()).add(id(args[11]))  # the first rows
        return frames_at(*args)

    monkeypatch.setattr(summaries, "frames_at", recorded)
    rng = np.random.default_rng(5)

    def asked(n: int) -> pa.Table:
        keys = pa.array(rng.integers(0, 40, n), pa.int64())
        return pa.table({"k": keys, "ts": pa.array(rng.integers(0, 8 * 10**9, n), "timestamp[us]")})

    def answered(queries: list[pa.Table]) -> None:
        for q in queries:
            want = rolling_aggregate(_held(state), time="ts", key="k", aggs=AGGS, at=q)
            assert _same(state.query(q), want)

    mine = [asked(1) for _ in range(6)]
    answered(mine)
    assert [len(ids) for ids in handed.values()] == [1]  # one thread, the same arrays
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(answered, [[asked(1) for _ in range(30)] for _ in range(2)]))
    ids = list(handed.values())
    assert all(len(x) == 1 for x in ids) and len(set().union(*ids)) == len(ids)  # each its own
    before = set().union(*ids)
    answered([asked(200)])  # a batch: arrays of its own
    assert len(set().union(*handed.values()) - before) == 1
    state.update(events.take(pa.array(batches[-1])))  # the parts laid again
    handed.clear()
    answered(mine[:2])
    assert [len(ids) for ids in handed.values()] == [1] and not handed.popitem()[1] & before
