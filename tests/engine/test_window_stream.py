"""Windows over a stream, a group of keys at a time (windowagg.engine.windows.stream), against
the batch engine over the same rows: keys that come and go (a null key too), random
micro-batches with out-of-order rows, rows late within the allowed lateness (windows reported
again as updates) and rows too late (dropped, as Spark drops them before the function);
tumbling, sliding and session windows at once; per slice partials (sum, count, max, mean) and
rows (a non-commutative user aggregation)."""

from __future__ import annotations

import math
import random

import pyarrow as pa
import pytest

import windowagg
from tests.aggs import Concat
from windowagg.engine.windows.plan import plan_windows
from windowagg.engine.windows.stream import WindowStream

WINDOWS = ["tumbling:12", "sliding:12/4", "session:4"]  # one grid of slices: 4
DELAY, LATENESS = 5, 8
SCHEMA = pa.schema([("k", pa.string()), ("t", pa.int64()), ("v", pa.int64())])


def aggs(mode: str) -> dict:
    out = {"s": ("sum", "v"), "n": ("count", "*"), "hi": ("max", "v"), "m": ("mean", "v")}
    if mode == "rows":  # no SQL partial: the key keeps rows
        out["c"] = (Concat(), "v")
    return out


KEYS = ["a", "b", "c", None]


def micro_batches(seed: int) -> list[list[tuple]]:
    """(key, time, value) rows per micro-batch: mostly ahead, some behind, some far behind;
    a key in a batch or not."""
    rng = random.Random(seed)
    out, top = [], 0
    for _ in range(rng.randrange(4, 9)):
        rows = []
        for _ in range(rng.randrange(0, 30)):
            r = rng.random()
            t = top + rng.randrange(0, 12) if r < 0.7 else top - rng.randrange(0, 20)
            v = None if rng.random() < 0.1 else rng.randrange(-5, 9)
            rows.append((rng.choice(KEYS), t, v))
        top = max([top, *(t for _, t, _ in rows)])
        out.append(rows)
    return out


def rows_table(rows: list[tuple]) -> pa.Table:
    names = SCHEMA.names
    return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}, schema=SCHEMA)


def replay(stream: WindowStream, batches: list[list[tuple]]):
    """Every call's reports with the watermark it ran at, and the rows Spark would keep."""
    units, reported, top, kept, reports = None, -math.inf, None, [], []
    for rows in [*batches, None]:  # None: the watermark passes everything (the last timeout)
        wm = math.inf if rows is None else (-math.inf if top is None else top - DELAY)
        live = [r for r in rows or [] if r[1] >= wm - LATENESS]
        kept += live
        table = rows_table(live) if live else None
        step = stream.advance(units, table, reported, wm)
        units, reported = step.units, step.reported
        if step.out is not None:
            reports += [(wm, r) for r in step.out.to_pylist()]
        if rows:
            top = max([*(t for _, t, _ in rows), *([] if top is None else [top])])
    return reports, kept


@pytest.mark.parametrize("mode", ["slices", "rows"])
@pytest.mark.parametrize("seed", range(12))
def test_stream_reports_equal_batch_windows(mode, seed):
    plan = plan_windows(
        SCHEMA, time="t", windows=WINDOWS, aggs=aggs(mode), key="k", allowed_lateness=LATENESS
    )
    stream = WindowStream(plan, SCHEMA)
    assert (stream.over is not None) == (mode == "slices")  # the mode this test is about
    reports, kept = replay(stream, micro_batches(seed))
    batch = windowagg.window_aggregate(
        rows_table(kept),
        time="t",
        windows=WINDOWS,
        aggs=aggs(mode),
        key="k",
    )
    names = list(aggs(mode))
    want = {
        (r["k"], r["window"], r["window_start"], r["window_end"]): [r[n] for n in names]
        for r in batch.to_pylist()
    }
    assert len({w[0] for w in want}) > 1  # several keys in one group
    last, seen = {}, []
    for wm, r in reports:
        w = (r["k"], r["window"], r["window_start"], r["window_end"])
        assert r["window_end"] <= wm  # reported once the watermark passed its end
        before = w in last or (
            w[1].startswith("session")
            and any(x[:2] == w[:2] and x[2] < w[3] and w[2] < x[3] for x in seen)
        )
        assert r["update"] == before, (w, r["update"])
        last[w] = [r[n] for n in names]
        seen.append(w)
    for w, values in want.items():
        assert last.get(w) == values, w
    for w in set(last) - set(want):  # a session a late row extended or merged since
        assert w[1].startswith("session")
        assert any(x[:2] == w[:2] and x[2] <= w[2] and w[3] <= x[3] for x in want), w


