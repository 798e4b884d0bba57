"""Every stage on every thread: the answers on 1, 2 and 7 threads (more than this machine's
cores) are identical, value for value and type for type, on uniform keys, on one key holding
most of the rows, and on a single key, with ties and nulls (times and values), for rolling
range and rows frames (a non-commutative aggregation among them: ``first`` and
``collect_list`` depend on the rows' order), every window kind and point-in-time frames; every
stage splits its work from one row on here (:func:`tests.threads.few_rows_on_threads`). A key
holding most of the rows is cut across threads: its frames' bounds and its sweep run in
several pieces, each starting within the key."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

import windowagg
from windowagg.engine import sweep as sweep_module
from windowagg.engine.columns import times_of
from windowagg.storage.fifo_state import FifoState

from ..threads import few_rows_on_threads

N = 3_000


def _table(shape: str, seed: int = 3, wide: bool = False) -> pa.Table:
    """``wide``: integer times beyond 2**52 (the engine's int64 path), and NaN among the
    values (a value, not a null, on Arrow tables)."""
    rng = np.random.default_rng(seed)
    if shape == "uniform":
        k = rng.integers(0, 20, N)
    elif shape == "hot":  # one key holds about 80% of the rows
        k = np.where(rng.random(N) < 0.8, 7, rng.integers(0, 50, N))
    else:
        k = np.zeros(N, np.int64)
    t = rng.integers(0, N // 3, N).astype(float)  # many ties
    t_null = rng.random(N) < 0.02
    v = rng.integers(0, 100, N).astype(float)
    v_null = rng.random(N) < 0.05
    if wide:
        v[rng.random(N) < 0.01] = np.nan
    times = pa.array(t.astype(np.int64) + 2**60, mask=t_null) if wide else pa.array(t, mask=t_null)
    return pa.table(
        {
            "k": pa.array(k),
            "t": times,
            "v": pa.array(v, mask=v_null),
            "i": pa.array(rng.integers(-50, 50, N)),
        }
    )


AGGS = {
    "s": ("sum", "v", "range:30"),
    "m": ("max", "v", "range:30"),
    "lo": ("min", "i", "range:-10,5"),
    "a": ("mean", "i", "range:30"),
    "c": ("count", "v", "range:30"),
    "f": ("first", "v", "range:30"),
    "sd": ("stddev", "v", "range:30"),
    "r": ("sum", "v", "rows:-20,0"),
    "rm": ("max", "i", "rows:-5,5"),
    "cl": ("collect_list", "i", "rows:-3,0"),
    "md": ("median", "v", "range:30"),
}
WINDOW_AGGS = {"s": ("sum", "v"), "m": ("max", "v"), "n": ("count", "*"), "f": ("first", "i")}


def _calls(table: pa.Table) -> dict:
    queries = _table("uniform", seed=9).select(["k", "t"])
    out = {"rolling": windowagg.rolling_aggregate(table, time="t", key="k", aggs=AGGS)}
    out["at"] = windowagg.rolling_aggregate(
        table, time="t", key="k", aggs={n: e for n, e in AGGS.items() if n != "cl"}, at=queries
    )
    for spec in ("tumbling:50", "sliding:40/10", "session:3", "count-sliding:20/5"):
        out[spec] = windowagg.window_aggregate(
            table, time="t", key="k", windows=spec, aggs=WINDOW_AGGS
        )
    return out


@pytest.mark.parametrize("wide", [False, True], ids=["doubles", "int64 times, NaN values"])
@pytest.mark.parametrize("shape", ["uniform", "hot", "single"])
def test_the_same_answers_on_any_number_of_threads(shape, wide) -> None:
    table = _table(shape, wide=wide)
    with few_rows_on_threads(1):
        one = _calls(table)
    if wide:  # the times run as int64, and NaN reached the answers as a value
        assert times_of(SimpleNamespace(time="t"), table).dtype == np.int64
        assert any(x != x for x in one["rolling"].column("s").to_pylist() if x is not None)
    for threads in (2, 7):
        with few_rows_on_threads(threads):
            got = _calls(table)
        for name, want in one.items():
            assert got[name].schema == want.schema, (shape, threads, name)
            for column in want.column_names:  # NaN equal to NaN, value for value
                a, b = got[name].column(column).to_pylist(), want.column(column).to_pylist()
                assert repr(a) == repr(b), (shape, threads, name, column)


def test_a_hot_key_is_cut_across_threads(monkeypatch) -> None:
    """The key holding 80% of the rows: its range bounds are found in runs of its rows, and
    the sweep over its frames starts afresh in runs of its rows, the later ones within the
    key, several of them handed to the engine's threads as tasks of their own."""
    table = _table("hot")
    hot = 7
    bounds_calls: list[tuple[str, np.ndarray, np.ndarray]] = []
    real = sweep_module.range_bounds

    def spy(times, seg, home, *rest):
        bounds_calls.append((threading.current_thread().name, seg.copy(), home.copy()))
        return real(times, seg, home, *rest)

    monkeypatch.setattr(sweep_module, "range_bounds", spy)
    sweeps: list[tuple[str, np.ndarray]] = []
    real_frames = FifoState.frames

    def frames(self, code, values, args, times, part, *rest):
        sweeps.append((threading.current_thread().name, np.array(part)))
        return real_frames(self, code, values, args, times, part, *rest)

    monkeypatch.setattr(FifoState, "frames", frames)
    with few_rows_on_threads(4):
        windowagg.rolling_aggregate(
            table, time="t", key="k", aggs={"s": ("stddev", "v", "range:30")}
        )
    k = table.column("k").to_numpy()
    first, rows = int(np.sum(k < hot)), int(np.sum(k == hot))  # the hot key's sorted rows
    assert rows > 0.75 * N

    def within(part: np.ndarray) -> bool:  # a run that starts inside the hot key
        return bool(((part[:-1] > first) & (part[:-1] < first + rows)).any())

    # each call a task of its own: the first of each handing-out on the calling thread, the
    # others on the engine's pool (any of its threads may take them)
    here = threading.current_thread().name
    for names in ([n for n, _, _ in bounds_calls], [n for n, _ in sweeps]):
        assert all(n == here or n.startswith("windowagg") for n in names)
        assert any(n.startswith("windowagg") for n in names) and here in names
    assert all((home[:, 0] <= seg[:-1]).all() for _, seg, home in bounds_calls)
    assert sum(within(seg) for _, seg, _ in bounds_calls) >= 2  # the hot key's bounds
    assert sum(within(part) for _, part in sweeps) >= 2  # its sweep
