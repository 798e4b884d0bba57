"""Any other aggregation, the user's own included: the FIFO sweep of its own partials over the
frame's non-null values (:func:`windowagg.engine.sweep.rolling`; a NaN is a value that reaches
the ``lift`` of an aggregation without a kernel, Arrow's and Spark's rule; pandas' and numpy's
NaN arrive here as nulls), compiled where the aggregation has a kernel."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...aggregations import Evaluation, facts
from ..columns import Column
from ..entries import Entry
from ..sweep import FrameBounds, rolling
from .common import (
    Inputs,
    with_nulls,
)

#: the evaluations this evaluator serves (the library's own aggregations and the user's)
SERVES = frozenset({Evaluation.SWEEP})


def evaluate(col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array:
    """Entry ``e``'s column over its frames' bounds ``fr`` (its input column ``col``)."""
    f = facts(e.agg)
    rows = np.arange(len(col.valid), dtype=float)
    out = rolling(col.floats(), fr, e.agg, rows if f.pairs else None, col.valid)
    if f.result == "arg":  # the row of the arg: the time column's value there
        null = np.isnan(out.astype(float))
        return pc.take(
            inputs.times_col, pa.array(np.where(null, 0, out).astype(np.int64), mask=null)
        )
    if out.dtype != object:
        null = np.isnan(out)
        if pa.types.is_integer(e.type):  # a count, or a count's estimate, rounded
            return with_nulls(np.rint(np.where(null, 0, out)).astype(np.int64), null, e.type)
        return with_nulls(out, null, e.type)
    values = [v._asdict() if hasattr(v, "_asdict") else v for v in out]
    if pa.types.is_list(e.type) and not pa.types.is_floating(e.type.value_type):
        return pa.array(values, type=pa.list_(pa.float64())).cast(e.type)  # exact ints
    return pa.array(values, type=e.type)
