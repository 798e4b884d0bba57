"""window_aggregate on local tables against the definition window by window (tests/engine/
sql_oracle.py folds each window's rows with SQL's rules): random tables with several keys (a
null key too), equal times, null and NaN values, null times, integer, float and decimal
columns; tumbling, sliding, session and count windows; every SQL aggregation, library
aggregations and a non-commutative user aggregation, all in one call; every bad input refused
before any work."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import windowagg
from tests.aggs import Concat
from tests.engine.sql_oracle import _order_key, sql_aggregate
from tests.engine.test_rolling_table import SQL, arrow, random_rows, same
from windowagg.aggregations import resolve
from windowagg.engine.windows.table import window_bounds

WINDOWS = [
    "tumbling:10",
    "sliding:12/4",
    "sliding:5/5",
    "sliding:7/3",
    "session:3",
    "session:0.5",
    "count-tumbling:4",
    "count-sliding:5/2",
]


def expected_windows(rows: list[dict], spec: str) -> dict:
    """(key, start, end) -> the rows of the window, in time order (then id), by definition."""
    groups: dict = {}
    for r in sorted(rows, key=lambda r: (_order_key(r["k"]), r["t"] or 0, r["id"])):
        if r["t"] is None:  # no time: in no window
            continue
        groups.setdefault(r["k"], []).append(r)
    kind, _, arg = spec.partition(":")
    out: dict = {}
    for k, rs in groups.items():
        ts = [r["t"] for r in rs]
        if kind in ("tumbling", "sliding"):
            size, slide = (float(x) for x in (arg.split("/") * 2)[:2])
            lo = math.floor((min(ts) - size) / slide)
            for j in range(lo, math.floor(max(ts) / slide) + 1):
                inside = [r for r in rs if j * slide <= r["t"] < j * slide + size]
                if inside:
                    out[(k, j * slide, j * slide + size)] = inside
        elif kind == "session":
            gap = float(arg)
            run = [rs[0]]
            for r in rs[1:]:
                if r["t"] - run[-1]["t"] <= gap:
                    run.append(r)
                else:
                    out[(k, run[0]["t"], run[-1]["t"] + gap)] = run
                    run = [r]
            out[(k, run[0]["t"], run[-1]["t"] + gap)] = run
        else:
            size, slide = (int(x) for x in (arg.split("/") * 2)[:2])
            for a in range(0, len(rs) - size + 1, slide):
                inside = rs[a : a + size]
                out[(k, inside[0]["t"], inside[-1]["t"])] = inside
    return out


def check(rows: list[dict], table: pa.Table, spec: str, aggs: dict) -> None:
    out = windowagg.window_aggregate(table, time="t", windows=[spec], aggs=aggs, key="k")
    got = {(r["k"], r["window_start"], r["window_end"]): r for r in out.to_pylist()}
    want = expected_windows(rows, spec)
    assert set(got) == set(want), spec
    for w, inside in want.items():
        for name, (agg, column) in aggs.items():
            vals = [1 if column == "*" else r[column] for r in inside]
            sql = agg if agg in SQL else None
            a = None if sql else resolve(agg)
            if sql is None:  # the library's own: the non-null values, NaN skipped
                vals = [float(v) for v in vals if v is not None and v == v]
            want_v = sql_aggregate(sql or "library", vals, a)
            assert same(got[w][name], want_v), (spec, w, name, got[w][name], want_v, vals)
        assert got[w]["window"] == spec


@pytest.mark.parametrize("spec", WINDOWS)
def test_every_window_type_and_sql_aggregation_equal_the_definition(spec) -> None:
    rows = random_rows(len(spec) * 13 + ord(spec[-1]), 200)
    aggs = {f"{a}_{c}": (a, c) for a in SQL for c in ("x", "i")}
    aggs |= {
        "n": ("count", "*"),
        "dsum": ("sum", "d"),
        "dmin": ("min", "d"),
        "davg": ("mean", "d"),
        "dlast": ("last", "d"),
    }
    check(rows, arrow(rows), spec, aggs)


@pytest.mark.parametrize("spec", ["sliding:12/4", "session:2", "count-sliding:4/3"])
def test_library_and_user_aggregations_in_the_same_call(spec) -> None:
    rows = [
        r | {"x": None if r["x"] is not None and math.isnan(r["x"]) else r["x"]}
        for r in random_rows(7, 150)
    ]  # NaN is a value to SQL, skipped by the library
    aggs = {
        "med": (windowagg.aggregation("median"), "x"),
        "q9": ("quantile(q=0.9)", "x"),
        "mc": ("maxcount", "i"),
        "cat": (Concat(), "i"),
        "cd": ("count_distinct", "i"),
        "s": ("sum", "x"),
        "col": ("collect", "i"),
    }
    check(rows, arrow(rows), spec, aggs)


def test_result_types_are_sparks() -> None:
    rows = random_rows(1, 60)
    aggs = {
        "a": ("sum", "i"),
        "b": ("sum", "x"),
        "c": ("sum", "d"),
        "e": ("avg", "d"),
        "f": ("avg", "i"),
        "g": ("max", "d"),
        "h": ("count", "x"),
        "j": ("first", "i"),
        "k2": ("stddev", "i"),
        "col": ("collect", "i"),
        "hll": ("approx_count_distinct", "i"),
        "m4": ("m4", "x"),
        "med": ("median", "x"),
    }
    out = windowagg.window_aggregate(
        arrow(rows), time="t", windows="tumbling:10", aggs=aggs, key="k"
    )
    types = {n: str(out.schema.field(n).type) for n in out.column_names}
    assert types == {
        "k": "int64",
        "window": "string",
        "window_start": "int64",  # the time column's type
        "window_end": "int64",
        "a": "int64",
        "b": "double",
        "c": "decimal128(20, 2)",
        "e": "decimal128(14, 6)",
        "f": "double",
        "g": "decimal128(10, 2)",
        "h": "int64",
        "j": "int64",
        "k2": "double",
        "col": "list<item: int64>",
        "hll": "int64",
        "m4": "struct<min: double, max: double, first: double, last: double>",
        "med": "double",
    }
    assert not out.schema.field("h").nullable and out.schema.field("a").nullable


def test_nan_is_a_value_whatever_the_other_windows() -> None:
    """One window holding 1.0, NaN and 2.0: sum and mean NaN, max NaN, min 1.0, count 3, in
    every window type of the same call."""
    t = pa.table({"t": [1.0, 2.0, 3.0], "v": [1.0, math.nan, 2.0]})
    aggs = {
        "s": ("sum", "v"),
        "m": ("mean", "v"),
        "hi": ("max", "v"),
        "lo": ("min", "v"),
        "n": ("count", "v"),
    }
    out = windowagg.window_aggregate(
        t, time="t", windows=["tumbling:10", "session:5"], aggs=aggs
    ).to_pylist()
    assert len(out) == 2
    for r in out:
        assert math.isnan(r["s"]) and math.isnan(r["m"]) and math.isnan(r["hi"])
        assert (r["lo"], r["n"]) == (1.0, 3)


def test_timestamps_and_pandas() -> None:
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ts = [base + dt.timedelta(minutes=m) for m in (0, 20, 50, 59, 61, 130)]
    pdf = pd.DataFrame(
        {"ts": ts, "zone": list("abaaba"), "fare": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0]}
    )
    aggs = {"fare": ("sum", "fare"), "trips": ("count", "*")}
    out = windowagg.window_aggregate(pdf, time="ts", windows="tumbling:1h", key="zone", aggs=aggs)
    assert list(out.columns) == ["zone", "window", "window_start", "window_end", "fare", "trips"]
    got = sorted((r.zone, r.window_start.hour, r.fare, r.trips) for r in out.itertuples())
    # pandas' NaN is missing: zone a's first hour sums 1 + 4 over three trips
    assert got == [("a", 0, 5.0, 3), ("a", 2, 6.0, 1), ("b", 0, 2.0, 1), ("b", 1, 5.0, 1)]
    assert str(out["window_start"].dtype).startswith("datetime64")


def test_sliding_windows_are_made_once_and_exactly() -> None:
    """Windows hold rows at their start, not at their end; a key's windows come in order of
    start and each once, with far-apart rows (no empty window in between is made)."""
    times = np.array([0.0, 4.0, 1e9, 1e9 + 4.0])
    seg = np.array([0, 2, 4])
    b = window_bounds(windowagg.Sliding(8, 4), times, seg)
    assert b.start.tolist() == [-4.0, 0.0, 4.0, 1e9 - 4, 1e9, 1e9 + 4]
    assert list(zip(b.lo.tolist(), b.hi.tolist())) == [
        (0, 1),
        (0, 2),
        (1, 2),
        (2, 3),
        (2, 4),
        (3, 4),
    ]
    assert b.ends().tolist() == [4.0, 8.0, 12.0, 1e9 + 4, 1e9 + 8, 1e9 + 12]


def test_decimal_sums_are_exact() -> None:
    d = [Decimal("0.10"), Decimal("0.20"), None, Decimal("99999999.99")]
    t = pa.table({"t": [1, 2, 3, 4], "d": pa.array(d, pa.decimal128(10, 2))})
    out = windowagg.window_aggregate(
        t, time="t", windows="tumbling:10", aggs={"s": ("sum", "d"), "a": ("avg", "d")}
    )
    assert out.column("s").to_pylist() == [Decimal("100000000.29")]
    assert out.column("a").to_pylist() == [Decimal("33333333.430000")]


@pytest.mark.parametrize(
    "kwargs,err",
    [
        ({"time": "nope"}, "no time column 'nope'"),
        ({"key": ["k", "zz"]}, "no key column 'zz'"),
        ({"windows": ["tumbling:1x"]}, "bad duration"),
        ({"aggs": {"s": ("sum", "zz")}}, "no column 'zz'"),
        ({"aggs": {"s": ("nope", "x")}}, "unknown aggregation"),
        ({"aggs": {"s": ("sum", "*")}}, "only count takes no column"),
        ({"aggs": {"window": ("sum", "x")}}, "is taken"),
        ({"aggs": {"k": ("sum", "x")}}, "is taken"),
        ({"aggs": {"s": ("sum", "x", "range:1h")}}, "must be \\(aggregation, column\\)"),
        ({"aggs": {}}, "non-empty dict"),
        ({"aggs": {"s": ("bloom", "x")}}, "filter object"),
        ({"windows": ["sliding:5/10"]}, "slide is longer"),
    ],
)
def test_errors_before_any_work(kwargs, err) -> None:
    args = {"time": "t", "windows": ["tumbling:10"], "aggs": {"s": ("sum", "x")}, "key": "k"}
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=err):
        windowagg.window_aggregate(arrow(random_rows(2, 10)), **args)


def test_time_as_strings_is_refused() -> None:
    t = pa.table({"t": ["a", "b"], "v": [1.0, 2.0]})
    with pytest.raises(TypeError, match="must be a timestamp, a date or a number"):
        windowagg.window_aggregate(t, time="t", windows="tumbling:10", aggs={"s": ("sum", "v")})


def test_a_compiled_sweep_answers_windows(monkeypatch) -> None:
    """Float sums, moments, products and correlations over windows run the compiled FIFO sweep,
    percentiles the compiled order statistics, modes the compiled tree of counts, distinct
    counts (count_distinct, hll: exact) a count per value, the rest vectorized: never the
    Python reference."""
    from windowagg.engine import sweep

    def fail(*a, **k):
        raise AssertionError("the Python reference ran")

    monkeypatch.setattr(sweep, "_reference", fail)
    t = pa.table(
        {
            "t": np.arange(100.0),
            "v": np.arange(100.0),
            "w": np.arange(100.0) % 3,
            "b": np.arange(100) % 2 == 0,
        }
    )
    aggs = {
        "s": ("sum", "v"),
        "sd": ("stddev", "v"),
        "md": ("median", "v"),
        "q": ("quantile(q=0.9)", "v"),
        "cd": ("count_distinct", "w"),
        "h": ("hll", "w"),
        "col": ("collect", "w"),
        "vp": ("var_pop", "v"),
        "sk": ("skewness", "w"),
        "pr": ("product", "w"),
        "co": ("corr", ("v", "w")),
        "mb": ("max_by", ("v", "w")),
        "mo": ("mode", "w"),
        "cs": ("collect_set", "w"),
        "ci": ("count_if", "b"),
        "ba": ("bool_and", "b"),
        "pd": ("percentile_disc", "v"),
        "cl": ("collect_list", "w"),
        "fi": ("first(ignorenulls=True)", "v"),
    }
    out = windowagg.window_aggregate(t, time="t", windows="sliding:10/5", aggs=aggs)
    assert out.column("s").to_pylist()[:3] == [sum(range(5)), sum(range(10)), sum(range(5, 15))]
    # median interpolates; quantile is the nearest rank (the ceil(q * n)-th smallest) of 0..4,
    # 0..9, 5..14
    assert out.column("md").to_pylist()[:3] == [2.0, 4.5, 9.5]
    assert out.column("pd").to_pylist()[:3] == [2.0, 4.0, 9.0]
    assert out.column("q").to_pylist()[:3] == [4.0, 8.0, 13.0]
    assert out.column("vp").to_pylist()[0] == 2.0
    assert out.column("pr").to_pylist()[:2] == [0.0, 0.0]
    assert out.column("mb").to_pylist()[:2] == [2.0, 8.0]  # the youngest of the largest w
    assert out.column("mo").to_pylist()[:2] == [0.0, 0.0]
    assert out.column("cs").to_pylist()[0] == [0.0, 1.0, 2.0]
    assert out.column("ci").to_pylist()[:2] == [3, 5]
    assert out.column("ba").to_pylist()[0] is False
    assert out.column("cd").to_pylist()[:3] == out.column("h").to_pylist()[:3] == [3, 3, 3]
    assert out.column("col").to_pylist()[0] == [0.0, 1.0, 2.0, 0.0, 1.0]


def test_all_keys_in_one_compiled_pass(monkeypatch) -> None:
    """Every key in one call of each compiled kernel: the (key, slice) partials of sums and
    maxima (one pass per partial column, not per key), the order by key and time of the rows
    (a median needs them: one counting sort, one sort of every key's times)."""
    import windowagg.kernels.cells as cells
    import windowagg.kernels.key_order as key_order

    calls: dict[str, int] = {}
    for module, name in (
        (cells, "slice_index"),
        (cells, "grid_cells"),
        (cells, "cell_sums"),
        (cells, "cell_extremes"),
        (key_order, "order_of_code"),
        (key_order, "sort_segments"),
    ):
        real = getattr(module, name)

        def spy(*a, _real=real, _name=name):
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*a)

        monkeypatch.setattr(module, name, spy)
    rng = np.random.default_rng(4)
    t = pa.table(
        {"k": rng.integers(0, 50, 5000), "t": rng.permutation(5000) / 10, "v": rng.random(5000)}
    )
    aggs = {"s": ("sum", "v"), "m": ("max", "v")}
    out = windowagg.window_aggregate(t, time="t", windows="sliding:100/10", aggs=aggs, key="k")
    assert calls == {"slice_index": 1, "grid_cells": 1, "cell_sums": 1, "cell_extremes": 1}
    assert set(out.column("k").to_pylist()) == set(range(50))
    calls.clear()
    windowagg.window_aggregate(
        t, time="t", windows="sliding:100/10", key="k", aggs=aggs | {"md": ("median", "v")}
    )
    assert calls == {"order_of_code": 1, "sort_segments": 1}


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("spec", ["tumbling:10", "sliding:12/4"])
def test_sparse_cells_are_the_runs_of_the_rows_by_key_and_slice(monkeypatch, spec, threads) -> None:
    """Where the keys' runs of cells would be too sparse to lay out flat, the cells are the
    runs of equal (key, slice) of the rows sorted by key and slice (forced here for every
    table): the compiled pass that numbers them runs, and the windows equal the definition;
    with ``threads``, the cells are reduced in parts of whole cells on several threads."""
    import windowagg.kernels.cells as keyed
    from windowagg.engine import parallel
    from windowagg.engine.windows import slices as slice_table

    calls = []
    real = keyed.run_cells
    monkeypatch.setattr(slice_table, "SPARSE", 0)
    monkeypatch.setattr(keyed, "run_cells", lambda *a: (calls.append(1), real(*a))[1])
    parts = []
    if threads:
        cut = slice_table._cell_parts

        def cells_whole(cell):
            got = cut(cell)
            assert got[0][0] == 0 and got[-1][1] == len(cell)
            for (_, b), (a, _) in itertools.pairwise(got):  # parts meet between two cells
                assert a == b and cell[a] != cell[a - 1]
            parts.append(got)
            return got

        monkeypatch.setattr(parallel, "PARALLEL_ROWS", 1)
        monkeypatch.setattr(slice_table, "_cell_parts", cells_whole)
    rows = random_rows(31, 300)
    aggs = {f"{a}_{c}": (a, c) for a in ("sum", "count", "mean", "min", "max") for c in "xi"}
    check(rows, arrow(rows), spec, aggs | {"n": ("count", "*")})
    assert calls == [1]
    if threads:  # cut between cells: no cell in two parts
        assert parts and len(parts[0]) >= 2


