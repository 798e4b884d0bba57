"""``windowagg bench slicing``: the Scotty paper's experiments (Section 10.2): throughput against
the number of concurrent windows (in order and with 20% out-of-order tuples), against the
fraction and the delay of out-of-order tuples, and with a session window added.

Baselines, implemented here: per-window **buckets** (every tuple goes into each window that
contains it, as Spark, Flink and the Python libraries do; vectorised per batch like the operator's
fast path) and a **tuple buffer** (keep the tuples, compute each window from them at its
watermark). The workload: a seeded stream of about one tuple per millisecond, a fraction of them
delayed by up to ``delay`` ms, in batches of 1000 with a watermark ``delay`` behind after each;
every approach reports the same windows, so the checksums agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..slicing import Session, Tumbling, WindowOperator
from .core import Row, measure

BATCH = 1000


def stream(n: int, ooo: float, delay: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clock = np.floor(np.cumsum(rng.exponential(1.0, n))).astype(np.int64)
    late = rng.random(n) < ooo
    t = clock - np.where(late, rng.integers(1, delay + 1, n), 0)
    return t, rng.normal(size=n)


def tumbling(k: int) -> list:
    return [Tumbling(1000 + 10 * i) for i in range(k)]  # 1 s to 11 s, few of them fuse


def _watermarks(t: np.ndarray, delay: int) -> list[tuple[int, int, int]]:
    out = []
    top = np.maximum.accumulate(t)
    for a in range(0, len(t), BATCH):
        b = min(len(t), a + BATCH)
        out.append((a, b, int(top[b - 1]) - delay))
    return out


def run_operator(store: str, windows: list, t: np.ndarray, v: np.ndarray, delay: int):
    def run() -> np.ndarray:
        op = WindowOperator("sum", store=store)
        for w in windows:
            op.add_window(w)
        vals: list = []
        for a, b, wm in _watermarks(t, delay):
            op.process_batch(t[a:b], v[a:b])
            vals.extend(r.value for r in op.watermark(wm))
        vals.extend(r.value for r in op.flush())
        return np.array(vals)

    return run


def run_buckets(windows: list, t: np.ndarray, v: np.ndarray, delay: int):
    """One bucket per window instance; each tuple added to every window holding it."""

    def run() -> np.ndarray:
        sizes = [int(w.size) for w in windows]
        buckets: list[dict] = [{} for _ in windows]
        vals: list = []
        for a, b, wm in _watermarks(t, delay):
            tb, vb = t[a:b], v[a:b]
            for size, bk in zip(sizes, buckets):
                starts = tb // size * size
                keys, inv = np.unique(starts, return_inverse=True)
                sums = np.bincount(inv, vb, len(keys))
                for key, s in zip(keys.tolist(), sums.tolist()):
                    bk[key] = bk.get(key, 0.0) + s
            for size, bk in zip(sizes, buckets):
                done = [k for k in bk if k + size <= wm]
                for k in sorted(done):
                    vals.append(bk.pop(k))
        for bk in buckets:
            vals.extend(bk[k] for k in sorted(bk))
        return np.array(vals)

    return run


def run_tuple_buffer(windows: list, t: np.ndarray, v: np.ndarray, delay: int):
    """All tuples kept (sorted at each watermark); windows computed from them."""

    def run() -> np.ndarray:
        sizes = [int(w.size) for w in windows]
        longest = max(sizes)
        bt, bv = np.empty(0, np.int64), np.empty(0)
        done: list[int | None] = [None] * len(sizes)  # the end of the last window reported
        vals: list = []
        marks = _watermarks(t, delay)
        marks[-1] = (marks[-1][0], marks[-1][1], int(t.max()) + longest + 1)  # the flush
        for a, b, wm in marks:
            bt, bv = np.concatenate([bt, t[a:b]]), np.concatenate([bv, v[a:b]])
            order = np.argsort(bt, kind="stable")
            bt, bv = bt[order], bv[order]
            prefix = np.concatenate([[0.0], np.cumsum(bv)])
            for i, size in enumerate(sizes):
                last = done[i]
                first = last if last is not None else int(bt[0]) // size * size
                ends = np.arange(first + size, wm + 1, size) if len(bt) else np.empty(0, np.int64)
                lo = np.searchsorted(bt, np.asarray(ends) - size)
                hi = np.searchsorted(bt, ends)
                keep = hi > lo
                vals.extend((prefix[hi] - prefix[lo])[keep].tolist())
                if len(ends):
                    done[i] = int(ends[-1])
            cut = np.searchsorted(bt, wm - longest)
            bt, bv = bt[cut:], bv[cut:]
        return np.array(vals)

    return run


def slicing(quick: bool, report: Callable[[str], None]) -> list[Row]:
    n = 100_000 if quick else 1_000_000
    reps = 3 if quick else 5
    rows: list[Row] = []

    def case(name: str, run, param: str, x: float, items: int) -> None:
        med, spread, chk = measure(run, reps, warm=1)
        rows.append(Row("slicing", name, "sum", param, x, med, spread, items, chk))
        report(f"  {param}={x:<8g} {name:28s} {items / med / 1e6:8.3f} M tuples/s")

    counts = [1, 10, 100] if quick else [1, 10, 100, 1000]
    for ooo in (0.0, 0.2):
        t, v = stream(n, ooo, 1000)
        for k in counts:
            ws = tumbling(k)
            param = f"windows, {int(ooo * 100)}% ooo"
            for store in ("eager", "lazy"):
                case(f"operator {store}", run_operator(store, ws, t, v, 1000), param, k, n)
            if k <= 100 or not quick:
                case("buckets", run_buckets(ws, t, v, 1000), param, k, n)
            case("tuple buffer", run_tuple_buffer(ws, t, v, 1000), param, k, n)
    for frac in [0.0, 0.2, 0.8] if quick else [0.0, 0.1, 0.2, 0.4, 0.6, 0.8]:
        t, v = stream(n, frac, 1000)
        ws = tumbling(20)
        case("operator eager", run_operator("eager", ws, t, v, 1000), "ooo fraction", frac, n)
        case("buckets", run_buckets(ws, t, v, 1000), "ooo fraction", frac, n)
    for delay in [10, 1000] if quick else [10, 100, 1000, 10_000]:
        t, v = stream(n, 0.2, delay)
        ws = tumbling(20)
        case("operator eager", run_operator("eager", ws, t, v, delay), "ooo delay ms", delay, n)
        case("buckets", run_buckets(ws, t, v, delay), "ooo delay ms", delay, n)
    m = n // 10  # sessions take the per-tuple path
    t, v = stream(m, 0.2, 1000)
    for k in [1, 10] if quick else [1, 10, 100]:
        ws = [*tumbling(k), Session(500)]
        for store in ("eager", "lazy"):
            case(
                f"operator {store} + session",
                run_operator(store, ws, t, v, 1000),
                "windows + session",
                k,
                m,
            )
    return rows
