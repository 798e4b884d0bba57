"""Times exact in their own type, against nested loops in Python integers: int64 times at
magnitudes 0, 2**40, 2**53 + 1, 1.8e18 (nanosecond epochs) and within 10**12 of both int64
extremes; timestamp[s], [ms], [us] and [ns] columns with values off the microsecond; range and
rows frames, ``at=``, tumbling, sliding, session and count windows, with a non-commutative
aggregation of the user's; bounds and window edges in the time column's type, clamped to the
int64 range where they pass it. Every window spec over any int64 times ends or raises."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import windowagg
from tests.aggs import Concat
from windowagg.engine.columns import column_times, numbers_as_times, times_of
from windowagg.frames import frame, whole

MIN, MAX = -(2**63), 2**63 - 1
INT64 = pa.int64()
BASES = [0, 2**40, 2**53 + 1, 1_800_000_000_000_000_000, MIN + 10**12, MAX - 10**12]
#: the smallest and the largest window edge (the smallest int64 stands for a null time)
LOW, HIGH = MIN + 1, MAX


def rows_at(base: int, seed: int, n: int = 40, spread: int = 60) -> list[dict]:
    """Rows near ``base``: two keys, ties, a null time, a null value, in no order."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        t = None if i % 17 == 5 else base + int(rng.integers(-spread, spread))
        v = None if i % 13 == 7 else int(rng.integers(1, 100))
        out.append({"k": int(rng.integers(0, 2)), "t": t, "id": i, "v": v})
    return out


def table(rows: list[dict], ttype: pa.DataType = INT64) -> pa.Table:
    return pa.table(
        {
            "k": pa.array([r["k"] for r in rows], pa.int64()),
            "t": pa.array([r["t"] for r in rows], ttype),
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "v": pa.array([r["v"] for r in rows], pa.int64()),
            "f": pa.array([None if r["v"] is None else float(r["v"]) for r in rows]),
        }
    )


def concat(values: list) -> str:
    return "".join(f"{float(v)}," for v in values if v is not None)


def in_frame(rows: list[dict], r: dict, text: str, unit: int | None = None) -> list[dict]:
    """The rows of ``r``'s frame by SQL's definition, in Python integers: a null time sorts
    first, is a peer of the other nulls only, and lies in frames that start unbounded."""
    f = whole(frame(text, unit))
    group = sorted(
        (x for x in rows if x["k"] == r["k"]),
        key=lambda x: (x["t"] is not None, x["t"] or 0, x["id"]),
    )
    if f.kind == "rows":
        p = group.index(r)
        lo = 0 if f.start is None else max(p + int(f.start), 0)
        hi = len(group) if f.end is None else max(min(p + int(f.end) + 1, len(group)), lo)
        return group[lo:hi]

    def held(x: dict) -> bool:
        if r["t"] is None:
            return x["t"] is None or f.end is None
        if x["t"] is None:
            return f.start is None
        return (f.start is None or x["t"] >= r["t"] + f.start) and (
            f.end is None or x["t"] <= r["t"] + f.end
        )

    return [x for x in group if held(x)]


FRAMES = [
    "range:-1,-1",
    "range:500",
    "range:-3,+3",
    "range:0,+7",
    "range:-3600000000,-1",
    "range:-20000000000000000000,-1",
    "range:unbounded,-1",
    "range:-5,20000000000000000000",
    "rows:3",
    "rows:-1,+2",
]


