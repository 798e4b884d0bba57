"""``windowagg run``: the happy paths (CSV, JSON lines, Parquet in; Parquet and CSV out) and
every user error as one line on stderr, a non-zero exit, and nothing written."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")

from windowagg.cli import main


@pytest.fixture
def trips(tmp_path):
    rows = [(f"2024-01-01 00:00:{s:02d}", s % 3, float(s)) for s in range(0, 60, 2)]
    csv = tmp_path / "in.csv"
    csv.write_text("ts,zone,fare\n" + "".join(f"{t},{z},{f}\n" for t, z, f in rows))
    jl = tmp_path / "in.jsonl"
    jl.write_text(
        "".join(
            json.dumps({"ms": 1_704_067_200_000 + 1000 * int(t[-2:]), "zone": z, "fare": f}) + "\n"
            for t, z, f in rows
        )
    )
    return csv, jl


def run(*argv):
    return main(["run", *map(str, argv)])


def test_csv_in_parquet_out(trips, tmp_path, spark, capsys):
    csv, _ = trips
    out = tmp_path / "out"
    code = run(
        csv,
        "--time",
        "ts",
        "--value",
        "fare",
        "--key",
        "zone",
        "--window",
        "tumbling:20s",
        "--window",
        "sliding:30s/10s",
        "--agg",
        "sum",
        "--output",
        out,
    )
    assert code == 0
    got = spark.read.parquet(str(out))
    assert set(got.columns) == {"zone", "window", "window_start", "window_end", "value"}
    t = {(r.zone, r.window, r.window_start.second): r.value for r in got.collect()}
    assert t[(0, "tumbling:20s", 0)] == sum(float(s) for s in range(0, 20, 2) if s % 3 == 0)
    assert "window rows written" in capsys.readouterr().out


def test_json_lines_epoch_ms_in_csv_out(trips, tmp_path, spark):
    _, jl = trips
    out = tmp_path / "out"
    assert (
        run(
            jl,
            "--time",
            "ms",
            "--value",
            "fare",
            "--window",
            "session:5s",
            "--agg",
            "count",
            "--output",
            out,
            "--format",
            "csv",
        )
        == 0
    )
    rows = spark.read.option("header", True).csv(str(out)).collect()
    assert len(rows) == 1 and rows[0]["value"] == "30"  # one session: every 2 s


@pytest.mark.parametrize(
    "engine,case,message",
    [
        ("spark", "missing", "does not exist"),
        ("spark", "column", "no column 'nope'"),
        ("spark", "spec", "bad window spec"),
        ("spark", "agg", "unknown aggregation"),
        ("spark", "times", "cannot parse"),
        ("spark", "exists", "exists and is not an empty directory"),
        ("local", "master", "give one or the other"),
        ("local", "column", "no column 'nope'"),
        ("local", "times", "cannot parse 'yesterday'"),
    ],
)
def test_errors(engine, case, message, trips, tmp_path, capsys):
    csv, _ = trips
    out = tmp_path / "out"
    args = [
        csv,
        "--time",
        "ts",
        "--value",
        "fare",
        "--window",
        "tumbling:10s",
        "--agg",
        "sum",
        "--output",
        out,
        "--engine",
        engine,
    ]
    if case == "master":
        args += ["--master", "local[1]"]
    elif case == "missing":
        args[0] = tmp_path / "absent.csv"
    elif case == "column":
        args[2] = "nope"
    elif case == "spec":
        args[6] = "hopping:10s"
    elif case == "agg":
        args[8] = "avgg"
    elif case == "times":
        bad = tmp_path / "bad.csv"
        bad.write_text("ts,fare\n2024-01-01 00:00:01,1\nyesterday,2\n")
        args[0] = bad
    elif case == "exists":
        out.mkdir()
        (out / "keep.txt").write_text("x")
    assert run(*args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in err if line.startswith("error:")]) == 1
    assert message in err[-1]
    if case != "exists":
        assert not out.exists()
    assert not list(tmp_path.glob(".out.tmp*"))


def test_rolling_writes_every_row_with_the_new_columns(trips, tmp_path, spark, capsys):
    """--rolling NAME=AGG:COLUMN:FRAME, repeatable; checked against Spark's window functions."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    csv, _ = trips
    out = tmp_path / "out"
    code = run(
        csv,
        "--time",
        "ts",
        "--key",
        "zone",
        "--rolling",
        "s10=sum:fare:range:10s",
        "--rolling",
        "n=count:*:rows:3",
        "--rolling",
        "m=max:fare:range:-6s,+6s",
        "--output",
        out,
    )
    assert code == 0
    assert "30 rows written" in capsys.readouterr().out
    got = spark.read.parquet(str(out))
    assert got.columns == ["ts", "zone", "fare", "s10", "n", "m"]
    w = Window.partitionBy("zone").orderBy(F.unix_micros("ts"))
    want = (
        spark.read.option("header", True)
        .option("inferSchema", True)
        .csv(str(csv))
        .select(
            "*",
            F.sum("fare").over(w.rangeBetween(-10_000_000, 0)).alias("s10"),
            F.count("*")
            .over(Window.partitionBy("zone").orderBy("ts").rowsBetween(-2, 0))
            .alias("n"),
            F.max("fare").over(w.rangeBetween(-6_000_000, 6_000_000)).alias("m"),
        )
    )
    assert sorted(got.collect()) == sorted(want.collect())


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--rolling", "s=sum:fare"], "NAME=AGG:COLUMN:FRAME"),
        (["--rolling", "s=summ:fare:range:10s"], "unknown aggregation"),
        (["--rolling", "s=sum:fare:window:10s"], "range or rows"),
        (["--rolling", "s=sum:nope:range:10s"], "no column 'nope'"),
        (["--rolling", "s=sum:fare:rows:3", "--rolling", "s=max:fare:rows:3"], "given twice"),
        (["--rolling", "s=sum:fare:rows:3", "--window", "tumbling:10s"], "one or the other"),
        (["--window", "tumbling:10s"], "give --agg with --window"),
    ],
)
def test_rolling_errors(argv, message, trips, tmp_path, capsys):
    csv, _ = trips
    out = tmp_path / "out"
    assert run(csv, "--time", "ts", *argv, "--output", out) == 1
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("unit", [None, "s"])
def test_integer_epoch_seconds_do_not_overflow(unit, tmp_path, spark, capsys):
    """An int column of epoch seconds times 10^6 overflowed int under ANSI mode; with the
    default unit (ms) and with --time-unit s it is a plain, correct run."""
    csv = tmp_path / "in.csv"
    csv.write_text("t,v\n" + "".join(f"{1_704_067_200 + i},{i}\n" for i in range(30)))
    out = tmp_path / "out"
    extra = [] if unit is None else ["--time-unit", unit]
    assert (
        run(
            csv,
            "--time",
            "t",
            "--value",
            "v",
            "--window",
            "tumbling:10s",
            "--agg",
            "sum",
            "--output",
            out,
            *extra,
        )
        == 0
    )
    got = spark.read.parquet(str(out)).collect()
    assert sum(r.value for r in got) == sum(range(30))


