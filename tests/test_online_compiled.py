"""An online state whose entries are counts, sums, means, maxima, minima, distinct counts and
first and last values of one float64 or int64 column answers a batch read over its events in
one compiled call per range of keys (windowagg.engine.rolling.compiled_at,
windowagg.kernels.runs_at) where the column holds no null, equal to the batch
``rolling_aggregate(at=)`` over the events held, value and type: against that oracle on random
logs (several parts, events out of order within the lateness, ties across parts, null and
unknown keys, null times, requests at an event's instant and frames that leave it out, range and
rows frames); values the evaluation treats apart (NaN, sums beyond the doubles, longs beyond
them, sums that could overflow, distinct fractions) leave the batch to the evaluation, as do
nulls in the column."""

from __future__ import annotations

import inspect

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowagg.engine.rolling.online as held_module
from windowagg import rolling_aggregate
from windowagg.engine.rolling import compiled_at
from windowagg.engine.rolling.plan import RollingPlan
from windowagg.errors import ArithmeticOverflowError
from windowagg.kernels import runs_at
from windowagg.online import OnlineFeatures

from .test_online_summaries import _held, _same
from .test_online_summaries import _log as summaries_log
from .threads import alone_and_in_ranges

#: every kind the call answers, over a float64 column (first and last: the merged order's ends)
FLOATS = {
    "s": ("sum", "v", "range:1h"),
    "c": ("count", "v", "range:-1h,-1us"),
    "n": ("count", "*", "rows:+1,+3"),
    "a": ("mean", "v", "rows:3"),
    "mx": ("max", "v", "range:-5m,5m"),
    "mn": ("min", "v", "rows:-4,0"),
    "d": ("count_distinct", "v", "range:30m"),
    "f": ("first", "v", "range:1h"),
    "l": ("last", "v", "rows:-2,+1"),
    "u": ("sum", "v", "range:unbounded,0"),
}
#: the same over an int64 column (its sums are longs, its means doubles)
INTS = {
    name: (agg, "w" if col == "v" else col, frame) for name, (agg, col, frame) in FLOATS.items()
}


@pytest.fixture
def calls(monkeypatch) -> list[bool]:
    """What each compiled call said (True: it answered); batches read the events (the
    parts' sums answer none)."""
    said: list[bool] = []
    real = compiled_at.runs_at

    def spy(*args):
        said.append(bool(real(*args)))
        return said[-1]

    monkeypatch.setattr(compiled_at, "runs_at", spy)
    monkeypatch.setattr(held_module.Held, "_from_summaries", lambda *a: None)
    return said


def _known(args: tuple) -> list[int]:
    """What a compiled call with ``args`` was told of its values (``known``)."""
    bound = inspect.signature(runs_at.runs_at.py_func).bind(*args)
    return bound.arguments["known"].tolist()