@pytest.mark.parametrize("base", BASES)
def test_rolling_frames_are_exact_at_every_magnitude(base) -> None:
    rows = rows_at(base, base % 1000)
    aggs = {}
    for i, text in enumerate(FRAMES):
        aggs |= {
            f"s{i}": ("sum", "v", text),
            f"n{i}": ("count", "*", text),
            f"c{i}": (Concat(), "f", text),
            f"l{i}": ("collect_list", "v", text),
        }
    out = windowagg.rolling_aggregate(table(rows), time="t", key="k", order_by="id", aggs=aggs)
    got = out.to_pylist()
    assert out.schema.field("t").type == pa.int64() and out.schema.field("s0").type == pa.int64()
    for g, r in zip(got, rows):
        for i, text in enumerate(FRAMES):
            vals = [x["v"] for x in in_frame(rows, r, text)]
            present = [v for v in vals if v is not None]
            assert g[f"n{i}"] == len(vals), (text, r)
            assert g[f"s{i}"] == (sum(present) if present else None), (text, r)
            assert g[f"c{i}"] == concat(vals), (text, r)
            assert g[f"l{i}"] == present, (text, r)
    # the issue's rows: nanosecond epochs one apart are told apart
    t = pa.array([1_795_694_400_000_000_000 + d for d in [0, 1, 3, 700]], pa.int64())
    small = pa.table({"t": t, "v": pa.array([1, 2, 4, 8], pa.int64())})
    aggs2 = {"s": ("sum", "v", "range:-1,-1"), "w": ("sum", "v", "range:500")}
    out = windowagg.rolling_aggregate(small, time="t", aggs=aggs2)
    assert out.column("s").to_pylist() == [None, 1, None, None]
    assert out.column("w").to_pylist() == [1, 3, 7, 8]  # 700 - 500 leaves 0, 1, 3 out


UNITS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


