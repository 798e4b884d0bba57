"""The benchmark suites run, and every algorithm answering the same seeded workload folds its
answers into the same checksum (so the timed work is the real work)."""

from __future__ import annotations

import math
from collections import defaultdict

import pytest

import windowagg
from windowagg.bench.core import checking, plot, table, write_csv
from windowagg.bench.suites import SUITES


@pytest.fixture
def answers_only():
    """The suites run here for their answers, not their times: each side once, no warm-up
    (:func:`windowagg.bench.core.checking`)."""
    with checking():
        yield


@pytest.mark.parametrize("suite", ["fifo", "sharing", "slicing", "bulk"])
def test_checksums_agree_across_algorithms(suite: str, tmp_path, answers_only: None) -> None:
    lines: list[str] = []
    rows = SUITES[suite](True, lines.append)
    assert rows and len(lines) == len(rows)
    groups: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if r.case.startswith("python"):
            continue  # a shorter stream (the Python reference is slow)
        groups[(r.agg, r.param, r.x, r.items)].append(r)
    compared = 0
    for same_work in groups.values():
        ref = same_work[0].checksum
        for r in same_work[1:]:
            assert math.isclose(r.checksum, ref, rel_tol=1e-6), (r.case, r.agg, r.x)
            compared += 1
    assert compared >= min(10, len(rows) // 2)
    assert all(r.median_s > 0 and r.rate > 0 for r in rows)
    write_csv(rows, str(tmp_path / "out.csv"))
    assert (tmp_path / "out.csv").read_text().count("\n") == len(rows) + 1
    plot(rows, str(tmp_path / "out.png"), suite)
    assert (tmp_path / "out.png").stat().st_size > 10_000
    assert "median ms" in table(rows)


def test_measure_interleaved_alternates_the_runs() -> None:
    from windowagg.bench.core import checksum, measure_interleaved

    calls: list[str] = []

    def run(name: str, value: float):
        def go():
            calls.append(name)
            return [value]

        return go

    stats = measure_interleaved([run("a", 1.0), run("b", 2.0), run("c", 3.0)], reps=3, warm=1)
    # the warm-up, then three turns, each starting one run later
    assert calls == list("abcabcbcacab")
    assert [s[2] for s in stats] == [checksum([1.0]), checksum([2.0]), checksum([3.0])]
    assert all(s[0] > 0 and s[1] >= 0 for s in stats)


@pytest.mark.spark
def test_rolling_suite_sides_agree(answers_only: None) -> None:
    """windowagg bench rolling: every side of a case (windowagg, Spark's default and segment
    tree) folds the same answers into the same checksum."""
    pytest.importorskip("pyspark")
    from windowagg.bench.rolling import SKEW, spark_cases

    lines: list[str] = []
    rows = spark_cases(True, lines.append)
    groups: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if r.param != SKEW and r.agg != "floor":  # the floor computes no answer
            groups[(r.agg, r.param)].append(r)
    floor = [r for r in rows if r.agg == "floor"]
    assert [r.case for r in floor] == [
        "windowagg rolling_aggregate",
        "shuffle, sort, Arrow round trip only",
    ]
    assert len(groups) == 4 * 2 + 1  # Spark frames, six entries
    for same_work in groups.values():
        assert len(same_work) >= 2 and same_work[0].case.startswith("windowagg")
        assert all(r.checksum == same_work[0].checksum for r in same_work), same_work
    peaks = [r for r in rows if r.param == SKEW]
    assert len(peaks) == 3  # the workers were sampled
    assert all(r.extra["peak_worker_rss_mib"] > 0 and r.x == r.items for r in peaks)


@pytest.mark.spark
def test_spark_suite_sides_agree(answers_only: None) -> None:
    """windowagg bench spark: windowagg and the built-in query of every case (sliding windows,
    sessions, medians, five aggregations in one call) give the same checksum."""
    pytest.importorskip("pyspark")
    from windowagg.bench.spark import FLOOR, SKEW, STAGES, spark_suite

    rows = spark_suite(True, lambda line: None, events=100_000)
    assert all(r.items == 100_000 for r in rows)
    groups: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if r.case != FLOOR and r.param not in (SKEW, STAGES):  # the floor answers others
            groups[(r.agg, r.param, r.x)].append(r)
    stages = [r for r in rows if r.param == STAGES]
    assert len(stages) == 4 and stages[0].case == "windowagg window_aggregate"
    assert len({r.checksum for r in stages[1:]}) == 1  # every stage carries the same partials
    floors = [r for r in rows if r.case == FLOOR]
    assert stages[1].checksum == floors[0].checksum  # the events' total, as the tumbling sums
    assert [r.param for r in floors] == ["sliding length s"] * 3 + ["windows"]
    peaks = [r for r in rows if r.param == SKEW]
    assert len(peaks) == 2  # the workers were sampled
    assert all(r.extra["peak_worker_rss_mib"] > 0 and r.x == r.items for r in peaks)
    assert {k[:2] for k in groups} == {
        ("sum", "sliding length s"),
        ("sum", "windows"),
        ("sum", "session gap s"),
        ("median", "median, sliding s"),
        ("collect", "collect, sliding s"),
        ("sum", "count window"),
        ("sum", "count window, slide 50"),
        ("median", "count window"),
        ("sum", "aggregations"),
        ("holistic", "aggregations"),
        ("sum", "one event per key and second, sliding s"),
    }
    for same_work in groups.values():
        assert len(same_work) >= 2 and same_work[0].case.startswith("windowagg")
        assert all(r.checksum == same_work[0].checksum for r in same_work), same_work


def test_local_suite_sides_agree(answers_only: None) -> None:
    """windowagg bench local: windowagg, Polars, DuckDB and pandas give the same windows and
    totals, or the same per-row results, in every case of both workloads (the skewed one with
    ties and nulls); windowagg's peak memory is sampled."""
    from windowagg.bench.local import KEPT, local_suite

    rows = local_suite(True, lambda line: None)
    kept = {(r.agg, r.param, r.x) for r in rows if r.case == KEPT}  # beside every uniform case
    assert kept == {(r.agg, r.param, r.x) for r in rows if r.x != "skewed" and r.agg != "peak MiB"}
    groups: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if r.agg != "peak MiB":
            groups[(r.agg, r.param, r.x)].append(r)
    assert {k[:2] for k in groups} == {
        ("sum", "sliding"),
        ("sum", "tumbling"),
        ("sum", "session"),
        ("five", "sliding"),
        *[(a, f) for a in ("sum", "max") for f in ("range:10s", "rows:1000")],
        *[(a, "range:600s") for a in ("sum", "max", "mean", "five")],
        ("max", "sliding"),
        *[(a, "range:30s") for a in ("sum", "max", "mean", "five")],  # the skewed workload
    }
    assert {k[2] for k in groups} == {100, 100_000, "skewed"}
    for same_work in groups.values():
        assert len(same_work) >= 2 and same_work[0].case.startswith("windowagg")
        first = same_work[0].checksum  # exact, but for a mean's last bits (sums of quotients)
        assert all(math.isclose(r.checksum, first, rel_tol=1e-12) for r in same_work), same_work
    floors = {k for k, same_work in groups.items() if any("floor" in r.case for r in same_work)}
    assert floors == {k for k in groups if k[0] == "sum" and k[1].startswith("range:")}
    peaks = [r for r in rows if r.agg == "peak MiB"]
    assert len(peaks) == 4 and all(r.checksum > 0 for r in peaks)


@pytest.mark.spark
def test_streaming_suite_sides_agree(answers_only: None) -> None:
    """windowagg bench streaming: windowagg's streaming query and the built-in one give the
    same windows (the suite raises otherwise) in one micro-batch and in several, and under
    RocksDB's state store; 4 windows in one query (20 when timed) equal as many built-in
    queries; every row carries its state size."""
    pytest.importorskip("pyspark")
    from windowagg.bench.streaming import streaming_suite

    rows = streaming_suite(True, lambda line: None)
    by = {(r.case, r.param): r for r in rows}
    for per in ("one micro-batch", "100k events per micro-batch"):
        ours, theirs = by[("windowagg", per)], by[("built-in", per)]
        assert ours.checksum == theirs.checksum and ours.extra["windows"] > 0
        assert ours.extra["windows"] == theirs.extra["windows"]
        assert ours.extra["state/key"] < theirs.extra["state/key"]  # open slices, not windows
    assert by[("windowagg", "4 windows")].checksum == by[("built-in", "4 windows")].checksum
    rocks = "settings: 2 partitions, RocksDB"  # local[2]: as many partitions as cores
    assert by[("windowagg", rocks)].checksum == by[("built-in", rocks)].checksum > 0
    # every row but those of the last ten seconds (100 keys), which wait for the watermark
    assert 40_000 - 1_500 < by[("windowagg", "rolling range:1h")].items < 40_000 - 500


def test_coldstart_times_each_call_cold_cached_and_warm(monkeypatch) -> None:
    """windowagg bench coldstart: one row per start of each call, in the order cold (an empty
    kernel cache), cached (a fresh process over the filled cache), warm (the second call)."""
    from windowagg.bench import coldstart

    name = "fifo('daba', 'sum')"
    monkeypatch.setattr(coldstart, "CASES", {name: coldstart.CASES[name]})
    rows = coldstart.coldstart(True, lambda line: None)
    assert [(r.case, r.x) for r in rows] == [(name, k) for k in ("cold", "cached", "warm")]
    cold, cached, warm = (r.median_s for r in rows)
    assert cold > cached > warm > 0  # compiled, then loaded from the cache, then in memory


@pytest.mark.parametrize("frame", ["range:1h", "range:1d"])
def test_asof_suite_sides_agree(frame: str, answers_only: None) -> None:
    """windowagg bench asof: windowagg at the queries, windowagg on the union, DuckDB's union +
    window and its range join give every query the same sum and count; the checksum is not
    empty."""
    from windowagg.bench.asof import cases, tables

    ev, qs = tables(20_000, 2_000)
    runs = cases(ev, qs, frame)
    assert len(runs) == 4
    sums = {name: run() for name, run in runs.items()}
    assert len(set(sums.values())) == 1 and sums["windowagg"] > 2_000, sums


@pytest.mark.parametrize("zipf", [False, True])
def test_online_suite_sides_agree(zipf: bool, answers_only: None, monkeypatch) -> None:
    """windowagg bench online: the online state, the recompute and DuckDB's range join answer
    every batch alike, single queries equal the floor's (the suite asserts both), and every
    figure is reported; DuckDB answers every batch, or the first alone where that took longer
    than its limit (here none, with Zipf keys)."""
    pytest.importorskip("duckdb")
    from windowagg.bench import online

    if zipf:
        monkeypatch.setattr(online, "DUCK_REPEAT_S", 0.0)
    lines: list[str] = []
    rows = online._case(20_000, zipf, 2, 0.5, lines.append)
    batch = [r for r in rows if r.agg.startswith("batch")]
    one = [online.ONE_THREAD] if windowagg.get_threads() > 1 else []  # on several threads
    assert [r.case for r in batch] == [
        "windowagg",
        "recompute rolling_aggregate(at=)",
        *one,
        "DuckDB range join",
        online.NAMED_INT,
        online.NAMED,
    ]
    if one:  # the same answers on one thread as on the engine's threads
        assert batch[2].checksum == batch[0].checksum
    assert batch[0].checksum > 10_000 and batch[0].extra == {"batches": 3}
    assert batch[-3].extra == {"batches": 1 if zipf else 3}
    # the keys as strings and as integers, in turn: the same answers to the same batches
    assert batch[-1].checksum == batch[-2].checksum == batch[0].checksum
    assert batch[-1].extra == batch[-2].extra == {"batches": 3}
    assert [r.agg for r in rows if not r.agg.startswith("batch")] == [
        "ingest",
        "ingest",
        *["single query p50"] * 9,
        "save",
        "load",
    ]
    singles = [r for r in rows if r.agg == "single query p50"]
    assert [r.case for r in singles] == [
        "windowagg",
        online.GET,
        online.FLOOR,
        online.PANDAS,
        online.POLARS,
        online.SUMMED,
        online.SUMMED_OFF,
        online.NAMED_INT,
        online.NAMED,
    ]
    assert singles[0].checksum == singles[2].checksum  # both sides answered alike
    assert math.isclose(singles[1].checksum, singles[0].checksum, rel_tol=1e-12)  # get()
    assert singles[1].extra["calls"] == singles[0].extra["calls"]  # the same requests
    assert singles[7].checksum == singles[8].checksum == singles[3].checksum  # as strings
    assert singles[3].checksum == singles[4].checksum > 0  # the same requests in each kind
    assert singles[5].checksum == singles[6].checksum > 0  # from the sums and the events
    assert all(r.extra["calls"] >= 5 for r in singles)
    assert singles[3].extra["calls"] == min(singles[0].extra["calls"], online.KIND_CALLS)
    assert rows[0].checksum == 20_000 and rows[0].extra["bytes_per_event_entry"] > 0
    assert len(lines) == len(rows) - 3  # save and load on one line, the strings' three rows too
    assert any("p99.9" in line for line in lines)


def test_online_suite_summed_sides_take_their_paths(answers_only: None, monkeypatch) -> None:
    """The second state's two sides: every request of the one answered from the parts, and
    none of the other's, reaches the parts' sums and tables; the other's all read their
    events (a side that only set the sums' columns aside took the parts anyway)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from windowagg.bench import online
    from windowagg.engine.rolling import online as held_module

    paths: list[str] = []
    parts, events = held_module.Held._from_summaries, held_module.Held._evaluated

    def from_parts(self, *args):
        paths.append("parts")
        return parts(self, *args)

    def from_events(self, *args):
        paths.append("events")
        return events(self, *args)

    monkeypatch.setattr(held_module.Held, "_from_summaries", from_parts)
    monkeypatch.setattr(held_module.Held, "_evaluated", from_events)
    ev = online.workload(20_000, True)
    at = int(pc.max(ev["ts"]).cast(pa.int64()).as_py())
    calls = 2 * online.SUMMED_BLOCK
    took, _ = online._summed(ev, True, at, calls)
    assert [len(t) for t in took.values()] == [calls, calls]
    # each side's requests, and one untimed before each block: half from the parts, half
    # from the events, the warm-up's and the batch call's check from the parts
    assert paths.count("events") == calls + 2 and paths.count("parts") > calls


@pytest.mark.spark
def test_asof_suite_spark_sides_agree(tmp_path, answers_only: None) -> None:
    """The Spark side of windowagg bench asof: windowagg, windowagg on the union, Spark's union
    + window (segment tree and default) and its range join agree; the floor (the union read
    by a worker that answers nothing) runs; the skew cases sample the workers' memory."""
    pytest.importorskip("pyspark")
    from windowagg.bench.asof import FLOOR, _skew_cases, _spark_sides, tables
    from windowagg.spark import spark_session

    spark = spark_session("local[2]", progress=False)
    ev, qs = (spark.createDataFrame(t.to_pandas()) for t in tables(5_000, 500))
    sums = {name: run() for name, run in _spark_sides(ev, qs, 86_400_000_000).items()}
    assert len(sums) == 6 and math.isnan(sums.pop(FLOOR))
    assert len(set(sums.values())) == 1 and sums["windowagg"] > 500, sums
    skew = _skew_cases(spark, str(tmp_path), 5_000, lambda line: None)
    assert [r.x for r in skew] == ["uniform keys", "half the events in one key"]
    assert all(r.extra["peak_worker_rss_mib"] > 0 for r in skew)


def test_checking_runs_each_side_once() -> None:
    """Inside checking(), a suite's measures run each side once (no warm-up, no repetitions):
    the suites' tests compare answers without paying for the timing."""
    from windowagg.bench.core import checking_now, measure_interleaved

    calls: list[str] = []
    runs = [lambda: calls.append("a") or [1.0], lambda: calls.append("b") or [2.0]]
    with checking():
        assert checking_now()
        stats = measure_interleaved(runs, reps=5, warm=2, settle=1.0)
    assert calls == ["a", "b"] and [s[2] for s in stats] == [1.0, 2.0]
    assert not checking_now()
    calls.clear()
    measure_interleaved(runs, reps=3, warm=1)
    assert calls.count("a") == 4 and calls.count("b") == 4


def test_warm_ups_run_outside_checking_only() -> None:
    """A suite's untimed warm-ups (``warm_up``) run each side ``rounds`` times in turn, and not
    at all when a test runs the suite for its answers."""
    from windowagg.bench.core import warm_up

    calls: list[str] = []
    runs = (lambda: calls.append("a"), lambda: calls.append("b"))
    with checking():
        warm_up(*runs, rounds=2)
    assert calls == []
    warm_up(*runs, rounds=2)
    assert calls == ["a", "b", "a", "b"]


def test_scaling_suite_sides_agree_at_each_count(answers_only: None) -> None:
    """windowagg bench local --threads: at each count windowagg and Polars' faster engine give
    the same answers, and windowagg's stage profile at the largest count shows its stages on
    several threads (the workload above the rows where the engine splits its work)."""
    from windowagg.bench.scaling import scaling_suite

    lines: list[str] = []
    cases = ["rolling sum range:600s", "tumbling 60s sum", "point-in-time sum, count (1h)"]
    rows = scaling_suite([1, 2], False, lines.append, events_n=120_000, cases=cases)
    for case in cases:
        for t in (1, 2):
            same = [r for r in rows if r.agg == case and r.x == t]
            assert [r.case.split()[0] for r in same] == ["windowagg", "Polars"], same
            assert math.isclose(same[0].checksum, same[1].checksum, rel_tol=1e-12), same
    text = "\n".join(lines)
    assert "stages of rolling sum range:600s (ms at 1 / 2 threads" in text
    sort = [line for line in lines if line.strip().startswith("sort ") and "1 / 2" not in line]
    assert any("several threads" in line for line in sort)
