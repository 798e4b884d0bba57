"""The keys of an online state (:mod:`.online`) as int64 numbers, one per row, equal where the
keys are equal: the state holds its parts in key and time order by them, and a request finds
its key's run in every part by a search among them (:class:`~.part_index.PartIndex`).

- A key of one whole-number column (integers, booleans, dates, timestamps, durations, times)
  is its own numbers (an unsigned 64-bit one's bits as int64); a float column's, its bits
  once -0.0 is 0.0 and every NaN one NaN (:func:`~windowagg.engine.keys.as_key`: Spark's
  keys, and the batch call's).
- A key of one string, binary or decimal column is coded (a decimal by the bytes of its
  unscaled value, equal for equal values of one type): each byte string gets a code, 0, 1,
  2... in the order it was first seen, from a hash table kept from call to call
  (:mod:`windowagg.kernels.key_codes`), so an update codes its rows in O(1) each and a
  request its key in O(1), whatever the number of keys held.
- A key of several such columns is coded the same way: each row's numbers (a string
  column's codes first) laid side by side as one byte string.

A string or binary key column no entry reads is held as its codes (:data:`HELD_AS_CODES`:
merging parts takes an int64 for ten times less than a string), and put back from them
(:meth:`KeyCodes.decoded`) where the state hands out its events. A request's key columns are
first put in the events' key types by value (:func:`~.at.by_value`), as the batch call
compares them; a key never seen is -1 (no code is), and its row's answers are those of a key
with no event. A dictionary-encoded key column is coded by its values. Keys of other types
(nested) are not coded (:func:`codeable`): the state reads their events as the batch call
does. Codes are never reused while the state holds its parts; a state that lets events go
starts its codes afresh with the events it keeps (:meth:`~.online.Held.restore`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...kernels.key_codes import added, byte_hashes, looked_up, rehashed
from ..columns import one_array, words
from ..keys import as_key
from ..memory import empty, read_only
from .part_index import Growing

__all__ = ["HELD_AS_CODES", "KeyCodes", "codeable"]


_t = pa.types
#: the types of a key column that is its own numbers (a float's, its bits), and of one coded
#: by its bytes
WHOLE = frozenset(
    [_t.is_integer, _t.is_floating, _t.is_boolean, _t.is_date, _t.is_timestamp, _t.is_duration]
) | {_t.is_time}
BYTES = frozenset(
    [_t.is_string, _t.is_large_string, _t.is_binary, _t.is_large_binary, _t.is_decimal]
) | {_t.is_fixed_size_binary, _t.is_string_view, _t.is_binary_view}


def _whole(type_: pa.DataType) -> bool:
    """Whether a key column of ``type_`` is its own numbers (:data:`WHOLE`)."""
    return any(of(type_) for of in WHOLE)


def _bytes(type_: pa.DataType) -> bool:
    """Whether a key column of ``type_`` is coded by its bytes (:data:`BYTES`)."""
    return any(of(type_) for of in BYTES)


def codeable(types: list[pa.DataType]) -> bool:
    """Whether a key of columns of ``types`` has codes (:class:`KeyCodes`): each column of
    whole numbers or bytes, or dictionary-encoded values of them."""
    return bool(types) and all(_whole(t) or _bytes(t) for t in map(plain_type, types))


def plain_type(type_: pa.DataType) -> pa.DataType:
    """The type of a key column's values: a dictionary-encoded column's, its values'."""
    return type_.value_type if pa.types.is_dictionary(type_) else type_


#: the type id of int64
_INT64 = pa.int64().id


