"""Each way of adding an aggregation, end to end on local tables (CONTRIBUTING.md, "Adding an
aggregation"; Spark's side: tests/spark/test_toys.py): the toys of :mod:`tests.toys`, by their
classes and records alone, on windows, rolling frames and point-in-time queries, against their
definitions, value and type."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

import windowagg
from tests import toys

T0 = dt.datetime(2024, 3, 1, 12, 0, 0)
FRAME_S = 90


def rows(n: int = 300, seed: int = 5) -> list[dict]:
    """Events of four keys at distinct times, in random order, some values null."""
    rng = np.random.default_rng(seed)
    seconds = rng.permutation(n * 3)[:n]
    return [
        {
            "k": int(k),
            "ts": T0 + dt.timedelta(seconds=int(s)),
            "v": None if rng.random() < 0.1 else float(v),
        }
        for k, s, v in zip(rng.integers(0, 4, n), seconds, rng.integers(-50, 50, n))
    ]


def queries(seed: int = 8, n: int = 60) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {"qid": i, "k": int(rng.integers(0, 5)), "ts": T0 + dt.timedelta(seconds=int(s))}
        for i, s in enumerate(rng.integers(-20, 950, n))
    ]


def in_time(events: list[dict], k: int, lo: dt.datetime, hi: dt.datetime) -> list:
    """Key ``k``'s values in ``[lo, hi)``, in time order."""
    return [
        e["v"] for e in sorted(events, key=lambda e: e["ts"]) if e["k"] == k and lo <= e["ts"] < hi
    ]


def windows_brute(events: list[dict], kind: str) -> dict:
    """(key, window start) -> the toy over each key's 60 s tumbling window."""
    starts = {(e["k"], e["ts"].replace(second=0)) for e in events}
    minute = dt.timedelta(seconds=60)
    return {(k, s): toys.brute(in_time(events, k, s, s + minute), kind) for k, s in starts}


def frame_brute(events: list[dict], k: int, t: dt.datetime, kind: str) -> float | None:
    """The toy over key ``k``'s events in ``[t - 90 s, t]``."""
    lo, hi = t - dt.timedelta(seconds=FRAME_S), t + dt.timedelta(microseconds=1)
    return toys.brute(in_time(events, k, lo, hi), kind)


#: the toys: Python only, a member of a compiled family, a SQL name with a strategy of its own
TOYS = ("drift", "average", "spread")
AGGS = {name: (name, "v") for name in TOYS}
FRAMES = {name: (name, "v", f"range:{FRAME_S}s") for name in TOYS}


def test_toys_on_local_windows_rolling_frames_and_at(named, monkeypatch) -> None:
    from windowagg.engine import sweep

    real = sweep._reference

    def reference(values, args, lo, hi, agg):  # the Python reference: never for the member
        assert not isinstance(agg, toys.Average), "the compiled family's member ran in Python"
        return real(values, args, lo, hi, agg)

    monkeypatch.setattr(sweep, "_reference", reference)
    events = rows()
    table = pa.Table.from_pylist(events)
    before = toys.SPREAD.calls
    w = windowagg.window_aggregate(table, time="ts", key="k", windows="tumbling:60s", aggs=AGGS)
    r = windowagg.rolling_aggregate(table, time="ts", key="k", aggs=FRAMES)
    qs = pa.Table.from_pylist(queries())
    a = windowagg.rolling_aggregate(table, time="ts", key="k", aggs=FRAMES, at=qs)
    assert toys.SPREAD.calls - before == 3  # the toy strategy's own evaluator, on each path
    for out in (w, r, a):
        assert {out.schema.field(t).type for t in TOYS} == {pa.float64()}
    for kind in AGGS:
        got = {(x["k"], x["window_start"]): x[kind] for x in w.to_pylist()}
        assert got == pytest.approx(windows_brute(events, kind))
        got = {(x["k"], x["ts"]): x[kind] for x in r.to_pylist()}
        assert got == pytest.approx(
            {(e["k"], e["ts"]): frame_brute(events, e["k"], e["ts"], kind) for e in events}
        )
        got = {x["qid"]: x[kind] for x in a.to_pylist()}
        assert got == pytest.approx(
            {q["qid"]: frame_brute(events, q["k"], q["ts"], kind) for q in queries()}
        )


def test_a_strategy_nobody_serves_stops_before_any_answer(named, monkeypatch) -> None:
    """The record alone decides: with the toy's evaluator gone, no other evaluator answers
    its entries (the sweep does not quietly take them)."""
    from windowagg.engine import evaluate

    monkeypatch.setattr(
        evaluate, "EVALUATORS", [m for m in evaluate.EVALUATORS if m is not toys.SPREAD]
    )
    table = pa.Table.from_pylist(rows(20))
    with pytest.raises(AssertionError, match="0 evaluators serve"):
        windowagg.rolling_aggregate(table, time="ts", key="k", aggs={"s": FRAMES["spread"]})
