"""Point-in-time frames over a stream (the Spark path's worker): both tables in one stream
sorted by time, fed in batches of random sizes with rounds of a few rows, give every query what
the whole tables give (and so the definition, which tests/engine/test_rolling_at.py holds the
whole-table path to); and a long stream keeps only the frames' reach, not the events."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.engine.test_rolling_at import FRAMES, aggs_for, queries, query_table
from tests.engine.test_rolling_table import arrow, random_rows, same
from windowagg.engine.rolling.at import compute_at
from windowagg.engine.rolling.at_stream import AtStream
from windowagg.engine.rolling.plan import plan_rolling

EVENT = "__event"


def union(events: pa.Table, asked: pa.Table) -> tuple[pa.Table, dict[str, str]]:
    """Both tables in one, as Spark's path builds it: the queries' key and time under the
    events' names, their own columns renamed aside; sorted by time, nulls first."""
    names = {c: f"q_{c}" for c in asked.column_names}
    q = pa.table(
        {
            "k": asked.column("key"),
            "t": asked.column("when"),
            **{names[c]: asked.column(c) for c in asked.column_names},
        }
    )
    e = events.append_column(EVENT, pa.repeat(True, events.num_rows))
    q = q.append_column(EVENT, pa.repeat(False, q.num_rows))
    both = pa.concat_tables([e, q], promote_options="default")
    order = pc.sort_indices(both, [("t", "ascending", "at_start")])
    return both.take(order), names


def run(stream: AtStream, table: pa.Table, rng) -> tuple[pa.Table, int]:
    """Feed ``table`` in random batches; the answered queries and the most events kept."""
    out, most, i = [], 0, 0
    while i < table.num_rows:
        size = int(rng.integers(1, 40))
        for batch in table.slice(i, size).to_batches():
            out += stream.feed(batch)
        most = max(most, 0 if stream.events is None else stream.events.num_rows)
        i += size
    out += stream.finish()
    return pa.Table.from_batches(out), most


@pytest.mark.parametrize("text", FRAMES)
def test_a_stream_in_batches_equals_the_whole_tables(text) -> None:
    rng = np.random.default_rng(len(text))
    events = arrow(random_rows(len(text) + 7, n=300))
    asked = query_table(queries(len(text), n=150))
    aggs = aggs_for(text)
    plan = plan_rolling(events.schema, time="t", key="k", aggs=aggs, order_by="id")
    reads = ["k", "t", "id", "x", "i", "d"]
    want = compute_at(plan, events, asked, "when", ("key",))
    both, names = union(events, asked)
    got, _ = run(AtStream(plan, reads, names, EVENT, min_rows=8), both, rng)
    assert got.num_rows == asked.num_rows
    got = got.take(pc.sort_indices(got, [("qid", "ascending")]))
    for entry, column in zip(plan.entries, want):
        for a, b in zip(got.column(entry.name).to_pylist(), column.to_pylist()):
            assert same(a, b), (entry.name, a, b)


@pytest.mark.parametrize("text", ["range:-50,-1", "rows:20"])
def test_a_long_stream_keeps_the_frames_reach_not_the_events(text) -> None:
    """20,000 events of one key over 20,000 time units and a query every 10: the events kept
    stay within the frame's reach (and a round's rows), not the key's count."""
    n = 20_000
    events = pa.table(
        {"k": np.zeros(n, np.int64), "t": np.arange(n, dtype=np.int64), "x": np.ones(n)}
    )
    asked = pa.table(
        {"key": np.zeros(n // 10, np.int64), "when": np.arange(0, n, 10, dtype=np.int64)}
    )
    plan = plan_rolling(
        events.schema, time="t", key="k", aggs={"s": ("sum", "x", text)}, order_by=None
    )
    both, names = union(events, asked)
    got, most = run(
        AtStream(plan, ["k", "t", "x"], names, EVENT, min_rows=256), both, np.random.default_rng(1)
    )
    assert got.num_rows == n // 10
    assert most < 1_000, most  # a round's rows and the reach, not 20,000
    got = got.take(pc.sort_indices(got, [("when", "ascending")]))
    width = 50 if text.startswith("range") else 20
    want = [float(min(width, w + 1) if text == "rows:20" else min(50, w)) for w in range(0, n, 10)]
    assert got.column("s").to_pylist()[1:] == want[1:]
