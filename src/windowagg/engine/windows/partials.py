"""Window aggregates from partial aggregates per (key, slice) (Scotty, Section 5: general
stream slicing; every window is a run of whole slices): where each entry's partial is a SQL
aggregate (sum, count, min, max), the rows are first reduced per key and slice by the engine
that holds them (Spark SQL, in the JVM), and the window engine then answers every window from
its slices, with the same rules and types as from the rows themselves: a sum is the sum of its
slices' sums (null slices skipped, a NaN slice makes it NaN), a count the sum of their counts,
a mean the sum of the sums over the sum of the counts (exact for decimals; integers summed in
doubles, as Spark's avg sums them, so that no sum leaves a long's range), min
and max the smallest and largest slice's; count_if the sum of the slices' counts of true,
bool_and, bool_or and product those of the slices' own (null slices skipped); max_by and min_by
the value of the slice whose largest (smallest) ordering value wins, the later slice on ties;
the statistics of a family with a state of moments (variances and standard deviations,
skewness and kurtosis, covariances and the correlation) merge each slice's state (count,
means, sums of powers of deviations: :mod:`windowagg.kernels.families`) by the family's own
combine (Chan et al.'s, Pebay's formulas), in time order (:mod:`windowagg.kernels.merge`).

A slice is the span between two consecutive edges of the windows' fused grids
(:class:`windowagg.slicing.slicer.StreamSlicer`), labelled by its start: a window
``[start, end)`` holds exactly the slices that start inside it. Sessions add a grid whose
period is the gap: a slice then spans less than the gap, so all its rows share one session,
and two consecutive slices of a key share one when the first time of the second is at most
the gap after the last time of the first (each slice keeps both; Scotty, Section 4.2). Count
windows alone slice each key's rows in time order into runs of ``g`` rows (``g`` the greatest
common divisor of their sizes and slides), which keep their row count and first and last
time: a window is ``size / g`` whole slices.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import pyarrow as pa

from ...aggregations import AGGREGATIONS, STATES, Evaluation, PartialKind, facts
from ...slicing import Session, Sliding
from ...slicing.slicer import StreamSlicer, fuse
from .plan import WindowPlan

__all__ = [
    "MERGED",
    "Partial",
    "counted",
    "grids",
    "mergeable",
    "over_partials",
    "partials",
]

#: the SQL aggregations a window answers from its slices' partials: those whose record names
#: the partials it merges from (:attr:`windowagg.aggregations.Facts.merged`)
MERGED = tuple(name for name, cls in AGGREGATIONS.items() if facts(cls).merged)


class Partial(NamedTuple):
    """One column of the partials table: ``fn`` (a SQL aggregate: sum, count, min, max,
    count_if, ...; ``fsum`` and a state's (:data:`STATES`) in doubles) of the input ``column``
    (None: count the rows), ``other`` its second column (the ordering of max_by, min_by, the
    pair's y); ``tmin``/``tmax``: the slice's first and last time, in the time's internal
    unit (sessions)."""

    name: str
    fn: PartialKind
    column: str | None
    other: str | None = None


def counted(plan: WindowPlan) -> bool:
    """Whether the windows are count windows (all of them: their slices are runs of rows)."""
    return all(getattr(w, "measure", "time") == "count" for w in plan.windows)


def mergeable(plan: WindowPlan) -> bool:
    """Whether every entry merges from SQL partials and every window is made of slices: time
    windows and sessions (slices of time), or count windows only (slices of rows)."""
    timed = all(isinstance(w, Session) or w.measure == "time" for w in plan.windows)
    merged = all(e.sql is not None and facts(e.agg).merged for e in plan.entries)
    return merged and (timed or counted(plan))


def grids(plan: WindowPlan) -> list[tuple[float, float]]:
    """The fused edge grids of the slices, ``(period, offset)``."""

    slicer = StreamSlicer()
    slicer.add_windows([w for w in plan.windows if isinstance(w, Sliding)])
    return fuse(slicer.grids + [(w.gap, 0) for w in plan.windows if isinstance(w, Session)])


def _stated(e) -> bool:
    """Whether an entry's slices keep its family's state (:data:`STATES`)."""
    kernel = facts(e.agg).kernel
    return kernel is not None and kernel.family in STATES


def _needs(e) -> list[tuple[PartialKind, str | None, str | None]]:
    """The partials ``(fn, column, other)`` an entry reads."""

    if e.column is None:
        return [(PartialKind.COUNT, None, None)]
    mean = e.evaluation is Evaluation.MEAN
    if mean and not pa.types.is_decimal(e.type):  # summed in doubles, as Spark's avg
        return [(PartialKind.FSUM, e.column, None), (PartialKind.COUNT, e.column, None)]
    merged = facts(e.agg).merged
    if _stated(e):  # the slice's state, over the pairs of a two-column aggregation
        x, y = e.column, e.other
        return [(k, y, x) if of_y else (k, x, y) for k, of_y in merged]
    out: list[tuple[PartialKind, str | None, str | None]] = []
    for k, of_y in merged:
        if of_y:  # the ordering column's own extreme
            out.append((k, e.other, None))
        else:
            out.append((k, e.column, e.other if k.paired else None))
    return out


def partials(plan: WindowPlan) -> list[Partial]:
    """The partial columns the entries need, each once."""
    out: dict[tuple, Partial] = {}
    for e in plan.entries:
        for need in _needs(e):
            out.setdefault(need, Partial(f"__wa_p{len(out)}", *need))
    if counted(plan):  # each slice's rows
        count = PartialKind.COUNT
        out.setdefault((count, None, None), Partial(f"__wa_p{len(out)}", count, None))
    if counted(plan) or any(isinstance(w, Session) for w in plan.windows):
        for fn in (PartialKind.TMIN, PartialKind.TMAX):
            out[(fn, None, None)] = Partial(f"__wa_{fn}", fn, None)
    return list(out.values())


def over_partials(plan: WindowPlan, time: str, keys: tuple[str, ...]) -> WindowPlan:
    """The plan that answers ``plan``'s entries over the partials table (its slice column
    ``time``, key columns ``keys``): each entry reads its partial columns, in its own result
    type."""
    name = {(p.fn, p.column, p.other): p.name for p in partials(plan)}
    entries = []
    for e in plan.entries:
        col = [name[need] for need in _needs(e)]
        counts = e.evaluation in (Evaluation.COUNT, Evaluation.COUNT_TRUE)
        if e.column is None or counts:  # the sum of the slices' counts
            entries.append(replace(e, evaluation=Evaluation.SUM, column=col[0]))
        elif e.evaluation is Evaluation.MEAN:
            entries.append(replace(e, column=col[0], counts=col[1]))
        elif _stated(e):  # the slices' states
            entries.append(replace(e, column=col[0], other=None, states=tuple(col)))
        elif e.other is not None:  # max_by, min_by: the slice's value, ordered by its extreme
            entries.append(replace(e, column=col[0], other=col[1]))
        else:
            entries.append(replace(e, column=col[0]))
    spanned = counted(plan) or any(isinstance(w, Session) for w in plan.windows)
    spans = ("__wa_tmin", "__wa_tmax") if spanned else None
    rows = name[(PartialKind.COUNT, None, None)] if counted(plan) else None
    return replace(plan, time=time, keys=keys, entries=tuple(entries), spans=spans, positions=rows)
