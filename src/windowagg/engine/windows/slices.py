"""Per (key, slice) partials of a local table, compiled, before any sort: the local
counterpart of the Spark SQL pre-aggregation (:mod:`.partials`, Scotty, Section 5:
general stream slicing). Slices are fewer than rows, so the window engine then sorts and walks
the slices, not the rows.

Each row's slice is its step on the windows' grid (one grid: the slides' and the session gap's
greatest common divisor, :func:`windowagg.engine.windows.partials.grids`); a key's slices from
its first to its last are one run of cells of a flat array, and every row adds itself to its
cell in one pass (:mod:`windowagg.kernels.cells`), all keys at once. Where the keys' runs
would hold many more cells than there are rows (a long grid between sparse rows), the cells
are the runs of equal (key, step) in the rows' order by key and step instead (the steps sorted
as integers), and each column is reduced in that order, cells written in sequence, parts of
whole cells on both cores. Cells without a row are dropped; what is left is in key and slice
order already.

Partials per cell follow Spark's rules, as the SQL aggregates would: a sum of the valid values
(NaN makes it NaN, a cell without a value is null), counts, min and max in the column's type
with NaN the largest, the first and last time (sessions).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ...aggregations import COMBINE, PartialKind
from ...errors import ArithmeticOverflowError
from ...kernels import cells as kernels
from .. import parallel
from ..columns import EXACT, take, times_of
from ..evaluators.sums import sums_stay_small
from ..keys import Keyed, key_codes, keyed_sort, spark_floats
from ..memory import empty, zeros
from ..stages import stage
from .partials import counted, grids, mergeable, over_partials, partials
from .plan import WindowPlan, beyond_doubles

__all__ = ["SLICE", "reduce_cells", "slice_partials"]

#: the partials table's slice column (each slice's start on the grid, in the time's unit)
SLICE = "__wa_s"
#: the partials of a slice's times: its first and last (of the rows' times)
_TIMES = (PartialKind.TMIN, PartialKind.TMAX)

#: cells per row beyond which a key's run of cells is too sparse to lay out flat
SPARSE = 2


def _compiled(fn: PartialKind, t: pa.DataType) -> bool:
    """Whether the compiled pass takes partial ``fn`` of a column of type ``t``: counts of
    any column, sums of numbers, min and max of numbers, timestamps and dates (the others,
    Spark SQL's alone, leave the rows to the window engine)."""

    if fn not in COMBINE:
        return False
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t)
    return (
        fn is PartialKind.COUNT
        or numeric
        or (
            fn in (PartialKind.MIN, PartialKind.MAX)
            and (pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_duration(t))
        )
    )


def slice_partials(
    plan: WindowPlan, table: pa.Table
) -> tuple[pa.Table, WindowPlan, np.ndarray] | None:
    """The partials table (key columns, ``SLICE``, one column per partial), the plan that
    answers ``plan`` over it, and its key segments; None where the call needs the rows
    (entries without SQL partials, count windows, grids that are not one, non-numeric
    columns)."""

    if not mergeable(plan) or counted(plan) or len(grid := grids(plan)) != 1:
        return None
    if beyond_doubles(plan):  # edges doubles would round: the rows' exact path
        return None
    parts = partials(plan)
    if any(
        p.column is not None and not _compiled(p.fn, table.schema.field(p.column).type)
        for p in parts
    ):
        return None

    (period, offset), n = grid[0], table.num_rows
    times = times_of(plan, table)
    if times.dtype == np.int64:  # whole numbers beyond doubles: the rows' exact path
        return None
    keyed = key_codes(table, plan.keys)
    steps = empty(n, np.int64)
    with stage("slice index"):
        limit = float(EXACT * period)

        def index(a: int, b: int, into: np.ndarray = steps) -> bool:
            return kernels.slice_index(times[a:b], float(period), float(offset), limit, into[a:b])

        fine = parallel.by_chunks(index, n)
        del index
        if not all(fine):
            return None  # steps doubles cannot tell apart: the rows' path refuses them
    cells, span, base, cell = slice_cells(keyed.codes, steps, keyed.m)
    runs = cells > SPARSE * n + keyed.m
    order = None  # the rows in their cells' order (None: the input's)
    if runs:  # every cell holds a row
        order, cell, cell_code, cell_step, rows, cells = _runs(keyed, steps)
    del steps  # from here on, each row's cell is all that is read of it (and its columns)
    keyed = keyed._replace(codes=np.empty(0, np.int64))
    if not runs:  # only the occupied cells from here on
        cell_code, cell_step, rows, cells = _occupied(cell, cells, span, base)
    rows = pa.array(rows)
    specs = [
        (
            p.name,
            PartialKind.ROWS
            if p.fn is PartialKind.COUNT and p.column is None
            else COMBINE[p.fn]
            if p.fn in _TIMES
            else p.fn,
            None if p.fn in _TIMES else p.column,
        )
        for p in parts
    ]
    cols = reduce_cells(
        table, times, cell, cells, specs, rows, any(e.wraps for e in plan.entries), order
    )
    at = keyed.first[cell_code]
    out = {k: spark_floats(take(table.column(k), at)) for k in plan.keys}  # as Spark shows it
    out[SLICE] = pa.array(cell_step * float(period) + float(offset))
    seg = np.flatnonzero(np.r_[True, cell_code[1:] != cell_code[:-1], True]).astype(np.int64)
    if not cells:
        seg = np.zeros(1, np.int64)
    over = over_partials(plan, SLICE, tuple(plan.keys))
    return pa.table(out | cols), over, seg


