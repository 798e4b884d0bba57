"""Rows taken from a column, null where a row is -1 (an empty frame's min, max, first or
last): a fixed-width column's words gathered by NumPy with their validity, equal to Arrow's
take of a masked index, which serves every other type."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowagg.engine import parallel
from windowagg.engine.evaluators import common
from windowagg.engine.evaluators.common import take_rows

TYPES = [
    pa.int8(),
    pa.int32(),
    pa.int64(),
    pa.uint16(),
    pa.float32(),
    pa.float64(),
    pa.date32(),
    pa.timestamp("us", "UTC"),
    pa.timestamp("ns"),
    pa.duration("ms"),
]


def expected(array: pa.Array, rows: np.ndarray) -> pa.Array:
    """Arrow's own take, a null index where a row is -1."""
    null = rows < 0
    return pc.take(array, pa.array(np.where(null, 0, rows), mask=null))


@settings(max_examples=150, deadline=None)
@given(
    type_=st.sampled_from(TYPES),
    values=st.lists(st.one_of(st.none(), st.integers(0, 100)), max_size=12),
    offset=st.integers(0, 3),
    data=st.data(),
)
def test_rows_with_nulls_equal_arrows_take(type_, values, offset, data) -> None:
    whole = pa.array([0] * offset + values, type_)
    array = whole.slice(offset)  # an offset into its buffers, as a column's slice has
    rows = np.array(
        data.draw(st.lists(st.integers(-1, len(values) - 1), min_size=1, max_size=8)), np.int64
    )
    got = take_rows(array, rows)
    assert got.type == type_
    assert got.equals(expected(array, rows))


def test_fixed_width_rows_with_nulls_take_no_arrow_kernel(monkeypatch) -> None:
    def refused(*args, **kwargs):
        raise AssertionError("Arrow's take ran")

    monkeypatch.setattr(common.pc, "take", refused)
    got = take_rows(pa.array([1.5, None, 3.0]), np.array([2, -1, 1, 0], np.int64))
    assert got.to_pylist() == [3.0, None, None, 1.5]
    none = take_rows(pa.array([], pa.int64()), np.array([-1, -1], np.int64))
    assert none.type == pa.int64() and none.to_pylist() == [None, None]


@pytest.mark.parametrize("array", [pa.array(["a", None, "c"]), pa.array([True, None, False])])
def test_other_types_take_through_arrow(array) -> None:
    rows = np.array([2, -1, 0, 1], np.int64)
    assert take_rows(array, rows).equals(expected(array, rows))


def test_many_rows_are_gathered_on_the_cores() -> None:
    n = parallel.PARALLEL_ROWS + 5
    rng = np.random.default_rng(7)
    values = rng.integers(0, 1000, 5000).astype(float)
    array = pa.array(values, mask=rng.random(5000) < 0.1)
    rows = rng.integers(-1, 5000, n)
    assert take_rows(array, rows).equals(expected(array, rows))
