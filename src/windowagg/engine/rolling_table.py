"""Rolling frames over an Arrow table (one engine for pandas, Arrow and Spark's workers): every
entry of a :class:`~windowagg.engine.rolling_plan.RollingPlan` over a table sorted by key, time
and order (:func:`~windowagg.engine.columns.arrange`), each frame's bounds found once
(:class:`~windowagg.engine.sweep.Frames`) and every entry evaluated over them
(:func:`~windowagg.engine.evaluate.evaluate`); :mod:`.rolling_stream` runs it over a stream
of batches.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .columns import segments, times_of
from .evaluate import evaluate
from .rolling_plan import RollingPlan
from .sweep import Frames

__all__ = ["compute"]


def compute(
    plan: RollingPlan,
    table: pa.Table,
    times: np.ndarray | None = None,
    seg: np.ndarray | None = None,
    frames: dict | None = None,
) -> list[pa.Array]:
    """Every entry's column over ``table`` (a ``pyarrow.Table`` in the order of
    :func:`~windowagg.engine.columns.arrange`), in the plan's order. ``frames`` (optional,
    filled here): each frame's :class:`~windowagg.engine.sweep.Frames`, for a caller that
    needs the bounds too."""
    times = times_of(plan, table) if times is None else times
    seg = segments(plan, table) if seg is None else seg
    frames = {} if frames is None else frames
    for f in plan.frames:
        frames[f] = Frames(times, seg, f)
    times_col = table.column(plan.time) if plan.time in table.column_names else None
    return evaluate(plan.entries, table, frames, times_col)
