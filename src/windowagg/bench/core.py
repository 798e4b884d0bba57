"""Timing, results, and output (table, CSV, plot) shared by the suites."""

from __future__ import annotations

import csv
import gc
import math
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

R = TypeVar("R")


@dataclass
class Row:
    suite: str
    case: str  # the series: an algorithm or a baseline
    agg: str
    param: str  # the x axis name
    x: float | str  # the x value (a name where the x axis names its points)
    median_s: float
    spread: float  # (max - min) / median over the repetitions
    items: int  # elements (or operations) per run
    checksum: float
    extra: dict[str, float] = field(default_factory=dict)  # more figures, as CSV columns

    @property
    def rate(self) -> float:
        """Elements (or operations) per second."""
        return self.items / self.median_s if self.median_s > 0 else math.inf


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def peak_rss(run: Callable[[], R]) -> tuple[R, float]:
    """``run()``'s result and the most resident memory this process held while it ran
    (sampled every millisecond) over what it held before, in MiB."""
    base, peak, done = _rss(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.001)

    thread = threading.Thread(target=sample)
    thread.start()
    try:
        out = run()
    finally:
        done.set()
        thread.join()
    return out, (max(peak[0], _rss()) - base) / 2**20


def checksum(out: npt.ArrayLike) -> float:
    """Fold every result into one number, so no work can be skipped unnoticed."""
    arr = np.asarray(out, dtype=np.float64)
    return float(np.nansum(arr) + np.isnan(arr).sum())


_checking = False  # set by checking(): each run once, for its answer


@contextmanager
def checking() -> Iterator[None]:
    """Run a suite to compare its sides' answers, not to time them (the suites' tests): inside,
    :func:`measure` and :func:`measure_interleaved` run each side once, without warm-up or
    settling, and the medians they report are those single runs."""
    global _checking
    before, _checking = _checking, True
    try:
        yield
    finally:
        _checking = before


def checking_now() -> bool:
    """Whether the suite runs inside :func:`checking` (a suite skips its own warm-ups then)."""
    return _checking


def warm_up(*runs: Callable[[], object], rounds: int = 1) -> None:
    """Run ``runs`` in turn, ``rounds`` times, untimed (the JVM's, the workers' or the kernels'
    warm-up before a timing); nothing inside :func:`checking`, where answers, not times, are
    wanted."""
    if not _checking:
        for _ in range(rounds):
            for run in runs:
                run()


def measure(run: Callable[[], Any], reps: int, warm: int = 1) -> tuple[float, float, float]:
    """Median seconds, relative spread and the checksum of ``run()`` over ``reps`` runs."""
    return measure_interleaved([run], reps, warm)[0]


def measure_interleaved(
    runs: Sequence[Callable[[], Any]],  # each returns what checksum folds
    reps: int,
    warm: int = 1,
    settle: float = 0.0,
    self_timed: bool = False,
) -> list[tuple[float, float, float]]:
    """``measure`` for several runs side by side: each repetition times every run once, in
    turn, so that a machine whose speed drifts during the benchmark slows them alike and
    their ratio stays meaningful; the order rotates from one repetition to the next, so that
    no run always follows the same one (a Spark query that follows a heavy one can pay for
    the garbage that one left). ``settle``: seconds to wait, after a garbage collection,
    before each timed run (libraries whose worker threads spin for a while after their work,
    as Polars' and DuckDB's do, would otherwise slow whatever runs next). ``self_timed``: each
    run returns ``(seconds, result)``, timed where it ran (in another process)."""
    if _checking:
        reps, warm, settle = 1, 0, 0.0
    results: list[Any] = [None] * len(runs)
    for _ in range(warm):
        results = [run()[1] if self_timed else run() for run in runs]
    times: list[list[float]] = [[] for _ in runs]
    for rep in range(reps):
        for j in range(len(runs)):
            i = (j + rep) % len(runs)
            if settle:
                gc.collect()
                time.sleep(settle)
            start = time.perf_counter()
            results[i] = runs[i]()
            took = time.perf_counter() - start
            if self_timed:
                took, results[i] = results[i]
            times[i].append(took)
    out = []
    for ts, result in zip(times, results):
        med = statistics.median(ts)
        out.append((med, (max(ts) - min(ts)) / med if med > 0 else 0.0, checksum(result)))
    return out


def table(rows: list[Row], rate_label: str = "M elem/s") -> str:
    head = f"{'case':22s} {'agg':8s} {'param':>10s} {'median ms':>10s} {'spread':>7s} "
    head += f"{rate_label:>10s} {'checksum':>14s}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.case:22s} {r.agg:8s} {_fmt_x(r):>10s} {r.median_s * 1e3:10.2f} "
            f"{r.spread:7.1%} {r.rate / 1e6:10.2f} {r.checksum:14.6g}"
        )
    return "\n".join(lines)


def _fmt_x(r: Row) -> str:
    x = r.x
    if isinstance(x, str):
        return x
    if x >= 1 and float(x).is_integer() and x >= 1024 and (int(x) & (int(x) - 1)) == 0:
        return f"2^{int(x).bit_length() - 1}"
    return f"{x:g}"


def write_csv(rows: list[Row], path: str) -> None:
    keys = sorted({k for r in rows for k in r.extra})
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "suite",
                "case",
                "agg",
                "param",
                "x",
                "median_s",
                "spread",
                "items",
                "rate_per_s",
                "checksum",
                *keys,
            ]
        )
        for r in rows:
            w.writerow(
                [
                    r.suite,
                    r.case,
                    r.agg,
                    r.param,
                    r.x,
                    r.median_s,
                    r.spread,
                    r.items,
                    r.rate,
                    r.checksum,
                    *(r.extra.get(k, "") for k in keys),
                ]
            )


def plot(rows: list[Row], path: str, title: str, ylabel: str = "million elements / s") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    aggs = sorted({r.agg for r in rows})
    fig, axes = plt.subplots(1, len(aggs), figsize=(6 * len(aggs), 4.5), squeeze=False)
    for ax, agg in zip(axes[0], aggs):
        for case in dict.fromkeys(r.case for r in rows if r.agg == agg):
            pts = sorted((r.x, r.rate / 1e6) for r in rows if r.agg == agg and r.case == case)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=case)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{title}: {agg}")
        ax.set_xlabel(rows[0].param)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
