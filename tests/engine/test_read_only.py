"""The engine hands the kernels their inputs read-only whatever their source (Arrow's buffers,
taken without a copy, or the engine's own arrays), so that numba compiles each kernel once for
both (:func:`windowagg.engine.memory.read_only`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from windowagg.engine.columns import Column
from windowagg.engine.keys import key_codes
from windowagg.engine.memory import read_only


@pytest.mark.parametrize(
    "array",
    [
        pa.array([1.0, 2.0, 3.0]),  # Arrow's buffer, read-only
        pa.array([1.0, None, 3.0]),  # NaN written at the null: the engine's array
        pa.array([1, 2, 3]),  # cast: a new array
        pa.chunked_array([[1.0], [2.0, 3.0]]),
    ],
)
def test_values_are_read_only_from_every_source(array) -> None:
    x = Column(array).floats()
    assert not x.flags.writeable
    assert np.array_equal(x, [1.0, np.nan if array.null_count else 2.0, 3.0], equal_nan=True)


@pytest.mark.parametrize(
    "keys",
    [
        {},  # no key
        {"k": pa.array([0, 2, 1, 2], pa.int64())},  # the values themselves (Arrow's buffer)
        {"k": pa.array([5, 7, 6, 7], pa.int64())},  # offsets: the engine's array
        {"k": pa.array(["a", "c", "b", "c"])},  # dictionary codes
        {"k": pa.array([0, 9, 5, 9], pa.int64()), "j": pa.array(["x", "y", "x", "y"])},
    ],
)
def test_key_codes_are_read_only_from_every_source(keys) -> None:
    table = pa.table({"t": [1.0, 2.0, 3.0, 4.0], **keys})
    keyed = key_codes(table, list(keys))
    assert not keyed.codes.flags.writeable
    if keys:
        assert keyed.codes.tolist() == [0, 2, 1, 2]


def test_read_only_is_a_view_not_a_copy() -> None:
    x = np.arange(5.0)
    v = read_only(x)
    assert not v.flags.writeable and x.flags.writeable
    assert np.shares_memory(v, x)
    assert read_only(v) is v


def test_point_in_time_queries_sort_by_read_only_codes(monkeypatch) -> None:
    """The queries' codes go through the same key sort as the events' codes, read-only too."""
    from windowagg import rolling_aggregate
    from windowagg.engine.rolling import at

    seen: list[bool] = []
    real = at.keyed_sort

    def spy(keyed, times):
        seen.append(keyed.codes.flags.writeable)
        return real(keyed, times)

    monkeypatch.setattr(at, "keyed_sort", spy)
    events = pa.table({"k": [1, 1, 2], "t": [1.0, 2.0, 3.0], "v": [1.0, 2.0, 4.0]})
    queries = pa.table({"k": [1, 2], "t": [2.5, 3.0]})
    out = rolling_aggregate(
        events, time="t", key="k", aggs={"s": ("sum", "v", "range:10")}, at=queries
    )
    assert out.column("s").to_pylist() == [3.0, 4.0]
    assert seen and not any(seen)