@stage("cell partials")
def reduce_cells(
    table: pa.Table,
    times: np.ndarray,
    cell: np.ndarray,
    cells: int,
    specs: list,
    rows: pa.Array | None = None,
    wraps: bool = False,
    order: np.ndarray | None = None,
) -> dict[str, pa.Array]:
    """Per cell (``cell[i]``: row i's, -1: none), one Arrow column per ``(name, fn, column)``
    of ``specs``: ``rows`` (the cell's rows; ``rows`` when given), ``count`` (its valid
    values), ``sum`` (``fsum``: in doubles), ``min`` or ``max`` of ``column`` (None: the
    times) by Spark's rules, one compiled pass per column and kind. An integer sum beyond a
    long's range raises :class:`~windowagg.errors.ArithmeticOverflowError` unless it
    ``wraps`` (Spark with ANSI mode off). ``order``: ``cell[i]`` is the cell of row
    ``order[i]`` (cells in sequence: the cells are written in sequence, the rows read at
    random, rather than the other way round)."""

    n = len(cell)
    done: dict[tuple, tuple] = {}

    def each(kernel: Callable[..., None], inputs: tuple, outputs: tuple) -> None:
        """``kernel(cell, *inputs, *outputs, order)`` over the rows on the cores
        (:func:`each_cell`)."""
        each_cell(kernel, cell, inputs, outputs, order)

    def valid_of(name: str) -> np.ndarray:
        col = table.column(name)
        return (
            np.ones(n, bool)
            if not col.null_count
            else ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
        )

    def column(name: str | None) -> tuple[np.ndarray, np.ndarray, pa.DataType | None]:
        if name is None:  # the times: every row with one is in a cell
            return times, np.ones(n, bool), None
        col, valid = table.column(name), valid_of(name)
        if pa.types.is_date32(col.type):
            data = col.cast(pa.int32())
        elif pa.types.is_temporal(col.type):
            data = col.cast(pa.int64())
        else:
            data = col
        data = data.fill_null(0) if data.null_count else data
        return data.to_numpy(zero_copy_only=False), valid, col.type

    def extremes(name: str | None) -> tuple:
        if ("x", name) not in done:
            values, valid, type_ = column(name)
            lo, hi = empty(cells, values.dtype), empty(cells, values.dtype)
            counts = zeros(cells, np.int64)
            each(kernels.cell_extremes, (values, valid), (lo, hi, counts))
            done[("x", name)] = (lo, hi, counts == 0, type_)
        return done[("x", name)]

    def sums(name: str, floats: bool = False) -> tuple:
        """The cells' sums (in doubles for a float column, or ``floats``) and value counts."""
        if ("s", name, floats) not in done:
            values, valid, _ = column(name)
            wide = np.float64 if floats or np.issubdtype(values.dtype, np.floating) else np.int64
            total, counts = zeros(cells, wide), zeros(cells, np.int64)
            each(kernels.cell_sums, (values.astype(wide, copy=False), valid), (total, counts))
            if wide is np.int64 and not wraps:
                if order is not None:
                    values, valid = values[order], valid[order]
                _no_overflow(name, values, valid, cell, cells)
            done[("s", name, floats)] = (total, counts)
        return done[("s", name, floats)]

    cols: dict[str, pa.Array] = {}
    for name, fn, col in specs:
        if fn is PartialKind.ROWS:
            if rows is None:
                counts = zeros(cells, np.int64)
                each(kernels.cell_rows, (np.ones(n, bool),), (counts,))
                rows = pa.array(counts)
            cols[name] = rows
        elif fn is PartialKind.COUNT:
            counts = zeros(cells, np.int64)
            each(kernels.cell_rows, (valid_of(col),), (counts,))
            cols[name] = pa.array(counts)
        elif fn in (PartialKind.SUM, PartialKind.FSUM):  # FSUM in doubles (as Spark's avg)
            total, counts = sums(col, fn is PartialKind.FSUM)
            cols[name] = pa.array(total, mask=counts == 0)
        else:
            lo, hi, none, type_ = extremes(col)
            out = pa.array(lo if fn is PartialKind.MIN else hi, mask=none)
            cols[name] = out if type_ is None else out.cast(type_)
    return cols


