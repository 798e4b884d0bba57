"""The cluster and Spark Connect tests' job: the same windows, rolling frames, point-in-time
frames and streaming queries (windows and rolling frames) on whatever session runs it (local
mode in the test process; the standalone cluster or a Spark Connect server in a driver process:
``python -m tests.spark.cluster_job MASTER SRC OUT``, ``MASTER`` a cluster URL or
``connect:REMOTE``; ``... OUT windows`` runs the windows alone), each written as Parquet under
``OUT`` (one folder per :data:`PARTS`).

``first``, ``last`` and ``collect`` are order-sensitive, so a worker that saw a key's events
out of time order, or a slice combined the wrong way round, changes the answer."""

from __future__ import annotations

import sys
from pathlib import Path

WINDOWS = ["tumbling:10s", "sliding:30s/5s", "session:3s"]
AGGS = {"s": ("sum", "v"), "f": ("first", "v"), "m": ("median", "w"), "c": ("collect", "v")}
STREAM_AGGS = {"s": ("sum", "v"), "f": ("first", "v"), "l": ("last", "w")}
FRAMES = {
    "r": ("sum", "v", "range:20s"),
    "l": ("last", "v", "rows:5"),
    "u": ("max", "w", "range:unbounded,0"),
}
AT_FRAMES = {"h": ("sum", "v", "range:-20s,-1us"), "n": ("count", "v", "rows:5")}
PARTS = ["windows", "rolling", "at", "stream", "stream_rolling"]


def write_events(src: Path, files: int = 4, n: int = 3000, seed: int = 3) -> None:
    """``n`` events of five keys over about ten minutes in ``files`` Parquet files, each file a
    little out of order; whole-number values, so every sum is exact in any order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, 600_000_000, n)) + rng.integers(-2_000_000, 2_000_000, n)
    t += 1_700_000_000_000_000
    k = rng.choice(np.array(["a", "b", "c", "d", "e"]), n)
    v, w = rng.integers(0, 100, n).astype(float), rng.integers(0, 1000, n).astype(float)
    src.mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(n), files)):
        ts = pa.array(t[part], pa.timestamp("us", "UTC"))
        table = pa.table({"k": k[part], "ts": ts, "v": v[part], "w": w[part]})
        pq.write_table(table, src / f"part-{i}.parquet")


def run(spark, src: Path, out: Path, parts: str = "all") -> None:
    """Every part of the job (``parts="windows"``: the windows alone)."""
    from pyspark.sql import functions as F

    from windowagg.spark import rolling_aggregate, window_aggregate

    df = spark.read.parquet(str(src))
    window_aggregate(df, time="ts", key="k", windows=WINDOWS, aggs=AGGS).write.parquet(
        str(out / "windows")
    )
    if parts == "windows":
        return
    rolling_aggregate(df, time="ts", key="k", aggs=FRAMES).write.parquet(str(out / "rolling"))
    asked = df.where("v < 10").select("k", (F.col("ts") + F.expr("INTERVAL 1 SECOND")).alias("q"))
    rolling_aggregate(df, time="ts", key="k", aggs=AT_FRAMES, at=asked, at_time="q").write.parquet(
        str(out / "at")
    )
    stream = (
        spark.readStream.schema(df.schema)
        .option("maxFilesPerTrigger", 1)
        .parquet(str(src))
        .withWatermark("ts", "5 seconds")
    )
    windows = window_aggregate(stream, time="ts", key="k", windows=WINDOWS[:2], aggs=STREAM_AGGS)
    frames = rolling_aggregate(stream, time="ts", key="k", aggs={"r": FRAMES["r"]})
    for part, result in (("stream", windows), ("stream_rolling", frames)):
        q = (
            result.writeStream.format("parquet")
            .option("path", str(out / part))
            .option("checkpointLocation", str(out / f"{part}-checkpoint"))
            .outputMode("append")
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination()


def main(master: str, src: str, out: str, parts: str = "all") -> None:
    from pyspark.sql import SparkSession

    from windowagg.spark import spark_session

    if master.startswith("connect:"):  # Spark Connect, as windowagg's command line starts it
        spark = spark_session(remote=master.removeprefix("connect:"))
    else:
        spark = (
            SparkSession.builder.master(master)
            .appName("windowagg-cluster-test")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.python.unix.domain.socket.enabled", "true")  # as windowagg's own
            .config("spark.ui.enabled", "false")
            .getOrCreate()
        )
    spark.conf.set("spark.sql.shuffle.partitions", "2")  # one per core, as the local tests run
    try:
        run(spark, Path(src), Path(out), parts)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
