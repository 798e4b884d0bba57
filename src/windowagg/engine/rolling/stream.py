"""Rolling frames over a stream of batches sorted by time only (a partition of a Spark
DataFrame, every key in it at once): a row is answered once every row its frames can hold has
arrived, and only the rows that later frames can still reach are kept.

Spark sorts a partition by one timestamp column with a radix sort, several times faster than
by key then time (a comparison sort whose prefix, the key, ties on most comparisons), so the
rows come in time order, keys interleaved. Each round takes the rows kept from the last round
(grouped by key, in time order) and the new rows, groups them by key with a stable sort (a
key's kept rows are older than its new ones, so each key's rows stay in time order), and runs
the table engine (:func:`~windowagg.engine.rolling.table.compute`) over all of them.

The *frontier* is the time of the last row that arrived: every later row has a time at or
after it. A row of a range frame ending at ``end`` is complete when ``t + end`` lies before the
frontier; a row of a rows frame when its key has ``end`` rows after it; a frame without an end
waits for the end of the stream. A key keeps its rows from the start of the frame of its first
row not yet answered (or of a row still to come, at the frontier). So memory is bounded by the
frames of the keys of a partition (a frame without a start keeps its key's rows), not by any
key's row count, and a round holds at least twice the rows it keeps, so that re-reading them
costs at most about half of the work.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns import arrange, times_of
from ..keys import as_key
from ..memory import zeros
from .plan import RollingPlan
from .table import compute

__all__ = ["RollingStream"]

DONE = "__wa_done"  # a kept row already answered


def _key_codes(plan: RollingPlan, table: pa.Table) -> np.ndarray:
    """One int64 per row, equal for rows of the same key (null keys are one key)."""

    code = zeros(table.num_rows, np.int64)
    for k in plan.keys:
        enc = pc.dictionary_encode(as_key(table.column(k).combine_chunks()), null_encoding="encode")
        c = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        code = code * (len(enc.dictionary) + 1) + c
    return code


class RollingStream:
    """Feed batches sorted by time (then order), take back the answered rows with their new
    columns: ``feed`` per batch, then ``finish``."""

    def __init__(
        self, plan: RollingPlan, columns: list[str], min_rows: int = 65536, ordered: bool = True
    ):
        self.plan = plan
        self.ordered = ordered  # batches come sorted by time; else behind a watermark
        self.columns = columns  # the input columns that go out again
        self.min_rows = min_rows
        self.pending: list[pa.RecordBatch] = []  # batches not yet processed
        self.pending_rows = 0
        self.carry: pa.Table | None = None  # kept rows, grouped by key, with the DONE column

    def feed(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        """Take one batch; return the record batches of the rows answered so far."""
        if batch.num_rows:
            self.pending.append(batch)
            self.pending_rows += batch.num_rows
        held = 0 if self.carry is None else self.carry.num_rows
        if self.pending_rows < max(self.min_rows, 2 * held):
            return []
        return self._round(final=False)

    def finish(self) -> list[pa.RecordBatch]:
        return self._round(final=True)

    def advance(
        self, carry: pa.Table | None, rows: pa.Table | None, watermark: float
    ) -> tuple[list[pa.RecordBatch], pa.Table | None]:
        """A stream whose rows come in any order, none behind ``watermark`` (Spark drops
        them): the kept rows ``carry`` (None: none) and the new ``rows`` (None: none); every
        row before the watermark is answered once (its frames, which end at or before it, hold
        every row they will ever hold). Returns the answered rows and what to keep."""
        self.carry = carry
        self.pending = [] if rows is None else rows.to_batches()
        out = self._round(final=False, frontier=watermark)
        return out, self.carry

    def _round(self, final: bool, frontier: float | None = None) -> list[pa.RecordBatch]:
        new = pa.Table.from_batches(self.pending) if self.pending else None
        self.pending, self.pending_rows = [], 0
        if new is not None:
            new = new.append_column(DONE, pa.array(zeros(new.num_rows, bool)))
        parts = [t for t in (self.carry, new) if t is not None]
        if not parts:
            return []
        table = pa.concat_tables(parts).combine_chunks()
        if table.num_rows == 0:
            return []
        if frontier is None:
            frontier = (
                np.inf
                if final or new is None
                else times_of(self.plan, new.slice(new.num_rows - 1))[-1]
            )
        if self.ordered:
            codes = _key_codes(self.plan, table)
            small = np.uint16 if codes.max(initial=0) < 2**16 else np.int64  # a radix sort
            order = np.argsort(codes.astype(small), kind="stable")
            table = table.take(order)
            codes = codes[order]
            seg = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True]).astype(np.int64)
            times = times_of(self.plan, table)
        else:  # kept rows first: ties keep them first
            arranged, times, seg = arrange(self.plan, table)
            table = table if arranged is None else table.take(arranged)
        n = table.num_rows
        frames: dict = {}
        results = compute(self.plan, table, times, seg, frames)
        sizes = np.diff(seg)
        first = np.repeat(seg[:-1], sizes)  # each row's segment start and end
        end = np.repeat(seg[1:], sizes)
        rank = np.arange(n) - first
        ready = np.ones(n, bool) if final else self._complete(times, rank, end - first, frontier)
        done = table.column(DONE).to_numpy(zero_copy_only=False)
        emit = ready & ~done
        out = []
        if emit.any():
            idx = pa.array(np.flatnonzero(emit))
            names = [*self.columns, *(e.name for e in self.plan.entries)]
            cols = [table.column(c).take(idx) for c in self.columns]
            cols += [r.take(idx) for r in results]
            out = pa.Table.from_arrays(cols, names=names).to_batches(max_chunksize=16384)
        if final:
            self.carry = None
            return out
        keep = self._needed(times, seg, ready, frames, frontier)
        kept = table.filter(pa.array(keep))
        self.carry = kept.set_column(kept.schema.get_field_index(DONE), DONE, pa.array(ready[keep]))
        return out

    def _complete(self, times, rank, size, frontier) -> np.ndarray:
        """Rows every frame of which has all its rows: none that are still to come."""
        if not self.ordered:  # behind the watermark: nothing at or before it is to come
            return times < frontier
        ok = np.ones(len(times), bool)
        for f in self.plan.frames:
            if f.end is None:
                ok[:] = False
            elif f.kind == "rows":
                ok &= rank + int(f.end) <= size - 1
            else:
                ok &= times + f.end < frontier
        return ok

    def _needed(self, times, seg, ready, frames, frontier) -> np.ndarray:
        """The rows a row not yet answered, or still to come, may hold in a frame."""
        n = len(times)
        sizes = np.diff(seg)
        starts = seg[:-1]
        answered = np.add.reduceat(ready.astype(np.int64), starts)  # a prefix of each key
        first_open = starts + answered  # per key: its first row not answered (or its end)
        open_key = first_open < seg[1:]
        keep = ~ready  # unanswered rows stay
        row = np.arange(n)
        for f, fr in frames.items():
            if f.start is None:  # the key's rows from its first
                return np.ones(n, bool)
            lo, _ = fr.bounds()
            # keys with an open row: from the start of that row's frame
            need_from = np.where(open_key, lo[np.minimum(first_open, n - 1)], n)
            keep |= row >= np.repeat(need_from, sizes)
            # every key: rows a row still to come (at the frontier or later) may reach
            if f.kind == "rows":
                keep |= row >= np.repeat(seg[1:], sizes) + int(f.start)
            else:
                keep |= times >= frontier + f.start
        return keep
