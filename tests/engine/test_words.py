"""Fixed-width columns read as their words (:func:`windowagg.engine.columns.word_type`,
:func:`~windowagg.engine.columns.words`): the word of each number and time type by its width,
whatever its unit or zone, and none for any other type."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from windowagg.engine.columns import word_type, words


@pytest.mark.parametrize(
    ("type_", "word"),
    [
        (pa.int8(), "u1"),
        (pa.uint16(), "u2"),
        (pa.int32(), "u4"),
        (pa.uint64(), "u8"),
        (pa.float16(), "u2"),
        (pa.float32(), "u4"),
        (pa.float64(), "u8"),
        (pa.timestamp("ns", "Europe/Paris"), "u8"),
        (pa.timestamp("s"), "u8"),
        (pa.date32(), "u4"),
        (pa.date64(), "u8"),
        (pa.time32("ms"), "u4"),
        (pa.time64("ns"), "u8"),
        (pa.duration("us"), "u8"),
        (pa.month_day_nano_interval(), None),  # 128 bits
        (pa.bool_(), None),  # bits
        (pa.decimal128(10, 2), None),
        (pa.string(), None),
        (pa.binary(8), None),  # fixed width, not a number
        (pa.list_(pa.int64()), None),
    ],
)
def test_the_word_of_each_type(type_, word) -> None:
    assert word_type(type_) == (None if word is None else np.dtype(word))


def test_words_are_the_arrays_own_memory_with_their_validity() -> None:
    array = pa.array([1, None, -3, 4], pa.int64()).slice(1, 3)
    got = words(pa.chunked_array([array]))
    assert got is not None
    assert got[0].view(np.int64)[1:].tolist() == [-3, 4]
    assert got[1].tolist() == [False, True, True]
    assert words(pa.chunked_array([[1], [2]])) is None  # two chunks
    assert words(pa.array(["a"])) is None
