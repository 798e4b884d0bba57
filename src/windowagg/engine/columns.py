"""The table machinery every path shares: the row order by key, time and order (compiled for
keys and times), the key segments of that order, the time column as numbers, and an input
column read once for every entry over it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels.bounds import frame_totals
from ..kernels.passes import (
    descends,
    doubles_of,
    gather,
    nan_where_null,
    odd_count,
    prefix_sums,
    scatter,
    stretched,
)
from . import parallel
from .keys import NULL_TIME, key_codes, keyed_sort
from .memory import empty, read_only, zeros
from .stages import stage

#: a column as Arrow holds it: one array, or the chunks of a table's column
ArrowColumn: TypeAlias = "pa.Array | pa.ChunkedArray"

__all__ = [
    "EXACT",
    "NULL_TIME",
    "ArrowColumn",
    "Column",
    "Ordered",
    "arrange",
    "as_floats",
    "as_ints",
    "column_times",
    "from_words",
    "gathered_words",
    "limits",
    "moved",
    "numbers_as_times",
    "one_array",
    "running",
    "segments",
    "take",
    "times_of",
    "totals",
    "word_type",
    "words",
]


class Ordered(Protocol):
    """What ordering reads of a plan (a rolling or a window plan): its key, time and order
    columns."""

    @property
    def keys(self) -> tuple[str, ...]: ...
    @property
    def time(self) -> str: ...
    @property
    def order_by(self) -> tuple[str, ...]: ...


def _sorted(table: pa.Table, names: list[str]) -> bool:
    """Whether rows are already in order of the columns ``names`` (numbers and times without
    nulls: a linear check; a sort of sorted rows costs as much as the aggregation)."""

    tied = None
    for j, name in enumerate(names):
        col = table.column(name)
        if col.null_count or not (
            pa.types.is_integer(col.type)
            or pa.types.is_floating(col.type)
            or pa.types.is_temporal(col.type)
        ):
            return False
        col = col.combine_chunks()
        if pa.types.is_temporal(col.type):
            col = pc.cast(col, pa.int64()) if not pa.types.is_date(col.type) else col
        x = col.to_numpy(zero_copy_only=False)
        if j == 0 and descends(x):  # the usual case: out of order early on
            return False
        if np.issubdtype(x.dtype, np.floating) and np.isnan(x).any():
            return False
        a, b = x[:-1], x[1:]
        if tied is None:
            tied = np.ones(len(a), bool)
        if (tied & (a > b)).any():
            return False
        tied &= a == b
    return True


def arrange(plan: Ordered, table: pa.Table) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """The row order by key, time, then ``order_by``, nulls first (Spark's ascending order;
    None when the rows are in that order already), the times in that order
    (:func:`times_of`) and the key segments of that order (:func:`segments`). Without
    ``order_by``, the keys' codes and a sort of each key's times, keys in parallel
    (:func:`windowagg.engine.keys.keyed_sort`); ties keep the input's order."""

    times = times_of(plan, table)
    cols = [*plan.keys, plan.time, *plan.order_by]
    if not table.num_rows or _sorted(table, cols):
        return None, times, segments(plan, table)
    if not plan.order_by:
        order, ordered, seg = keyed_sort(key_codes(table, plan.keys), times)
        return order, ordered, seg
    sub = table.select(cols).rename_columns([f"c{i}" for i in range(len(cols))])
    keys = [(f"c{i}", "ascending", "at_start") for i in range(len(cols))]
    order = pc.sort_indices(sub, sort_keys=keys).to_numpy()
    return order, times[order], segments(plan, table.take(order))


