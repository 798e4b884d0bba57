"""The demo (``windowagg demo``, ``make demo``): a seeded, taxi-like keyed event stream with
natural disorder, run through the Spark pipeline.

Trips start in pickup zones; each zone has its own rate and fare level, rush hours raise the
rate, and events reach the system late by a heavy-tailed delay, so arrival order is not event
time order (as in the NYC TLC data this library is benchmarked on).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from . import tables
from .online import OnlineFeatures, replay
from .pipeline_spark import spark_writer
from .run_args import write_atomically
from .spark import rolling_aggregate, spark_session, window_aggregate

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

#: where the demo writes its lines
Log = Callable[[str], None]


@dataclass(frozen=True)
class Trip:
    arrival: int  # arrival sequence number
    pickup_s: float  # event time, seconds since midnight of day 0
    zone: int
    fare: float
    minutes: float


def taxi_stream(n: int = 20_000, zones: int = 12, seed: int = 7) -> list[Trip]:
    """``n`` trips over ``zones`` pickup zones, in arrival order (seeded)."""
    rng = random.Random(seed)
    weights = [1.0 / (z + 1) for z in range(zones)]  # a few busy zones, many quiet ones
    base_fare = [rng.uniform(8, 25) for _ in range(zones)]
    t = 0.0
    events = []
    for _ in range(n):
        hour = (t / 3600) % 24
        rush = (
            1 + 1.5 * math.exp(-((hour - 8.5) ** 2) / 2) + 1.5 * math.exp(-((hour - 18) ** 2) / 3)
        )
        t += rng.expovariate(rush / 6.0)  # about one trip every few seconds
        zone = rng.choices(range(zones), weights)[0]
        minutes = max(2.0, rng.lognormvariate(2.4, 0.5))
        fare = round(base_fare[zone] + 2.5 * minutes * rng.uniform(0.6, 1.4), 2)
        delay = rng.expovariate(1 / 20.0) if rng.random() < 0.9 else rng.uniform(60, 900)
        events.append((t + delay, t, zone, fare, minutes))
    events.sort(key=lambda e: e[0])  # arrival order
    return [
        Trip(i, pickup, zone, fare, round(minutes, 1))
        for i, (_, pickup, zone, fare, minutes) in enumerate(events)
    ]


EPOCH = 1_704_067_200  # 2024-01-01 00:00:00 UTC: day 0 of the generated trips
WINDOWS = ["tumbling:15m", "sliding:1h/15m", "session:3m"]


def trips_frame(trips: list[Trip]) -> pd.DataFrame:
    """The trips as a pandas DataFrame in arrival order, pickup times as timestamps."""
    import pandas as pd

    micros = [round((EPOCH + t.pickup_s) * 1_000_000) for t in trips]  # Spark's precision
    return pd.DataFrame(
        {
            "pickup": pd.to_datetime(micros, unit="us"),
            "zone": [t.zone for t in trips],
            "fare": [t.fare for t in trips],
            "minutes": [t.minutes for t in trips],
        }
    )


def run_demo(
    events: int,
    seed: int,
    output: str,
    master: str = "local[2]",
    log: Log = print,
    remote: str | None = None,
) -> dict:
    """Generate trips, run several windows per zone through the Spark pipeline (on ``master``,
    or on the Spark Connect server ``remote``), check them against Spark's own window
    functions, write the results and a chart of one zone."""

    from pyspark.sql import functions as F

    trips = taxi_stream(events, seed=seed)
    disorder = sum(a.pickup_s > b.pickup_s for a, b in itertools.pairwise(trips)) / len(trips)
    log(
        f"{len(trips):,} taxi trips over {len({t.zone for t in trips})} pickup zones; "
        f"{disorder:.0%} arrive after a later pickup (natural disorder)"
    )
    spark = spark_session(master, progress=False, remote=remote)
    pdf = trips_frame(trips)
    df = spark.createDataFrame(pdf).cache()
    start = time.perf_counter()
    revenue = window_aggregate(df, time="pickup", windows=WINDOWS, aggs=AGGS, key="zone").cache()
    rows = revenue.count()
    elapsed = time.perf_counter() - start
    log(
        f"windowagg: {rows:,} windows per zone ({', '.join(WINDOWS)}), {len(AGGS)} aggregations "
        f"each ({', '.join(AGGS)}), one call, in {elapsed:.1f} s"
    )

    # the same windows from Spark's own functions: the answers and their types must match
    checks = {
        "tumbling:15m": F.window("pickup", "15 minutes"),
        "sliding:1h/15m": F.window("pickup", "1 hour", "15 minutes"),
        "session:3m": F.session_window("pickup", "3 minutes"),
    }
    agree = []
    for spec, wcol in checks.items():
        ref = df.groupBy("zone", wcol.alias("w")).agg(
            *[F.expr(sql).alias(name) for name, sql in SPARK_AGGS.items()]
        )
        ref = ref.select(
            "zone",
            F.col("w.start").alias("window_start"),
            F.col("w.end").alias("window_end"),
            *AGGS,
        )
        ours = revenue.where(F.col("window") == spec).drop("window")
        same_types = ours.dtypes == ref.dtypes
        joined = ours.alias("a").join(
            ref.alias("b"), ["zone", "window_start", "window_end"], "full_outer"
        )
        differ = [
            F.col(f"a.{c}").isNull()
            | F.col(f"b.{c}").isNull()
            | (F.abs(F.col(f"a.{c}") - F.col(f"b.{c}")) > 1e-6)
            for c in AGGS
        ]
        bad = joined.where(functools.reduce(lambda x, y: x | y, differ)).count()
        agree.append(bad == 0 and same_types)
        log(
            f"  {spec:<15} {ours.count():>7,} windows; Spark's own query agrees (values, "
            f"types): {'yes' if bad == 0 else f'NO ({bad} differ)'}, "
            f"{'yes' if same_types else 'NO'}"
        )

    agree.append(_local(pdf, revenue, log))
    features, ok = _rolling(df, log)
    agree.append(ok)
    agree.append(_point_in_time(df, log))
    agree.append(_online(pdf, log))

    busiest = (
        revenue.where(F.col("window") == "sliding:1h/15m").orderBy(F.col("fares").desc()).first()
    )
    assert busiest is not None  # the demo's data has trips
    log(
        f"  busiest hour: zone {busiest['zone']}, {busiest['window_start']:%a %H:%M}-"
        f"{busiest['window_end']:%H:%M}, {busiest['trips']} trips, fares "
        f"{busiest['fares']:,.2f} (largest {busiest['max_fare']:,.2f}, 90% at most "
        f"{busiest['p90_fare']:,.2f})"
    )
    _sessions(revenue.where(F.col("window") == "session:3m"), log)

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results"
    if results.exists():
        shutil.rmtree(results)
    write_atomically(spark_writer(revenue, "parquet"), results)
    per_trip = out / "per-trip"
    if per_trip.exists():
        shutil.rmtree(per_trip)
    write_atomically(spark_writer(features, "parquet"), per_trip)
    chart = out / "zone5.png"
    first_day = F.col("window_start") < F.lit(EPOCH + 2 * 86400).cast("timestamp")
    _chart(revenue.where((F.col("zone") == 5) & first_day).toPandas(), chart)
    log(f"wrote {results} and {per_trip} (Parquet), and {chart}")
    revenue.unpersist()
    features.unpersist()
    df.unpersist()
    return {
        "rows": rows,
        "agree": all(agree),
        "results": str(results),
        "chart": str(chart),
        "per_trip": str(per_trip),
    }


#: per window: the zone's fares, trips, largest fare, mean trip time and 90th percentile fare
AGGS = {
    "fares": ("sum", "fare"),
    "trips": ("count", "*"),
    "max_fare": ("max", "fare"),
    "mean_minutes": ("avg", "minutes"),
    "p90_fare": ("percentile(p=0.9)", "fare"),
}
#: the same in Spark SQL, under the same names
SPARK_AGGS = {
    "fares": "sum(fare)",
    "trips": "count(*)",
    "max_fare": "max(fare)",
    "mean_minutes": "avg(minutes)",
    "p90_fare": "percentile(fare, 0.9)",
}

#: per-trip features: the zone's fares in the last hour, its trips in the 15 minutes either
#: side, the largest of its last 100 fares
ROLLING = {
    "fares_1h": ("sum", "fare", "range:1h"),
    "trips_15m": ("count", "*", "range:-15m,+15m"),
    "max_fare_100": ("max", "fare", "rows:100"),
}


def _local(pdf: pd.DataFrame, revenue: DataFrame, log: Log) -> bool:
    """The same call on the local pandas DataFrame (the engine the Spark workers run, without
    Spark), checked against the Spark run's windows and values."""
    import pandas as pd

    start = time.perf_counter()
    local = tables.window_aggregate(pdf, time="pickup", windows=WINDOWS, aggs=AGGS, key="zone")
    elapsed = time.perf_counter() - start
    spark_rows = revenue.toPandas()
    keys = ["zone", "window", "window_start"]
    for frame in (local, spark_rows):
        frame["window_start"] = pd.to_datetime(frame["window_start"]).astype("datetime64[us]")
    both = local.merge(spark_rows, on=keys, how="outer", suffixes=("", "_spark"), indicator=True)
    same = bool((both["_merge"] == "both").all()) and all(
        ((both[c] - both[f"{c}_spark"]).abs() <= 1e-6).all() for c in AGGS
    )
    log(
        f"windowagg on the pandas DataFrame (no Spark): {len(local):,} windows in "
        f"{elapsed:.2f} s; equal to the Spark run: {'yes' if same else 'NO'}"
    )
    return same