def test_a_key_keeps_its_open_slices_only():
    """State bounded by the open windows: a long in-order stream keeps a flat number of
    units, released once the watermark passes window end plus lateness."""
    plan = plan_windows(
        SCHEMA,
        time="t",
        windows=["sliding:12/4"],
        aggs=aggs("slices"),
        key="k",
        allowed_lateness=LATENESS,
    )
    stream = WindowStream(plan, SCHEMA)
    units, reported, sizes = None, -math.inf, []
    for b in range(200):
        ts = list(range(10 * b, 10 * b + 10))
        table = pa.table({"k": ["a"] * 10, "t": ts, "v": [1] * 10}, schema=SCHEMA)
        step = stream.advance(units, table, reported, 10 * b - DELAY)
        units, reported = step.units, step.reported
        sizes.append(units.num_rows)
    # slices of 4 over the span a late row can still reach: window, lateness, delay, a batch
    assert max(sizes[20:]) <= (12 + LATENESS + DELAY + 10) // 4 + 2
    assert max(sizes[-50:]) == max(sizes[20:70])  # flat, however long the stream
    step = stream.advance(units, None, reported, math.inf)
    assert step.units is None and step.pending == math.inf


ROLLING = {
    "s": ("sum", "v", "range:10"),
    "c": (Concat(), "v", "rows:3"),
    "hi": ("max", "v", "range:unbounded,0"),
}


@pytest.mark.parametrize("seed", range(8))
def test_rolling_frames_behind_a_watermark_equal_batch(seed):
    """RollingStream on rows in any order behind a watermark: every kept row answered once,
    as the batch engine answers it over the rows kept; state flat for bounded frames."""
    from windowagg.engine.rolling.plan import plan_rolling
    from windowagg.engine.rolling.stream import RollingStream

    rng = random.Random(seed)
    schema = pa.schema([("k", pa.string()), ("t", pa.int64()), ("v", pa.int64())])
    plan = plan_rolling(schema, time="t", key="k", aggs=ROLLING, order_by=None)
    bounded = plan_rolling(schema, time="t", key="k", aggs={"s": ROLLING["s"]}, order_by=None)
    times = rng.sample(range(400), 300)  # distinct: rows frames need no tie order
    carry = carry_b = None
    top, kept, got, sizes = None, [], [], []
    for i in range(0, 300, 20):
        wm = -math.inf if top is None else top - DELAY
        rows = [(rng.choice("ab"), t, rng.randrange(9)) for t in times[i : i + 20]]
        top = max([top or 0, *(t for _, t, _ in rows)])
        rows = [r for r in rows if r[1] >= wm]  # Spark drops the rest
        kept += rows
        table = (
            pa.table(dict(zip(["k", "t", "v"], map(list, zip(*rows)))), schema=schema)
            if rows
            else None
        )
        out, carry = RollingStream(plan, schema.names, ordered=False).advance(carry, table, wm)
        got += [r for b in out for r in b.to_pylist()]
        _, carry_b = RollingStream(bounded, schema.names, ordered=False).advance(carry_b, table, wm)
        sizes.append(carry_b.num_rows)
    out, _ = RollingStream(plan, schema.names, ordered=False).advance(carry, None, math.inf)
    got += [r for b in out for r in b.to_pylist()]
    batch = windowagg.rolling_aggregate(
        pa.table(dict(zip(["k", "t", "v"], map(list, zip(*kept)))), schema=schema),
        time="t",
        key="k",
        aggs=ROLLING,
    )
    key = lambda r: (r["k"], r["t"])  # noqa: E731
    assert sorted(got, key=key) == sorted(batch.to_pylist(), key=key)
    assert max(sizes) <= 2 * (10 + DELAY + 40)  # range:10 behind the watermark, two keys