@pytest.mark.parametrize("sparse", [False, True])
def test_windows_of_one_slice_are_their_slices_partials(monkeypatch, sparse) -> None:
    """Tumbling windows over the slices of their own grid hold one slice each: sum, min and
    max are the slice's partials as they are (nulls and NaN included), with no sweep and no
    selection over the windows, equal to the definition."""
    from windowagg.engine.evaluators import select, sums
    from windowagg.engine.windows import slices as slice_table

    def refuse(*a, **k):
        raise AssertionError("a sweep or a selection over windows of one slice")

    monkeypatch.setattr(sums, "exact_sums", refuse)
    monkeypatch.setattr(select, "select_rows", refuse)
    if sparse:
        monkeypatch.setattr(slice_table, "SPARSE", 0)
    rows = random_rows(57, 300)
    aggs = {f"{a}_{c}": (a, c) for a in ("sum", "min", "max") for c in ("x", "i")}
    check(rows, arrow(rows), "tumbling:10", aggs)


def test_parts_of_the_keys_on_threads_equal_one_pass(monkeypatch) -> None:
    """With the keys in parts on threads (here from 1 row on), windows and rolling frames
    equal the answers of one pass over every key: the sort of each key's times, the FIFO
    sweeps, the shared deques of min and max, the range bounds, the windows' answers in
    chunks."""
    from windowagg.engine import parallel

    rng = np.random.default_rng(9)
    n = 3000
    v = rng.random(n)
    v[rng.random(n) < 0.05] = np.nan
    t = pa.table({"k": rng.integers(0, 20, n), "t": rng.permutation(n) / 7.0, "v": v})
    wins = {
        "s": ("sum", "v"),
        "hi": ("max", "v"),
        "lo": ("min", "v"),
        "md": ("median", "v"),
        "c": (Concat(), "v"),
    }
    frames = {
        "s": ("sum", "v", "range:40"),
        "hi": ("max", "v", "rows:30"),
        "lo": ("min", "v", "range:-5,+9"),
        "sd": ("stddev", "v", "range:100"),
    }

    def both():
        w = windowagg.window_aggregate(
            t, time="t", windows=["sliding:50/10", "session:3"], aggs=wins, key="k"
        )
        r = windowagg.rolling_aggregate(t, time="t", key="k", aggs=frames)
        nan = lambda x: "NaN" if isinstance(x, float) and math.isnan(x) else x  # noqa: E731
        return [[{c: nan(x) for c, x in row.items()} for row in out.to_pylist()] for out in (w, r)]

    one = both()
    pieces = []
    real = parallel.on_cores
    monkeypatch.setattr(parallel, "PARALLEL_ROWS", 1)
    monkeypatch.setattr(
        parallel, "on_cores", lambda run, ps: (pieces.append(len(ps)), real(run, ps))[1]
    )
    assert both() == one
    assert max(pieces) >= 2
