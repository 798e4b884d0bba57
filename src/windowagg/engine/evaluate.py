"""Every entry's column over its frames' bounds, by SQL's rules (one engine for rolling frames
and windows, on pandas, Arrow and Spark's workers), over a table sorted by key, time and
order.

Each frame's bounds are found once (:class:`~windowagg.engine.sweep.FrameBounds`). Each entry is
answered by the one evaluator that serves it (:data:`EVALUATORS`, one module per strategy in
:mod:`windowagg.engine.evaluators`, each saying from the entry's evaluation, its record's, whether
it serves it): counts, sums, means and truth values (:mod:`~.evaluators.sums`), the selected row
(:mod:`~.evaluators.select`), moments (:mod:`~.evaluators.moments`), order statistics
(:mod:`~.evaluators.orders`), the values themselves (:mod:`~.evaluators.values`) and the FIFO
sweep of any other aggregation (:mod:`~.evaluators.sweep`). Where every given frame holds one
row (a tumbling window of one slice, over partials) and one row's result is its value
(:data:`~windowagg.aggregations.ONE_ROW`), that row's value, with no evaluator. A strategy of a
plug-in's own joins with :func:`add_evaluator`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pyarrow as pa

from ..aggregations import ONE_ROW
from .columns import ArrowColumn, Column, one_array, take
from .entries import Entry
from .evaluators import moments, orders, select, sums, sweep, values
from .evaluators.common import Inputs
from .stages import stage
from .sweep import FrameBounds

__all__ = ["EVALUATORS", "Evaluator", "add_evaluator", "evaluate", "evaluator_of"]

#: the evaluators, one per strategy; exactly one serves each entry
EVALUATORS: list[Evaluator] = [sums, select, moments, orders, values, sweep]


class Evaluator(Protocol):
    """What an evaluator is (a module of :mod:`windowagg.engine.evaluators`, or an object of a
    plug-in's own): the evaluations it serves (``SERVES``: it answers an entry whose
    evaluation, its record's, is one of them) and the entry's column over its frames'
    bounds."""

    SERVES: frozenset

    def evaluate(self, col: Column, fr: FrameBounds, e: Entry, inputs: Inputs) -> pa.Array: ...


def add_evaluator(evaluator: Evaluator) -> None:
    """Serve a strategy of one's own: entries whose record names an evaluation that
    ``evaluator`` serves (and no other evaluator does) are answered by it. Call it where the
    aggregation that names the strategy is defined, so that Spark's workers, which import
    that module to unpickle the aggregation, have it too."""
    if evaluator not in EVALUATORS:
        EVALUATORS.append(evaluator)


def evaluator_of(e: Entry) -> Evaluator:
    """The one evaluator that serves entry ``e`` (found once per evaluation while
    :data:`EVALUATORS` stays the list it was, of the length it had)."""
    global _served
    if _served[0] is not EVALUATORS or _served[1] != len(EVALUATORS):
        _served = EVALUATORS, len(EVALUATORS), {}
    found = _served[2].get(e.evaluation)
    if found is None:
        serving = [m for m in EVALUATORS if e.evaluation in m.SERVES]
        if len(serving) != 1:
            raise AssertionError(f"{len(serving)} evaluators serve {e.evaluation} ({e.name!r})")
        found = _served[2][e.evaluation] = serving[0]
    return found


#: the list :func:`evaluator_of` last read, its length, and the evaluator of each evaluation
_served: tuple[list, int, dict] = ([], 0, {})


@stage("evaluate")
def evaluate(
    entries: Sequence[Entry], table: pa.Table, frames: dict, times_col: ArrowColumn | None
) -> list[ArrowColumn]:
    """Every entry's column over the bounds of its frame (``frames``: frame ->
    :class:`~windowagg.engine.sweep.FrameBounds`, one answer per row, or per given pair of
    bounds: a window's rows), in the order of ``entries``."""

    inputs = Inputs({}, frames, entries, times_col)
    out = []
    for e in entries:
        fr = frames[e.frame]
        assert e.evaluation is not None  # filled in from the record
        if e.evaluation in ONE_ROW and e.column and not (e.counts or e.other or e.states):
            one = fr.one_row()
            if one is not None:  # every window one row (one slice): the row's value
                col = table.column(e.column).combine_chunks()
                out.append((col if one is True else take(col, one)).cast(e.type))
                continue
        if e.column is None:  # count(*): the frame's rows
            lo, hi = fr.bounds()
            out.append(pa.array(hi - lo, pa.int64()))
            continue
        for c in (e.column, e.other, e.counts, *e.states):
            if c is not None and c not in inputs.columns:
                inputs.columns[c] = Column(one_array(table.column(c)))
        out.append(evaluator_of(e).evaluate(inputs.columns[e.column], fr, e, inputs))
    return out
