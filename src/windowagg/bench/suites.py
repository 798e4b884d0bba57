"""The benchmark suites, after the papers' experiments.

* ``fifo``: throughput against window size (DABA paper Section 7.1, Fig. 10; SlickDeque paper
  Exp. 1): a window pre-filled with ``size`` elements, then rounds of evict, insert, query,
  for every FIFO algorithm on compiled storage, against numpy's cumsum difference (sum),
  scipy's ``maximum_filter1d`` (max), pandas ``rolling`` and the Python reference.
* ``latency``: per-round latency percentiles at n = 2^14 (DABA paper Fig. 9), one compiled
  call per round: the flips of Two-Stacks show in the tail, DABA's constant bound does not.
* ``sharing``: many window sizes over one stream (SlickDeque paper Exp. 2; FiBA paper Fig.
  14): one shared structure against one aggregator per size.

Every workload is seeded; each case is warmed up, repeated, and reported as median and spread
with a checksum of its outputs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import windowagg

from ..aggregations import aggregation
from ..arrays import _ooo_rows, _rows
from ..fifo import ALGORITHMS, serves
from ..kernels.layout import COUNT, INSERT
from ..kernels.specialize import driver
from ..storage import kernel_for
from ..storage.btree_state import BTreeState
from ..storage.fifo_state import FifoState, capacity_for
from .asof import asof_suite
from .bulk import bulk
from .coldstart import coldstart
from .core import Row, measure, measure_interleaved
from .local import local_suite
from .online import online_suite
from .rolling import rolling_suite
from .slicing import slicing
from .spark import spark_suite
from .streaming import streaming_suite

SEED = 20261121


def stream(n: int, seed: int = SEED) -> np.ndarray:
    """Positive values (geomean needs them) with a little structure."""
    rng = np.random.default_rng(seed)
    return 1.0 + rng.random(n) * 100.0


def _compiled_case(alg: str, agg: str, size: int, values: np.ndarray) -> Callable[[], object]:
    fam, code = kernel_for(aggregation(agg))
    prefill = stream(size, SEED + 1)
    ranges = (size,) if alg == "slickdeque" else ()
    out = np.empty((len(values), 1))
    zeros = np.zeros(max(len(values), size))

    def run() -> np.ndarray:
        st = FifoState(alg, fam, capacity_for(size + 1), ranges)
        st.run(INSERT, values=prefill, args=zeros[:size], code=code)
        st.run(COUNT, values=values, args=zeros[: len(values)], size=size, out=out, code=code)
        return out

    return run


def _fiba_case(agg: str, size: int, values: np.ndarray) -> Callable[[], object]:
    """FiBA (min_arity 4) on the same workload: a count window is a time window over the
    positions; pre-filled with ``size`` elements like the FIFO cases."""

    fam, code = kernel_for(aggregation(agg))
    prefill = stream(size, SEED + 1)
    pre_t = np.arange(size, dtype=float)
    times = size + np.arange(len(values), dtype=float)
    out = np.empty((len(values), 1))
    pre_out = np.empty((size, 1))

    def run() -> np.ndarray:
        st = BTreeState(fam, 4, nodes=2 * size // 3 + 1024)
        st.slide(code, prefill, pre_t, pre_t, np.array([np.inf]), pre_out)
        st.slide(code, values, times, times, np.array([float(size)]), out)
        return out

    return run


def _baselines(agg: str, size: int, stream_: np.ndarray) -> dict[str, Callable[[], object]]:
    """The vectorised baselines over the same work: the prefill, then the stream (the answers
    for the stream are the last ``len(stream_)`` outputs)."""
    out: dict[str, Callable[[], object]] = {}
    m = len(stream_)
    values = np.concatenate([stream(size, SEED + 1), stream_])
    if agg == "sum":

        def cumsum_diff() -> np.ndarray:
            c = np.cumsum(values)
            r = c[size:].copy()
            r -= c[:-size]
            return r[-m:]

        out["numpy cumsum-diff"] = cumsum_diff
    if agg == "max":
        from scipy.ndimage import maximum_filter1d

        origin = (size - 1) // 2 if size > 1 else 0

        def maxfilter() -> np.ndarray:
            return maximum_filter1d(values, size, origin=origin, mode="nearest")[-m:]

        out["scipy maximum_filter1d"] = maxfilter
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas comes with the spark extra
        return out
    s = pd.Series(values)
    if agg in ("sum", "max"):
        out["pandas rolling"] = lambda: getattr(s.rolling(size, min_periods=1), agg)().to_numpy()[
            -m:
        ]
    elif agg == "geomean":
        logs = pd.Series(np.log(values))
        out["pandas rolling"] = lambda: np.exp(
            logs.rolling(size, min_periods=1).mean().to_numpy()[-m:]
        )
    return out


def fifo(quick: bool, report: Callable[[str], None]) -> list[Row]:
    sizes = (
        [1, 64, 4096]
        if quick
        else [1, 4, 16, 64, 256, 1024, 4096, 2**14, 2**16, 2**18, 2**20, 2**22]
    )
    m = 2**18 if quick else 2**22
    reps = 3 if quick else 5
    values = stream(m)
    rows: list[Row] = []
    for agg in ("sum", "max", "geomean"):
        for size in sizes:
            for alg in ALGORITHMS:  # every record (the order of windowagg.FIFO_ALGORITHMS)
                if not serves(alg, agg) or (alg == "recalc" and size > 256):
                    continue  # recalc's O(size) queries make large windows pointless
                n = m if alg not in ("recalc", "flatfat", "bint") else m // 8
                med, spread, chk = measure(_compiled_case(alg, agg, size, values[:n]), reps)
                rows.append(Row("fifo", alg, agg, "window size", size, med, spread, n, chk))
                report(f"  {agg:8s} size {size:>8d} {alg:24s} {n / med / 1e6:9.1f} M/s")
            n = m // 8
            med, spread, chk = measure(_fiba_case(agg, size, values[:n]), reps)
            rows.append(Row("fifo", "fiba", agg, "window size", size, med, spread, n, chk))
            report(f"  {agg:8s} size {size:>8d} {'fiba':24s} {n / med / 1e6:9.1f} M/s")
            for name, fn in _baselines(agg, size, values).items():
                med, spread, chk = measure(fn, reps)
                rows.append(Row("fifo", name, agg, "window size", size, med, spread, m, chk))
                report(f"  {agg:8s} size {size:>8d} {name:24s} {m / med / 1e6:9.1f} M/s")
            if size <= 4096:
                rows.append(_python_reference(agg, size, 2**12 if quick else 2**14, reps))
                report(
                    f"  {agg:8s} size {size:>8d} {'python daba_lite':24s} "
                    f"{rows[-1].rate / 1e6:9.3f} M/s"
                )
    return rows


def _python_reference(agg: str, size: int, n: int, reps: int) -> Row:
    values = stream(n)
    prefill = stream(size, SEED + 1)

    def run() -> list[float]:
        w = windowagg.fifo("daba_lite", agg, backend="python")
        for x in prefill:
            w.insert(x)
        out = []
        for x in values:
            w.evict()
            w.insert(x)
            out.append(w.query())
        return out

    med, spread, chk = measure(run, max(1, reps // 2), warm=0)
    return Row("fifo", "python daba_lite", agg, "window size", size, med, spread, n, chk)


def latency(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """One compiled call per round of evict, insert and query; percentiles of its time."""

    n = 2**14
    rounds = 2**13 if quick else 2**16
    rows: list[Row] = []
    for agg in ("sum", "geomean"):
        fam, code = kernel_for(aggregation(agg))
        for alg in (
            "two_stacks",
            "two_stacks_lite",
            "daba",
            "daba_lite",
            "flatfit",
            "soe",
            "slickdeque",
        ):
            if not serves(alg, agg):
                continue
            st = FifoState(alg, fam, capacity_for(n + 1), (n,) if alg == "slickdeque" else ())
            st.run(INSERT, values=stream(n), args=np.zeros(n), code=code)
            run = driver(st.name, fam).fifo_run
            values = stream(rounds + 1000, SEED + 2)
            one = np.zeros(1)
            out = np.empty((1, 1))
            empty = np.empty(0)
            tbuf = np.empty(1)
            lat = np.empty(rounds)
            total = 0.0
            for i in range(rounds + 1000):  # the first 1000 rounds warm up
                v = values[i : i + 1]
                t0 = time.perf_counter_ns()
                run(
                    code,
                    st.buf,
                    st.aux,
                    st.iaux,
                    st.ptr,
                    st.tmp,
                    tbuf,
                    COUNT,
                    v,
                    one,
                    empty,
                    n,
                    0.0,
                    out,
                )
                t1 = time.perf_counter_ns()
                if i >= 1000:
                    lat[i - 1000] = (t1 - t0) / 1e9
                    total += out[0, 0]
            p50, p99, p999, p9999 = np.percentile(lat, [50, 99, 99.9, 99.99])
            slow = int((lat > 10 * p50).sum())  # rounds over 10x the median: flips and noise
            tail = {
                "p99_us": p99 * 1e6,
                "p999_us": p999 * 1e6,
                "p9999_us": p9999 * 1e6,
                "max_us": lat.max() * 1e6,
                "rounds_over_10x_median": slow,
            }
            row = Row("latency", alg, agg, "window size", n, float(p50), 0.0, 1, total, tail)
            rows.append(row)
            report(
                f"  {agg:8s} {alg:16s} p50 {p50 * 1e6:6.2f}  p99 {p99 * 1e6:6.2f}  p99.9 "
                f"{p999 * 1e6:6.2f}  p99.99 {p9999 * 1e6:7.2f}  max {lat.max() * 1e6:8.2f} us"
                f"  ({slow} rounds > 10x p50)"
            )
    return rows


def sharing(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """k window sizes (geometric, up to 4096) answered per element."""

    m = 2**16 if quick else 2**20
    reps = 3 if quick else 5
    values = stream(m)
    counts = [1, 4, 16] if quick else [1, 2, 4, 8, 16, 32, 64]
    rows: list[Row] = []
    for agg in ("sum", "max"):
        for k in counts:
            sizes = sorted({max(1, round(4096 ** ((j + 1) / k))) for j in range(k)})
            for alg in ("slickdeque", "flatfit", "bint", "flatfat"):
                n = m if alg in ("slickdeque", "flatfit") else m // 4

                def shared(alg=alg, n=n, sizes=sizes, agg=agg) -> np.ndarray:
                    return windowagg.sliding_aggregate(
                        values[:n], size=sizes, agg=agg, algorithm=alg
                    )

                med, spread, chk = measure(shared, reps)
                rows.append(
                    Row("sharing", alg, agg, "window sizes", len(sizes), med, spread, n, chk)
                )
                report(f"  {agg:4s} k={len(sizes):3d} {alg:26s} {n / med / 1e6:8.2f} M elem/s")

            n = m // 8

            def fiba_ranges(n=n, sizes=sizes, agg=agg) -> np.ndarray:
                return windowagg.sliding_aggregate(
                    values[:n], size=sizes, agg=agg, algorithm="fiba"
                )

            med, spread, chk = measure(fiba_ranges, reps)
            rows.append(
                Row(
                    "sharing",
                    "fiba range queries",
                    agg,
                    "window sizes",
                    len(sizes),
                    med,
                    spread,
                    n,
                    chk,
                )
            )
            report(
                f"  {agg:4s} k={len(sizes):3d} {'fiba range queries':26s} "
                f"{n / med / 1e6:8.2f} M elem/s"
            )

            def separate(sizes=sizes, agg=agg) -> list[np.ndarray]:
                return [
                    windowagg.sliding_aggregate(values, size=s, agg=agg, algorithm="daba_lite")
                    for s in sizes
                ]

            med, spread, chk = measure(separate, reps)
            rows.append(
                Row(
                    "sharing",
                    "one daba_lite per size",
                    agg,
                    "window sizes",
                    len(sizes),
                    med,
                    spread,
                    m,
                    chk,
                )
            )
            report(
                f"  {agg:4s} k={len(sizes):3d} {'one daba_lite per size':26s} "
                f"{m / med / 1e6:8.2f} M elem/s"
            )
    return rows


SUITES: dict[str, Callable[[bool, Callable[[str], None]], list[Row]]] = {
    "fifo": fifo,
    "latency": latency,
    "sharing": sharing,
}


def ooo(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """Throughput against out-of-order distance d (FiBA paper Section 5.1.1, Fig. 11): a
    window of n entries pre-filled with d high timestamps; each round evicts the oldest entry
    and inserts a low timestamp that lands exactly d entries from the young end."""

    n = 2**16 if quick else 2**20
    rounds = 2**16 if quick else 2**20
    ds = (
        [0, 16, 1024, 2**14]
        if quick
        else [0, 1, 4, 16, 64, 256, 1024, 2**12, 2**14, 2**16, 2**18, 2**20]
    )
    reps = 3 if quick else 5
    high = 1e15
    rows: list[Row] = []
    for d in ds:
        d = min(d, n - 1)
        prefill_t = np.concatenate([np.arange(n - d, dtype=float), high + np.arange(d)])
        evict_to = np.arange(rounds, dtype=float)  # the oldest low timestamp
        times = n - d + np.arange(rounds, dtype=float)
        values = stream(rounds)
        cases = (
            ("fiba min_arity 2", 2, False),
            ("fiba min_arity 4", 4, False),
            ("fiba min_arity 8", 8, False),
            ("bclassic", 4, True),
        )
        for case, mu, classic in cases:

            def run(
                mu=mu,
                classic=classic,
                prefill_t=prefill_t,
                evict_to=evict_to,
                times=times,
                values=values,
            ) -> np.ndarray:
                st = BTreeState("sum", mu, classic, nodes=2 * n // (mu - 1) + 1024)
                pre = np.empty((n, 1))
                st.slide(0, stream(n, SEED + 1), prefill_t, prefill_t, np.array([np.inf]), pre)
                out = np.empty(rounds)
                st.rounds(0, evict_to, times, values, out)
                return out

            med, spread, chk = measure(run, reps, warm=1 if d == ds[0] else 0)
            rows.append(
                Row("ooo", case, "sum", "ooo distance d", max(d, 0.5), med, spread, n + rounds, chk)
            )
            report(f"  d={d:>8d} {case:18s} {(n + rounds) / med / 1e6:8.2f} M elem/s")
    return rows + ooo_arrays(quick, report)


def ooo_arrays(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """``sliding_aggregate`` over out-of-order times (each time displaced by up to d, a window
    of 1000 time units): the compiled FiBA against the Python reference's FiBA, the path
    out-of-order input took before, side by side."""

    n = 2**13 if quick else 2**16
    rng = np.random.default_rng(SEED)
    rows: list[Row] = []
    for agg in ("sum", "max"):
        for d in (16, 1024):
            t = np.arange(n, dtype=float) + rng.integers(0, d, n)
            v = stream(n)
            a = windowagg.aggregation(agg)

            def reference(a=a, v=v, t=t) -> np.ndarray:
                return _rows(_ooo_rows("fiba", a, v, t, [1000.0]), 1, a)

            runs: list[Callable[[], object]] = [
                partial(windowagg.sliding_aggregate, v, size=1000, times=t, agg=agg),
                reference,
            ]
            res = measure_interleaved(runs, 1 if quick else 3, warm=1)
            for case, (med, spread, chk) in zip(("sliding_aggregate fiba", "python fiba"), res):
                rows.append(Row("ooo", case, agg, "ooo distance d", d, med, spread, n, chk))
            ratio = res[1][0] / res[0][0]
            report(
                f"  sliding_aggregate {agg} d={d}: compiled {n / res[0][0] / 1e6:.2f} M/s, "
                f"reference {n / res[1][0] / 1e6:.3f} M/s ({ratio:.0f}x)"
            )
    return rows


TAXI = "nyc-tlc-green-2021q1"


def _shared_data() -> str | None:
    here = Path(__file__).resolve()
    for base in [Path(os.environ.get("WINDOWAGG_SHARED_DATA", "")), *here.parents]:
        cand = base / TAXI if base.name == "data" else base / "shared" / "data" / TAXI
        if cand.is_dir():
            return str(cand)
    return None


def realdata(quick: bool, report: Callable[[str], None]) -> list[Row]:
    """The NYC green taxi trips (Jan-Mar 2021) in file order, time windows from one hour to
    32 days over the pickup time (FiBA paper Section 5.2, there with Citi Bike): sum of fares
    and geometric mean of trip durations, FiBA against the classic tree."""

    path = _shared_data()
    if path is None:
        report(f"  skipped: ../shared/data/{TAXI} is not here")
        return []

    tables = [
        pq.read_table(
            f"{path}/green_tripdata_2021-0{m}.parquet",
            columns=["lpep_pickup_datetime", "lpep_dropoff_datetime", "fare_amount"],
        )
        for m in (1, 2, 3)
    ]
    pick = np.concatenate([t.column(0).to_numpy().astype("datetime64[ns]") for t in tables])
    drop = np.concatenate([t.column(1).to_numpy().astype("datetime64[ns]") for t in tables])
    fare = np.concatenate([t.column(2).to_numpy(zero_copy_only=False) for t in tables])
    minutes = 1.0 + np.maximum(0, (drop - pick) / np.timedelta64(1, "m"))
    disorder = float(np.mean(pick[1:] < np.maximum.accumulate(pick)[:-1]))
    report(f"  {len(pick):,} trips, {disorder:.0%} arrive after a later pickup")
    hours = [1, 24] if quick else [1, 6, 24, 96, 768]
    reps = 3 if quick else 5
    rows: list[Row] = []
    for agg, vals in (("sum", fare), ("geomean", minutes)):
        for h in hours:
            for alg in ("fiba", "bclassic"):

                def run(alg=alg, h=h, vals=vals, agg=agg) -> np.ndarray:
                    return windowagg.sliding_aggregate(
                        vals, size=np.timedelta64(h, "h"), agg=agg, times=pick, algorithm=alg
                    )

                med, spread, chk = measure(run, reps)
                rows.append(
                    Row("realdata", alg, agg, "window hours", h, med, spread, len(pick), chk)
                )
                report(f"  {agg:8s} {h:4d} h {alg:9s} {len(pick) / med / 1e6:7.2f} M trips/s")
    return rows


SUITES["ooo"] = ooo
SUITES["realdata"] = realdata


def _slicing(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return slicing(quick, report)


SUITES["slicing"] = _slicing


def _spark(quick: bool, report: Callable[[str], None], events: int | None = None) -> list[Row]:
    return spark_suite(quick, report, events)


SUITES["spark"] = _spark


def _bulk(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return bulk(quick, report)


SUITES["bulk"] = _bulk


def _coldstart(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return coldstart(quick, report)


SUITES["coldstart"] = _coldstart


def _rolling(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return rolling_suite(quick, report)


SUITES["rolling"] = _rolling


def _local(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return local_suite(quick, report)


SUITES["local"] = _local


def _streaming(quick: bool, report: Callable[[str], None]) -> list[Row]:
    return streaming_suite(quick, report)


SUITES["streaming"] = _streaming

SUITES["asof"] = asof_suite
SUITES["online"] = online_suite