def _rolling(df: DataFrame, log: Log) -> tuple[DataFrame, bool]:
    """Per-trip rolling features, checked against Spark's own window functions."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    start = time.perf_counter()
    ours = rolling_aggregate(df, time="pickup", key="zone", aggs=ROLLING, order_by="minutes")
    ours = ours.cache()
    n = ours.count()
    log(
        f"windowagg: {len(ROLLING)} per-trip rolling features ({', '.join(ROLLING)}) for "
        f"{n:,} trips in {time.perf_counter() - start:.1f} s"
    )
    by_time = Window.partitionBy("zone").orderBy(F.unix_micros("pickup"))
    hour, quarter = 3_600_000_000, 900_000_000
    ref = df.select(
        "*",
        F.sum("fare").over(by_time.rangeBetween(-hour, 0)).alias("fares_1h"),
        F.count("*").over(by_time.rangeBetween(-quarter, quarter)).alias("trips_15m"),
        F.max("fare")
        .over(Window.partitionBy("zone").orderBy("pickup", "minutes").rowsBetween(-99, 0))
        .alias("max_fare_100"),
    )
    keys = ["zone", "pickup", "minutes", "fare"]
    joined = ours.alias("a").join(ref.alias("b"), keys, "full_outer")
    bad = joined.where(
        F.col("a.fares_1h").isNull()
        | F.col("b.fares_1h").isNull()
        | (F.abs(F.col("a.fares_1h") - F.col("b.fares_1h")) > 1e-6)
        | (F.col("a.trips_15m") != F.col("b.trips_15m"))
        | (F.col("a.max_fare_100") != F.col("b.max_fare_100"))
    ).count()
    log(
        f"  Spark's window functions (rangeBetween, rowsBetween) agree: "
        f"{'yes' if bad == 0 else f'NO ({bad} differ)'}"
    )
    top = ours.orderBy(F.col("trips_15m").desc(), "pickup").first()
    assert top is not None  # the demo's data has trips
    log(
        f"  busiest moment: zone {top['zone']}, {top['trips_15m']} trips within 15 minutes of "
        f"{top['pickup']:%a %H:%M}"
    )
    return ours, bad == 0


#: point-in-time features at a sample of the pickups: the zone's fares and trips in the hour
#: and the day before, the pickup's own instant left out (what a model may know then)
BEFORE = {
    "fares_prev_1h": ("sum", "fare", "range:-1h,-1us"),
    "trips_prev_1h": ("count", "*", "range:-1h,-1us"),
    "fares_prev_1d": ("sum", "fare", "range:-1d,-1us"),
    "trips_prev_1d": ("count", "*", "range:-1d,-1us"),
}


def _point_in_time(df: DataFrame, log: Log) -> bool:
    """Features of the trips at a sample of pickups (``rolling_aggregate(..., at=)``),
    checked against Spark's range join and group by."""
    from pyspark.sql import functions as F

    asked = (
        df.sample(fraction=0.01, seed=3)
        .select(F.monotonically_increasing_id().alias("request"), "zone", "pickup")
        .cache()
    )
    start = time.perf_counter()
    ours = rolling_aggregate(df, time="pickup", key="zone", aggs=BEFORE, at=asked).cache()
    n = ours.count()
    log(
        f"windowagg: {len(BEFORE)} point-in-time features ({', '.join(BEFORE)}) at {n:,} "
        f"sampled pickups, from the trips before each, in {time.perf_counter() - start:.1f} s"
    )
    e, q = df.alias("e"), asked.alias("q")
    day = (F.col("e.pickup") >= F.col("q.pickup") - F.expr("INTERVAL 1 DAY")) & (
        F.col("e.pickup") < F.col("q.pickup")
    )
    hour = F.col("e.pickup") >= F.col("q.pickup") - F.expr("INTERVAL 1 HOUR")
    ref = (
        q.join(e, (F.col("e.zone") == F.col("q.zone")) & day, "left")
        .groupBy("q.request")
        .agg(
            F.sum(F.when(hour, F.col("e.fare"))).alias("fares_prev_1h"),
            F.count(F.when(hour, F.lit(1))).alias("trips_prev_1h"),
            F.sum("e.fare").alias("fares_prev_1d"),
            F.count("e.fare").alias("trips_prev_1d"),
        )
    )
    joined = ours.alias("a").join(ref.alias("b"), "request", "full_outer")
    differ = [
        (F.col(f"a.{c}").isNull() != F.col(f"b.{c}").isNull())
        | (F.abs(F.col(f"a.{c}") - F.col(f"b.{c}")) > 1e-6)
        for c in BEFORE
    ]
    bad = joined.where(functools.reduce(lambda x, y: x | y, differ)).count()
    log(f"  Spark's range join and group by agree: {'yes' if bad == 0 else f'NO ({bad} differ)'}")
    top = ours.orderBy(F.col("trips_prev_1h").desc(), "pickup").first()
    assert top is not None  # the sample has pickups
    log(
        f"  the busiest hour before a sampled pickup: zone {top['zone']}, {top['trips_prev_1h']} "
        f"trips and {top['fares_prev_1h']:,.2f} in fares before {top['pickup']:%a %H:%M}"
    )
    ours.unpersist()
    asked.unpersist()
    return bad == 0