@stage("cells")
def slice_cells(
    codes: np.ndarray, steps: np.ndarray, m: int
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Every key's run of cells, from its first slice to its last: the number of cells,
    ``span`` (two per code: its first step at ``2k``), ``base`` (m + 1: each code's first
    cell) and ``cell[i]``, row i's cell (-1: no time). Where every key's run from the first
    step of all to the last is at most ``n + m`` cells in all, every key gets that run: a
    row's cell is then computed from its code and step alone, with no lookup per key (many
    keys: random reads of per-key arrays). Where the keys' runs hold more than
    ``SPARSE * n + m`` cells, ``cell`` is left unwritten (the caller numbers cells another
    way). Each pass runs in chunks of the rows on the cores (each key's span: a chunk's own,
    merged, where they are few beside the rows)."""
    n = len(codes)
    none, top = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    spans = parallel.by_chunks(lambda a, b: kernels.step_span(steps[a:b]), n)
    lo, hi = min(int(x) for x, _ in spans), max(int(y) for _, y in spans)
    width = hi - lo + 1 if hi >= lo else 0
    span = empty(2 * m, np.int64)
    cell = empty(n, np.int64)
    if m == 0 or width <= (n + m) // m:  # one grid for all keys (no overflow of m * width)
        span[0::2] = lo
        base = np.arange(m + 1, dtype=np.int64) * width
        parallel.by_chunks(
            lambda a, b: kernels.grid_cells(codes[a:b], steps[a:b], lo, width, cell[a:b]), n
        )
        return int(base[m]), span, base, cell
    span[0::2], span[1::2] = top, none
    pieces = parallel.chunks(n)
    if len(pieces) > 1 and 2 * m * len(pieces) <= n:  # each chunk's spans, then merged
        own = [span] + [span.copy() for _ in pieces[1:]]
        parallel.on_cores(
            lambda j: kernels.key_spans(codes[slice(*pieces[j])], steps[slice(*pieces[j])], own[j]),
            list(range(len(pieces))),
        )
        for other in own[1:]:
            np.minimum(span[0::2], other[0::2], out=span[0::2])
            np.maximum(span[1::2], other[1::2], out=span[1::2])
    else:
        kernels.key_spans(codes, steps, span)
    first, last = span[0::2], span[1::2]
    base = zeros(m + 1, np.int64)
    np.cumsum(np.where(last >= first, last - first + 1, 0), out=base[1:])
    if base[m] > SPARSE * n + m:
        return int(base[m]), span, base, cell
    span[1::2] = base[:-1] - first  # base - first: one read per row below
    parallel.by_chunks(lambda a, b: kernels.keyed_cells(codes[a:b], steps[a:b], span, cell[a:b]), n)
    return int(base[m]), span, base, cell


def each_cell(
    kernel: Callable[..., None],
    cell: np.ndarray,
    inputs: tuple,
    outputs: tuple,
    order: np.ndarray | None = None,
) -> None:
    """``kernel(cell, *inputs, *outputs, order)`` (a cell kernel of
    :mod:`windowagg.kernels.cells`: ``outputs`` per cell, zeroed) over the rows, on the
    cores: rows in their cells' order (``order``) in parts of whole cells; rows in the
    input's order in chunks, each into outputs of its own where the cells are few beside
    the rows, then merged (counts and sums added; extremes by
    :func:`~windowagg.kernels.cells.merge_extremes`)."""
    if order is not None:
        parallel.on_cores(
            lambda p: kernel(cell[p[0] : p[1]], *inputs, *outputs, order[p[0] : p[1]]),
            _cell_parts(cell),
        )
        return
    none = np.empty(0, np.int64)
    n, cells = len(cell), len(outputs[0])
    pieces = parallel.chunks(n, n // max(1, cells))  # each with outputs of its own: few
    if len(pieces) == 1:
        kernel(cell, *inputs, *outputs, none)
        return
    own = [outputs] + [tuple(zeros(len(o), o.dtype) for o in outputs) for _ in pieces[1:]]

    def run(j: int) -> None:
        a, b = pieces[j]
        kernel(cell[a:b], *(x[a:b] for x in inputs), *own[j], none)

    parallel.on_cores(run, list(range(len(pieces))))

    def merge(a: int, b: int) -> None:
        for other in own[1:]:
            if kernel is kernels.cell_extremes:
                kernels.merge_extremes(*(o[a:b] for o in outputs), *(o[a:b] for o in other))
            else:
                for o, p in zip(outputs, other):
                    np.add(o[a:b], p[a:b], out=o[a:b])

    parallel.by_chunks(merge, cells)


@stage("cells")
def _occupied(
    cell: np.ndarray, cells: int, span: np.ndarray, base: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Only the cells that hold a row, numbered anew in order: each one's key code, grid
    step and rows, and how many there are; ``cell`` renumbered in place."""
    rows = zeros(cells, np.int64)
    each_cell(kernels.cell_rows, cell, (np.ones(len(cell), bool),), (rows,))
    code, step, new = (empty(cells, np.int64) for _ in range(3))
    cells = int(kernels.compact_cells(rows, span, base, code, step, new))
    parallel.by_chunks(lambda a, b: kernels.renumbered(cell[a:b], new), len(cell))
    return code[:cells], step[:cells], rows[:cells], cells


