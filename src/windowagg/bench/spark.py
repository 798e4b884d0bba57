"""``windowagg bench spark``: windowagg's Spark pipeline against Spark's built-in windows, side
by side in one Spark session on the same cached data (``--events``, default 10 million, 100
keys; ``--quick``: 200,000).

* one sliding window, slide 1 s, length L = 5, 20, 60 s: ``window_aggregate`` against
  ``groupBy(key, window(ts, L, 1 s))``, which copies every event into L windows;
* 20 sliding windows (lengths 1 to 20 s, slide 1 s) in one ``window_aggregate`` call against the
  20 built-in queries they replace;
* session windows (gap 2 s, sum) against ``session_window``, and the median over sliding
  windows (60 s, slide 10 s) against Spark's ``median`` (both interpolate), and ``collect``
  over the same windows against
  ``collect_list`` (checksum: the number of values collected); count windows (tumbling, 100
  events per key) against a row number per key and a group by its bucket;
* beside the sliding windows, the built-in tumbling window of the slide (1 s): one
  aggregation pass over the events, no copies, the floor of any query that reads them; and
  ``window_aggregate``'s stages alone at L = 20 s: its Spark SQL partials, then shuffled by
  key, then through the Python workers and back with a function that returns its input;
* five aggregations over three columns at
  L = 60 s, slide 1 s (sum, count, max, avg, min) in one call, against one sum and against the
  built-in query with the same five; and five with a quantile and a distinct count (sum, count,
  max, percentile(p=0.95), approx_count_distinct) against the built-in with ``percentile``
  and ``approx_count_distinct``;
* skew: half of all events in one key, a first value and a median over sliding windows (the
  events cross into Python): the peak memory of one Python worker, against uniform keys.

Each case and its baseline are timed in turn in every repetition (3), after one
warm-up run of each and of the JVM as a whole, so that a drift in the machine's speed during the
run touches both sides of a ratio alike.

Every case folds its output into a checksum (the sum of all window sums or medians, integer
values so that the order of addition does not matter), and the checksums of a case and its
baseline agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine.windows.partials import grids
from ..spark import spark_session, window_aggregate
from ..spark import window_aggregate as on_spark
from ..spark.batch import _partials_query, partials_by_key
from ..spark.plan import make_plan
from ..tables import window_aggregate as on_table
from .core import Row, measure_interleaved, warm_up
from .rolling import peak_worker_rss, returns_input


def _boxed(run: Callable[[], float]) -> Callable[[], np.ndarray]:
    """A case's checksum as the one-element array the measurements compare."""
    return lambda: np.array([run()])


def _data(spark, n: int, keys: int = 100, seed: int = 11, skew: bool = False):
    """n events over n / 1000 seconds (about 1000 per second over all keys), built inside
    Spark (a DataFrame made from local data would carry that data in every query plan);
    ``skew``: half of them in key 0."""
    from pyspark.sql import functions as F

    span_us = int(n / 1000 * 1e6)
    k = (F.rand(seed) * keys).cast("int")
    df = spark.range(n).select(
        (F.when(F.rand(seed + 3) < 0.5, F.lit(0)).otherwise(k) if skew else k).alias("k"),
        F.timestamp_micros(
            F.lit(1_704_067_200_000_000) + (F.rand(seed + 1) * span_us).cast("long")
        ).alias("ts"),
        F.floor(F.rand(seed + 2) * 100).cast("double").alias("v"),
    )
    return df.cache()


#: what ``windowagg bench spark`` runs without ``--events``
EVENTS = 10_000_000