def _online(pdf: pd.DataFrame, log: Log) -> bool:
    """The trips replayed in arrival order through an online state, every 1000th pickup a live
    request for the point-in-time features, each served feature compared with the batch call
    over the trips that had arrived by its request; then the serving figures."""
    import pandas as pd

    events = pdf.assign(arrival=np.arange(len(pdf)))
    asked = events.iloc[::1000][["zone", "pickup", "arrival"]].reset_index(drop=True)
    start = time.perf_counter()
    check = replay(
        events,
        asked,
        time="pickup",
        key="zone",
        aggs=BEFORE,
        arrival="arrival",
        allowed_lateness="10m",
    )
    log(
        f"online: {len(events):,} trips in arrival order, {len(asked):,} pickups as live "
        f"requests, {len(BEFORE)} features each ({check.dropped:,} trips later than 10 minutes "
        f"dropped); the features served equal the backfill over the trips arrived by each "
        f"request: {'yes' if check.differences == 0 else f'NO ({check.differences} differ)'}"
        f" ({time.perf_counter() - start:.1f} s)"
    )
    state = OnlineFeatures(time="pickup", key="zone", aggs=BEFORE, allowed_lateness="10m")
    start = time.perf_counter()
    for i in range(0, len(events), 1000):
        state.update(events.iloc[i : i + 1000])
    ingest = len(events) / (time.perf_counter() - start)
    newest = events["pickup"].max()
    one = [pd.DataFrame({"zone": [z], "pickup": [newest]}) for z in range(12)] * 10
    took, by_key, same = [], [], True
    for q in one:
        t0 = time.perf_counter()
        row = state.query(q)
        took.append(time.perf_counter() - t0)
        assert isinstance(row, pd.DataFrame)  # the request's own kind
        t0 = time.perf_counter()
        got = state.get(int(q["zone"].iloc[0]), newest)  # the key and the time, no table
        by_key.append(time.perf_counter() - t0)
        same &= got == pa.Table.from_pandas(row[list(BEFORE)]).to_pylist()[0]
    p50, p99 = np.percentile(took, [50, 99]) * 1e3
    k50, k99 = np.percentile(by_key, [50, 99]) * 1e3
    log(
        f"  serving: {ingest:,.0f} trips/s taken in, {state.held:,} held; one request at a "
        f"time: p50 {p50:.2f} ms, p99 {p99:.2f} ms as a pandas frame; p50 {k50:.2f} ms, "
        f"p99 {k99:.2f} ms by get(zone, time), the same features: {'yes' if same else 'NO'}"
    )
    return check.differences == 0 and same