@stage("segments")
def segments(plan: Ordered, table: pa.Table) -> np.ndarray:
    """The key segments of a sorted table: key k's rows are ``seg[k]`` to ``seg[k + 1] - 1``
    (null keys are one key, as in Spark's ``partitionBy``)."""

    n = table.num_rows
    change = zeros(max(n - 1, 0), bool)
    for k in plan.keys:
        col = table.column(k)
        if pa.types.is_null(col.type):  # only nulls: one key
            continue
        a, b = col.slice(0, n - 1), col.slice(1)
        same = pc.fill_null(pc.equal(a, b), False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        change |= ~pc.or_(same, both_null).to_numpy(zero_copy_only=False)
    return (
        np.flatnonzero(np.r_[True, change, True]).astype(np.int64) if n else np.zeros(1, np.int64)
    )


def times_of(plan: Ordered, table: pa.Table) -> np.ndarray:
    """The time column as numbers in its own unit (a timestamp's own: s, ms, us or ns since
    the epoch; microseconds for a date), exactly:

    * float64 for float columns, and for whole numbers of magnitude up to ``2**52`` (every
      bound a frame or a window compares with them is then exact in doubles too): null times
      are -inf (sorted first: peers of each other, in no other row's range frame), NaN times
      +inf (sorted last, as Spark orders NaN);
    * int64 for larger whole numbers (nanosecond epochs, times near the int64 extremes),
      null times :data:`NULL_TIME`; every bound is then computed in integers, clamped to the
      int64 range (:func:`windowagg.kernels.bounds.shifted`)."""

    return column_times(plan.time, table.column(plan.time))


@stage("time column")
def column_times(name: str, col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """:func:`times_of` of a time column ``name``, ``col``."""
    if pa.types.is_date(col.type):
        col = pc.cast(col, pa.timestamp("us"))
    stamps = pa.types.is_timestamp(col.type)
    whole = stamps or pa.types.is_integer(col.type)
    if not (whole or pa.types.is_floating(col.type)):
        col = pc.cast(col, pa.float64())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if stamps:  # the same buffers, read as int64
        chunks = [c.view(pa.int64()) for c in chunks]
    return _times(name, col, [c.fill_null(0) if c.null_count else c for c in chunks], whole)


@stage("time column")
def numbers_as_times(name: str, x: np.ndarray) -> np.ndarray:
    """Times held as numbers (int64 or float64, none null) as :func:`times_of` gives a time
    column ``name`` of them."""
    return _times(name, None, [x], x.dtype.kind in "iu")


def _times(
    name: str, col: pa.Array | pa.ChunkedArray | None, chunks: list, whole: bool
) -> np.ndarray:
    """:func:`times_of`'s times of ``chunks`` (arrays of numbers, nulls filled; ``col``, the
    column with its nulls, None where there are none)."""
    n = sum(len(c) for c in chunks)
    t, at = empty(n), 0
    lo = hi = 0  # whole numbers: their smallest and largest (a null counts as 0)
    for chunk in chunks:
        x = chunk if isinstance(chunk, np.ndarray) else chunk.to_numpy(zero_copy_only=False)
        if whole and len(x):  # converted and measured in one pass, in chunks on the cores
            spans = parallel.by_chunks(_converted(x, t[at : at + len(x)]), len(x))
            lo = min(lo, *(a for a, _ in spans))
            hi = max(hi, *(b for _, b in spans))
        else:
            t[at : at + len(x)] = x
        at += len(x)
    if whole and max(-lo, hi) > EXACT:
        if lo == NULL_TIME:
            raise ValueError(
                f"time column {name!r} holds {NULL_TIME}, the int64 that stands "
                "for a null time (numpy's NaT): make it null"
            )
        t = empty(n, np.int64)
        if col is None:
            t[:] = np.concatenate(chunks) if len(chunks) != 1 else chunks[0]
        else:
            t[:] = pc.fill_null(pc.cast(col, pa.int64()), NULL_TIME).to_numpy(zero_copy_only=False)
        return t
    if not whole:
        t[np.isnan(t)] = np.inf
    if col is not None and col.null_count:
        t[pc.is_null(col).to_numpy(zero_copy_only=False)] = -np.inf
    return t


def _converted(x: np.ndarray, into: np.ndarray) -> Callable[[int, int], tuple]:
    """Rows ``[a, b)`` of whole numbers ``x`` into doubles ``into``, with their span
    (:func:`~windowagg.kernels.passes.doubles_of`), for :func:`~.parallel.by_chunks`."""
    return lambda a, b: doubles_of(x[a:b], into[a:b])


#: whole-number times up to this magnitude run as doubles, exactly
EXACT = 2**52


def limits(times: np.ndarray) -> np.ndarray:
    """What the compiled bounds read of times of either kind (:data:`NULL_TIME` or -inf for
    a null; the smallest and the largest bound a non-null time may have), in their type
    (read-only)."""
    return _INT_LIMITS if times.dtype == np.int64 else _FLOAT_LIMITS


_INT_LIMITS = read_only(np.array([NULL_TIME, NULL_TIME + 1, np.iinfo(np.int64).max], np.int64))
_FLOAT_LIMITS = read_only(np.array([-np.inf, -np.inf, np.inf]))


def as_ints(times: np.ndarray) -> np.ndarray:
    """Times of an integer column as int64 (:func:`times_of`'s doubles, exact, as integers;
    -inf, a null, :data:`NULL_TIME`): to compare with another table's int64 times."""
    if times.dtype == np.int64:
        return times
    out = np.where(np.isfinite(times), times, 0).astype(np.int64)
    out[times == -np.inf] = NULL_TIME
    return out


def as_floats(times: np.ndarray) -> np.ndarray:
    """Times as doubles (int64 ones rounded, :data:`NULL_TIME` -inf): to compare with another
    table's float times."""
    if times.dtype != np.int64:
        return times
    out = times.astype(float)
    out[times == NULL_TIME] = -np.inf
    return out


@stage("prefix sums")
def running(x: np.ndarray, dtype: npt.DTypeLike = np.int64) -> np.ndarray:
    """Prefix sums of ``x`` with a leading 0 (``np.r_[0, np.cumsum(x)]``), in an array of the
    engine's (:func:`windowagg.engine.memory.empty`): each chunk's own sums on the cores
    (NumPy releases the GIL), then each chunk moved on by the totals of the chunks before it
    (integers: the same sums, wrapping alike; objects, Python ints, in one pass)."""
    out = empty(len(x) + 1, dtype)
    out[0] = 0
    if out.dtype == object:
        np.cumsum(x, dtype=dtype, out=out[1:])
        return out
    if out.dtype == np.int64 and x.dtype in (np.bool_, np.int64):  # compiled, in chunks
        parallel.by_chunks(lambda a, b: prefix_sums(x[a:b], out[a + 1 : b + 1]), len(x))
    else:
        parallel.by_chunks(
            lambda a, b: np.cumsum(x[a:b], dtype=dtype, out=out[a + 1 : b + 1]), len(x)
        )
    pieces = parallel.chunks(len(x))
    if len(pieces) > 1:
        ends = np.array([out[b] for _, b in pieces], out.dtype)
        before = np.cumsum(ends[:-1], dtype=out.dtype)  # wraps as the one-pass sums would
        parallel.on_cores(
            lambda j: np.add(
                out[pieces[j][0] + 1 : pieces[j][1] + 1],
                before[j - 1],
                out=out[pieces[j][0] + 1 : pieces[j][1] + 1],
            ),
            list(range(1, len(pieces))),
        )
    return out


@stage("frame totals")
def totals(prefix: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``prefix[hi] - prefix[lo]``, every frame's total from prefix sums, compiled into an array
    of the engine's (:func:`windowagg.engine.memory.empty`); Python ints (an object array)
    by NumPy."""
    if prefix.dtype == object:
        return prefix[hi] - prefix[lo]
    out = empty(len(lo), prefix.dtype)
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    parallel.by_chunks(lambda a, b: frame_totals(prefix, lo[a:b], hi[a:b], out[a:b]), len(lo))
    return out


def one_array(col: ArrowColumn) -> pa.Array:
    """A column as one array: its one chunk itself, else its chunks combined."""
    if isinstance(col, pa.Array):
        return col
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


#: the Arrow type ids of numbers and times (each type's id, whatever its unit or zone)
_NUMBER_IDS = frozenset(
    t.id
    for t in (
        *(pa.int8(), pa.int16(), pa.int32(), pa.int64()),
        *(pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()),
        *(pa.float16(), pa.float32(), pa.float64()),
        *(pa.timestamp("s"), pa.date32(), pa.date64(), pa.time32("s"), pa.time64("us")),
        *(pa.duration("s"), pa.month_day_nano_interval()),
    )
)
#: the unsigned word of each width
_WORDS = {bits: np.dtype(f"u{bits // 8}") for bits in (8, 16, 32, 64)}


def word_type(type_: pa.DataType) -> np.dtype | None:
    """The unsigned word a value of ``type_`` is held in where it has a fixed width of 8, 16,
    32 or 64 bits (numbers and times); None for any other type. By the type's id (a
    type's hash costs a microsecond, a request's whole parsing of its times)."""
    return _WORDS.get(type_.bit_width) if type_.id in _NUMBER_IDS else None


def words(array: ArrowColumn) -> list[np.ndarray] | None:
    """A fixed-width array (:func:`word_type`) as unsigned words of its width (its own
    memory), with, where it has nulls, whether each value is valid; None for any other
    array."""
    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks != 1:
            return None
        array = array.chunk(0)
    dtype = word_type(array.type)
    if dtype is None:
        return None
    values = np.frombuffer(array.buffers()[1], dtype)
    parts = [values[array.offset : array.offset + len(array)]]
    if array.null_count:  # a null's word is any value: its validity travels with it
        parts.append(~array.is_null().to_numpy(zero_copy_only=False))
    return parts


def from_words(type_: pa.DataType, parts: list[np.ndarray]) -> pa.Array:
    """The array of ``type_`` whose words (and validity, where given) ``parts`` hold: no
    copy of the words."""
    validity = pa.py_buffer(np.packbits(parts[1], bitorder="little")) if len(parts) > 1 else None
    return pa.Array.from_buffers(type_, len(parts[0]), [validity, pa.py_buffer(parts[0])])


def _each(
    kernel: Callable[..., object], parts: list[np.ndarray], rows: np.ndarray
) -> list[np.ndarray]:
    """``kernel`` (:func:`~windowagg.kernels.passes.gather` or ``scatter``) over ``rows`` for
    each of ``parts``, on both cores, into the engine's memory."""
    rows = np.asarray(rows, np.int64)
    out = [empty(len(rows), p.dtype) for p in parts]
    parallel.on_cores(
        lambda part: [kernel(p, rows, int(part[0]), int(part[1]), o) for p, o in zip(parts, out)],
        parallel.chunks(len(rows)),
    )
    return out


def gathered_words(parts: list[np.ndarray], rows: np.ndarray) -> list[np.ndarray]:
    """Words (and validity) at ``rows`` (:func:`words`), gathered on the cores into the
    engine's memory (by NumPy for few rows)."""
    if len(rows) < parallel.PARALLEL_ROWS:
        return [p[rows] for p in parts]
    return _each(gather, parts, rows)


def stretched_words(
    parts: list[np.ndarray], starts: np.ndarray, sizes: np.ndarray, n: int
) -> list[np.ndarray]:
    """Words (and validity) of stretches of rows, ``n`` in all (stretch ``s``: ``sizes[s]``
    rows from ``starts[s]``), laid one after another into the engine's memory
    (:func:`~windowagg.kernels.passes.stretched`: copies of runs, no index per row)."""
    out = [empty(n, p.dtype) for p in parts]
    for p, o in zip(parts, out):
        stretched(p, starts, sizes, 0, len(starts), 0, o)
    return out


@stage("gather")
def take(array: ArrowColumn, rows: np.ndarray) -> ArrowColumn:
    """``array``'s values at ``rows`` (``pyarrow.compute.take``): a fixed-width column
    gathered on both cores into the engine's memory (by NumPy for few rows)."""
    parts = words(array)
    if parts is None:
        return pc.take(array, pa.array(rows))
    return from_words(array.type, gathered_words(parts, rows))


@stage("scatter")
def moved(columns: list[ArrowColumn], order: np.ndarray) -> list[ArrowColumn]:
    """Columns in sorted order (row ``order[i]`` of each at ``i``) put back in the input's
    order: fixed-width columns scattered on the cores into the engine's memory; few rows,
    or another type, gathered at the inverse order, found once for every column
    (:func:`take`)."""
    many = len(order) >= parallel.PARALLEL_ROWS
    back = None
    out = []
    for c in columns:
        parts = words(c) if many else None
        if parts is not None:
            out.append(from_words(c.type, _each(scatter, parts, order)))
            continue
        if back is None:
            back = empty(len(order), np.int64)
            back[order] = np.arange(len(order))
        out.append(take(c, back))
    return out


class Column:
    """One input column, read once for every entry over it."""

    def __init__(self, array: pa.Array | pa.ChunkedArray):
        self.array = array
        self.type = array.type
        self.numeric = (
            pa.types.is_integer(self.type)
            or pa.types.is_floating(self.type)
            or pa.types.is_boolean(self.type)
        )
        self._cache: dict[Any, Any] = {}  # by name, or (name, frame)

    @functools.cached_property
    def valid(self) -> np.ndarray:
        """Whether each row's value is not null."""
        a = self.array
        if not a.null_count:
            return np.ones(len(a), bool)
        if isinstance(a, pa.Array) and a.buffers()[0] is not None:  # the validity bits
            bits = np.frombuffer(a.buffers()[0], np.uint8)
            return np.unpackbits(bits, count=a.offset + len(a), bitorder="little")[a.offset :].view(
                bool
            )
        return ~pc.is_null(a).to_numpy(zero_copy_only=False)

    @stage("values")
    def floats(self) -> np.ndarray:
        """The values as float64; nulls are NaN."""
        if "f" not in self._cache:
            a = self.array
            if isinstance(a, pa.Array) and a.type == pa.float64() and a.null_count:
                # compiled, in chunks on the cores: the values' own buffer, NaN at nulls
                x = np.frombuffer(a.buffers()[1], np.float64)[a.offset : a.offset + len(a)]
                valid = self.valid
                out = empty(len(x))
                parallel.by_chunks(
                    lambda i, j: nan_where_null(x[i:j], valid[i:j], out[i:j]), len(x)
                )
                self._cache["f"] = read_only(out)
                return self._cache["f"]
            if pa.types.is_boolean(a.type):
                a = pc.cast(a, pa.int8())
            if pa.types.is_temporal(a.type):
                a = (
                    pc.cast(a, pa.int64())
                    if not pa.types.is_date(a.type)
                    else pc.cast(pc.cast(a, pa.int32()), pa.int64())
                )
            if a.type != pa.float64():
                a = pc.cast(a, pa.float64(), safe=False)
            f = a.to_numpy(zero_copy_only=False)
            self._cache["f"] = read_only(np.ascontiguousarray(f, float))
        return self._cache["f"]

    def _prefix(self, what: str) -> np.ndarray | None:
        """Prefix counts of the ``valid`` (non-null), ``nan`` or ``inf`` rows; None if there
        are none to count (no nulls; no NaN; no infinity)."""
        if what not in self._cache:
            if what == "valid":
                mask = self.valid if self.array.null_count else None
            else:
                mask = None
                if pa.types.is_floating(self.type) and self._odd(what == "nan"):
                    test = np.isnan if what == "nan" else np.isinf
                    mask = self.valid & test(self.floats())
            self._cache[what] = None if mask is None else running(mask)
        return self._cache[what]

    def _odd(self, nan: bool) -> bool:
        """Whether a valid value is NaN (``nan``) or infinite: one compiled pass in chunks on
        the cores, no array made."""
        x = self.floats()
        valid = self.valid if self.array.null_count else np.empty(0, bool)
        return any(
            parallel.by_chunks(
                lambda a, b: odd_count(x[a:b], valid[a:b] if len(valid) else valid, nan),
                len(x),
            )
        )

    def count(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The non-null values in every frame."""
        p = self._prefix("valid")
        return np.subtract(hi, lo, out=empty(len(lo), np.int64)) if p is None else totals(p, lo, hi)

    def nans(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
        """The NaNs in every frame; None if the column has none."""
        p = self._prefix("nan")
        return None if p is None else totals(p, lo, hi)

    def infs(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
        """The infinities (of either sign) in every frame; None if the column has none."""
        p = self._prefix("inf")
        return None if p is None else totals(p, lo, hi)

    def ints(self) -> tuple[np.ndarray | None, int]:
        """Integers (nulls 0) as int64, or a decimal's unscaled values, with the scale; None
        when a decimal's unscaled value does not fit 64 bits."""

        a = self.array
        if pa.types.is_decimal(a.type):
            a = pc.fill_null(a, Decimal(0))
            words = np.frombuffer(a.buffers()[1], np.int64)[2 * a.offset : 2 * (a.offset + len(a))]
            low, high = words[0::2], words[1::2]
            if not np.array_equal(high, low >> 63):
                return None, a.type.scale
            return low.copy(), a.type.scale
        if pa.types.is_boolean(a.type):
            a = pc.cast(a, pa.int8())
        return pc.fill_null(a, 0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False), 0

    def prefix_sums(self) -> tuple[np.ndarray, int]:
        """Exact prefix sums of integers or a decimal's unscaled values (int64, or Python ints
        where 64 bits could overflow), with the scale: one per column, for every frame."""
        if "sums" not in self._cache:
            ints, scale = self.ints()
            if (
                ints is not None
                and pa.types.is_decimal(self.type)
                and np.abs(ints).max(initial=0) * len(ints) >= 2**63
            ):
                ints = None
            if ints is None:
                ints, scale = self.decimal_ints()
            self._cache["sums"] = (running(ints, ints.dtype), scale)
        return self._cache["sums"]

    def decimal_ints(self) -> tuple[np.ndarray, int]:
        """A decimal's unscaled values as Python ints (object array), nulls 0."""
        scale = self.type.scale
        values = self.array.to_pylist()
        return np.array([0 if v is None else int(v.scaleb(scale)) for v in values], object), scale
