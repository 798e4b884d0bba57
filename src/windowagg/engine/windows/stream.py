"""Windows over a stream, a group of keys at a time (every key of the group at each step): what
a key keeps between micro-batches and what each micro-batch reports, with every window computed
by the table engine (:func:`windowagg.engine.windows.table.window_table`, all the group's keys
in one call), columns in and columns out.

A key keeps *units*: the partials of its open slices (Scotty, Section 5: every window is a run
of whole slices; :func:`windowagg.engine.windows.slices.slice_partials`) where every entry merges
from SQL partials, else its rows. A micro-batch reduces its own rows to units, merges them with
the kept ones (two partials of one slice combine: sums add, counts add, min and max of the two),
and answers every window over the units. So a micro-batch costs its rows plus the key's open
slices, whatever the key has seen before.

With the watermark ``wm`` and ``horizon = wm - allowed_lateness`` (no row before it arrives any
more), a window is reported when its end is at or before ``wm`` and either it was not reported
before or a unit of this micro-batch falls in it (a late row): then again, with
``update = true`` if it held rows before (a session: if a session reported before lies in it,
under its new bounds when a late row extended or merged it). Two extra sums per window, of the
units' ``new`` and ``old`` marks, say which; no Python object per window. A key keeps the units
that a window ending after ``horizon`` can hold: a sliding window's from ``horizon - size``, a
session's from the start of its first session ending after ``horizon``. A group's keys share
``reported``: each step runs every key the group keeps, so each has reported up to the same
watermark (a key new to the group has no window reported before, and no unit kept).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...aggregations import COMBINE, Min, PartialKind, Sum
from ...slicing import Session
from ..columns import times_of
from ..entries import Entry
from ..keys import key_codes
from ..memory import zeros
from .partials import partials
from .plan import WindowPlan
from .slices import reduce_cells, slice_partials
from .table import window_table

__all__ = ["Advance", "WindowStream"]

NEW, OLD = "__wa_new", "__wa_old"  # a unit of this micro-batch, a unit kept from before
UNIT = "__wa_u"  # a unit's place in key and time order: a window's first is its key's


def _reported(j: int) -> str:
    return f"__wa_r{j}"  # a unit of a session of window j that was reported


def _flag(name: str) -> Entry:
    return Entry(name, Sum(), Sum.name, name, None, pa.int64())


class Advance(NamedTuple):
    """A group of keys' micro-batch: ``out`` the windows to report (the window table plus
    ``update``; None: none), ``units`` what the keys keep (None: nothing), ``reported`` the end
    up to which every window was reported, ``pending`` the earliest end of a window not yet
    reported (inf: none)."""

    out: pa.Table | None
    units: pa.Table | None
    reported: float
    pending: float


class WindowStream:
    """The windows of ``plan`` over a stream, a group of keys at a time (:meth:`advance`)."""

    def __init__(self, plan: WindowPlan, schema: pa.Schema):
        self.plan = plan
        self.sessions = [j for j, w in enumerate(plan.windows) if isinstance(w, Session)]
        # the mode is the schema's, not the rows': decided once on an empty table
        probe = slice_partials(plan, schema.empty_table())
        self.over = None if probe is None else probe[1]
        flags = [_flag(NEW), _flag(OLD), *(_flag(_reported(j)) for j in self.sessions)]
        if self.sessions:  # a session's key: the segment of its first unit
            flags.append(Entry(UNIT, Min(), Min.name, UNIT, None, pa.int64()))
        self.marked = replace(plan, entries=plan.entries + tuple(flags))
        self.marked_over = (
            None
            if self.over is None
            else replace(self.over, entries=self.over.entries + tuple(flags))
        )

    def units_of(self, rows: pa.Table) -> pa.Table:
        """A micro-batch's rows as units: per slice partials, or the rows themselves."""

        if self.over is None:
            return rows
        reduced = slice_partials(self.plan, rows)
        assert reduced is not None  # the schema's mode: decided once, in __init__
        return reduced[0]

    def _times(self, units: pa.Table) -> np.ndarray:
        """Each unit's time: a slice's start, a row's time."""
        return times_of(self.over if self.over is not None else self.plan, units)

    def _last_times(self, units: pa.Table, times: np.ndarray) -> np.ndarray:
        """Each unit's last time: a slice's last row's, a row's own."""
        if self.over is None or self.over.spans is None:
            return times
        return units.column(self.over.spans[1]).to_numpy(zero_copy_only=False).astype(float)

    def _arranged(self, units: pa.Table) -> tuple[pa.Table, np.ndarray]:
        """Units by key and time, those of one key and slice combined into one (the kept and
        the new partials of a slice), and the key segments."""

        times = self._times(units)
        codes = key_codes(units, self.plan.keys).codes
        order = np.lexsort((times, codes))
        starts = times[order]
        codes = codes[order]
        edge = np.r_[True, (codes[1:] != codes[:-1]) | (starts[1:] != starts[:-1])]
        if self.over is None or edge.all():
            units = units.take(pa.array(order))
        else:
            cell = np.empty(len(order), np.int64)
            cell[order] = np.cumsum(edge) - 1
            cells = int(np.count_nonzero(edge))
            specs = [(p.name, COMBINE[p.fn], p.name) for p in partials(self.plan)]
            specs += [(c, PartialKind.MAX, c) for c in (NEW, OLD, *map(_reported, self.sessions))]
            cols = reduce_cells(
                units,
                times,
                cell,
                cells,
                specs,
                wraps=any(e.wraps for e in self.plan.entries),
            )
            first = pa.array(order[edge])  # a row of each slice: its keys
            over = self.over
            out = {k: units.column(k).take(first) for k in over.keys}
            out[over.time] = pa.array(starts[edge])
            units, codes = pa.table(out | cols), codes[edge]
        seg = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1], True]).astype(np.int64)
        return units, seg

    def advance(
        self, units: pa.Table | None, rows: pa.Table | None, reported: float, wm: float
    ) -> Advance:
        """One step of a group of keys: their kept ``units`` (None: none) and the
        micro-batch's ``rows`` (None: none, a timeout) at watermark ``wm``, everything before
        ``reported`` reported (every key of the group runs at every step)."""

        parts = []
        for t, new in ((units, 0), (None if rows is None else self.units_of(rows), 1)):
            if t is None or not t.num_rows:
                continue
            n = t.num_rows
            t = t.append_column(NEW, pa.array(np.full(n, new, np.int64)))
            t = t.append_column(OLD, pa.array(np.full(n, 1 - new, np.int64)))
            for j in self.sessions:
                if _reported(j) not in t.column_names:
                    t = t.append_column(_reported(j), pa.array(zeros(n, np.int64)))
            parts.append(t)
        if not parts:
            return Advance(None, None, max(reported, wm), math.inf)
        whole = pa.concat_tables(parts, promote_options="default").combine_chunks()
        whole, seg = self._arranged(whole)
        if self.sessions:
            whole = whole.append_column(UNIT, pa.array(np.arange(whole.num_rows, dtype=np.int64)))
        table = window_table(self.marked, whole, self.marked_over, seg)
        spec = pc.index_in(table.column("window"), value_set=pa.array(self.plan.specs))
        spec = spec.to_numpy(zero_copy_only=False)  # each window's spec, by its index
        start, end = (_micros(table.column(c)) for c in ("window_start", "window_end"))
        new = table.column(NEW).to_numpy() > 0
        old = table.column(OLD).to_numpy() > 0
        report = (end <= wm) & ((end > reported) | new)
        update = old & (end <= reported)
        horizon = wm - self.plan.lateness
        times = self._times(whole)
        last = self._last_times(whole, times)  # sorted in each key: slices are disjoint
        if self.sessions:  # each unit's key, and each window's (that of its first unit)
            unit_key = np.repeat(np.arange(len(seg) - 1), np.diff(seg))
            key = np.searchsorted(seg, table.column(UNIT).to_numpy(), side="right") - 1
        keep = zeros(whole.num_rows, bool)
        for j, w in enumerate(self.plan.windows):
            mine = spec == j
            if isinstance(w, Session):  # j in self.sessions
                was = table.column(_reported(j)).to_numpy() > 0
                update[mine] = was[mine]
                live = mine & (end > horizon)
                if live.any():  # a key keeps its units from its first live session on
                    first = np.full(len(seg) - 1, np.inf)
                    np.minimum.at(first, key[live], start[live])
                    keep |= last >= first[unit_key]
                hit = np.flatnonzero(mine & report)
                if len(hit):  # mark the units of every reported session
                    marks = whole.column(_reported(j)).to_numpy().copy()
                    for i in hit:
                        a, b = seg[key[i]], seg[key[i] + 1]
                        lo = a + np.searchsorted(last[a:b], start[i], side="left")
                        hi = a + np.searchsorted(last[a:b], end[i], side="left")
                        marks[lo:hi] = 1
                    whole = whole.set_column(
                        whole.schema.get_field_index(_reported(j)), _reported(j), pa.array(marks)
                    )
            else:
                keep |= times >= horizon - w.size
        pending = float(end[end > wm].min()) if (end > wm).any() else math.inf
        out = None
        if report.any():
            out = table.filter(pa.array(report)).drop_columns(
                [f.name for f in self.marked.entries[len(self.plan.entries) :]]
            )
            out = out.append_column("update", pa.array(update[report]))
        marks = [c for c in (NEW, OLD, UNIT) if c in whole.column_names]
        kept = whole.filter(pa.array(keep)).drop_columns(marks) if keep.any() else None
        return Advance(out, kept, max(reported, wm), pending)


def _micros(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if pa.types.is_timestamp(col.type):
        return col.cast(pa.int64()).to_numpy().astype(float)
    return col.to_numpy(zero_copy_only=False).astype(float)
