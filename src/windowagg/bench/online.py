"""``windowagg bench online``: the online feature state (:class:`windowagg.OnlineFeatures`)
holding a day of events of 100,000 keys, against what a user runs for the job today: DuckDB
holding the events in a table sorted by key and time and answering each batch of queries with
a range join (:func:`_answer`), and ``rolling_aggregate(at=)`` recomputed over the held events
for each batch. Every side's answers are checked equal.

Five entries, one call: ``sum`` and ``max`` over ``range:1h``, ``count`` and a distinct count
over ``range:1d``, ``mean`` over ``rows:100``.

Workload (seeded): events whose keys are uniform over 100,000 values, or Zipf-distributed
(the share of key r proportional to r^-1.1); arrival times uniform over one day, each event's
time up to a minute before its arrival (the allowed lateness), so events come out of order;
values integers 0-99 as doubles (every side's sums exact). Queries: keys from the same
distribution, at the newest event time.

Figures: the ingest rate (``update`` in batches of 100,000 events, arrival order); queries per
second in batches of 10,000 (on the engine's threads, and on one thread beside them);
single-query latency through the public API (a one-row table per call to ``query``, the first
20 untimed; p50, p99, p99.9 over as many calls as fit in a time budget; the same requests
through ``get``, a key and a time with no table), and those of a second state of
counts, sums, means and a max, answered from its parts' prefix sums and tables of their best
rows, beside the same state reading its events; the bytes the state holds per event and
entry; ``save`` and ``load`` of the whole state to an Arrow IPC file; and the suite's state
with its keys as strings (``card-`` and ten digits, coded as they arrive): its ingest, a batch
and single requests, taking turns with the integer keys' state, checked equal to its answers.
"""

from __future__ import annotations

import gc
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..engine.columns import times_of
from ..engine.memory import engine_memory
from ..engine.parallel import get_threads, set_threads
from ..engine.rolling.at import evaluate_at
from ..online import OnlineFeatures
from ..tables import rolling_aggregate
from .core import Row, checking_now

__all__ = ["ENTRIES", "online_suite", "workload"]

KEYS, ZIPF_S, DAY_US, LATE_US = 100_000, 1.1, 86_400_000_000, 60_000_000
ENTRIES = {
    "s": ("sum", "v", "range:1h"),
    "m": ("max", "v", "range:1h"),
    "c": ("count", "v", "range:1d"),
    "d": ("count_distinct", "v", "range:1d"),
    "a": ("mean", "v", "rows:100"),
}
INGEST_BATCH, QUERY_BATCH = 100_000, 10_000
#: DuckDB answers every batch where its first took at most this many seconds, else only the
#: first (it takes minutes where keys are skewed)
DUCK_REPEAT_S = 10.0
#: a single query's evaluation alone, over the asked key's events: the floor of a request
#: that reads them (one answered from the parts' sums, tables and groups reads none)
FLOOR = "the engine's evaluation alone over the key's events"
#: the state's batches on one thread, beside the engine's threads (where it has several)
ONE_THREAD = "windowagg on 1 thread"


def _keys(rng: np.random.Generator, n: int, zipf: bool) -> np.ndarray:
    if not zipf:
        return rng.integers(0, KEYS, n)
    p = np.arange(1, KEYS + 1, dtype=float) ** -ZIPF_S
    return rng.choice(KEYS, n, p=p / p.sum())


def workload(events: int, zipf: bool, seed: int = 11) -> pa.Table:
    """The events in arrival order: ``k``, ``ts`` (a minute or less before the arrival), ``v``."""
    rng = np.random.default_rng(seed)
    arrival = np.sort(rng.integers(LATE_US, DAY_US + LATE_US, events))
    ts = arrival - rng.integers(0, LATE_US, events)
    return pa.table(
        {
            "k": _keys(rng, events, zipf),
            "ts": pa.array(ts, pa.timestamp("us")),
            "v": rng.integers(0, 100, events).astype(float),
        }
    )


def _queries(n: int, zipf: bool, at: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"k": _keys(rng, n, zipf), "ts": pa.array(np.full(n, at), pa.timestamp("us"))})