@pytest.mark.parametrize(
    "content,message",
    [
        ("", "no columns (an empty file?)"),
        ("ts,fare\n", "no rows, only a header"),
    ],
)
def test_empty_inputs(content, message, tmp_path, capsys):
    csv = tmp_path / "in.csv"
    csv.write_text(content)
    out = tmp_path / "out"
    assert (
        run(
            csv,
            "--time",
            "ts",
            "--value",
            "fare",
            "--window",
            "tumbling:10s",
            "--agg",
            "sum",
            "--output",
            out,
        )
        == 1
    )
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_repeatable_aggs_with_names_equal_spark(trips, tmp_path, spark):
    """--agg AGG:COLUMN (repeatable): sum_fare, max_fare, count (rows), a named percentile, a
    two-column max_by; the values and types of Spark's own query, a count as a long."""
    from pyspark.sql import functions as F

    csv, _ = trips
    out = tmp_path / "out"
    assert (
        run(
            csv,
            "--time",
            "ts",
            "--key",
            "zone",
            "--window",
            "tumbling:20s",
            "--agg",
            "sum:fare",
            "--agg",
            "MAX:fare",
            "--agg",
            "count",
            "--agg",
            "p50=percentile(p=0.3):fare",
            "--agg",
            "avg:fare",
            "--agg",
            "max_by:ts,fare",
            "--output",
            out,
        )
        == 0
    )
    got = spark.read.parquet(str(out))
    assert got.columns == [
        "zone",
        "window",
        "window_start",
        "window_end",
        "sum_fare",
        "max_fare",
        "count",
        "p50",
        "avg_fare",
        "max_by_ts_fare",
    ]
    assert dict(got.dtypes)["count"] == "bigint"
    df = spark.read.option("header", True).option("inferSchema", True).csv(str(csv))
    want = df.groupBy("zone", F.window("ts", "20 seconds").alias("w")).agg(
        F.sum("fare"),
        F.max("fare"),
        F.count("*"),
        F.percentile("fare", 0.3),
        F.avg("fare"),
        F.max_by("ts", "fare"),
    )
    assert sorted(tuple(r) for r in got.drop("window").collect()) == sorted(
        (r[0], r[1].start, r[1].end, *r[2:]) for r in want.collect()
    )


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--agg", "sum"], "which column? use sum:COLUMN"),
        (["--agg", "sum:fare", "--agg", "sum:fare"], "comes twice"),
        (["--agg", "sum:"], "use [NAME=]AGG[:COLUMN]"),
        (["--agg", "summ:fare"], "unknown aggregation"),
        (["--agg", "sum:nope"], "no column 'nope'"),
    ],
)
def test_bad_aggs_are_one_line(argv, message, trips, tmp_path, capsys):
    csv, _ = trips
    out = tmp_path / "out"
    assert run(csv, "--time", "ts", "--window", "tumbling:10s", *argv, "--output", out) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def _rows(path, spark):
    """Every row of a run's Parquet output, times as microseconds (Spark writes instants, the
    local engine naive timestamps: the same wall-clock values here, the session is UTC)."""
    df = spark.read.parquet(str(path))
    return sorted(
        tuple(v.timestamp() if hasattr(v, "timestamp") else v for v in r) for r in df.collect()
    )