def _sessions(sessions: DataFrame, log: Log) -> None:
    """What the session windows say: how the quietest and the busiest zones' busy spells
    (trips with no 3-minute gap) look."""
    from pyspark.sql import functions as F

    minutes = (F.col("window_end").cast("long") - F.col("window_start").cast("long")) / 60
    per_zone = (
        sessions.groupBy("zone")
        .agg(
            F.count("*").alias("spells"),
            F.median(minutes).alias("median"),
            F.max(minutes).alias("longest"),
        )
        .orderBy(F.col("spells").desc())
        .collect()
    )
    quiet, busy = per_zone[0], per_zone[-1]
    log(
        f"  busy spells (no 3-minute gap between trips): zone {quiet['zone']} has the most, "
        f"{quiet['spells']:,}, of {quiet['median']:.1f} min (median; the longest "
        f"{quiet['longest']:.0f} min); zone {busy['zone']} the fewest, {busy['spells']:,}, of "
        f"{busy['median']:.0f} min (median)"
    )


def _chart(pdf: pd.DataFrame, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 4.5))
    styles = {"tumbling:15m": ("steps-post", 1.0), "sliding:1h/15m": ("default", 1.6)}
    for spec, (draw, width) in styles.items():
        part = pdf[pdf["window"] == spec].sort_values("window_start")
        ax.plot(
            part["window_start"],
            part["fares"],
            drawstyle=draw,
            linewidth=width,
            label=f"{spec} (sum of fares)",
        )
    sess = pdf[pdf["window"] == "session:3m"]
    for _, r in sess.iterrows():
        ax.axvspan(r["window_start"], r["window_end"], color="tab:green", alpha=0.25, lw=0)
    ax.set_title("Zone 5, first two days: revenue per window (shaded: sessions, 3-minute gap)")
    ax.set_xlabel("pickup time")
    ax.set_ylabel("fares")
    ax.legend(loc="upper left")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