def _log(seed: int, n: int, values: str) -> tuple[pa.Table, pa.Table, np.ndarray]:
    """The summaries' tests' log (events over two hours, out of order, ties, null keys;
    requests at event instants and between, null times and keys, a key never seen, repeats;
    the update cuts), with ``v`` doubles and ``w`` longs as ``values`` says, no null."""
    events, queries, cuts = summaries_log(seed, n, "whole")
    rng = np.random.default_rng(seed + 1)
    v = rng.integers(-50, 50, n).astype(float)
    w = rng.integers(-9, 9, n)
    odd = rng.integers(0, n, max(1, n // 50))
    if values == "fractions":
        v[rng.random(n) < 0.3] += 0.25
    elif values == "signed zeros":
        v[rng.random(n) < 0.3] = -0.0
        v[rng.random(n) < 0.3] = 0.0
    elif values == "nan":
        v[odd] = np.nan
    elif values == "inf":
        v[odd] = np.where(rng.random(len(odd)) < 0.5, np.inf, -np.inf)
    elif values == "huge":
        v[:] = 1.5e308  # partial sums beyond the doubles
    elif values == "longs":
        w[odd] = 2**60 + 1  # beyond the doubles: a max or min compares ranks
    elif values == "big sums":
        w[:] = 2**61  # a sum of several could overflow
    v_col = pa.array(v, mask=rng.random(n) < 0.1) if values == "nulls" else pa.array(v)
    events = events.set_column(2, "v", v_col).set_column(3, "w", pa.array(w, pa.int64()))
    return events, queries, cuts


def _fed(
    events: pa.Table, cuts: np.ndarray, aggs: dict, lateness: str | int = "3h"
) -> OnlineFeatures:
    """A state fed ``events`` in updates cut at ``cuts`` (none late, none let go)."""
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness=lateness)
    for batch in np.split(np.arange(events.num_rows), cuts):
        if len(batch):
            state.update(events.take(pa.array(batch)))
    return state


@pytest.mark.parametrize("values", ["whole", "fractions", "ints"])
@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 400),
    names=st.sets(st.sampled_from(sorted(FLOATS)), min_size=1),
    chunk=st.sampled_from([compiled_at.CHUNK, 1, 7]),
)
def test_one_compiled_call_answers_as_the_backfill(values, seed, n, names, chunk) -> None:
    """The call's answers are the backfill's, the keys merged and answered in chunks of the
    engine's size or a few events (a key of more alone: a chunk per key)."""
    events, queries, cuts = _log(seed, n, values)
    every = INTS if values == "ints" else FLOATS
    # a first and a last value in every plan: the answers depend on the merged order
    aggs = {k: every[k] for k in sorted(names | {"f", "l"})}
    state = _fed(events, cuts, aggs)
    with pytest.MonkeyPatch.context() as patch:
        said: list[bool] = []
        known: list[list[int]] = []
        real = compiled_at.runs_at

        def spy(*args):
            known.append(_known(args))
            said.append(bool(real(*args)))
            return said[-1]

        patch.setattr(compiled_at, "runs_at", spy)
        patch.setattr(compiled_at, "CHUNK", chunk)
        patch.setattr(held_module.Held, "_from_summaries", lambda *a: None)
        got = state.query(queries)
    held = _held(state)
    want = rolling_aggregate(held, time="ts", key="k", aggs=aggs, at=queries)
    assert _same(got, want), (got.to_pydict(), want.to_pydict())
    assert len(said) == bool(state._held.parts)  # one call, where events are held
    if not (values == "fractions" and "d" in names):  # distinct fractions: maybe declined
        assert all(said)
    if said:  # what the call was told of every value held: no NaN, whole or not, the span
        column = held["w" if values == "ints" else "v"].to_numpy()
        whole = bool((column == np.floor(column)).all())
        span = [int(column.min()), int(column.max())] if whole else [0, 0]
        assert known == [[1, whole, *span]]


@pytest.mark.parametrize(
    ("values", "names", "answered"),
    [
        ("nan", sorted(FLOATS), False),
        ("inf", [k for k in FLOATS if k != "d"], True),  # infinite sums: the exact sums'
        ("inf", ["d", "f"], False),  # distinct infinities: numbered by the evaluation
        ("huge", ["s", "a", "l"], False),
        ("signed zeros", sorted(FLOATS), True),  # a max or min of ties: the youngest row
        ("longs", ["mx", "mn", "f"], False),
        ("longs", ["c", "d"], False),  # distinct longs far apart: numbered by the evaluation
        ("longs", ["c", "l", "f"], True),
        ("big sums", ["s", "f"], False),
        ("fractions", ["d", "f"], False),  # distinct fractions: numbered by the evaluation
        ("fractions", ["s", "a", "mx", "l"], True),  # exactly rounded sums of fractions
        ("nulls", sorted(FLOATS), None),  # the column holds nulls: no call
    ],
)
def test_values_the_evaluation_treats_apart_leave_the_batch_to_it(
    values, names, answered, calls
) -> None:
    events, queries, _ = _log(3, 2000, values)
    cuts = np.array([1000, 1500, 1750, 1900])  # parts of 1000, 500, 250, 150 and 100 events
    every = INTS if values in ("longs", "big sums") else FLOATS
    aggs = {k: every[k] for k in names}
    state = _fed(events, cuts, aggs)
    assert len(state._held.parts) > 1
    if values == "big sums":  # a long's sum overflows: the evaluation raises as Spark does
        with pytest.raises(ArithmeticOverflowError, match="integer overflow"):
            state.query(queries)
        with pytest.raises(ArithmeticOverflowError, match="integer overflow"):
            rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    else:
        got = state.query(queries)
        want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
        assert _same(got, want), (got.to_pydict(), want.to_pydict())
    assert calls == ([] if answered is None else [answered])