def _total(out: pa.Table) -> float:
    """The checksum: every entry's column summed, nulls as zero."""
    return float(
        sum(
            np.nansum(pc.fill_null(out[name], 0).to_numpy(zero_copy_only=False)) for name in ENTRIES
        )
    )


def _state(events: pa.Table) -> tuple[OnlineFeatures, float]:
    """A state fed ``events`` in batches of :data:`INGEST_BATCH`; the seconds it took."""
    state = OnlineFeatures(time="ts", key="k", aggs=ENTRIES, allowed_lateness="1m")
    start = time.perf_counter()
    for lo in range(0, events.num_rows, INGEST_BATCH):
        state.update(events.slice(lo, INGEST_BATCH))
    return state, time.perf_counter() - start


def _duck(held: pa.Table, spill: str) -> Callable[[pa.Table], float] | None:
    """DuckDB holding ``held`` in a table sorted by key and time (its zone maps then skip
    the keys not asked for), each batch answered by one query (:func:`_answer`); the
    checksum, NaN where DuckDB gave up (its spill files, in ``spill``, filled the disk)."""
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET temp_directory = '{spill}'")
    con.register("arrived", held)
    con.execute("CREATE TABLE ev AS SELECT * FROM arrived ORDER BY k, ts")
    con.unregister("arrived")

    def run(batch: pa.Table) -> float:
        con.register("qs", batch.append_column("i", pa.array(np.arange(batch.num_rows))))
        try:
            row = _answer(con)
        except duckdb.IOException:  # out of disk for its spill files
            return math.nan
        finally:
            con.unregister("qs")
        return float(row[0][0])

    return run


def _answer(con) -> list:
    """DuckDB's checksum of the batch ``qs`` over the events ``ev``, in the fastest of the
    forms tried (``docs/benchmarks/online.md``): the asked keys' events first (``IN``), then a
    range join grouped by request for the range frames, and the ``rows:100`` mean from the
    same join ranked by time within each request (``row_number() <= 100``)."""
    return con.execute(
        "WITH e AS (SELECT * FROM ev WHERE k IN (SELECT k FROM qs)), "
        "agg AS (SELECT q.i, sum(e.v) FILTER (WHERE e.ts >= q.ts - INTERVAL 1 HOUR) AS s, "
        "max(e.v) FILTER (WHERE e.ts >= q.ts - INTERVAL 1 HOUR) AS m, count(e.v) AS c, "
        "count(DISTINCT e.v) AS d FROM qs q LEFT JOIN e ON e.k = q.k "
        "AND e.ts >= q.ts - INTERVAL 1 DAY AND e.ts <= q.ts GROUP BY q.i), "
        "last AS (SELECT i, avg(v) AS a FROM (SELECT q.i, e.v, row_number() OVER "
        "(PARTITION BY q.i ORDER BY e.ts DESC) AS rn FROM qs q JOIN e ON e.k = q.k "
        "AND e.ts <= q.ts) WHERE rn <= 100 GROUP BY i) "
        "SELECT coalesce(sum(s), 0) + coalesce(sum(m), 0) + sum(c) + sum(d) "
        "+ coalesce(sum(a), 0) FROM agg LEFT JOIN last USING (i)"
    ).fetchall()


#: each side's timed runs of a batch, one after another after one untimed run of its own
BLOCK_REPS = 2


def _in_blocks(runs: Sequence[Callable[[], float]], first: int) -> list[tuple[float, float]]:
    """Each of ``runs`` (a side's call on one batch, returning its checksum) timed
    :data:`BLOCK_REPS` times in a row after one untimed run of its own, the sides' blocks in
    turn from ``first`` on (so that each side goes first as often over the batches): a
    serving process runs one side, whose memory is its own, where a side timed right after
    another pays for the memory that one left (the recompute's fills the caches: the state's
    batch took about a third longer after it). Each run's median seconds and checksum."""
    reps, warm = (1, False) if checking_now() else (BLOCK_REPS, True)
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(runs)
    for j in range(len(runs)):
        i = (first + j) % len(runs)
        if warm:
            runs[i]()
        secs = []
        for _ in range(reps):
            start = time.perf_counter()
            check = runs[i]()
            secs.append(time.perf_counter() - start)
        out[i] = (float(np.median(secs)), check)
    return out


