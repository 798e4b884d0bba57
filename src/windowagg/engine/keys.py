"""Keys as dense codes, and the row order by key and time from them, for every engine pass
over many keys at once (:mod:`windowagg.kernels.key_order`).

A key column of any type (strings, numbers, dates; several columns) becomes one code per row,
``0`` to ``m - 1`` in the keys' sorted order, nulls first (Spark's ascending order, in which
``partitionBy`` groups a null key as one key): each column is dictionary-encoded (Arrow's
hash; integers of a small range are their own offsets), its few distinct values sorted, and
several columns combine lexicographically. Float keys are equal as Spark's are
(:func:`spark_floats`: -0.0 the same key as 0.0, every NaN one key), not where their bits
are; a dictionary-encoded column is keyed by its values (:func:`as_key`).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels import key_order as kernels
from ..kernels.passes import int_span
from . import parallel
from .memory import empty, read_only, zeros
from .stages import stage

#: a null time among int64 times (as :data:`windowagg.engine.columns.NULL_TIME`, which
#: imports this module)
NULL_TIME = int(np.iinfo(np.int64).min)

__all__ = ["Keyed", "as_key", "in_key_order", "key_codes", "keyed_sort", "spark_floats"]


class Keyed(NamedTuple):
    """Rows grouped by key: ``codes[i]`` row i's key (``m`` keys), ``first[k]`` a row of key
    k (where its key values are read)."""

    codes: np.ndarray
    m: int
    first: np.ndarray


def spark_floats(col: pa.Array) -> pa.Array:
    """A float key column as Spark compares keys: -0.0 as 0.0, and every NaN as one (Spark's
    ``NormalizeFloatingNumbers`` on partition and grouping keys); other columns as they
    are."""
    if not pa.types.is_floating(col.type):
        return col
    zero, nan = pa.scalar(0.0, col.type), pa.scalar(float("nan"), col.type)
    col = pc.if_else(pc.equal(col, zero), zero, col)  # -0.0 equals 0.0: becomes it
    return pc.if_else(pc.is_nan(col), nan, col)


def as_key(col: pa.Array) -> pa.Array:
    """A key column's values as keys are compared: a dictionary-encoded column's values (its
    codes are its dictionary's own: a null among them is a null key), floats as Spark's
    (:func:`spark_floats`)."""
    if pa.types.is_dictionary(col.type):
        col = pc.cast(col, col.type.value_type)
    return spark_floats(col)


def _column_codes(col: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, int]:
    if isinstance(col, pa.ChunkedArray):  # one chunk as it is (combining it copies it)
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    col = as_key(col)
    if pa.types.is_integer(col.type) and not col.null_count and len(col):
        x = col.to_numpy()
        spans = parallel.by_chunks(lambda a, b: int_span(x[a:b]), len(x))
        lo, hi = min(int(a) for a, _ in spans), max(int(b) for _, b in spans)
        if hi - lo < 4 * len(col) + 16:  # small integers: their offsets are the codes
            if lo == 0 and x.dtype == np.int64:  # the values themselves (read-only)
                return x, hi + 1
            codes = empty(len(col), np.int64)  # the engine's memory: no fresh pages
            parallel.by_chunks(
                lambda a, b: np.subtract(x[a:b], lo, out=codes[a:b], dtype=np.int64), len(x)
            )
            return codes, hi - lo + 1
    enc = pc.dictionary_encode(col, null_encoding="encode")
    dictionary = enc.dictionary
    rank = empty(len(dictionary), np.int64)
    rank[pc.array_sort_indices(dictionary, null_placement="at_start").to_numpy()] = np.arange(
        len(dictionary)
    )
    return rank[enc.indices.to_numpy(zero_copy_only=False)], len(dictionary)


def _dense(codes: np.ndarray, m: int) -> tuple[np.ndarray, int]:
    """Codes renumbered ``0..`` over the ones present, order kept."""
    if m <= 4 * len(codes) + 16:
        present = np.bincount(codes, minlength=m) > 0
        if present.all():
            return codes, m
        remap = np.cumsum(present) - 1
        return remap[codes], int(present.sum())
    uniq, inverse = np.unique(codes, return_inverse=True)
    return inverse.astype(np.int64), len(uniq)


@stage("key codes")
def key_codes(table: pa.Table, keys: tuple[str, ...] | list[str]) -> Keyed:
    """Every row's key as a dense code in the keys' sorted order (nulls first)."""
    n = table.num_rows
    if not keys:
        return Keyed(
            read_only(zeros(n, np.int64)), 1 if n else 0, np.zeros(1 if n else 0, np.int64)
        )
    codes, m = _column_codes(table.column(keys[0]))
    for k in keys[1:]:
        c, size = _column_codes(table.column(k))
        if m * size >= 1 << 62:  # lexicographic codes would overflow: renumber first
            codes, m = _dense(codes, m)
        codes, m = codes * size + c, m * size

    if m > 4 * n + 16:  # sparse codes: renumbered by a sort
        codes, m = _dense(codes, m)
    codes = read_only(codes)
    first = _first_rows(codes, m)  # a code without a row keeps n: renumber the others
    present = first < n
    if not present.all():
        codes, first = read_only((np.cumsum(present) - 1)[codes]), first[present]
    return Keyed(codes, len(first), first)


@stage("sort keys")
def _first_rows(codes: np.ndarray, m: int) -> np.ndarray:
    """Each code's first row (``len(codes)`` for a code without one): in chunks on the cores
    where a chunk's own answer for every code (``m`` each) is small beside the rows, the
    earliest chunk's row kept."""
    n = len(codes)
    first = np.full(m, n, np.int64)
    pieces = parallel.chunks(n)
    if len(pieces) == 1 or m * len(pieces) > n:
        kernels.first_rows(codes, first)
        return first
    own = [np.full(m, n, np.int64) for _ in pieces]
    parallel.on_cores(
        lambda j: kernels.first_rows(codes[pieces[j][0] : pieces[j][1]], own[j]),
        list(range(len(pieces))),
    )
    for (a, b), got in zip(reversed(pieces), reversed(own)):  # the earliest chunk last
        np.copyto(first, got + a, where=got < b - a)
    return first


def _sortable(times: np.ndarray) -> tuple[np.ndarray, int, float | int, int] | None:
    """Whole-number times (doubles, or int64 with :data:`~windowagg.engine.columns.NULL_TIME`
    for a null) as non-negative int64 keys in the same order (a null 0, +inf ``top``), the
    bits they need, for a radix sort, and what turns keys back into times
    (:func:`windowagg.kernels.key_order.unpacked`: ``base``, a double or an int as the times are,
    and ``top``); None for other times, or a span of 2**48 or more."""
    null = NULL_TIME if times.dtype == np.int64 else -np.inf
    lo, hi, finite, whole = span_of(times, null)
    keys = empty(len(times), np.int64)
    if not finite:
        base = 0 if times.dtype == np.int64 else 0.0
        kernels.sortable_keys(times, base, 1, null, keys)
        return keys, 1, base, 1
    span = int(hi) - int(lo) + 3
    if span >= 2**48 or not whole:
        return None
    parallel.by_chunks(  # null 0, +inf span - 1
        lambda a, b: kernels.sortable_keys(times[a:b], lo, span - 1, null, keys[a:b]), len(times)
    )
    return keys, span.bit_length(), lo, span - 1


def span_of(times: np.ndarray, null: float | int) -> tuple:
    """:func:`windowagg.kernels.key_order.finite_span` of the times, in chunks on the cores: the
    smallest and largest finite time, how many there are, whether all are whole."""
    got = [
        s
        for s in parallel.by_chunks(lambda a, b: kernels.finite_span(times[a:b], null), len(times))
        if s[2]
    ]
    if not got:
        return times[0], times[0], 0, True
    lo, hi = min(s[0] for s in got), max(s[1] for s in got)
    return lo, hi, sum(int(s[2]) for s in got), all(s[3] for s in got)


def _by_code(keyed: Keyed, keys: np.ndarray, seg: np.ndarray, ib: int, shift: int) -> np.ndarray:
    """A counting sort of the rows by code, stable, in parts of the rows on the cores: each
    part counts its codes, a part's rows of code k go after the earlier parts' rows of code k.
    Fills ``seg`` (zeroed); returns the rows in that order, each packed with its key
    (``keys[i] >> shift << ib | i``, :func:`windowagg.kernels.key_order.by_code`)."""
    codes, n = keyed.codes, len(keyed.codes)
    pieces = parallel.chunks(n)
    counts = [np.zeros(keyed.m, np.int64) for _ in pieces]
    parallel.on_cores(
        lambda j: kernels.code_counts(codes, *pieces[j], counts[j]), list(range(len(pieces)))
    )
    np.cumsum(sum(counts), out=seg[1:])
    places = list(itertools.accumulate(counts[:-1], initial=seg[:-1].copy()))
    rows = empty(n, np.int64)
    parallel.on_cores(
        lambda j: kernels.by_code(codes, keys, *pieces[j], places[j], ib, shift, rows),
        list(range(len(pieces))),
    )
    return rows


def in_key_order(keys: np.ndarray, times: np.ndarray) -> bool:
    """Whether the rows are in order by key, then time already (one linear check: what
    :func:`keyed_sort` would not move)."""
    if len(keys) < 2:
        return True
    if keys.dtype == np.int64 and times.dtype in _ORDERED:  # compiled: no array made
        return bool(kernels.in_order(read_only(keys), read_only(times)))
    a, b = keys[:-1], keys[1:]
    return bool((a <= b).all() and ((a < b) | (times[:-1] <= times[1:])).all())


#: the times whose order :func:`in_key_order` checks compiled (with int64 keys)
_ORDERED = (np.dtype(np.int64), np.dtype(np.float64))


@stage("sort")
def keyed_sort(
    keyed: Keyed, times: np.ndarray | None, sortable: tuple | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows by key, then time (stable: ties keep the input's order), and the key
    segments of that order: key k's rows are ``order[seg[k]:seg[k + 1]]``, with the times in
    that order (from the sorted keys, where the radix sort has them). Times in whole
    numbers over a span below 2**48 (timestamps in microseconds: 8.9 years): a counting sort
    by key on both cores into rows packed with their keys (one int64 with the row number),
    then each key's rows sorted over their own span
    (:func:`windowagg.kernels.key_order.radix_segments`: insertion for a few rows, radix passes
    for many, one radix pass then insertion between; a key's rows fit the cache; parts of the
    keys on threads), O(n) for spread times. Where a key and a row number need more than 62
    bits (a year in microseconds over 10 million rows), the keys are packed without their
    lowest bits, and the rows of equal shortened keys then sorted by their whole keys
    (:func:`windowagg.kernels.key_order.refined`: one linear pass where times are spread). Other
    times: a counting sort by key, then each key's times merge-sorted, parts of the keys on
    threads. ``sortable``: the times as :func:`_sortable` gives them, where the caller has
    them as integers already (``times`` is then None)."""

    keyed = keyed._replace(codes=read_only(keyed.codes))  # one compile for codes of any source
    n = len(keyed.codes)
    seg = zeros(keyed.m + 1, np.int64)
    order = empty(n, np.int64)
    if sortable is None:
        times = np.ascontiguousarray(times)
        sortable = _sortable(times) if n else None
    ib = max(1, (n - 1).bit_length())  # the bits of a row number
    if sortable is not None:  # by key, then each key's times
        keys, bits, base, top = sortable
        shift = max(0, bits + ib - 62)  # the keys' low bits a packed word has no room for
        rows = _by_code(keyed, keys, seg, ib, shift)
        work = empty(n, np.int64)
        parallel.on_cores(
            lambda part: kernels.radix_segments(rows, part, work, np.empty(1 << 15, np.int64), ib),
            parallel.parts(seg),
        )
        whole = not isinstance(base, float)  # int64 times, else doubles
        ordered = empty(n, np.int64 if whole else np.float64)
        null, last = (NULL_TIME, NULL_TIME) if whole else (-np.inf, np.inf)
        pieces = parallel.chunks(n)
        parallel.on_cores(
            lambda j: kernels.unpacked(rows, ib, *pieces[j], base, top, null, last, order, ordered),
            list(range(len(pieces))),
        )
        if shift:  # rows of equal shortened keys: by their whole keys
            space = rows, empty(n, np.int64)  # the packed rows are done with
            parallel.on_cores(
                lambda part: kernels.refined(
                    keys, order, part, shift, base, top, null, last, work, *space, ordered
                ),
                parallel.parts(seg),
            )
        return order, ordered, seg
    assert times is not None  # the caller's integer keys are always sortable
    kernels.order_of_code(
        keyed.codes, np.arange(n), seg, order
    )  # rows by key, then each key's times
    spare = empty(n, times.dtype), empty(n, times.dtype), empty(n, np.int64)
    parallel.on_cores(
        lambda part: kernels.sort_segments(times, part, order, *spare), parallel.parts(seg)
    )
    return order, np.take(times, order, out=empty(n, times.dtype)), seg
