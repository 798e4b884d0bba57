"""Drive a WindowOperator through a trace and check it against the oracle."""

from __future__ import annotations

import math
import pickle
import random
from typing import Any

from windowagg import Session, WindowOperator
from windowagg.aggregations import resolve

from .oracle import final_values, kept_events


def random_trace(seed: int, n: int = 160, late_max: int = 30, wm_every: int = 9) -> list:
    """Out-of-order events with bursts of equal times, silent gaps far longer than any
    window, very late events, and periodic watermarks behind the clock."""
    rng = random.Random(seed)
    ops: list = []
    clock = 0
    for i in range(n):
        r = rng.random()
        if r < 0.04:
            clock += rng.randint(100, 400)  # a silent gap
        elif r < 0.4:
            clock += 0  # a burst of equal times
        else:
            clock += rng.randint(1, 4)
        delay = 0
        r = rng.random() if late_max else 1.0
        if r < 0.25:
            delay = rng.randint(1, 6)
        elif r < 0.32:
            delay = rng.randint(7, late_max)  # very late
        ops.append(("ev", clock - delay, i))
        if i % wm_every == wm_every - 1:
            ops.append(("wm", clock - rng.randint(0, 5)))
    return ops


def run(
    ops: list,
    windows: list,
    agg: Any,
    lateness: Any = 0,
    store: str = "eager",
    roundtrip: bool = False,
) -> tuple[WindowOperator, list]:
    """Run ops; check at each watermark that no time window ends after it. Returns the
    operator and every result in order. ``roundtrip``: pickle the operator at every watermark."""
    op = WindowOperator(agg, allowed_lateness=lateness, store=store)
    for w in windows:
        op.add_window(w)
    results = []
    wm = -math.inf
    for o in ops:
        if o[0] == "wm":
            wm = max(wm, o[1])
            got = op.watermark(o[1])
            for r in got:
                if r.window.measure == "time":
                    assert r.end <= wm, f"{r} reported before the watermark {wm} passed its end"
            results.extend(got)
            if roundtrip:
                op = pickle.loads(pickle.dumps(op))
        else:
            op.process(o[1], o[2])
    results.extend(op.flush())
    return op, results


def live(results: list, w: Any) -> dict:
    """The last reported value of each window of w, superseded session bounds removed."""
    out: dict = {}
    dynamic = w.context_aware
    for r in results:
        if r.window != w:
            continue
        key = (r.start, r.end)
        if r.update:
            if dynamic:
                for a, b in list(out):
                    if a < r.end and b > r.start and (a, b) != key:
                        del out[(a, b)]
            assert key in out or dynamic, f"update of a window never reported: {r}"
        else:
            assert key not in out, f"window reported twice without update: {r}"
            if dynamic:
                assert not any(a < r.end and b > r.start for a, b in out), (
                    f"new window overlaps a reported one without update: {r}"
                )
        out[key] = r.value
    return out


def check(
    ops: list,
    windows: list,
    agg: Any,
    lateness: Any = 0,
    store: str = "eager",
    roundtrip: bool = False,
) -> WindowOperator:
    op, results = run(ops, windows, agg, lateness, store, roundtrip)
    events, dropped = kept_events(ops, lateness)
    assert op.dropped == dropped
    a = resolve(agg)
    for w in windows:
        want = final_values(w, events, a)
        got = live(results, w)
        assert got == want, f"{w}: {_diff(got, want)}"
    return op


def _diff(got: dict, want: dict) -> str:
    lines = []
    for k in sorted(set(got) | set(want), key=lambda k: (k[1], k[0])):
        if got.get(k, "-") != want.get(k, "-"):
            lines.append(f"{k}: got {got.get(k, '-')!r} want {want.get(k, '-')!r}")
    return "; ".join(lines[:6])


SESSIONS = (Session(4), Session(9))