def numbers(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column of whole numbers (:func:`_whole`) as int64: its values (an unsigned 64-bit
    one's bits), a time's or a date's numbers, a float's bits as a key's (:func:`as_key`); 0
    where null; without a copy where they are int64 already."""
    col = one_array(col)
    found = words(col) if col.type.id == _INT64 else None  # the common key, as it lies
    if found is not None and len(found) == 1:  # no null among them
        return found[0].view(np.int64)
    col = as_key(col)  # a dictionary's values; a float's -0.0 and NaN Spark's
    type_ = col.type
    if pa.types.is_boolean(type_):
        col = pc.cast(col, pa.int8())
    elif not pa.types.is_integer(type_):  # the numbers, or the bits, of the same width
        col = col.view({16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[type_.bit_width])
    if col.null_count:
        col = pc.fill_null(col, 0)
    values = col.to_numpy(zero_copy_only=False)
    return values.view(np.int64) if values.dtype == np.uint64 else np.asarray(values, np.int64)


class Codes:
    """The byte strings seen so far, each with its code (:mod:`windowagg.kernels.key_codes`):
    the hash table's slots (each a code, -1 where empty, the string's hash, and where its
    bytes start and end), and the bytes one after another."""

    def __init__(self) -> None:
        self.data = Growing(np.uint8)
        self.slots = _slots(16)
        self.n = 0  # codes given

    @property
    def nbytes(self) -> int:
        return self.slots.nbytes + self.data.data.nbytes

    def of(self, offsets: np.ndarray, data: np.ndarray, add: bool) -> np.ndarray:
        """The codes of the byte strings ``data[offsets[i]:offsets[i + 1]]``; those not seen
        yet given the next codes where ``add``, else -1."""
        n = len(offsets) - 1
        offsets, data = read_only(offsets), read_only(data)
        hashes, out = empty(n, np.int64), empty(n, np.int64)
        byte_hashes(offsets, data, hashes)
        if not looked_up(hashes, offsets, data, self.slots, self.data.view(), out) or not add:
            return out
        rows = np.flatnonzero(out < 0)
        need = self.n + len(rows)
        if 2 * need > len(self.slots):  # at most half full: a probe ends within a few slots
            grown = _slots(1 << (2 * need - 1).bit_length())
            rehashed(self.slots, grown)
            self.slots = grown
        size = self.data.n + int((offsets[rows + 1] - offsets[rows]).sum())
        if size > len(self.data.data):  # doubling: O(1) a byte, amortized
            self.data.reserve(max(size, 2 * len(self.data.data)))
        got = added(
            hashes, offsets, data, rows, self.slots, self.data.data, self.n, self.data.n, out
        )
        self.n, self.data.n = got
        return out

    def known(self) -> pa.Array:
        """Every byte string known, in the order of their codes (their bytes lie in it)."""
        offsets = np.empty(self.n + 1, np.int64)
        used = self.slots[:, 0] >= 0
        offsets[self.slots[used, 0]] = self.slots[used, 2]
        offsets[self.n] = self.data.n
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(self.data.view())]
        return pa.Array.from_buffers(pa.large_binary(), self.n, buffers)


def _slots(size: int) -> np.ndarray:
    """An empty hash table of ``size`` slots (a power of two)."""
    slots = np.zeros((size, 4), np.int64)
    slots[:, 0] = -1
    return slots


class KeyCodes:
    """The numbers of a key of columns of ``types`` (:func:`codeable`), as the module says."""

    def __init__(self, types: list[pa.DataType]) -> None:
        self.types = types
        self.plain = [plain_type(t) for t in types]  # the types of the columns' values
        #: a table of codes for each string or binary column, and one of the rows' numbers
        #: side by side where the key has several columns
        self.columns = [Codes() if _bytes(t) else None for t in self.plain]
        self.rows = Codes() if len(types) > 1 else None

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in (*self.columns, self.rows) if c is not None)

    def of(self, columns: list[pa.Array | pa.ChunkedArray], add: bool) -> np.ndarray:
        """Each row's key number (anything where a key column is null: such a row is in no
        frame); a key not seen yet given the next code where ``add``, else -1."""
        return self.of_each(columns, add)[0]

    def of_each(
        self, columns: list[pa.Array | pa.ChunkedArray], add: bool
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`of`, and each column's numbers (a string column's codes)."""
        each = [
            numbers(col) if codes is None else _coded(codes, col, add)
            for codes, col in zip(self.columns, columns)
        ]
        if self.rows is None:
            return each[0], each
        n = len(each[0])
        side = np.stack(each, axis=1)  # one row's numbers as one byte string
        offsets = np.arange(n + 1, dtype=np.int64) * side.itemsize * len(each)
        # a string never seen has code -1, which no row laid side by side holds: not found
        return self.rows.of(offsets, side.reshape(-1).view(np.uint8), add), each

    def decoded(self, i: int, codes: pa.ChunkedArray) -> pa.ChunkedArray:
        """Column ``i``'s values (a string or binary column: :data:`HELD_AS_CODES`) of its
        ``codes``."""
        known = self.columns[i]
        assert known is not None and self.types[i] in HELD_AS_CODES
        return pc.cast(pc.take(known.known(), codes), self.types[i])


#: the key columns a state may hold as their codes (:meth:`KeyCodes.decoded`): taking them,
#: as parts merge, costs ten times an int64's
HELD_AS_CODES = frozenset({pa.string(), pa.large_string(), pa.binary(), pa.large_binary()})


def _coded(codes: Codes, col: pa.Array | pa.ChunkedArray, add: bool) -> np.ndarray:
    """A string or binary column's codes (:class:`Codes`); a null's as an empty string's."""
    col = as_key(one_array(col))  # a dictionary's values
    if pa.types.is_decimal(col.type):  # equal values of one type: equal bytes
        col = col.view(pa.binary(col.type.byte_width))
    col = pc.cast(col, pa.large_binary())
    _, off, data = col.buffers()
    offsets = np.frombuffer(off, np.int64)[col.offset : col.offset + len(col) + 1]
    bytes_ = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return codes.of(offsets, bytes_, add)
