"""Per-row frames over key segments against a brute force: every row's frame found by its
definition (SQL's RANGE and ROWS BETWEEN) and folded from scratch; compiled aggregations and
the Python reference (a non-commutative user aggregation, median) alike."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import windowagg
from tests.aggs import Concat
from tests.oracles import direct
from windowagg.engine.sweep import FrameBounds, rolling
from windowagg.frames import FrameError, frame

FRAMES = [
    "range:5",
    "range:-3,+2",
    "range:unbounded,0",
    "range:0,unbounded",
    "range:+2,+5",
    "range:-4,-1",
    "rows:5",
    "rows:-2,+3",
    "rows:+1,+3",
    "rows:unbounded,0",
    "rows:-1,unbounded",
    "range:unbounded,unbounded",
]
AGGS = ["sum", "max", "min", "mean", "count", "first", "last", "argmax", "stddev", "median"]


def table(seed: int, n: int = 300, keys: int = 5):
    rng = np.random.default_rng(seed)
    key = np.sort(rng.integers(0, keys, n))
    t = np.empty(n)
    for k in range(keys):  # sorted times per key, with ties
        m = key == k
        t[m] = np.sort(rng.integers(0, 40, m.sum()))
    v = rng.normal(size=n).round(3)
    v[rng.random(n) < 0.1] = np.nan
    seg = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True]).astype(np.int64)
    return v, t, seg


def brute(v, t, seg, f, agg):
    out = []
    for k in range(len(seg) - 1):
        s, e = seg[k], seg[k + 1]
        for i in range(s, e):
            rows = []
            for j in range(s, e):
                if f.kind == "range":
                    ok = (f.start is None or t[j] >= t[i] + f.start) and (
                        f.end is None or t[j] <= t[i] + f.end
                    )
                else:
                    ok = (f.start is None or j >= i + f.start) and (f.end is None or j <= i + f.end)
                if ok:
                    rows.append(j)
            window = [
                (float(t[j]), float(v[j])) if agg.name == "argmax" else float(v[j]) for j in rows
            ]
            out.append(direct(agg, window))
    return out


def same(got, want) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    if isinstance(want, str):
        return got == want
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("spec", FRAMES)
@pytest.mark.parametrize("name", AGGS)
def test_rolling_equals_the_brute_force(spec, name) -> None:
    v, t, seg = table(zlib.crc32(f"{spec} {name}".encode()) % 1000)
    f = frame(spec)
    agg = windowagg.aggregation(name)
    got = rolling(v, FrameBounds(t, seg, f), agg, t)
    want = brute(v, t, seg, f, agg)
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if not same(g, w)]
    assert not bad, (bad[:5], [got[i] for i in bad[:5]], [want[i] for i in bad[:5]])


@pytest.mark.parametrize("spec", ["range:-3,+2", "rows:-2,+1", "range:+1,+4"])
def test_a_non_commutative_aggregation_in_row_order(spec) -> None:
    v, t, seg = table(7, n=120)
    f = frame(spec)
    got = rolling(v, FrameBounds(t, seg, f), Concat(), t)
    want = brute(v, t, seg, f, Concat())
    assert list(got) == want


def test_frames_longer_than_the_first_state_grow_it() -> None:
    n = 5000
    t = np.arange(n, dtype=float)
    v = np.ones(n)
    seg = np.array([0, n], np.int64)
    got = rolling(v, FrameBounds(t, seg, frame("rows:3000")), "sum")
    assert got[-1] == 3000 and got[10] == 11
    got = rolling(v, FrameBounds(t, seg, frame("range:unbounded,unbounded")), "count")
    assert (got == n).all()


def test_the_compiled_kernel_ran(monkeypatch) -> None:
    """Not only equal numbers: the reference path is not taken for a compiled aggregation."""
    from windowagg.engine import sweep as module

    def refuse(*a, **k):
        raise AssertionError("the reference ran")

    monkeypatch.setattr(module, "_reference", refuse)
    v, t, seg = table(3)
    assert np.isfinite(rolling(v, FrameBounds(t, seg, frame("range:5")), "max")).any()


@pytest.mark.parametrize(
    ("text", "kind", "start", "end"),
    [
        ("range:1h", "range", -3600e6, 0),
        ("range:-30m,+30m", "range", -1800e6, 1800e6),
        ("rows:100", "rows", -99, 0),
        ("rows:unbounded,0", "rows", None, 0),
        ("range:0,unbounded", "range", 0, None),
        ("ROWS:-2,+3", "rows", -2, 3),
    ],
)
def test_frame_vocabulary(text, kind, start, end) -> None:
    f = frame(text, 1e6)
    assert (f.kind, f.start, f.end) == (kind, start, end)
    assert f.looks_forward == (end is None or end > 0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("range:+5,-5", "start lies after its end"),
        ("rows:1.5", "whole number"),
        ("window:5", "range or rows"),
        ("range:+1h", "one-bound shorthand"),
        ("range:1h", "has a unit, but the time column holds plain numbers"),
        ("rows:0", "longer than 0"),
        ("range", "range:<start>,<end>"),
        ("rows:1,2,3", "<start>,<end>"),
    ],
)
def test_bad_frames(text, message) -> None:
    with pytest.raises(FrameError, match=message):
        frame(text)


@pytest.mark.parametrize("spec", [f for f in FRAMES if f.startswith("range")])
def test_the_sweep_finds_the_same_frames_as_the_bounds_kernel_and_a_binary_search(spec) -> None:
    """The fused sweep (first aggregation over a frame) and the separate bounds kernel agree
    with a binary search per key; a second aggregation reads the bounds the first found."""
    v, t, seg = table(11, n=400)
    t[seg[1] : seg[1] + 3] = -np.inf  # null times of one key: sorted first, peers of each other
    f = frame(spec)
    swept = FrameBounds(t, seg, f)
    first = rolling(v, swept, "sum")
    lo, hi = FrameBounds(t, seg, f).bounds()
    want_lo, want_hi = np.empty_like(lo), np.empty_like(hi)
    for k in range(len(seg) - 1):
        s, e = seg[k], seg[k + 1]
        tk = t[s:e]
        want_lo[s:e] = s if f.start is None else s + np.searchsorted(tk, tk + f.start, "left")
        want_hi[s:e] = e if f.end is None else s + np.searchsorted(tk, tk + f.end, "right")
    want_hi = np.maximum(want_lo, want_hi)
    assert np.array_equal(swept.lo, want_lo) and np.array_equal(swept.hi, want_hi)
    assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi)
    again = rolling(v, swept, "sum")  # given bounds
    assert np.array_equal(first, again, equal_nan=True)