def spark_suite(quick: bool, report: Callable[[str], None], events: int | None = None) -> list[Row]:
    from pyspark.sql import functions as F

    spark = spark_session("local[2]", progress=False)
    n = events or (200_000 if quick else EVENTS)
    reps = 3
    report(f"{n:,} events, 100 keys, about 1000 events a second:")
    df = _data(spark, n)
    df.count()
    rows: list[Row] = []

    def total(out, column: str = "value") -> float:
        return float(out.agg(F.sum(column)).first()[0] or 0.0)

    def ours(specs, agg="sum"):
        return lambda: total(
            window_aggregate(df, time="ts", value="v", windows=specs, agg=agg, key="k")
        )

    def builtin(lengths):
        def run() -> float:
            acc = 0.0
            for L in lengths:
                w = F.window("ts", f"{L} seconds", "1 second")
                acc += total(df.groupBy("k", w).agg(F.sum("v").alias("value")))
            return acc

        return run

    floor = F.window("ts", "1 second")

    def tumbling_floor() -> float:
        return total(df.groupBy("k", floor).agg(F.sum("v").alias("value")))

    def pair(
        param: str,
        x: float,
        cases: list[tuple[str, Callable[[], float]]],
        agg="sum",
        events: int = n,
        times: int = reps,
        with_floor: bool = False,
    ) -> None:
        """windowagg and its baselines, timed in turn in every repetition (the machine's speed
        drifts; alternating keeps the ratio fair); ``with_floor``: the built-in tumbling
        window of 1 s too (:data:`FLOOR`), another answer, so not a baseline of the ratio."""
        cases = [*cases, (FLOOR, tumbling_floor)] if with_floor else cases
        stats = measure_interleaved([_boxed(run) for _n, run in cases], times)
        got = []
        for (name, _run), (med, spread, chk) in zip(cases, stats):
            got.append(Row("spark", name, agg, param, x, med, spread, events, chk))
            report(
                f"  {param}={x:<4g} {name:42s} {med:8.2f} s  ({events / med / 1e6:.2f} M "
                f"events/s, spread {spread:.0%})"
            )
        rows.extend(got)
        report(
            "     "
            + ", ".join(
                f"windowagg / floor: {got[0].median_s / r.median_s:.2f}x"
                if r.case == FLOOR
                else f"{r.case}: {r.median_s / got[0].median_s:.1f}x"
                for r in got[1:]
            )
        )

    warm_up(ours(["sliding:5s/1s"]), builtin([5]))  # the JVM's own, before any timing
    for L in [5, 20, 60]:
        cases = [
            ("windowagg window_aggregate", ours([f"sliding:{L}s/1s"])),
            ("Spark window()", builtin([L])),
        ]
        pair("sliding length s", L, cases, with_floor=True)
    pair(STAGES, 20, _stages(df, ours(["sliding:20s/1s"])))
    lengths = list(range(1, 21))
    pair(
        "windows",
        20,
        [
            ("windowagg, 20 windows in one call", ours([f"sliding:{L}s/1s" for L in lengths])),
            ("Spark window(), 20 queries", builtin(lengths)),
        ],
        with_floor=True,
    )
    by_session = df.groupBy("k", F.session_window("ts", "2 seconds"))
    sessions = by_session.agg(F.sum("v").alias("value"))
    pair(
        "session gap s",
        2,
        [
            ("windowagg window_aggregate", ours(["session:2s"])),
            ("Spark session_window()", lambda: total(sessions)),
        ],
    )
    by_window = df.groupBy("k", F.window("ts", "60 seconds", "10 seconds"))
    median = F.median("v").alias("value")
    pair(
        "median, sliding s",
        60,
        [
            ("windowagg window_aggregate", ours(["sliding:60s/10s"], "median")),
            ("Spark median", lambda: total(by_window.agg(median))),
        ],
        agg="median",
    )
    collected = F.collect_list("v").alias("value")

    def sizes(out) -> float:
        return float(out.agg(F.sum(F.size("value"))).first()[0])

    pair(
        "collect, sliding s",
        60,
        [
            (
                "windowagg window_aggregate",
                lambda: sizes(
                    window_aggregate(
                        df,
                        time="ts",
                        value="v",
                        windows=["sliding:60s/10s"],
                        agg="collect",
                        key="k",
                    )
                ),
            ),
            ("Spark collect_list", lambda: sizes(by_window.agg(collected))),
        ],
        agg="collect",
    )
    df.unpersist()
    _counted(spark, n, pair)
    _sparse(spark, n, pair)
    _five(spark, n, report, pair)
    rows += _skew(spark, n, report)
    return rows


#: the case name of the built-in tumbling window beside the sliding ones
FLOOR = "Spark tumbling window(1 s), the floor"
#: the parameter of the case of window_aggregate's stages alone (which answer no windows)
STAGES = "stages, sliding length s"
#: the parameter of the skew cases (their measure: the peak memory of one Python worker)
SKEW = "skew, peak worker memory"


