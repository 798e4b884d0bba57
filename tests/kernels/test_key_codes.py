"""Codes of an online state's keys (:mod:`windowagg.engine.rolling.key_codes`, its hash table
in :mod:`windowagg.kernels.key_codes`): byte strings coded batch after batch against a
dictionary that numbers them in the order first seen, the table grown many times, with the
real hash and with hashes that collide on purpose (every string in one or four chains);
strings that differ only in trailing zero bytes, the empty string; keys never seen looked up
as -1; whole-number keys as their own numbers; several columns coded by their rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine.rolling import key_codes
from windowagg.engine.rolling.key_codes import Codes, KeyCodes, codeable, numbers

#: short byte strings, many equal, some a prefix of another or ending in zero bytes
STRINGS = st.binary(max_size=3) | st.sampled_from([b"", b"\x00", b"a", b"a\x00", b"\x00a"])


def _laid(strings: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Byte strings as an Arrow binary array lays them: offsets and bytes."""
    offsets = np.r_[0, np.cumsum([len(s) for s in strings])].astype(np.int64)
    return offsets, np.frombuffer(b"".join(strings), np.uint8)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(STRINGS, max_size=60), min_size=1, max_size=6),
    asked=st.lists(STRINGS, max_size=30),
    chains=st.sampled_from([None, 1, 4]),
)
def test_codes_number_equal_byte_strings_in_the_order_first_seen(batches, asked, chains) -> None:
    with pytest.MonkeyPatch.context() as patch:
        if chains is not None:  # every hash one of ``chains`` values: probes run long

            def colliding(offsets, data, out):
                out[:] = (offsets[1:] - offsets[:-1]) % chains

            patch.setattr(key_codes, "byte_hashes", colliding)
        codes, want = Codes(), {}
        for batch in batches:
            got = codes.of(*_laid(batch), add=True)
            for s in batch:
                want.setdefault(s, len(want))
            assert got.tolist() == [want[s] for s in batch]
        assert codes.n == len(want) and 2 * codes.n <= len(codes.slots)
        assert codes.known().to_pylist() == list(want)  # each code's bytes, in code order
        found = codes.of(*_laid(asked), add=False)
        assert found.tolist() == [want.get(s, -1) for s in asked]
        assert codes.n == len(want)  # a lookup adds nothing


def test_whole_number_keys_are_their_own_numbers() -> None:
    """Integers (an unsigned 64-bit one's bits), booleans, dates, timestamps, durations and
    times as int64, floats as their bits (as Spark's keys), nulls as 0, chunked or not; a
    dictionary-encoded column is coded by its values; nested columns have no numbers."""
    cases = [
        (pa.array([2**64 - 1, 0, None], pa.uint64()), [-1, 0, 0]),
        (pa.array([-5, None, 7], pa.int8()), [-5, 0, 7]),
        (pa.array([True, None, False]), [1, 0, 0]),
        (pa.array([19723, None, 19724], pa.date32()), [19723, 0, 19724]),
        (pa.array([10**12, None, 5], pa.date64()), [10**12, 0, 5]),
        (pa.array([10**18, None, -1], pa.timestamp("ns", "UTC")), [10**18, 0, -1]),
        (pa.array([3, None, 4], pa.duration("s")), [3, 0, 4]),
        (pa.array([1, None, 2], pa.time32("s")), [1, 0, 2]),
    ]
    for col, want in cases:
        assert numbers(col).tolist() == want, col.type
        assert numbers(pa.chunked_array([col[:1], col[1:]])).tolist() == want, col.type
    values = pa.array(np.arange(5), pa.int64())
    assert np.shares_memory(numbers(pa.chunked_array([values])), values.to_numpy())
    # int64 keys without a null: their words as they lie, from an array's offset on
    assert numbers(values[2:4]).tolist() == [2, 3]
    assert numbers(pa.array([5, None, 7], pa.int64())[2:]).tolist() == [7]
    assert numbers(values[5:]).tolist() == []
    # a float's bits once keys are Spark's: -0.0 as 0.0, every NaN one NaN
    other_nan = np.array([0x7FF8000000000001], np.uint64).view(np.float64)[0]
    floats = np.array([0.0, -0.0, np.nan, other_nan, 1.5])
    spark = np.array([0.0, 0.0, np.nan, np.nan, 1.5])
    assert numbers(pa.array(floats)).tolist() == spark.view(np.int64).tolist()
    single = np.array([0.0, -0.0, 2.5], np.float32)
    assert (
        numbers(pa.array(single)).tolist()
        == np.array([0, 0, 2.5], np.float32).view(np.int32).tolist()
    )
    assert codeable([pa.string(), pa.int32(), pa.date32(), pa.binary(4), pa.float64()])
    assert codeable([pa.decimal128(5, 2), pa.large_binary()])
    assert not codeable([pa.list_(pa.int64())]) and not codeable([])
    assert codeable([pa.string(), pa.dictionary(pa.int32(), pa.string())])  # by its values
    assert not codeable([pa.struct([("a", pa.int64())])])


def test_several_columns_are_coded_by_their_rows() -> None:
    """A key of a string and an integer column: rows equal in both share a code, rows that
    differ in either do not; a row with a string never seen, or an integer never seen with
    its string, is -1."""
    coder = KeyCodes([pa.string(), pa.int64()])
    names = pa.array(["a", "b", "a", "a", "", "b"])
    ids = pa.array([1, 1, 2, 1, 1, -1])
    got = coder.of([names, ids], add=True)
    assert got.tolist() == [0, 1, 2, 0, 3, 4]
    asked = coder.of([pa.array(["a", "z", "b", "", "b"]), pa.array([2, 1, 2, 1, -1])], add=False)
    assert asked.tolist() == [2, -1, -1, 3, 4]
    # decimals by the bytes of their unscaled values: equal values of one type, one code
    import decimal

    amounts = pa.array(
        [decimal.Decimal(x) for x in ("1.10", "1.1", "-2", "0")], pa.decimal128(6, 2)
    )
    assert KeyCodes([amounts.type]).of([amounts], add=True).tolist() == [0, 0, 1, 2]
