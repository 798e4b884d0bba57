"""The operator's contract around the edges: errors, window values, bounded state, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from windowagg import FixedBand, Punctuation, Session, Sliding, Tumbling, WindowOperator


def test_windows_are_values():
    assert Tumbling(10) == Tumbling(10) and hash(Tumbling(10)) == hash(Tumbling(10))
    assert Tumbling(10) != Tumbling(10, measure="count") and Tumbling(10) != Sliding(10, 10)
    assert Sliding(10, 2) == Sliding(10, 2) and Session(3) == Session(3)
    assert FixedBand(0, 5) == FixedBand(0, 5) and Punctuation("|") == Punctuation("|")
    for w in (Tumbling(10), Sliding(10, 2, "count"), Session(3), FixedBand(0, 5)):
        assert pickle.loads(pickle.dumps(w)) == w


BAD_WINDOWS = [
    lambda: Tumbling(0),
    lambda: Sliding(10, -1),
    lambda: Session(float("nan")),
    lambda: Tumbling(2.5, "count"),
    lambda: Tumbling(5, "rows"),
    lambda: Sliding(float("inf"), 1),
]


@pytest.mark.parametrize("bad", BAD_WINDOWS)
def test_bad_windows(bad):
    with pytest.raises(ValueError):
        bad()


def test_bad_operator_input():
    with pytest.raises(ValueError, match="store"):
        WindowOperator("sum", store="fast")
    with pytest.raises(ValueError, match="allowed_lateness"):
        WindowOperator("sum", allowed_lateness=-1)
    with pytest.raises(ValueError, match="unknown aggregation|aggregation"):
        WindowOperator("nope")
    op = WindowOperator("sum")
    with pytest.raises(ValueError, match="add a window"):
        op.process(1, 1)
    with pytest.raises(TypeError, match="not a window"):
        op.add_window("tumbling:10")
    op.add_window(Tumbling(10))
    for t in (float("nan"), "3", None):
        with pytest.raises(TypeError, match="event time"):
            op.process(t, 1)
    with pytest.raises(ValueError, match="finite"):
        op.process(float("inf"), 1)
    op.process(1, 1)
    with pytest.raises(ValueError, match="before the first tuple"):
        op.add_window(Session(4))
    assert [r.value for r in op.flush()] == [1]


def test_a_watermark_never_goes_back():
    op = WindowOperator("sum").add_window(Tumbling(10))
    op.process(1, 1)
    assert len(op.watermark(10)) == 1
    assert op.watermark(5) == []
    op.process(7, 1)  # behind the watermark (10), which did not go back: dropped
    assert op.dropped == 1


@pytest.mark.parametrize("store", ["eager", "lazy"])
def test_state_stays_bounded_over_a_long_stream(store):
    op = WindowOperator("sum", allowed_lateness=50, store=store)
    for w in (Tumbling(100), Sliding(300, 50), Session(7), Sliding(40, 10, "count")):
        op.add_window(w)
    rng = np.random.default_rng(0)
    sizes = []
    for step in range(60):
        base = step * 1000
        for t in base + np.sort(rng.integers(0, 1000, 200)):
            op.process(int(t) - int(rng.integers(0, 30)), 1.0)
        op.watermark(base + 900)
        sizes.append((len(op.slices.slices), len(op.tuples)))
    assert max(s for s, _ in sizes[10:]) <= 2 * max(s for s, _ in sizes[:10]) + 20
    assert max(n for _, n in sizes[10:]) <= 2 * max(n for _, n in sizes[:10]) + 20
    if store == "eager":
        assert len(op.slices.store.tree) == len(op.slices.slices)


def test_pickled_operator_continues_where_it_stopped():
    def make():
        op = WindowOperator("mean", allowed_lateness=5)
        for w in (Tumbling(10), Session(3), Sliding(4, 2, "count")):
            op.add_window(w)
        return op

    events = [(1, 1.0), (2, 5.0), (14, 2.0), (12, 4.0), (30, 1.0), (27, 8.0), (41, 3.0)]
    a, b = make(), make()
    out_a, out_b = [], []
    for i, (t, x) in enumerate(events):
        a.process(t, x)
        b.process(t, x)
        if i % 2:
            out_a += a.watermark(t - 2)
            b = pickle.loads(pickle.dumps(b))
            out_b += b.watermark(t - 2)
    out_a += a.flush()
    out_b += b.flush()
    assert [(r.window, r.start, r.end, r.value, r.update) for r in out_a] == [
        (r.window, r.start, r.end, r.value, r.update) for r in out_b
    ]
    assert out_a


FAST = (Tumbling(10), Sliding(20, 5), Sliding(15, 10))
MIXED = (Tumbling(10), Sliding(20, 5), Session(2), Tumbling(7, "count"))


@pytest.mark.parametrize("agg", ["sum", "count", "mean", "min", "max", "stddev"])
@pytest.mark.parametrize("windows", [FAST, MIXED], ids=["fast", "mixed"])
@pytest.mark.parametrize("dtype", [int, float])
def test_process_batch_equals_a_loop_of_process(agg, windows, dtype):
    rng = np.random.default_rng(3)
    times = (np.cumsum(rng.integers(0, 3, 500)) - rng.integers(0, 30, 500)).astype(dtype)
    values = rng.normal(size=500)
    values[rng.random(500) < 0.1] = np.nan
    a = WindowOperator(agg, allowed_lateness=2)
    b = WindowOperator(agg, allowed_lateness=2)
    for w in windows:
        a.add_window(w)
        b.add_window(w)
    out_a, out_b = [], []
    for k in range(0, 500, 100):
        for t, x in zip(times[k : k + 100], values[k : k + 100]):
            a.process(t.item(), float(x))
        b.process_batch(times[k : k + 100], values[k : k + 100])
        out_a += a.watermark(times[: k + 100].max().item())
        out_b += b.watermark(times[: k + 100].max().item())
    out_a += a.flush()
    out_b += b.flush()
    key = lambda r: (repr(r.window), r.start, r.end, r.update)  # noqa: E731
    assert sorted(map(key, out_a)) == sorted(map(key, out_b))
    va = {key(r): r.value for r in out_a}
    for r in out_b:
        if r.value is None or va[key(r)] is None:
            assert r.value is va[key(r)]
        else:
            assert r.value == pytest.approx(va[key(r)], rel=1e-9, abs=1e-9)
    assert a.dropped == b.dropped > 0


def test_query_fusion_keeps_only_grids_no_other_grid_covers():
    from windowagg.slicing.slicer import StreamSlicer

    def grids(*windows):
        s = StreamSlicer()
        s.add_windows(list(windows))
        return sorted(s.grids)

    assert grids(Tumbling(10), Tumbling(20), Sliding(20, 10)) == [(10, 0)]
    assert grids(Tumbling(10), Tumbling(15)) == [(10, 0), (15, 0)]
    assert grids(Sliding(25, 10)) == [(10, 0), (10, 5)]
    assert grids(Sliding(25, 10), Tumbling(5)) == [(5, 0)]
    assert grids(Sliding(25, 10), Tumbling(4)) == [(4, 0), (10, 0), (10, 5)]
    assert grids(Sliding(25, 10), Tumbling(2)) == [(2, 0), (10, 5)]
