"""Integer times on Spark, exactly: nanosecond epochs held as longs keep every nanosecond in
windows (slices cut in Spark SQL as longs, window bounds as longs) and in rolling frames,
equal to the local engine (itself held to nested loops in Python integers in
tests/engine/test_exact_times.py) and to the definition."""

from __future__ import annotations

import pyarrow as pa
import pytest

import windowagg
from tests.engine.test_exact_times import BASES, rows_at, table, window_oracle
from windowagg import spark as wspark

pytest.importorskip("pyspark")

SPECS = ["tumbling:7", "sliding:10/3", "session:4", "count-tumbling:3"]


@pytest.mark.parametrize("base", [BASES[3], BASES[5]])
def test_long_times_on_spark_equal_the_definition(spark, base) -> None:
    rows = rows_at(base, 23)
    arrow = table(rows)
    df = spark.createDataFrame(
        [(r["k"], r["t"], r["id"], r["v"], r["f"]) for r in arrow.to_pylist()],
        "k long, t long, id long, v long, f double",
    )
    aggs = {"s": ("sum", "v"), "l": ("collect_list", "v")}
    for spec in SPECS:
        got = wspark.window_aggregate(df, time="t", key="k", windows=spec, aggs=aggs)
        assert str(got.schema["window_start"].dataType) == "LongType()", spec
        have = {(r.k, r.window_start, r.window_end): r for r in got.collect()}
        want = window_oracle(rows, spec)
        assert set(have) == set(want), spec
        for key, vals in want.items():
            present = [v for v in vals if v is not None]
            assert have[key].s == (sum(present) if present else None), (spec, key)
            assert have[key].l == present, (spec, key)
    frames = {
        "s": ("sum", "v", "range:-1,-1"),
        "w": ("sum", "v", "range:-5,+5"),
        "c": ("collect_list", "v", "rows:3"),
    }
    got = {
        r.id: r
        for r in wspark.rolling_aggregate(
            df, time="t", key="k", order_by="id", aggs=frames
        ).collect()
    }
    local = windowagg.rolling_aggregate(arrow, time="t", key="k", order_by="id", aggs=frames)
    for r in local.to_pylist():
        for name in frames:
            assert got[r["id"]][name] == r[name], (name, r)
    assert pa.types.is_integer(local.schema.field("s").type)