def _skew(spark, n: int, report: Callable[[str], None]) -> list[Row]:
    """Peak memory of one Python worker for a first value and a median over sliding windows
    60 s / 1 s (the events cross into Python, sorted by key and time): uniform keys, and half
    of all events in one key (streamed through the workers, not gathered)."""
    from pyspark.sql import functions as F

    report("Skew: half of all events in one key; peak memory of one Python worker")
    aggs = {"f": ("first", "v"), "m": ("median", "v")}
    rows = []
    for label, skewed in (("uniform keys", False), ("half the events in one key", True)):
        df = _data(spark, n, skew=skewed)
        df.count()

        def run(df=df) -> None:
            out = window_aggregate(df, time="ts", windows="sliding:60s/1s", aggs=aggs, key="k")
            out.agg(F.sum("m")).first()

        warm_up(run)
        secs, peak = peak_worker_rss(run)
        rows.append(
            Row(
                "spark",
                f"windowagg, {label}",
                "first, median",
                SKEW,
                n,
                secs,
                0.0,
                n,
                0.0,
                {"peak_worker_rss_mib": round(peak, 1)},
            )
        )
        report(f"  windowagg, {label:28s} {secs:6.2f} s, peak worker RSS {peak:7.1f} MiB")
        df.unpersist()
    return rows


def _stages(df, full: Callable[[], float]) -> list[tuple[str, Callable[[], float]]]:
    """``window_aggregate`` (sliding 20 s / 1 s, sum) and its first stages alone: the Spark SQL
    partials per (key, slice), then shuffled by key, then through the Python workers and back
    with a function that returns its input (the Arrow round trip, no engine). Each ends in a
    sum of its value column (the partials' sums: their total is the events', not the
    windows')."""
    from pyspark.sql import functions as F

    plan = make_plan(
        df,
        time="ts",
        windows=["sliding:20s/1s"],
        aggs={"value": ("sum", "v")},
        key="k",
        allowed_lateness=0,
    )

    def total(out) -> float:
        return float(out.agg(F.sum("__wa_p0")).first()[0])

    def trip() -> float:
        pre = partials_by_key(df, plan)
        return total(pre.mapInArrow(returns_input, pre.schema))

    return [
        ("windowagg window_aggregate", full),
        (
            "Spark SQL partials per (key, slice)",
            lambda: total(_partials_query(df, plan, grids(plan))),
        ),
        ("partials, shuffled by key", lambda: total(partials_by_key(df, plan))),
        ("partials, shuffled, Arrow round trip", trip),
    ]


#: five aggregations over three columns, windowagg's and Spark's spelling
FIVE = {
    "s": (("sum", "v"), "sum(v)"),
    "n": (("count", "*"), "count(*)"),
    "m": (("max", "tip"), "max(tip)"),
    "a": (("avg", "v"), "avg(v)"),
    "z": (("min", "zone"), "min(zone)"),
}
#: five with a quantile and a distinct count (the rows cross into Python)
HOLISTIC = {
    "s": (("sum", "v"), "sum(v)"),
    "n": (("count", "*"), "count(*)"),
    "m": (("max", "tip"), "max(tip)"),
    "q": (("percentile(p=0.95)", "v"), "percentile(v, 0.95)"),
    "d": (("approx_count_distinct", "zone"), "approx_count_distinct(zone)"),
}