def test_a_range_is_merged_and_answered_a_chunk_of_keys_at_a_time(monkeypatch) -> None:
    """The call (run as Python here, each step it calls compiled, so that its steps can be
    watched) answers its keys a chunk at a time, one call of the evaluators' kernels per
    chunk: one chunk for the whole of a small batch at the engine's size; with chunks of 10
    events, several, each of at most 10 (each key holds at most 8), together every held
    event of the asked keys; the answers the backfill's either way (a null key, a key never
    seen, requests of one key at several times)."""
    from windowagg.kernels import runs_at as module

    rng = np.random.default_rng(17)
    keys = np.repeat(np.arange(60), rng.integers(1, 9, 60))
    n = len(keys)
    t = pa.array(rng.integers(0, 3_600_000_000, n), pa.timestamp("us"))
    events = pa.table({"k": keys, "ts": t, "v": rng.integers(0, 20, n).astype(float)})
    asked = pa.array([*rng.integers(0, 70, 200).tolist(), None], pa.int64())
    at = pa.array(rng.integers(0, 3_600_000_000, 201), pa.timestamp("us"))
    queries = pa.table({"k": asked, "ts": at})
    aggs = {k: FLOATS[k] for k in ("s", "mx", "d", "a", "f")}
    state = _fed(events, np.array([n // 3, n // 2]), aggs)
    chunks: list[int] = []  # each chunk's events
    real = module.entries_at

    def entries(times, *args):
        chunks.append(len(times))
        return real(times, *args)

    monkeypatch.setattr(module, "entries_at", entries)
    monkeypatch.setattr(compiled_at, "runs_at", module.runs_at.py_func)
    monkeypatch.setattr(held_module.Held, "_from_summaries", lambda *a: None)
    want = rolling_aggregate(events, time="ts", key="k", aggs=aggs, at=queries)
    read = int(np.isin(keys, asked.drop_null().to_numpy()).sum())
    for chunk in (compiled_at.CHUNK, 10):
        monkeypatch.setattr(compiled_at, "CHUNK", chunk)
        chunks.clear()
        got = state.query(queries)
        assert _same(got, want), (got.to_pydict(), want.to_pydict())
        assert sum(chunks) == read  # every event of the asked keys, once
        if chunk == 10:
            assert len(chunks) >= read // 10 > 5 and max(chunks) <= 10
        else:
            assert chunks == [read]


def test_the_call_runs_compiled_in_ranges_of_keys_on_threads(monkeypatch, calls) -> None:
    """On three threads each range of asked keys makes its own compiled call (the first on
    the calling thread), and the answers are one thread's and the batch call's; the call is
    numba's compiled kernel; the requests' times (nulls among them) are converted once for
    the batch (each range reads its own among them), once more on one thread."""
    events, queries, cuts = _log(8, 3000, "whole")
    aggs = {k: FLOATS[k] for k in ("s", "a", "mx", "d", "f")}
    state = _fed(events, cuts, aggs)
    assert queries["ts"].null_count
    converted: list[int] = []
    real_times = held_module.column_times
    monkeypatch.setattr(
        held_module,
        "column_times",
        lambda name, col: converted.append(len(col)) or real_times(name, col),
    )
    keys = len(set(queries["k"].drop_null().to_pylist()))
    alone, split = alone_and_in_ranges(
        monkeypatch,
        compiled_at,
        "runs_at",
        lambda: state.query(queries),
        keys,
        held_module.RANGES_PER_THREAD,
        keys_of=lambda args: args[5] - args[4],  # its keys: first to stop - 1
    )
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same(alone, want) and _same(split, want)
    assert len(calls) >= 4 and all(calls)  # one alone, then one per range (three or more)
    assert converted == [queries.num_rows] * 2  # alone, then the batch's, not each range's
    assert runs_at.runs_at.signatures  # compiled by numba, not run as Python


@pytest.mark.parametrize(
    "aggs",
    [
        {"s": ("sum", "v", "range:1h"), "t": ("sum", "w", "range:1h")},  # two columns
        {"f": ("first(ignorenulls=True)", "v", "range:1h")},
        {"q": ("stddev", "v", "range:1h")},
        {"m": ("max", "ts", "range:1h")},  # the time itself
        {"s": ("sum", "x", "range:1h")},  # an int32 column
    ],
)
def test_plans_the_call_does_not_answer(aggs) -> None:
    schema = pa.schema(
        [
            ("k", pa.int64()),
            ("ts", pa.timestamp("us")),
            ("v", pa.float64()),
            ("w", pa.int64()),
            ("x", pa.int32()),
        ]
    )
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1m")
    state.update(schema.empty_table())
    plan: RollingPlan = state._held.plan
    assert compiled_at.compiled(plan, schema, {"v", "w", "x", "ts"}) is None
    ok = OnlineFeatures(time="ts", key="k", aggs=FLOATS, allowed_lateness="1m")
    ok.update(schema.empty_table())
    assert compiled_at.compiled(ok._held.plan, schema, {"v"}) is not None


@pytest.mark.parametrize("times", ["nanoseconds beyond doubles", "int64", "floats"])
def test_the_call_answers_over_every_kind_of_time(times, calls) -> None:
    """Nanosecond timestamps past 2**53 (int64 times, no double holds them), int64 numbers
    and float times: the call answers (its bounds over the times as they are) and equals
    the batch call, frames a nanosecond apart included."""
    events, queries, cuts = _log(6, 2000, "whole")
    secs = events["ts"].cast(pa.int64()).to_numpy() // 10**6
    asked = queries["ts"].cast(pa.int64()).to_numpy(zero_copy_only=False)
    if times == "nanoseconds beyond doubles":
        base = 1_700_000_000 * 10**9 + 1  # odd: beyond what a double holds exactly
        col = pa.array(base + secs * 10**9, pa.timestamp("ns"))
        at = pa.array(base + np.nan_to_num(asked).astype(np.int64) * 1000, pa.timestamp("ns"))
        frames = {"s": ("sum", "v", "range:-1h,-1ns"), "f": ("first", "v", "range:1h")}
    else:
        kind = pa.int64() if times == "int64" else pa.float64()
        col = pa.array(secs, kind)
        at = pa.array(np.nan_to_num(asked).astype(np.int64) // 10**6, kind)
        frames = {"s": ("sum", "v", "range:-3600,-1"), "f": ("first", "v", "range:3600")}
    events = events.set_column(1, "ts", col)
    queries = queries.set_column(1, "ts", pc.if_else(queries["ts"].is_valid(), at, None))
    aggs = {**frames, "d": ("count_distinct", "v", "rows:-5,0")}
    state = _fed(events, cuts, aggs, "3h" if times.startswith("nano") else 3 * 3600)
    got = state.query(queries)
    want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=queries)
    assert _same(got, want), (got.to_pydict(), want.to_pydict())
    assert calls == [True]


def test_a_polars_request_with_a_nan_value_leaves_the_batch_to_the_evaluation(calls) -> None:
    """Events from a Polars frame with a NaN among the values (a value, as Polars and Spark
    have it; not null): the call declines, and the evaluation answers as the batch call."""
    import polars as pl

    events, queries, cuts = _log(9, 1500, "nan")
    aggs = {k: FLOATS[k] for k in ("s", "mx", "c", "f")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="3h")
    for batch in np.split(np.arange(events.num_rows), cuts):
        if len(batch):
            state.update(pl.from_arrow(events.take(pa.array(batch))))
    got = state.query(pl.from_arrow(queries))
    want = rolling_aggregate(
        pl.from_arrow(_held(state)), time="ts", key="k", aggs=aggs, at=pl.from_arrow(queries)
    )
    assert got.equals(want, null_equal=True)
    assert calls == [False]


def test_what_the_parts_know_of_their_values_follows_them_as_they_go(calls) -> None:
    """Each part keeps its values' span (:class:`~windowagg.engine.rolling.part_index.Spans`)
    and the call is told it over every part held: a NaN or a value far out is known while
    its part is held, even where no request's key holds it (the call then checks the
    values it reads itself, and answers), and forgotten once it is let go, as merges and
    letting go lay the parts anew; the answers stay the backfill's."""
    hour = 3_600_000_000
    aggs = {"s": ("sum", "v", "range:1h"), "d": ("count_distinct", "v", "range:1h")}
    state = OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    told: list[list[int]] = []
    real = compiled_at.runs_at

    def spy(*args):
        told.append(_known(args))
        return real(*args)

    def batch(t: int, k: list[int], v: list[float]) -> pa.Table:
        ts = pa.array([t] * len(k), pa.timestamp("us"))
        return pa.table({"ts": ts, "k": pa.array(k, pa.int64()), "v": pa.array(v)})

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_at, "runs_at", spy)
        state.update(batch(0, [1, 2], [np.nan, 5.0]))  # a NaN, and a value far out, early
        state.update(batch(hour // 2, [3, 3], [-1e6, 2.0]))
        for step in range(1, 40):  # later events, in many updates: the early parts let go
            state.update(batch(step * hour, [4, 5, 4], [3.0, 7.0, float(step)]))
            if step in (1, 39):
                asked = pa.table(
                    {"k": pa.array([4, 5], pa.int64()), "ts": pa.array([step * hour] * 2)}
                ).cast(pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us"))]))
                got = state.query(asked)
                want = rolling_aggregate(_held(state), time="ts", key="k", aggs=aggs, at=asked)
                assert _same(got, want)
    assert calls == [True, True]  # answered both times, by the call
    assert told[0] == [0, 1, -1_000_000, 7]  # a NaN held, and the far value
    held = _held(state)["v"].to_numpy()
    assert told[1] == [1, 1, int(held.min()), int(held.max())] and held.min() > 0  # let go