def _cell_parts(cell: np.ndarray) -> list[tuple[int, int]]:
    """Rows in their cells' order (``cell[i]``: the i-th row's cell, or -1) in one part per
    core, each cut where a cell ends, so that no cell is written from two threads."""
    n = len(cell)
    cuts = [0]
    for piece in parallel.chunks(n)[1:]:
        x = max(int(piece[0]), cuts[-1] + 1)
        if x < n:
            after = cell[x:] != cell[x - 1]
            x = x + int(np.argmax(after)) if after.any() else n
        if x < n:
            cuts.append(x)
    return list(itertools.pairwise([*cuts, n]))


def _no_overflow(
    name: str, values: np.ndarray, valid: np.ndarray, cell: np.ndarray, cells: int
) -> None:
    """Raise where a cell's integer sum leaves a long's range (the compiled sums wrap): only
    cells whose absolute values add up to 2^62 or more can, and only those are summed
    exactly."""
    if sums_stay_small(values):
        return
    inside = valid & (cell >= 0)
    bound = np.bincount(cell[inside], np.abs(values[inside].astype(float)), minlength=cells)
    for c in np.flatnonzero(bound >= 2.0**62):
        total = sum(int(v) for v in values[inside & (cell == c)])
        if not -(2**63) <= total < 2**63:
            raise ArithmeticOverflowError.of_sum(f"column {name!r}", total)


def _runs(
    keyed: Keyed, steps: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Cells as the runs of equal (key, step) in the rows' order by key and step (the steps
    sorted as integers): that order, each row's cell in it, and each cell's key code, step
    and rows."""

    n = len(steps)
    keys = empty(n, np.int64)
    lo, top = kernels.step_keys(steps, keys)
    order, ordered, seg = keyed_sort(keyed, None, (keys, int(top).bit_length(), float(lo), -1))
    del keys
    cell, code, step, rows = (empty(n, np.int64) for _ in range(4))
    cells = int(kernels.run_cells(ordered, seg, cell, code, step, rows))
    return order, cell, code[:cells], step[:cells], rows[:cells], cells
