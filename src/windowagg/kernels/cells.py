"""The slice cells of many keys in one compiled pass: a slice (Scotty, Section 5: the span
between two window edges) of a key is one cell of a flat array.

:func:`slice_index` puts each row on the slices' grid; :func:`grid_cells`,
:func:`keyed_cells` and :func:`run_cells` give it its cell (one grid for every key, each key's
own run of cells, or the runs of the rows' order); :func:`cell_sums` and
:func:`cell_extremes` are the pre-aggregation per (key, slice) before any sort (slices are
fewer than rows): every key's slices from its first to its last are one run of cells, and
each row adds itself to its cell, O(n).
"""

import numpy as np

from .jit import kernel


@kernel
def slice_index(times, period, offset, limit, out):
    """``out[i]``: the grid step ``j`` with ``j * period + offset <= times[i]`` and the next
    above it; rows without a time (+-inf) get the smallest int64 (in no slice). Returns
    False, at once, at a time beyond ``limit`` (where doubles no longer tell one step from
    the next), else True."""
    none = np.iinfo(np.int64).min
    for i in range(times.shape[0]):
        t = times[i]
        if t == np.inf or t == -np.inf:
            out[i] = none
            continue
        if abs(t) > limit:
            return False
        j = np.floor((t - offset) / period)
        while j * period + offset > t:  # rounding of the division
            j -= 1
        while (j + 1) * period + offset <= t:
            j += 1
        out[i] = np.int64(j)
    return True


@kernel
def step_span(steps):
    """The smallest and largest grid step (the smallest int64, no step, left out): the
    largest and the smallest int64 where there is none."""
    none = np.iinfo(np.int64).min
    lo = np.iinfo(np.int64).max
    hi = none
    for j in steps:
        if j != none:
            lo = min(lo, j)
            hi = max(hi, j)
    return lo, hi


@kernel
def grid_cells(codes, steps, lo, width, cell):
    """One grid for every key (``width`` steps from ``lo``): row i's cell is its code's run
    of ``width`` cells, at its step (-1: no time); no lookup per key."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        cell[i] = -1 if j == none else codes[i] * width + (j - lo)


@kernel
def key_spans(codes, steps, span):
    """``span[2k]`` (from the largest int64) and ``span[2k + 1]`` (from the smallest): code
    k's first and last step among these rows (interleaved: a row touches one cache line)."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        if j == none:
            continue
        k = 2 * codes[i]
        if j < span[k]:
            span[k] = j
        if j > span[k + 1]:
            span[k + 1] = j


@kernel
def keyed_cells(codes, steps, span, cell):
    """Row i's cell: its code's run start minus its first step (``span[2k + 1]``) plus its
    step (-1: no time)."""
    none = np.iinfo(np.int64).min
    for i in range(codes.shape[0]):
        j = steps[i]
        cell[i] = -1 if j == none else span[2 * codes[i] + 1] + j


@kernel
def run_cells(steps, seg, cell, code, step, rows):
    """Cells as the runs of equal (key code, grid step) of the rows in order by key and
    step (``steps`` in that order, as doubles, -inf for a row without a step; code k's rows
    are ``seg[k]`` to ``seg[k + 1] - 1``): ``cell[i]`` the cell of the i-th row in that
    order (-1: no step; cells ascend with i), ``code``, ``step`` and ``rows`` (its row count) each
    cell's. One pass in sorted order, every write in sequence. Returns the number of
    cells."""
    j = -1
    for k in range(seg.shape[0] - 1):
        for i in range(seg[k], seg[k + 1]):
            s = steps[i]
            if s == -np.inf:
                cell[i] = -1
                continue
            if j < 0 or code[j] != k or step[j] != s:
                j += 1
                code[j] = k
                step[j] = np.int64(s)
                rows[j] = 0
            cell[i] = j
            rows[j] += 1
    return j + 1


@kernel
def compact_cells(rows, span, base, code, step, new):
    """Drop the cells without a row: the occupied ones numbered anew in order (``rows``
    compacted in place, ``code`` and ``step`` get each one's key code and grid step from
    ``span`` (each code's first step at ``2k``) and ``base`` (each code's first cell);
    ``new[c]``: cell c's new number). Returns how many cells are left."""
    j = 0
    for k in range(base.shape[0] - 1):
        for c in range(base[k], base[k + 1]):
            if rows[c] > 0:
                new[c] = j
                code[j] = k
                step[j] = span[2 * k] + c - base[k]
                rows[j] = rows[c]
                j += 1
    return j


@kernel
def renumbered(cell, new):
    """Every row's cell renumbered in place (``new``; -1, no cell, kept)."""
    for i in range(cell.shape[0]):
        if cell[i] >= 0:
            cell[i] = new[cell[i]]


@kernel
def merge_extremes(lo, hi, counts, lo2, hi2, counts2):
    """Cells' smallest and largest values and counts of another part of the rows
    (``lo2``, ``hi2``, ``counts2``) merged into these, by :func:`cell_extremes`' rules."""
    for c in range(lo.shape[0]):
        if counts2[c] == 0:
            continue
        if counts[c] == 0:
            lo[c] = lo2[c]
            hi[c] = hi2[c]
        else:
            x = lo2[c]
            if x < lo[c] or (lo[c] != lo[c] and x == x):
                lo[c] = x
            x = hi2[c]
            if x != x or (hi[c] == hi[c] and x > hi[c]):
                hi[c] = x
        counts[c] += counts2[c]


@kernel
def cell_rows(cell, valid, rows, order):
    """``rows[c]``: the valid rows in cell c (rows without a time, cell -1, in none).
    ``order`` (here and in the other cell kernels): empty, ``cell[i]`` is row i's; else
    ``cell[i]`` is row ``order[i]``'s (the rows in their cells' order: the cells are then
    written in sequence, the rows read at random)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        r = i if whole else order[i]
        if cell[i] >= 0 and valid[r]:
            rows[cell[i]] += 1


@kernel
def cell_sums(cell, values, valid, sums, counts, order):
    """Each cell's sum and count of the valid values (NaN adds as a value: the sum is NaN)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        c = cell[i]
        r = i if whole else order[i]
        if c >= 0 and valid[r]:
            sums[c] += values[r]
            counts[c] += 1


@kernel
def cell_extremes(cell, values, valid, lo, hi, counts, order):
    """Each cell's smallest and largest valid value, NaN the largest (Spark's order), and the
    count of valid values (0: the cell has none, ``lo``/``hi`` undefined)."""
    whole = order.shape[0] == 0
    for i in range(cell.shape[0]):
        c = cell[i]
        r = i if whole else order[i]
        if c < 0 or not valid[r]:
            continue
        x = values[r]
        if counts[c] == 0:
            lo[c] = x
            hi[c] = x
        else:
            if x < lo[c] or (lo[c] != lo[c] and x == x):
                lo[c] = x
            if x != x or (hi[c] == hi[c] and x > hi[c]):
                hi[c] = x
        counts[c] += 1


@kernel
def step_keys(steps, keys):
    """Grid steps as sort keys from 1 up (the smallest int64, no step, 0); returns the
    smallest step (0 where there is none) and the largest key."""
    none = np.iinfo(np.int64).min
    lo = np.iinfo(np.int64).max
    for j in steps:
        if j != none and j < lo:
            lo = j
    if lo == np.iinfo(np.int64).max:
        lo = 0
    top = 0
    for i in range(steps.shape[0]):
        j = steps[i]
        keys[i] = 0 if j == none else j - lo + 1
        top = max(top, keys[i])
    return lo, top