def _counted(spark, n: int, pair) -> None:
    """Count windows (100 events per key; tumbling, and sliding by 50) against the queries a
    Spark user writes for them: a row number per key in time order, its bucket (for sliding
    windows each of the two buckets that hold the row, by ``explode``), a group by bucket
    (complete buckets only), with each window's first and last time (windowagg's
    ``window_start`` and ``window_end``); a sum, and a median (Spark's ``median``, as for
    time windows).
    Times are distinct here, so that both sides order every key's events alike."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ts = F.timestamp_micros(F.lit(1_704_067_200_000_000) + F.col("id") * 1000)
    v = F.floor(F.rand(3) * 100).cast("double")
    df = (
        spark.range(n)
        .select((F.col("id") % 100).cast("int").alias("k"), ts.alias("ts"), v.alias("v"))
        .cache()
    )
    df.count()
    number = F.row_number().over(Window.partitionBy("k").orderBy("ts")) - 1
    rank = df.select("k", "ts", "v", number.alias("r"))
    median = F.median("v")

    def buckets(b, agg=None):
        agg = F.sum("v") if agg is None else agg
        return (
            rank.select("k", "ts", "v", b.alias("b"))
            .where("b >= 0")
            .groupBy("k", "b")
            .agg(
                agg.alias("value"),
                F.count("*").alias("c"),
                F.min("ts").alias("window_start"),
                F.max("ts").alias("window_end"),
            )
            .where("c = 100")
        )

    def total(out) -> float:
        return float(out.agg(F.sum("value")).first()[0])

    def ours(spec, agg="sum"):
        return lambda: total(
            window_aggregate(df, time="ts", value="v", windows=[spec], agg=agg, key="k")
        )

    by_100 = F.floor(F.col("r") / 100)
    both = F.explode(F.array(F.floor(F.col("r") / 50), F.floor(F.col("r") / 50) - 1))
    for name, spec, query, agg in [
        ("count window", "count-tumbling:100", buckets(by_100), "sum"),
        ("count window, slide 50", "count-sliding:100/50", buckets(both), "sum"),
        ("count window", "count-tumbling:100", buckets(by_100, median), "median"),
    ]:
        pair(
            name,
            100,
            [
                ("windowagg window_aggregate", ours(spec, agg)),
                ("Spark row_number() buckets", lambda q=query: total(q)),
            ],
            agg=agg,
            events=n,
            times=3,
        )
    df.unpersist()


def _sparse(spark, n: int, pair) -> None:
    """``windowagg bench local``'s workload on Spark: 100 keys, about one event per key and
    second (so a slice of a second holds about one event: the partials are as many as the
    events), sliding 60 s / 1 s, sum; beside the same call on the local engine over the same
    rows as one Arrow table (what the Spark layer costs). Spark's ``window()`` explodes every
    event into its 60 windows here and takes minutes a run at ten million events: the other
    cases compare with it."""
    from pyspark.sql import functions as F

    keys, span_us = 100, n // 100 * 1_000_000
    df = (
        spark.range(n)
        .select(
            (F.rand(21) * keys).cast("int").alias("k"),
            F.timestamp_micros(
                F.lit(1_704_067_200_000_000) + (F.rand(22) * span_us).cast("long")
            ).alias("ts"),
            F.floor(F.rand(23) * 100).cast("double").alias("v"),
        )
        .cache()
    )
    df.count()
    table = df.toArrow()
    spec = "sliding:60s/1s"

    def total(out) -> float:
        return float(out.agg(F.sum("value")).first()[0])

    def local() -> float:
        out = on_table(table, time="ts", windows=spec, aggs={"value": ("sum", "v")}, key="k")
        return float(np.sum(out.column("value").to_numpy()))

    pair(
        "one event per key and second, sliding s",
        60,
        [
            (
                "windowagg window_aggregate",
                lambda: total(
                    on_spark(df, time="ts", value="v", windows=[spec], agg="sum", key="k")
                ),
            ),
            ("windowagg on the same rows as an Arrow table", local),
        ],
        events=n,
        times=3,
    )
    df.unpersist()


def _five(spark, n: int, report, pair) -> None:
    """Five aggregations over three columns at L = 60 s, slide 1 s, in one call (``pair``
    times and records each case)."""
    from pyspark.sql import functions as F

    df = (
        _data(spark, n)
        .select(
            "*", F.floor(F.rand(5) * 20).alias("tip"), (F.rand(6) * 50).cast("int").alias("zone")
        )
        .cache()
    )
    df.count()
    report(f"{n:,} events, sliding window 60 s / 1 s:")
    spec, w = ["sliding:60s/1s"], F.window("ts", "60 seconds", "1 second")

    def ours(entries):
        aggs = {name: e for name, (e, _) in entries.items()}
        return lambda: float(
            window_aggregate(df, time="ts", windows=spec, aggs=aggs, key="k")
            .agg(F.sum("s"))
            .first()[0]
        )

    def builtin(entries):
        cols = [F.expr(sql).alias(name) for name, (_, sql) in entries.items()]
        return lambda: float(df.groupBy("k", w).agg(*cols).agg(F.sum("s")).first()[0])

    one = {"s": FIVE["s"]}
    pair(
        "aggregations",
        5,
        [
            ("windowagg, 5 in one call", ours(FIVE)),
            ("windowagg, one sum", ours(one)),
            ("Spark window(), the same 5", builtin(FIVE)),
        ],
        events=n,
        times=2,
    )
    pair(
        "aggregations",
        5,
        [
            ("windowagg, 5 with quantile, distinct", ours(HOLISTIC)),
            ("Spark window(), the same 5", builtin(HOLISTIC)),
        ],
        agg="holistic",
        events=n,
        times=2,
    )
    df.unpersist()
