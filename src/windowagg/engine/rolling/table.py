"""Rolling frames over an Arrow table (one engine for pandas, Arrow and Spark's workers): every
entry of a :class:`~windowagg.engine.rolling.plan.RollingPlan` over a table sorted by key, time
and order (:func:`~windowagg.engine.columns.arrange`), each frame's bounds found once
(:class:`~windowagg.engine.sweep.FrameBounds`) and every entry evaluated over them
(:func:`~windowagg.engine.evaluate.evaluate`); :func:`rolling_columns` arranges a
user's table for it and moves the answers back to the table's order; :mod:`.stream` runs it
over a stream of batches.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..columns import ArrowColumn, arrange, moved, segments, take, times_of
from ..evaluate import evaluate
from ..sweep import FrameBounds
from .plan import RollingPlan

__all__ = ["compute", "read_columns", "rolling_columns"]


def compute(
    plan: RollingPlan,
    table: pa.Table,
    times: np.ndarray | None = None,
    seg: np.ndarray | None = None,
    frames: dict | None = None,
) -> list[pa.Array]:
    """Every entry's column over ``table`` (a ``pyarrow.Table`` in the order of
    :func:`~windowagg.engine.columns.arrange`), in the plan's order. ``frames`` (optional,
    filled here): each frame's :class:`~windowagg.engine.sweep.FrameBounds`, for a caller that
    needs the bounds too."""
    times = times_of(plan, table) if times is None else times
    seg = segments(plan, table) if seg is None else seg
    frames = {} if frames is None else frames
    for f in plan.frames:
        frames[f] = FrameBounds(times, seg, f)
    times_col = table.column(plan.time) if plan.time in table.column_names else None
    return evaluate(plan.entries, table, frames, times_col)


def read_columns(plan: RollingPlan, arrow: pa.Table) -> pa.Table:
    """The columns the plan reads: keys, time, order and the entries' inputs."""
    inputs = [c for e in plan.entries for c in e.inputs]
    return arrow.select(list(dict.fromkeys([*plan.keys, plan.time, *plan.order_by, *inputs])))


def rolling_columns(plan: RollingPlan, arrow: pa.Table) -> tuple[list[str], list[ArrowColumn]]:
    """The entries' names and columns over ``arrow`` (the user's table as Arrow), in its own
    row order: the rows arranged by key, time and order, the entries computed, and their
    columns moved back."""

    order, times, seg = arrange(plan, arrow)
    inputs = {c for e in plan.entries for c in e.inputs}
    # what the entries read (the times where an entry reads them, for an arg, or where
    # nothing else is read)
    timed = plan.time in inputs or any(e.sql is None for e in plan.entries) or not inputs
    used = [plan.time] * timed + [*plan.order_by, *inputs - {plan.time}]
    rows = arrow.select(list(dict.fromkeys(used)))
    if order is not None:
        rows = pa.table({c: take(rows.column(c), order) for c in rows.column_names})
    columns = compute(plan, rows.combine_chunks(), times, seg)
    if order is None:
        return [e.name for e in plan.entries], columns
    return [e.name for e in plan.entries], moved(columns, order)