def _on_one_thread(call: Callable[[], float]) -> float:
    """``call()`` with the engine on one thread (its threads as they were after)."""
    before = get_threads()
    set_threads(1)
    try:
        return call()
    finally:
        set_threads(before)


def _single(
    state: OnlineFeatures, held: pa.Table, zipf: bool, at: int, calls: int, budget_s: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """One-row queries through ``query``, one call at a time, as many as fit in ``budget_s``
    (the first :data:`WARM` run once untimed first); then the same queries by the batch
    engine's evaluation alone (``evaluate_at``, with the state's plan) over the asked key's
    events, found in key and time order with their times before the clock starts: the floor
    of a query that reads them (``query`` finds those events and then runs that evaluation),
    which one answered from the parts' sums, tables and groups does not.
    Returns both sides' times and the answers' checksum (the same on both sides; the sides run
    apart, as a serving process runs one of them)."""
    keys = _queries(calls, zipf, at, seed=3)["k"].to_numpy()
    stamp = pa.array([at], pa.timestamp("us"))
    asked = [pa.table({"k": pa.array([k]), "ts": stamp}) for k in keys]
    took: list[float] = []
    totals = [0.0, 0.0]
    for q in asked[:WARM]:  # a serving process is warm: untimed
        state.query(q)
    deadline = time.perf_counter() + budget_s
    for q in asked:
        start = time.perf_counter()
        got = state.query(q)
        took.append(time.perf_counter() - start)
        totals[0] += _total(got)
        if time.perf_counter() > deadline and len(took) >= 5:
            break
    whole = held.combine_chunks()  # taking from one chunk copies only the rows taken
    held_keys = whole["k"].to_numpy()
    # each key's events in time order, ties in arrival order, as ``query`` hands them over
    order = np.lexsort((whole["ts"].cast(pa.int64()).to_numpy(), held_keys))
    sorted_keys = held_keys[order]
    bounds = np.searchsorted(sorted_keys, np.stack([keys, keys + 1]))
    by_key: dict[int, pa.Table] = {}  # one table per key asked (hot keys are asked often)
    owns = []
    for k, (lo, hi) in zip(keys.tolist(), bounds.T[: len(took)]):
        if k not in by_key:
            by_key[k] = whole.take(pa.array(order[lo:hi]))
        owns.append(by_key[k])
    del whole, held_keys, order, sorted_keys
    gc.collect()
    assert state._held is not None
    plan = state._held.plan
    floor: list[float] = []

    def found(own: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The key's events' times, their segment (one key or none) and the request's."""
        seg = np.array([0, own.num_rows] if own.num_rows else [0], np.int64)
        qseg = np.array([0 if own.num_rows else -1], np.int64)
        return times_of(plan, own), seg, qseg

    for q, own in list(zip(asked, owns))[:WARM]:  # warm, as the requests' side is
        evaluate_at(plan, own, *found(own), q, "ts")
    for q, own in zip(asked, owns):
        given = found(own)
        start = time.perf_counter()
        with engine_memory():  # as query runs it
            alone = evaluate_at(plan, own, *given, q, "ts")
        floor.append(time.perf_counter() - start)
        totals[1] += _total(pa.table(dict(zip([e.name for e in plan.entries], alone))))
    assert math.isclose(totals[0], totals[1], rel_tol=1e-12), totals
    return np.array(took), np.array(floor), totals[0]


#: the side of single requests through ``get`` (a key and a time, no table)
GET = "windowagg, get(key, at)"


def _get(state: OnlineFeatures, zipf: bool, at: int, calls: int) -> tuple[np.ndarray, float]:
    """:func:`_single`'s first ``calls`` requests through ``get``: the key as a Python int and
    the time as a ``datetime``, as a serving process has them (the first :data:`WARM` run
    once untimed first). Returns the times and the answers' checksum (nulls as zero), which
    equals the one-row tables'."""
    keys = _queries(calls, zipf, at, seed=3)["k"].to_pylist()
    when = pa.scalar(at, pa.timestamp("us")).as_py()
    for k in keys[:WARM]:  # a serving process is warm: untimed
        state.get(k, when)
    took, total = [], 0.0
    for k in keys:
        start = time.perf_counter()
        got = state.get(k, when)
        took.append(time.perf_counter() - start)
        total += sum(v for v in got.values() if v is not None)
    return np.array(took), total


#: one-row requests as a pandas and as a Polars frame, each kind this many calls at most
KIND_CALLS = 500
#: each side's first this many single requests run once untimed first, as a serving process
#: is warm (their compiled steps loaded, their conversions run): the first request after
#: the batches loads the kernels of a single request's path, tens of milliseconds
WARM = 20
#: the sides of single requests in another kind of table than Arrow's
PANDAS, POLARS = "windowagg, pandas requests", "windowagg, Polars requests"


def _kinds(
    state: OnlineFeatures, zipf: bool, at: int, calls: int
) -> tuple[dict[str, np.ndarray], float]:
    """The first ``calls`` of :func:`_single`'s one-row requests again, as pandas and as
    Polars frames (made before the clock starts), through ``query``: what the kind of table
    adds to a request (the first :data:`WARM` of them run once untimed first); each
    answer checked equal to the Arrow request's. Returns each kind's times and the answers'
    checksum."""
    import pandas as pd
    import polars as pl

    keys = _queries(calls, zipf, at, seed=3)["k"].to_numpy()
    stamp = pa.array([at], pa.timestamp("us"))
    asked = [pa.table({"k": pa.array([k]), "ts": stamp}) for k in keys]
    expected = [_total(state.query(q)) for q in asked]
    out: dict[str, np.ndarray] = {}
    for name, make, back in (
        (PANDAS, lambda t: t.to_pandas(), lambda f: pa.Table.from_pandas(f)),
        (POLARS, pl.from_arrow, lambda f: f.to_arrow()),
    ):
        frames = [make(q) for q in asked]
        for frame in frames[:WARM]:  # a serving process is warm: untimed
            state.query(frame)
        took = []
        for frame, want in zip(frames, expected):
            start = time.perf_counter()
            got = state.query(frame)
            took.append(time.perf_counter() - start)
            assert isinstance(got, pd.DataFrame | pl.DataFrame)
            assert math.isclose(_total(back(got)), want, rel_tol=1e-12), name
        out[name] = np.array(took)
    return out, float(sum(expected))


#: the suite's state with its keys as strings (card numbers, say), and the integer keys'
#: state taking turns with it
NAMED = "windowagg, string keys"
NAMED_INT = "windowagg, integer keys, in turn with string keys"
#: the two take turns by blocks of this many single requests
NAMED_BLOCK = 100


def _named_keys(table: pa.Table) -> pa.Table:
    """``table`` with its keys as strings: ``card-`` and the number in ten digits."""
    k = table.schema.get_field_index("k")
    digits = pc.utf8_lpad(pc.cast(table["k"], pa.string()), 10, "0")
    return table.set_column(k, "k", pc.binary_join_element_wise("card-", digits, ""))


def _named(
    events: pa.Table,
    state: OnlineFeatures,
    zipf: bool,
    batches: list[pa.Table],
    calls: int,
    report: Callable[[str], None],
) -> tuple[dict[str, np.ndarray], list[Row]]:
    """The suite's state with the keys as strings (:func:`_named_keys`), coded as events
    arrive (:mod:`~windowagg.engine.rolling.key_codes`) so that a request finds its key
    through the index as an integer key's does, beside the integer keys' ``state``: its
    ingest; the batches, by each side in blocks (:func:`_in_blocks`); :func:`_single`'s first
    ``calls`` requests, the two taking turns by blocks of :data:`NAMED_BLOCK` (each side
    first every other block). Every answer checked equal to the integer keys'. Returns the
    single requests' times of each side, and the rows of the ingest and the batches."""
    label = "Zipf keys" if zipf else "uniform keys"
    named, ingest = _state(_named_keys(events))
    sides = {NAMED_INT: state, NAMED: named}
    seconds: dict[str, list[float]] = {NAMED_INT: [], NAMED: []}
    checks: dict[str, float] = {}  # the first batch's checksum
    for j, batch in enumerate(batches):
        asked = {NAMED_INT: batch, NAMED: _named_keys(batch)}
        runs = [lambda s=s, q=asked[name]: _total(s.query(q)) for name, s in sides.items()]
        timed = _in_blocks(runs, j)
        assert timed[0][1] == timed[1][1]  # the same answers
        for name, (secs, check) in zip(sides, timed):
            seconds[name].append(secs)
            checks.setdefault(name, check)
    at = int(pc.max(events["ts"]).cast(pa.int64()).as_py())
    keys = _queries(calls, zipf, at, seed=3)["k"].to_numpy()
    stamp = pa.array([at], pa.timestamp("us"))
    plain = [pa.table({"k": pa.array([k]), "ts": stamp}) for k in keys]
    asked = {NAMED_INT: plain, NAMED: [_named_keys(q) for q in plain]}
    took: dict[str, list[float]] = {NAMED_INT: [], NAMED: []}
    totals: dict[str, float] = {NAMED_INT: 0.0, NAMED: 0.0}
    order = list(sides)
    for b, first in enumerate(range(0, calls, NAMED_BLOCK)):
        for name in order if b % 2 else order[::-1]:  # each side first every other block
            s = sides[name]
            s.query(asked[name][max(first - 1, 0)])  # warm, untimed
            for q in asked[name][first : first + NAMED_BLOCK]:
                start = time.perf_counter()
                got = s.query(q)
                took[name].append(time.perf_counter() - start)
                totals[name] += _total(got)
    assert math.isclose(totals[NAMED], totals[NAMED_INT], rel_tol=1e-12)
    medians = {name: float(np.median(ts)) for name, ts in seconds.items()}
    report(
        f"{label:13s} {NAMED}: ingest {events.num_rows / ingest / 1e6:.2f} M events/s; "
        f"{QUERY_BATCH / medians[NAMED]:,.0f} queries/s in batches, against "
        f"{QUERY_BATCH / medians[NAMED_INT]:,.0f} for the integer keys in turn"
    )
    rows = [Row("online", NAMED, "ingest", "keys", label, ingest, 0, events.num_rows, 0)]
    rows += _batch_rows(label, seconds, checks)
    return {name: np.array(ts) for name, ts in took.items()}, rows


def _batch_rows(label: str, seconds: dict[str, list[float]], checks: dict[str, float]) -> list[Row]:
    """A row per side of its batches' times (the median, and the spread over the batches)
    and the first batch's checksum (``checks``)."""
    rows = []
    for name, ts in seconds.items():
        med = float(np.median(ts))
        spread = (max(ts) - min(ts)) / med
        extra: dict[str, float] = {"batches": len(ts)}
        batch = f"batch of {QUERY_BATCH:,}"
        rows.append(
            Row("online", name, batch, "keys", label, med, spread, QUERY_BATCH, checks[name], extra)
        )
    return rows


#: a state whose entries are all counts, sums, means and maxima over range frames and the
#: suite's mean over ``rows:100``: answered from its parts' prefix sums and tables of their
#: best rows where its keys hold many events (:mod:`~windowagg.engine.rolling.summaries`)
SUMMED_ENTRIES = {
    "s": ("sum", "v", "range:1h"),
    "c": ("count", "v", "range:1d"),
    "a": ("mean", "v", "range:1d"),
    "n": ("count", "*", "range:1h"),
    "m": ("max", "v", "range:1d"),
    "r": ("mean", "v", "rows:100"),
}
#: the sides of that state: answered as it is, and with the sums set aside (its events read)
SUMMED = "counts, sums, means and a max"
SUMMED_OFF = "counts, sums, means and a max, from the events"
#: the two sides of that state take turns by blocks of this many requests
SUMMED_BLOCK = 100


def _summed(
    events: pa.Table, zipf: bool, at: int, calls: int
) -> tuple[dict[str, np.ndarray], float]:
    """Single requests (:func:`_single`'s first ``calls``) to a state of
    :data:`SUMMED_ENTRIES` fed ``events``, taking turns by blocks of :data:`SUMMED_BLOCK`
    requests with the same state with its sums set aside, so that it reads each request's
    events (each side first every other block, each block after one untimed request of its
    side: a serving process runs one of them, and a request that follows the other side's
    reading of a hot key's million events finds the caches full of them): what the sums
    bring; both sides' answers checked equal, and equal to the batch call's. Returns each
    side's times and the answers' checksum."""
    state = OnlineFeatures(time="ts", key="k", aggs=SUMMED_ENTRIES, allowed_lateness="1m")
    for lo in range(0, events.num_rows, INGEST_BATCH):
        state.update(events.slice(lo, INGEST_BATCH))
    held = state._held
    assert held is not None and held.served is not None and held.summed is not None
    keys = _queries(calls, zipf, at, seed=3)["k"].to_numpy()
    stamp = pa.array([at], pa.timestamp("us"))
    asked = [pa.table({"k": pa.array([k]), "ts": stamp}) for k in keys]
    served = held.served  # the entries the parts serve: none, and the events are read

    def total(out: pa.Table) -> float:
        columns = [
            pc.fill_null(out[name], 0).to_numpy(zero_copy_only=False) for name in SUMMED_ENTRIES
        ]
        return float(sum(np.nansum(c) for c in columns))

    took: dict[str, list[float]] = {SUMMED: [], SUMMED_OFF: []}
    checks: dict[str, float] = {SUMMED: 0.0, SUMMED_OFF: 0.0}
    for q in asked[:WARM]:  # warm, untimed
        state.query(q)
    sides = ((SUMMED, served), (SUMMED_OFF, None))
    for b, first in enumerate(range(0, len(asked), SUMMED_BLOCK)):
        block = asked[first : first + SUMMED_BLOCK]
        for name, plan in sides if b % 2 else sides[::-1]:  # each side first every other block
            held.served = plan
            state.query(asked[max(first - 1, 0)])  # warm, untimed
            for q in block:
                start = time.perf_counter()
                got = state.query(q)
                took[name].append(time.perf_counter() - start)
                checks[name] += total(got)
    held.served = served
    both = pa.concat_tables(asked[:200])
    want = rolling_aggregate(held.table(), time="ts", key="k", aggs=SUMMED_ENTRIES, at=both)
    assert math.isclose(checks[SUMMED], checks[SUMMED_OFF], rel_tol=1e-12)
    assert math.isclose(total(state.query(both)), total(want), rel_tol=1e-12)
    return {name: np.array(t) for name, t in took.items()}, checks[SUMMED]


def _case(
    events: int, zipf: bool, reps: int, budget_s: float, report: Callable[[str], None]
) -> list[Row]:
    label = "Zipf keys" if zipf else "uniform keys"
    ev = workload(events, zipf)
    at = int(pc.max(ev["ts"]).cast(pa.int64()).as_py())
    if not checking_now():
        _state(ev.slice(0, 2 * INGEST_BATCH))[0].query(_queries(10, zipf, at, 1))  # compiled
    secs = []
    for _ in range(reps - 1):  # one state alive at a time
        secs.append(_state(ev)[1])
        gc.collect()
    state, took = _state(ev)
    secs = sorted([*secs, took])
    ingest = secs[len(secs) // 2]
    held = state._held.table() if state._held is not None else ev.schema.empty_table()
    rows = [
        Row(
            "online",
            "windowagg",
            "ingest",
            "keys",
            label,
            ingest,
            (secs[-1] - secs[0]) / ingest,
            events,
            float(state.held),
            {"held": state.held},
        )
    ]
    report(f"{label:13s} ingest {events:,} events  {events / ingest / 1e6:6.2f} M events/s")
    batches = [_queries(QUERY_BATCH, zipf, at, seed) for seed in range(100, 100 + 2 * reps - 1)]
    sides: dict[str, Callable[[pa.Table], float]] = {
        "windowagg": lambda b: _total(state.query(b)),
        "recompute rolling_aggregate(at=)": lambda b: _total(
            rolling_aggregate(held, time="ts", key="k", aggs=ENTRIES, at=b)
        ),
    }
    if get_threads() > 1:  # the same batches on one thread: what the threads bring
        sides[ONE_THREAD] = lambda b: _on_one_thread(lambda: _total(state.query(b)))
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    checks: dict[str, list[float]] = {name: [] for name in sides}  # each batch's checksum
    for j, batch in enumerate(batches):
        runs = [lambda f=f, b=batch: f(b) for f in sides.values()]
        for name, (took, check) in zip(sides, _in_blocks(runs, j)):
            seconds[name].append(took)
            checks[name].append(check)
    duck = "DuckDB range join"
    with tempfile.TemporaryDirectory(prefix="windowagg-online-") as spill:
        run = _duck(held, spill)
        if run is not None:
            # every batch once where the first took seconds; the first alone where it took
            # longer (minutes where keys are skewed)
            for batch in batches:
                start = time.perf_counter()
                check = run(batch)
                took = time.perf_counter() - start
                if math.isnan(check):
                    report(f"{label:13s} {duck}: DuckDB gave up (its spill files filled the disk)")
                    break
                seconds.setdefault(duck, []).append(took)
                checks.setdefault(duck, []).append(check)
                if took > DUCK_REPEAT_S:
                    break
            del run  # DuckDB's connection and the memory it holds go before the next side
            gc.collect()
    for name, sums in checks.items():  # every side's answers to the same batches
        mine = checks["windowagg"][: len(sums)]
        assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(sums, mine)), (name, sums)
    first = {name: sums[0] for name, sums in checks.items()}
    # what the state holds: the events and the parts' keys and times
    nbytes = state._held.nbytes if state._held is not None else 0
    per_event = nbytes / max(1, state.held) / len(ENTRIES)
    rows[0].extra["bytes_per_event_entry"] = round(per_event, 1)
    rows += _batch_rows(label, seconds, first)
    for row in rows[1:]:
        times = row.median_s / rows[1].median_s
        report(
            f"{label:13s} {row.case:34s} {row.rate:12,.0f} queries/s  ({times:.3g}x "
            f"windowagg's time per batch, {row.extra['batches']} batches)"
        )
    calls = 20 if checking_now() else 2_000
    single, floor, total = _single(state, held, zipf, at, calls, budget_s)
    got, got_total = _get(state, zipf, at, len(single))
    assert math.isclose(got_total, total, rel_tol=1e-12), (got_total, total)
    calls = min(len(single), KIND_CALLS)
    kinds, kinds_total = _kinds(state, zipf, at, calls)
    summed, summed_total = _summed(ev, zipf, at, calls)
    named, named_rows = _named(ev, state, zipf, batches, calls, report)
    rows += named_rows
    timed = (("windowagg", single), (GET, got), (FLOOR, floor), *kinds.items(), *summed.items())
    timed += tuple(named.items())
    sums_of = {GET: got_total, **dict.fromkeys(kinds, kinds_total)}
    sums_of |= dict.fromkeys(summed, summed_total)
    sums_of |= dict.fromkeys(named, kinds_total)  # the same requests (checked equal)
    for name, per_call in timed:
        p50, p99, p999 = np.percentile(per_call, [50, 99, 99.9])
        report(
            f"{label:13s} single queries, {name} ({len(per_call):,} calls)  "
            f"p50 {p50 * 1e6:,.0f} us"
            f"  p99 {p99 * 1e6:,.0f} us  p99.9 {p999 * 1e6:,.0f} us"
        )
        extra = {"p99_s": p99, "p999_s": p999, "calls": len(per_call)}
        checksum = sums_of.get(name, total)
        rows.append(
            Row("online", name, "single query p50", "keys", label, p50, 0, 1, checksum, extra)
        )
    with tempfile.TemporaryDirectory(prefix="windowagg-online-") as tmp:
        path = os.path.join(tmp, "state.arrow")
        start = time.perf_counter()
        state.save(path)
        saved = time.perf_counter() - start
        start = time.perf_counter()
        loaded = OnlineFeatures.load(path)
        load = time.perf_counter() - start
        assert _total(loaded.query(batches[0])) == _total(state.query(batches[0]))
    report(
        f"{label:13s} save {saved:.3f} s, load {load:.3f} s ({state.held:,} events held, "
        f"{per_event:.1f} B per event and entry with the parts' keys and times)"
    )
    rows.append(Row("online", "windowagg", "save", "keys", label, saved, 0, state.held, 0))
    rows.append(Row("online", "windowagg", "load", "keys", label, load, 0, state.held, 0))
    return rows


def online_suite(quick_run: bool, report: Callable[[str], None]) -> list[Row]:
    """Both key distributions, 10M events held (quick: 200,000)."""
    events, reps, budget = (200_000, 1, 5.0) if quick_run else (10_000_000, 3, 60.0)
    return [row for zipf in (False, True) for row in _case(events, zipf, reps, budget, report)]
