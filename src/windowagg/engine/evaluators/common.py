"""What every evaluator shares: the entry's inputs (:class:`Inputs`), the frames' counts of
non-null values, rows taken from a column (null where none), prefix counts, the values' dense ids,
and output arrays built over their own memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...aggregations import facts
from ..columns import (
    ArrowColumn,
    Column,
    from_words,
    gathered_words,
    running,
    take,
    totals,
    words,
)
from ..entries import Entry
from ..memory import empty, zeros
from ..stages import stage
from ..sweep import FrameBounds


@dataclass
class Inputs:
    """What an evaluator reads besides its entry's column and frame: every column the entries
    read (as :class:`~windowagg.engine.columns.Column`, each made once), every frame's bounds,
    all the entries (entries whose frames end together share one selection), the time column
    (an arg's result) and the rows already selected."""

    columns: dict[str, Column]
    frames: dict
    entries: Sequence[Entry]
    times_col: ArrowColumn | None
    picks: dict[tuple, np.ndarray] = field(default_factory=dict)


def counted(col: Column, fr: FrameBounds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame's bounds and its count of non-null values (after a sweep, which finds range
    bounds on the way, so that they are not looked for twice)."""
    lo, hi = fr.bounds()
    key = ("count", id(fr))
    if key not in col._cache:
        col._cache[key] = col.count(lo, hi)
    return lo, hi, col._cache[key]


#: the output types whose values are held as they come, in their own memory, by their type's
#: id (one id each: a type's hash costs more than the rest of a small array's making), each
#: with the dtype its values have (NumPy's one instance of it: compared by identity)
_WIDTHS = {pa.float64().id: np.dtype(np.float64), pa.int64().id: np.dtype(np.int64)}


@stage("output arrays")
def with_nulls(values: np.ndarray, null: np.ndarray, type_: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``type_``, null where ``null`` (empty, as
    :data:`~windowagg.engine.memory.NO_NULLS`: none): a float64 or int64 array of their own
    memory with validity bits packed from ``null``."""
    some = len(null) > 0 and np.count_nonzero(null) > 0  # a quarter of ``any``'s fixed cost
    width = _WIDTHS.get(type_.id)
    if width is None or values.dtype is not width or not values.flags.c_contiguous:
        return pa.array(values, type=type_, mask=null if some else None)
    bits = pa.py_buffer(np.packbits(~null, bitorder="little")) if some else None
    return pa.Array.from_buffers(type_, len(values), [bits, pa.py_buffer(values)])


def decimal_array(unscaled: np.ndarray, null: np.ndarray, type_: pa.DataType) -> pa.Array:
    """Unscaled integers (int64, or Python ints) as a decimal128 array."""

    if unscaled.dtype != object:
        words = empty(2 * len(unscaled), np.int64)
        words[0::2], words[1::2] = unscaled, unscaled >> 63
        validity = pa.array(~null).buffers()[1] if null.any() else None
        return pa.Array.from_buffers(type_, len(unscaled), [validity, pa.py_buffer(words)])
    s = type_.scale
    return pa.array(
        [None if z else Decimal(int(u)).scaleb(-s) for u, z in zip(unscaled, null)], type=type_
    )


def through(lookup: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``lookup[at]`` where ``at >= 0``, -1 elsewhere (every answer -1 where ``lookup`` is
    empty: no value at all)."""

    if not len(lookup):
        return np.full(len(at), -1, np.int64)
    return np.where(at >= 0, lookup[np.maximum(at, 0)], -1)


def take_rows(array: ArrowColumn, rows: np.ndarray) -> ArrowColumn:
    """``array``'s values at ``rows``, null where a row is -1: a fixed-width column's words
    gathered by NumPy, with their validity (Arrow's take of a masked index costs tens of
    microseconds more on few rows, a single request's)."""

    null = rows < 0
    if not np.count_nonzero(null):
        return take(array, rows)
    parts = words(array)
    if parts is None:
        return pc.take(array, pa.array(np.where(null, 0, rows), mask=null))
    if not len(parts[0]):  # no row to take: every answer null
        return from_words(array.type, [zeros(len(rows), parts[0].dtype), ~null])
    got = gathered_words(parts, np.where(null, 0, rows))
    return from_words(array.type, [got[0], ~null if len(got) == 1 else got[1] & ~null])


def prefix_count(mask: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return totals(running(mask), lo, hi)


def dense(col: Column) -> tuple[np.ndarray, np.ndarray]:
    """Every row's value as a dense id in the values' order (NaN one value, above every
    number; -1 for null), and a row holding each id's value."""

    if "dense" not in col._cache:
        rank = pc.rank(col.array, sort_keys="ascending", tiebreaker="dense").to_numpy()
        ids = np.where(col.valid, rank.astype(np.int64) - 1, -1)
        rep = zeros(int(ids.max(initial=-1)) + 1, np.int64)
        rep[ids[col.valid]] = np.flatnonzero(col.valid)
        col._cache["dense"] = (ids, rep)
    return col._cache["dense"]


def null_rule(e: Entry) -> tuple[int, bool]:
    """SQL's null rules of a moment, co-moment or product entry, from its record
    (:attr:`~windowagg.aggregations.Facts.fewest`,
    :attr:`~windowagg.aggregations.Facts.zero_null`)."""
    f = facts(e.agg)
    return f.fewest, f.zero_null