@pytest.mark.parametrize("unit", list(UNITS))
def test_timestamps_of_every_unit_keep_their_unit(unit) -> None:
    per = UNITS[unit]
    base = 1_795_694_400 * per  # an epoch in the column's own unit
    rows = rows_at(base, per % 97 + 1, spread=3 * per + 7)  # values off the microsecond
    frames = ["range:-1s,-1ns" if unit == "ns" else "range:-1s,0", "range:2s", "rows:2"]
    if unit == "ns":
        frames += ["range:-3ns,-1ns", "range:1us"]
    aggs = {f"s{i}": ("sum", "v", text) for i, text in enumerate(frames)}
    aggs |= {f"c{i}": (Concat(), "f", text) for i, text in enumerate(frames)}
    ttype = pa.timestamp(unit)
    out = windowagg.rolling_aggregate(
        table(rows, ttype), time="t", key="k", order_by="id", aggs=aggs
    )
    assert out.schema.field("t").type == ttype
    for g, r in zip(out.to_pylist(), rows):
        for i, text in enumerate(frames):
            vals = [x["v"] for x in in_frame(rows, r, text, per)]
            present = [v for v in vals if v is not None]
            assert g[f"s{i}"] == (sum(present) if present else None), (unit, text, r)
            assert g[f"c{i}"] == concat(vals), (unit, text, r)
    # tumbling windows of a second, bounds in the column's own type and unit
    w = windowagg.window_aggregate(
        table(rows, ttype), time="t", key="k", windows="tumbling:1s", aggs={"s": ("sum", "v")}
    )
    assert w.schema.field("window_start").type == ttype == w.schema.field("window_end").type
    starts = pa.compute.cast(w.column("window_start"), pa.int64()).to_pylist()
    want = {(r["k"], r["t"] // per * per) for r in rows if r["t"] is not None}
    assert set(zip(w.column("k").to_pylist(), starts)) == want


def test_pandas_nanosecond_timestamps() -> None:
    """pandas' default datetime64[ns], with values that are not whole microseconds."""
    import pandas as pd

    ts = pd.to_datetime([1_795_694_400_000_000_000 + d for d in [0, 1, 3, 700]])
    df = pd.DataFrame({"ts": ts, "v": [1, 2, 4, 8]})
    out = windowagg.rolling_aggregate(df, time="ts", aggs={"s": ("sum", "v", "range:-2ns,0")})
    assert out["s"].tolist() == [1, 3, 6, 8]
    w = windowagg.window_aggregate(df, time="ts", windows="tumbling:2ns", aggs={"s": ("sum", "v")})
    assert str(w["window_start"].dtype) == "datetime64[ns]"
    assert w["s"].tolist() == [3, 4, 8]
    assert (w["window_start"].astype("int64") % 2 == 0).all()


@pytest.mark.parametrize("base", BASES)
def test_point_in_time_is_exact_at_every_magnitude(base) -> None:
    rows = [r for r in rows_at(base, 3) if r["t"] is not None]
    rng = np.random.default_rng(5)
    queries = [
        {"qid": i, "key": int(rng.integers(0, 2)), "when": base + int(rng.integers(-70, 70))}
        for i in range(30)
    ]
    texts = ["range:-1,-1", "range:-5,0", "range:-3600000000,-1", "rows:2", "range:unbounded,0"]
    aggs = {f"s{i}": ("sum", "v", text) for i, text in enumerate(texts)}
    aggs |= {f"c{i}": (Concat(), "f", text) for i, text in enumerate(texts)}
    q = pa.table({k: pa.array([x[k] for x in queries], pa.int64()) for k in ("qid", "key", "when")})
    out = windowagg.rolling_aggregate(
        table(rows), time="t", key="k", order_by="id", aggs=aggs, at=q, at_time="when", at_key="key"
    )
    for g, x in zip(out.to_pylist(), queries):
        group = sorted((r for r in rows if r["k"] == x["key"]), key=lambda r: (r["t"], r["id"]))
        for i, text in enumerate(texts):
            f = frame(text)
            if f.kind == "rows":
                p = sum(r["t"] <= x["when"] for r in group) - 1
                picked = group[max(p - 1, 0) : p + 1]
            else:
                picked = [
                    r
                    for r in group
                    if (f.start is None or r["t"] >= x["when"] + f.start)
                    and r["t"] <= x["when"] + f.end
                ]
            present = [r["v"] for r in picked if r["v"] is not None]
            assert g[f"s{i}"] == (sum(present) if present else None), (text, x)
            assert g[f"c{i}"] == concat([r["v"] for r in picked]), (text, x)


def window_oracle(rows: list[dict], spec: str) -> dict:
    """Every window by definition, in Python integers: (key, start, end) -> values in order
    (edges clamped to the int64 range, as the engine gives them)."""
    kind, _, arg = spec.partition(":")
    out: dict = {}
    timed = sorted((r for r in rows if r["t"] is not None), key=lambda r: (r["k"], r["t"], r["id"]))
    if kind in ("tumbling", "sliding"):
        size, slide = (int(arg), int(arg)) if kind == "tumbling" else map(int, arg.split("/"))
        for r in timed:
            top = r["t"] // slide
            for k in range(top - (size - r["t"] % slide - 1) // slide, top + 1):
                a = k * slide
                key = (r["k"], max(a, LOW), min(a + size, HIGH))
                out.setdefault(key, []).append(r["v"])
    elif kind == "session":
        gap = int(arg)
        for k in {r["k"] for r in timed}:
            group = [r for r in timed if r["k"] == k]
            start = prev = None
            vals: list = []
            for r in [*group, None]:
                if r is None or (prev is not None and r["t"] > prev + gap):
                    out[(k, start, min(prev + gap, HIGH))] = vals
                    if r is None:
                        break
                    start, vals = r["t"], []
                if start is None:
                    start = r["t"]
                vals.append(r["v"])
                prev = r["t"]
    else:  # count-tumbling:N
        n = int(arg)
        for k in {r["k"] for r in timed}:
            group = [r for r in timed if r["k"] == k]
            for j in range(0, len(group) - n + 1, n):
                w = group[j : j + n]
                out[(k, w[0]["t"], w[-1]["t"])] = [r["v"] for r in w]
    return out


WINDOWS = ["tumbling:7", "sliding:10/3", "session:4", "count-tumbling:3", "tumbling:1000000000000"]


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("spec", WINDOWS)
def test_windows_are_exact_at_every_magnitude(base, spec) -> None:
    rows = rows_at(base, 11)
    aggs = {"s": ("sum", "v"), "c": (Concat(), "f"), "l": ("collect_list", "v")}
    out = windowagg.window_aggregate(table(rows), time="t", key="k", windows=spec, aggs=aggs)
    assert out.schema.field("window_start").type == pa.int64()
    got = {(r["k"], r["window_start"], r["window_end"]): r for r in out.to_pylist()}
    want = window_oracle(rows, spec)
    assert set(got) == set(want), spec
    for key, vals in want.items():
        present = [v for v in vals if v is not None]
        assert got[key]["s"] == (sum(present) if present else None), (spec, key)
        assert got[key]["c"] == concat(vals) and got[key]["l"] == present, (spec, key)


def test_window_edges_past_the_int64_range_clamp() -> None:
    rows = [
        {"k": 0, "t": MIN + 5, "id": 0, "v": 1},
        {"k": 0, "t": MIN + 100, "id": 1, "v": 2},
        {"k": 0, "t": MAX - 2, "id": 2, "v": 4},
        {"k": 0, "t": MAX, "id": 3, "v": 8},
    ]
    for spec in ["tumbling:1000", "sliding:1000/300", "session:1000"]:
        out = windowagg.window_aggregate(
            table(rows), time="t", windows=spec, aggs={"s": ("sum", "v")}
        )
        got = {(0, r["window_start"], r["window_end"]): r["s"] for r in out.to_pylist()}
        want = {key: sum(v) for key, v in window_oracle(rows, spec).items()}
        assert got == want, spec
        assert min(k[1] for k in got) >= LOW and max(k[2] for k in got) == HIGH, spec
    with pytest.raises(ValueError, match="holds -9223372036854775808, the int64 that stands"):
        windowagg.rolling_aggregate(
            table([*rows, {"k": 0, "t": MIN, "id": 4, "v": 1}]),
            time="t",
            aggs={"s": ("sum", "v", "rows:2")},
        )


def test_the_issues_tumbling_call_ends() -> None:
    """``tumbling:2`` over nanosecond epochs as int64 looped for ever when times went through
    doubles: run in a process of its own, so that a hang fails the test instead."""
    code = (
        "import pyarrow as pa, windowagg\n"
        "t = pa.array([1_795_694_400_000_000_000 + d for d in [0, 1, 3, 700]], pa.int64())\n"
        "tab = pa.table({'t': t, 'v': pa.array([1, 2, 4, 8])})\n"
        "out = windowagg.window_aggregate(tab, time='t', windows=['tumbling:2'],"
        " aggs={'s': ('sum', 'v')})\n"
        "print(out.column('s').to_pylist(), out.column('window_start').type)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "[3, 4, 8] int64"


def test_refused_before_any_work() -> None:
    rows = [{"k": 0, "t": 1_800_000_000_000_000_000 + d, "id": d, "v": d} for d in range(3)]
    with pytest.raises(MemoryError, match="more than this machine's memory holds"):
        windowagg.window_aggregate(
            table(rows), time="t", windows="sliding:1000000000000000/1", aggs={"s": ("sum", "v")}
        )
    with pytest.raises(ValueError, match="must be whole numbers of the time column's unit"):
        windowagg.window_aggregate(
            table(rows), time="t", windows="tumbling:0.5", aggs={"s": ("sum", "v")}
        )
    floats = pa.table({"t": [1.8e18, 1.8e18 + 512], "v": [1, 2]})
    with pytest.raises(ValueError, match="below the resolution of these float times"):
        windowagg.window_aggregate(floats, time="t", windows="tumbling:2", aggs={"s": ("sum", "v")})
    assert (
        windowagg.window_aggregate(
            floats, time="t", windows="tumbling:1024", aggs={"s": ("sum", "v")}
        ).num_rows
        == 1
    )
    queries = pa.table(
        {"t": pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("ns")).cast(pa.timestamp("ns"))}
    )
    finer = pa.table({"t": pa.array([1_767_225_600_000_000_001], pa.timestamp("ns"))})
    events = pa.table({"t": pa.array([dt.datetime(2026, 1, 1)], pa.timestamp("us")), "v": [1]})
    out = windowagg.rolling_aggregate(
        events, time="t", aggs={"s": ("sum", "v", "range:1s")}, at=queries
    )
    assert out.column("s").to_pylist() == [1]
    with pytest.raises(ValueError, match="finer than the events'"):
        windowagg.rolling_aggregate(
            events, time="t", aggs={"s": ("sum", "v", "range:1s")}, at=finer
        )


SPECS = st.one_of(
    st.integers(1, 2**63 - 1).map(lambda n: f"tumbling:{n}"),
    st.tuples(st.integers(1, 2**62), st.integers(1, 2**62)).map(
        lambda p: f"sliding:{max(p)}/{min(p)}"
    ),
    st.tuples(st.integers(1, 2**50), st.integers(1, 2000)).map(  # many windows per row
        lambda p: f"sliding:{p[0] * p[1]}/{p[0]}"
    ),
    st.integers(1, 2**63 - 1).map(lambda n: f"session:{n}"),
    st.integers(1, 5).map(lambda n: f"count-tumbling:{n}"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    times=st.lists(st.one_of(st.none(), st.integers(MIN + 1, MAX)), min_size=1, max_size=6),
    spec=SPECS,
)
def test_any_window_spec_over_any_int64_times_ends_or_raises(times, spec) -> None:
    kind, _, arg = spec.partition(":")
    if kind == "sliding":  # per row: a few windows, or more than any machine holds
        size, slide = map(int, arg.split("/"))
        assume(-(-size // slide) <= 2**14 or size // slide >= 2**44)
    rows = [{"k": 0, "t": t, "id": i, "v": i + 1} for i, t in enumerate(times)]
    try:
        out = windowagg.window_aggregate(
            table(rows), time="t", windows=spec, aggs={"s": ("sum", "v")}
        )
    except MemoryError:  # more windows than the machine holds: refused before any is made
        assert kind == "sliding" and size // slide >= 2**44
        return
    got = {(0, r["window_start"], r["window_end"]): r["s"] for r in out.to_pylist()}
    want = {key: sum(v) for key, v in window_oracle(rows, spec).items()}
    assert got == want


BOUNDS = st.one_of(
    st.just("unbounded"),
    st.integers(-(2**65), 2**65).map(lambda n: f"{n:+d}" if n else "0"),
    st.integers(-10, 10).map(lambda n: f"{n:+d}" if n else "0"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    times=st.lists(st.one_of(st.none(), st.integers(MIN + 1, MAX)), min_size=1, max_size=8),
    bounds=st.tuples(BOUNDS, BOUNDS),
)
def test_any_range_frame_over_any_int64_times_equals_the_definition(times, bounds) -> None:
    lo, hi = bounds
    if lo != "unbounded" and hi != "unbounded":
        lo, hi = sorted((lo, hi), key=int)
    text = f"range:{lo},{hi}"
    rows = [{"k": 0, "t": t, "id": i, "v": i + 1} for i, t in enumerate(times)]
    aggs = {"s": ("sum", "v", text), "c": (Concat(), "f", text)}
    out = windowagg.rolling_aggregate(table(rows), time="t", order_by="id", aggs=aggs)
    for g, r in zip(out.to_pylist(), rows):
        vals = [x["v"] for x in in_frame(rows, r, text)]
        assert g["s"] == (sum(vals) if vals else None), (text, r)
        assert g["c"] == concat(vals), (text, r)
    # the same frames placed at the rows' own times as queries: events without a time in none
    f = frame(text)
    asked = pa.table({"when": pa.array([r["t"] for r in rows], pa.int64())})
    at = windowagg.rolling_aggregate(
        table(rows), time="t", order_by="id", aggs=aggs, at=asked, at_time="when"
    )
    for g, r in zip(at.to_pylist(), rows):
        vals = [
            x["v"]
            for x in rows
            if r["t"] is not None
            and x["t"] is not None
            and (f.start is None or x["t"] >= r["t"] + f.start)
            and (f.end is None or x["t"] <= r["t"] + f.end)
        ]
        assert g["s"] == (sum(vals) if vals else None), (text, r)


@pytest.mark.parametrize(
    "events_type,queries_type",
    [
        (pa.timestamp("ns"), pa.date32()),
        (pa.date32(), pa.timestamp("ns")),
        (pa.timestamp("us", "UTC"), pa.timestamp("s", "UTC")),
        (pa.timestamp("ms"), pa.timestamp("us")),
    ],
)
def test_point_in_time_across_time_units(events_type, queries_type) -> None:
    """Queries whose time has another unit than the events' are placed in the events' unit,
    exactly, against the definition in Python datetimes."""
    t0 = dt.datetime(2026, 1, 1)
    stamps = [t0 + dt.timedelta(hours=h) for h in (-30, -20, 0, 5, 23, 24, 40)]
    if pa.types.is_date(events_type):
        stamps = [dt.datetime.combine(s.date(), dt.time()) for s in stamps]
    tz = getattr(events_type, "tz", None)
    events = pa.table(
        {
            "t": pa.array([s.date() if pa.types.is_date(events_type) else s for s in stamps])
            .cast(events_type if not tz else pa.timestamp(events_type.unit))
            .cast(events_type),
            "v": list(range(1, len(stamps) + 1)),
        }
    )
    asked = [t0 + dt.timedelta(hours=h) for h in (-24, 0, 12, 48)]
    qcol = pa.array([a.date() if pa.types.is_date(queries_type) else a for a in asked])
    qcol = qcol.cast(
        queries_type if not getattr(queries_type, "tz", None) else pa.timestamp(queries_type.unit)
    )
    queries = pa.table({"t": qcol.cast(queries_type)})
    out = windowagg.rolling_aggregate(
        events, time="t", aggs={"s": ("sum", "v", "range:1d")}, at=queries
    )
    when = [
        dt.datetime.combine(a.date(), dt.time()) if pa.types.is_date(queries_type) else a
        for a in asked
    ]
    want = [
        sum(v for s, v in zip(stamps, range(1, 8)) if w - dt.timedelta(days=1) <= s <= w) or None
        for w in when
    ]
    assert out.column("s").to_pylist() == want


@pytest.mark.parametrize(
    "values",
    [
        np.array([5, -3, 2**52, 0, 5], np.int64),  # exact in doubles
        np.array([2**53 + 1, 7, MIN + 1, MAX], np.int64),  # beyond: int64
        np.array([1.5, np.nan, -np.inf, -0.0, np.inf]),  # NaN sorted last: +inf
    ],
)
def test_held_numbers_are_the_times_of_their_column(values) -> None:
    """The online state's times, held as numbers, read as a time column of them reads."""
    plan = SimpleNamespace(keys=(), time="t", order_by=())
    want = times_of(plan, pa.table({"t": values}))
    got = numbers_as_times("t", values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_held_numbers_refuse_the_null_times_int64_as_the_column_does() -> None:
    values = np.array([MIN, 0], np.int64)
    with pytest.raises(ValueError, match="stands for a null time") as column:
        times_of(SimpleNamespace(keys=(), time="t", order_by=()), pa.table({"t": values}))
    with pytest.raises(ValueError, match="stands for a null time") as held:
        numbers_as_times("t", values)
    assert str(column.value) == str(held.value)


@pytest.mark.parametrize("big", [False, True])
def test_timestamps_with_nulls_in_chunks_read_as_their_int64(big) -> None:
    """A timestamp column is read through its own buffers as int64: nulls -inf among
    doubles, the null time's int64 among whole numbers beyond them."""
    base = 2**60 if big else 0
    col = pa.chunked_array(
        [
            pa.array([base + 1, None], pa.timestamp("ns")),
            pa.array([None, base + 3], pa.timestamp("ns")),
        ]
    )
    got = column_times("t", col)
    if big:
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, [base + 1, MIN, MIN, base + 3])
    else:
        np.testing.assert_array_equal(got, [1.0, -np.inf, -np.inf, 3.0])