@pytest.mark.parametrize(
    "argv",
    [
        [
            "--key",
            "zone",
            "--window",
            "tumbling:20s",
            "--window",
            "sliding:30s/10s",
            "--window",
            "session:3s",
            "--agg",
            "sum:fare",
            "--agg",
            "count",
            "--agg",
            "max:fare",
            "--agg",
            "q=quantile(q=0.5):fare",
            "--agg",
            "p=percentile(p=0.7):fare",
            "--agg",
            "c=corr:fare,zone",
        ],
        [
            "--key",
            "zone",
            "--rolling",
            "s10=sum:fare:range:10s",
            "--rolling",
            "n=count:*:rows:3",
            "--rolling",
            "m=max:fare:range:-6s,+6s",
            "--rolling",
            "md=median:fare:rows:4",
            "--rolling",
            "mb=min_by:zone,fare:range:10s",
        ],
    ],
)
def test_local_engine_equals_spark(argv, trips, tmp_path, spark, monkeypatch, capsys):
    """``--engine local`` answers as the Spark run does, and starts no Spark to do it."""
    csv, _ = trips
    assert run(csv, "--time", "ts", *argv, "--output", tmp_path / "spark") == 0

    def no_spark(*a, **k):
        raise AssertionError("the local engine started Spark")

    monkeypatch.setattr("windowagg.pipeline_spark.spark_session", no_spark)
    assert run(csv, "--time", "ts", *argv, "--output", tmp_path / "local", "--engine", "local") == 0
    assert "local engine" in capsys.readouterr().out
    assert _rows(tmp_path / "local", spark) == _rows(tmp_path / "spark", spark)


def test_local_engine_json_epoch_and_csv_out(trips, tmp_path):
    _, jl = trips
    out = tmp_path / "out"
    assert (
        run(
            jl,
            "--time",
            "ms",
            "--value",
            "fare",
            "--window",
            "session:5s",
            "--agg",
            "count",
            "--output",
            out,
            "--format",
            "csv",
            "--engine",
            "local",
        )
        == 0
    )
    lines = (out / "part-00000.csv").read_text().splitlines()
    assert len(lines) == 2 and lines[1].endswith(",30")  # one session of 30 rows


def test_rolling_at_queries_on_both_engines(trips, tmp_path, spark, capsys):
    """``--at``: every query row, with the frames of the events of its key before its time; the
    local engine and Spark write the same rows, each equal to the library's answer."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    import windowagg

    csv, _ = trips
    queries = tmp_path / "q.csv"
    queries.write_text(
        "asked,area,qid\n"
        + "".join(f"2024-01-01 00:00:{s:02d},{s % 4},{s}\n" for s in range(1, 60, 7))
    )
    argv = [csv, "--time", "ts", "--key", "zone", "--at", queries, "--at-time", "asked"]
    argv += ["--at-key", "area", "--rolling", "s=sum:fare:range:-10s,-1us"]
    argv += ["--rolling", "n=count:*:rows:3"]
    for engine in ("local", "spark"):
        assert run(*argv, "--engine", engine, "--output", tmp_path / engine) == 0
        assert "rows written" in capsys.readouterr().out
    assert _rows(tmp_path / "local", spark) == _rows(tmp_path / "spark", spark)
    got = pq.read_table(str(tmp_path / "local")).sort_by("qid")
    events = pcsv.read_csv(csv)
    asked = pcsv.read_csv(queries)
    want = windowagg.rolling_aggregate(
        events,
        time="ts",
        key="zone",
        at=asked,
        at_time="asked",
        at_key="area",
        aggs={"s": ("sum", "fare", "range:-10s,-1us"), "n": ("count", "*", "rows:3")},
    ).sort_by("qid")
    assert got.column("qid").to_pylist() == list(range(1, 60, 7))
    assert got.column("s").to_pylist() == want.column("s").to_pylist()
    assert got.column("n").to_pylist() == want.column("n").to_pylist()


def test_at_needs_rolling(trips, tmp_path, capsys):
    csv, _ = trips
    argv = [
        "--window",
        "tumbling:10s",
        "--agg",
        "sum:fare",
        "--at",
        csv,
        "--output",
        tmp_path / "o",
    ]
    code = run(csv, "--time", "ts", *argv)
    assert code == 1 and "--at places --rolling frames" in capsys.readouterr().err
