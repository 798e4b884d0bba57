"""``windowagg bench local --threads 1,2,...``: every case at each thread count, beside Polars at
the same count, and where windowagg's time goes (a stage profile at one thread and at the
largest count).

Each library runs in a process of its own per thread count (:class:`~.local.Side`), its pool
set as its users set it, before import: ``WINDOWAGG_THREADS`` for windowagg and
``POLARS_MAX_THREADS`` for Polars. Polars' side is its fastest form per case, each run on both
of its engines (in-memory and streaming) and the faster one kept: ``rolling_*_by`` over the
key for rolling frames; ``group_by_dynamic`` after a sort by time for tumbling and sliding
windows, and for tumbling windows also a ``group_by`` of the key and the truncated time (the
faster form kept); for point-in-time frames the events and the queries in one frame (a query's value
null), ``rolling_*_by`` over the key, the queries' rows kept; for sessions a gap flag, its
running sum over the key and a ``group_by``. Checksums of both sides must agree. Workloads:
:func:`~.local.events` (100 keys) and :func:`~.local.skewed` (Zipf keys, bursts, ties, 1%
nulls), 10 million rows (``--quick``: 200,000); point-in-time: a tenth as many queries as
events, drawn the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine import parallel
from ..engine.stages import profile
from ..kernels.passes import nan_where_null
from ..tables import rolling_aggregate, window_aggregate
from .core import Row, measure_interleaved
from .local import _BUILD, _TABLE, ENGINES, Side, _optional, dynamic, events

__all__ = ["CASES", "scaling_suite"]

#: case -> (workload: 100 keys or "skewed", what it runs)
CASES: dict[str, tuple[int | str, str]] = {
    "rolling sum range:600s": (100, "rolling sum 600s"),
    "rolling max range:600s": (100, "rolling max 600s"),
    "rolling mean range:600s": (100, "rolling mean 600s"),
    "rolling sum range:30s, Zipf keys": ("skewed", "rolling sum 30s"),
    "tumbling 60s sum": (100, "tumbling 60s"),
    "sliding 60s/10s sum": (100, "sliding 60s/10s"),
    "sliding 10s/1s sum, Zipf keys": ("skewed", "sliding 10s/1s"),
    "point-in-time sum, count (1h)": (100, "at 3600s"),
    "session 2s sum": (100, "session 2s"),
    "floor: ten passes over the values": (100, "floor"),
}


def _queries(table: Any) -> Any:
    """The point-in-time queries: a tenth as many rows as the events, keys and times drawn
    as the events' are (another seed), ``k`` and ``ts`` only."""
    return events(max(1, table.num_rows // 10), 100, seed=5).select(["k", "ts"])


def _ours(table: Any, what: str) -> Callable[[], Any]:
    kind, *rest = what.split()

    def total(col: Any) -> float:
        return float(np.nansum(col.to_numpy(zero_copy_only=False)))

    if kind == "floor":
        return _floor(table)

    if kind == "rolling":
        agg, size = rest
        aggs = {"o": (agg, "v", f"range:{size}")}
        return lambda: total(rolling_aggregate(table, time="ts", key="k", aggs=aggs).column("o"))
    if kind == "at":
        frame = f"range:{rest[0]}"
        aggs = {"s": ("sum", "v", frame), "c": ("count", "v", frame)}
        queries = _queries(table)

        def at() -> Any:
            out = rolling_aggregate(table, time="ts", key="k", aggs=aggs, at=queries)
            return np.array([total(out.column("s")), total(out.column("c"))])

        return at
    spec = {"tumbling": "tumbling:{}", "sliding": "sliding:{}", "session": "session:{}"}[kind]
    windows = spec.format(rest[0])

    def window() -> Any:
        out = window_aggregate(table, time="ts", key="k", windows=windows, aggs={"s": ("sum", "v")})
        return np.array([out.num_rows, total(out.column("s"))])

    return window


def _floor(table: Any) -> Callable[[], Any]:
    """The machine's ceiling for passes bound by memory: a compiled pass that reads the values
    and their validity and writes a column (the engine's own ``nan_where_null``), in chunks on
    the pool as every stage runs, ten times over (one pass takes milliseconds, too short to
    time alone). No case can scale better than its passes do."""
    col = table.column("v").combine_chunks()
    x = col.to_numpy(zero_copy_only=False)
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    out = np.empty_like(x)

    def floor() -> Any:
        for _ in range(10):
            parallel.by_chunks(lambda a, b: nan_where_null(x[a:b], valid[a:b], out[a:b]), len(x))
        return np.array([float(np.nansum(out[:1000]))])

    return floor


def _polars(table: Any, what: str, engine: str, truncate: bool = False) -> Callable[[], Any] | None:
    """Polars' form of case ``what`` on ``engine``; ``truncate``: a tumbling window as a
    ``group_by`` of the key and the time truncated to the window (None for other cases)."""
    pl = _optional("polars")
    kind, *rest = what.split()
    if pl is None or kind == "floor" or (truncate and kind != "tumbling"):
        return None
    lazy = pl.from_arrow(table).lazy()
    v = pl.col("v")
    if kind == "rolling":
        agg, size = rest
        expr = getattr(v, f"rolling_{agg}_by")("ts", window_size=size, closed="both").over("k")
        query = lazy.select(expr.alias("o"))
        return lambda: np.array([query.collect(engine=engine)["o"].sum()])
    if kind == "at":
        queries = pl.from_arrow(_queries(table)).lazy()
        both = pl.concat(
            [
                lazy.with_columns(q=pl.lit(False)),
                queries.with_columns(v=pl.lit(None, pl.Float64), q=pl.lit(True)),
            ],
            how="diagonal",
        )
        size = rest[0]
        s = v.rolling_sum_by("ts", window_size=size, closed="both").over("k")
        c = (
            v.is_not_null()
            .cast(pl.UInt32)
            .rolling_sum_by("ts", window_size=size, closed="both")
            .over("k")
        )
        query = both.select(s.alias("s"), c.alias("c"), "q").filter("q")

        def at() -> Any:
            out = query.collect(engine=engine)
            return np.array([out["s"].sum(), out["c"].sum()])

        return at
    if kind == "session":
        gap = pl.duration(seconds=int(rest[0].removesuffix("s")))
        new = (pl.col("ts").diff().over("k") > gap).fill_null(True)
        query = (
            lazy.sort("k", "ts")
            .with_columns(g=new.cum_sum().over("k"))
            .group_by("k", "g")
            .agg(v.sum().alias("s"))
        )
    elif truncate:
        w = pl.col("ts").dt.truncate(rest[0]).alias("w")
        query = lazy.group_by("k", w).agg(v.sum().alias("s"))
    else:
        size, slide = (rest[0].split("/") * 2)[:2]
        every, period = int(slide.removesuffix("s")), int(size.removesuffix("s"))
        query = dynamic(lazy, period, every).agg(v.sum().alias("s"))

    def window() -> Any:
        out = query.collect(engine=engine)
        return np.array([out.height, out["s"].sum()])

    return window


def scaling_cases(table: Any, what: str) -> list:
    """windowagg's side of case ``what`` and Polars' on each engine (where installed)."""
    cases = [("windowagg", _ours(table, what))]
    for truncate in (False, True):
        for engine in ENGINES:
            run = _polars(table, what, engine, truncate)
            if run is not None:
                form = " group_by(truncate)" if truncate else ""
                cases.append((f"Polars{form} ({engine})", run))
    return cases


_BUILD["scaling"] = scaling_cases


def _profile(what: str) -> dict:
    """In windowagg's side process: the stage profile of case ``what`` (after a warm run)."""
    run = dict(scaling_cases(_TABLE["events"], what))["windowagg"]
    run()
    _, stages = profile(run)
    return {name: (s.seconds, s.parallel) for name, s in stages.items()}


def scaling_suite(
    counts: list[int],
    quick: bool,
    report: Callable[[str], None],
    events_n: int | None = None,
    cases: list[str] | None = None,
    reps: int = 5,
) -> list[Row]:
    """Every case of :data:`CASES` (or ``cases``) at each thread count in ``counts``: windowagg
    and Polars' faster engine side by side, medians of ``reps`` after a warm-up,
    then windowagg's stage profile at the smallest and the largest count."""
    n = events_n or (200_000 if quick else 10_000_000)
    chosen = list(CASES) if cases is None else cases
    rows: list[Row] = []
    profiles: dict[tuple[str, int], dict] = {}
    for t in counts:
        env_ours = {"WINDOWAGG_THREADS": str(t)}
        env_polars = {"POLARS_MAX_THREADS": str(t), "WINDOWAGG_THREADS": str(t)}
        for load in dict.fromkeys(CASES[c][0] for c in chosen):
            sides = {"windowagg": Side(n, load, env_ours), "Polars": Side(n, load, env_polars)}
            try:
                for case in chosen:
                    if CASES[case][0] != load:
                        continue
                    what = CASES[case][1]
                    got = _case(sides, what, case, t, n, reps)
                    line = f"  {t:2d} threads  {case:34s} windowagg {got[0].median_s:7.3f} s"
                    if len(got) > 1:
                        line += (
                            f"  {got[1].case} {got[1].median_s:7.3f} s  "
                            f"ratio {got[1].median_s / got[0].median_s:5.2f}x"
                            f"  checksums {got[0].checksum:.10g} / {got[1].checksum:.10g}"
                        )
                    report(line)
                    rows.extend(got)
                    if t in (min(counts), max(counts)) and what != "floor":
                        got_profile = sides["windowagg"].pool.apply(_profile, (what,))
                        profiles[(case, t)] = got_profile
                        _report_profile(case, t, got_profile, report)
            finally:
                for side in sides.values():
                    side.close()
    _report_scaling(rows, counts, report)
    _report_profiles(profiles, counts, report)
    return rows


def _case(sides: dict, what: str, case: str, t: int, n: int, reps: int) -> list[Row]:
    """windowagg and Polars' faster engine on case ``what``: each Polars engine run once (its
    warm-up), the faster kept; then both sides in turn, ``reps`` times, after a warm-up."""
    names = [name for name, _ in scaling_cases(events(1000, 100), what)]

    def run(name: str) -> Callable[[], tuple[float, Any]]:
        side = sides[name.split()[0]]
        return lambda: side.run("scaling", (what,), name)

    polars = [name for name in names if name.startswith("Polars")]
    if polars:
        polars = [min(polars, key=lambda name: run(name)()[0])]
    names = names[:1] + polars
    stats = measure_interleaved([run(name) for name in names], reps, settle=0.3, self_timed=True)
    return [
        Row("scaling", name, case, "threads", t, med, spread, n, chk)
        for name, (med, spread, chk) in zip(names, stats)
    ]


def _report_profile(case: str, t: int, stages: dict, report: Callable[[str], None]) -> None:
    total = sum(s for s, _ in stages.values()) or 1.0
    report(f"    stages at {t} thread(s), ms (share of the call; where it ran):")
    for name, (sec, par) in stages.items():
        where = "several threads" if par else "one thread"
        report(f"      {name:16s} {sec * 1000:8.1f}  {sec / total:6.1%}  {where}")


def _report_scaling(rows: list[Row], counts: list[int], report: Callable[[str], None]) -> None:
    one = {r.agg: r.median_s for r in rows if r.case == "windowagg" and r.x == min(counts)}
    report(f"\nwindowagg at {min(counts)} thread(s) over windowagg at each count (speed-up):")
    for case in dict.fromkeys(r.agg for r in rows):
        ours = {r.x: r.median_s for r in rows if r.agg == case and r.case == "windowagg"}
        cells = "  ".join(f"{t}: {one[case] / ours[t]:5.2f}x" for t in counts if t in ours)
        report(f"  {case:34s} {cells}")


def _report_profiles(
    profiles: dict[tuple[str, int], dict], counts: list[int], report: Callable[[str], None]
) -> None:
    lo, hi = min(counts), max(counts)
    for case in dict.fromkeys(c for c, _ in profiles):
        a, b = profiles.get((case, lo), {}), profiles.get((case, hi), {})
        total_a = sum(s for s, _ in a.values()) or 1.0
        report(f"\nstages of {case} (ms at {lo} / {hi} threads; share of the {lo}-thread time):")
        for name in dict.fromkeys([*a, *b]):
            sa, pa_ = a.get(name, (0.0, False))
            sb, pb = b.get(name, (0.0, False))
            where = "several threads" if pa_ or pb else "one thread"
            report(f"  {name:16s} {sa * 1000:8.1f} {sb * 1000:8.1f}  {sa / total_a:6.1%}  {where}")
