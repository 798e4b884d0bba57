"""A key with more rows than a Python worker gathers (``batch.CHUNK``) goes through the stream
engine piece by piece: the same windows as the whole key at once, and its first windows come
out before its last rows have arrived (it is never held whole)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from windowagg.engine.windows.plan import plan_windows
from windowagg.spark.batch import _engine

WINDOWS = ["tumbling:10s", "sliding:30s/5s", "session:3s"]
#: order-sensitive entries: a piece answered out of order, or a window cut between two pieces
#: and not joined again, changes them
AGGS = {
    "s": ("sum", "v"),
    "f": ("first", "v"),
    "l": ("last", "v"),
    "c": ("collect", "v"),
    "m": ("median", "v"),
}


def keyed(sizes: dict[str, int], seed: int = 5) -> pa.Table:
    """Each key's rows in time order (whole seconds, so that some share a time, and gaps; a few null
    times first, as Spark sorts them), keys in order: as a partition reaches the worker."""
    rng = np.random.default_rng(seed)
    parts = []
    for k, n in sorted(sizes.items()):
        t = np.sort(rng.integers(0, 3 * n // 2, n)) * 1_000_000 + 1_700_000_000_000_000
        valid = np.ones(n, bool)
        valid[: n // 200] = False
        parts.append(
            pa.table(
                {
                    "k": pa.array([k] * n),
                    "ts": pa.array(t, pa.timestamp("us", "UTC"), mask=~valid),
                    "v": pa.array(rng.integers(0, 100, n).astype(float)),
                }
            )
        )
    return pa.concat_tables(parts)


def rows(batches) -> list[tuple]:
    table = pa.Table.from_batches(batches)
    return sorted(map(tuple, (r.values() for r in table.to_pylist())), key=repr)


@pytest.mark.parametrize("windows", [WINDOWS, WINDOWS[2:]])
def test_a_key_bigger_than_a_chunk_streams_and_gives_the_same_windows(windows):
    table = keyed({"a": 500, "big": 6000, "c": 40, "d": 700})
    plan = plan_windows(table.schema, time="ts", windows=windows, aggs=AGGS, key="k")
    batches = table.to_batches(max_chunksize=97)
    whole = list(_engine(plan, None, by_key=True)(iter(batches)))  # every key at once

    read = []

    def arriving():
        for i, b in enumerate(batches):
            read.append(i)
            yield b

    out, seen = [], {}
    for b in _engine(plan, None, by_key=True, chunk=400)(arriving()):
        out.append(b)
        for k in set(b.column("k").to_pylist()):
            seen.setdefault(k, len(read))
    assert rows(out) == rows(whole)
    assert len(rows(whole)) > 500
    big_ends = (500 + 6000) // 97  # the batch that holds the big key's last row
    assert seen["big"] < big_ends - 20, "the big key was gathered whole"


def test_count_windows_keep_a_big_key_whole():
    """Count windows are not streamed (a window's end is a row, not a time): the answer is
    the same, gathered."""
    table = keyed({"a": 900, "b": 300})
    plan = plan_windows(
        table.schema,
        time="ts",
        windows=["count-sliding:50/20"],
        aggs={"f": ("first", "v")},
        key="k",
    )
    batches = table.to_batches(max_chunksize=97)
    whole = list(_engine(plan, None, by_key=True)(iter(batches)))
    assert rows(_engine(plan, None, by_key=True, chunk=100)(iter(batches))) == rows(whole)
