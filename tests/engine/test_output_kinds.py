"""The result in the kind of table given: a pandas or Polars table keeps its own columns as
they are and gets the new ones in one step, each new column as Arrow's own conversion gives
it (``to_pandas``, ``polars.from_arrow``), the table given left as it was."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import windowagg as wa
from windowagg import tables
from windowagg.tables import _with_columns

NEW = {
    "f": pa.array([1.5, None, -0.0]),
    "i": pa.array([1, 2, 3], pa.int64()),
    "i_null": pa.array([1, None, 3], pa.int64()),
    "b": pa.array([True, False, True]),
    "b_null": pa.array([True, None, False]),
    "s": pa.array(["x", None, "z"]),
    "tz": pa.array([1, None, 3], pa.timestamp("us", "UTC")),
    "d": pa.array([1, None, 3], pa.date32()),
    "dec": pa.array([Decimal("1.50"), None, Decimal("-2.25")], pa.decimal128(10, 2)),
    "l": pa.array([[1.0], [], None], pa.list_(pa.float64())),
    "chunked": pa.chunked_array([[1.0], [2.0, None]]),
}


def _expected_pandas(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each new column set on a copy, one at a time, from Arrow's own
    conversion (what a result held before: the oracle)."""
    copy = frame.copy()
    for n, c in NEW.items():
        whole = pa.chunked_array(c.chunks if isinstance(c, pa.ChunkedArray) else [c])
        copy[n] = whole.to_pandas().set_axis(frame.index)
    return copy


@pytest.mark.parametrize(
    "index",
    [
        pd.RangeIndex(3),
        pd.Index([7, 7, 3]),  # repeated labels
        pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)]),
        pd.DatetimeIndex(["2024-01-01", "2024-01-02", "2024-01-03"]),
    ],
)
def test_pandas_result_holds_arrows_conversion_of_each_new_column(index) -> None:
    frame = pd.DataFrame(
        {"k": [1, 2, 1], "t": pd.to_datetime([1, 2, 3], unit="s"), 0: ["p", "q", "r"]},
        index=index,
    )
    frame.attrs["source"] = "requests"
    before = frame.copy()
    got = _with_columns(frame, pa.table({}), "pandas", list(NEW), list(NEW.values()))
    expected = _expected_pandas(frame)
    pd.testing.assert_frame_equal(got, expected)
    assert list(got.columns) == list(expected.columns)
    assert got.attrs == {"source": "requests"}
    pd.testing.assert_frame_equal(frame, before)  # the frame given is left as it was


def test_pandas_columns_of_several_levels_get_each_new_column_under_its_own_label() -> None:
    frame = pd.DataFrame(
        [[1, 2], [3, 4], [5, 6]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")])
    )
    got = _with_columns(frame, pa.table({}), "pandas", list(NEW), list(NEW.values()))
    pd.testing.assert_frame_equal(got, _expected_pandas(frame))


def test_polars_result_keeps_its_columns_and_converts_the_new_ones_as_from_arrow() -> None:
    frame = pl.DataFrame(
        {
            "k": [1, 2, 1],
            "cat": pl.Series(["a", "b", "a"], dtype=pl.Categorical),
            "e": pl.Series(["lo", "hi", "lo"], dtype=pl.Enum(["lo", "hi"])),
        }
    )
    got = _with_columns(frame, frame.to_arrow(), "polars", list(NEW), list(NEW.values()))
    assert got.columns == [*frame.columns, *NEW]
    assert got.select(frame.columns).equals(frame)
    assert got.schema["e"] == pl.Enum(["lo", "hi"]) and got.schema["cat"] == pl.Categorical
    added = pl.from_arrow(pa.table({n: c for n, c in NEW.items()}))
    assert got.select(list(NEW)).equals(added)
    assert got.select(list(NEW)).schema == added.schema


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_online_and_at_answers_in_the_queries_kind_equal_arrows(kind) -> None:
    events = pa.table(
        {
            "k": pa.array([1, 1, 2, 2], pa.int64()),
            "ts": pa.array([1, 2, 3, 9], pa.timestamp("s")),
            "v": pa.array([1.0, None, 3.0, 4.0]),
        }
    )
    aggs = {
        "n": ("count", "v", "range:1h"),
        "top": ("max", "v", "range:2s"),
        "l": ("last", "v", "rows:1"),
    }
    queries = pa.table(
        {"k": pa.array([2, 1, 3], pa.int64()), "ts": pa.array([9, 2, 9], pa.timestamp("s"))}
    )
    asked = queries.to_pandas() if kind == "pandas" else pl.from_arrow(queries)
    state = wa.OnlineFeatures(time="ts", key="k", aggs=aggs, allowed_lateness="1h")
    state.update(events)
    expected = wa.rolling_aggregate(events, time="ts", key="k", aggs=aggs, at=queries)
    for got in (
        state.query(asked),
        wa.rolling_aggregate(events, time="ts", key="k", aggs=aggs, at=asked),
    ):
        if kind == "pandas":
            pd.testing.assert_frame_equal(got, expected.to_pandas())
        else:
            assert (
                got.equals(pl.from_arrow(expected)) and got.schema == pl.from_arrow(expected).schema
            )


FRAMES = {
    "numbers and times": pd.DataFrame(
        {
            "k": np.array([3, 1, 2], np.int32),
            "u": np.array([1, 2, 3], np.uint64),
            "f": [1.5, np.nan, -0.0],
            "h": np.array([1, 2, 3], np.float16),
            "b": [True, False, True],
            "t": pd.to_datetime(["2024-01-01", None, "2024-01-03"]),
            "t_us": np.array(["2024-01-01", "NaT", "2024-01-03"], "datetime64[us]"),
            "dur": pd.to_timedelta([1, None, 3], unit="s"),
        },
        index=[9, 9, 4],
    ),
    "no rows": pd.DataFrame({"k": np.array([], np.int64), "t": pd.to_datetime([])}),
    "a time zone": pd.DataFrame({"t": pd.to_datetime([1, 2], unit="s", utc=True)}),
    "categories": pd.DataFrame({"c": pd.Categorical([1, 2]), "k": [1, 2]}),
    "nullable ints": pd.DataFrame({"k": pd.array([1, None], "Int64")}),
    "strings": pd.DataFrame({"s": ["a", None], "k": [1, 2]}),
    "a label not a string": pd.DataFrame({0: [1.0, 2.0], "k": [1, 2]}),
    "repeated labels": pd.DataFrame([[1, 2]], columns=["k", "k"]),
    "no columns": pd.DataFrame(index=range(3)),
}


@pytest.mark.parametrize("name", list(FRAMES))
def test_pandas_tables_become_what_from_pandas_makes(name) -> None:
    frame = FRAMES[name]
    if name == "repeated labels":  # from_pandas refuses them, and so does the conversion
        with pytest.raises(ValueError, match="[Dd]uplicate"):
            pa.Table.from_pandas(frame, preserve_index=False)
        with pytest.raises(ValueError, match="[Dd]uplicate"):
            tables._to_arrow(frame)
        return
    expected = pa.Table.from_pandas(frame, preserve_index=False)
    got, kind = tables._to_arrow(frame)
    assert kind == "pandas"
    assert got.schema.remove_metadata() == expected.schema.remove_metadata()
    assert got.equals(expected) and got.num_rows == expected.num_rows
    # NumPy columns of numbers, truth values and times go column by column, without the
    # pandas metadata from_pandas writes
    by_column = got.schema.metadata is None
    assert by_column == (name in ("numbers and times", "no rows"))


def test_large_pandas_frames_go_through_from_pandas(monkeypatch) -> None:
    frame = FRAMES["numbers and times"]
    monkeypatch.setattr(tables, "BY_COLUMN_ROWS", len(frame))  # as large as the threshold
    got, _ = tables._to_arrow(frame)
    assert got.schema.metadata is not None and b"pandas" in got.schema.metadata
    assert got.equals(pa.Table.from_pandas(frame, preserve_index=False))


#: the frames whose columns are all NumPy arrays under string labels: the result is made as
#: one frame of their copies and the new columns, without ``pd.concat``
ONE_FRAME = {"numbers and times", "no rows", "strings", "no columns"}


@pytest.mark.parametrize("name", [n for n in FRAMES if n != "repeated labels"])
def test_pandas_result_of_every_kind_of_frame_equals_each_column_set_on_a_copy(
    name, monkeypatch
) -> None:
    frame = FRAMES[name].copy()
    frame.attrs["source"] = "requests"
    new = {f"new_{n}": c[: len(frame)] for n, c in NEW.items()}
    expected = frame.copy()  # the oracle: each new column set on a copy, one at a time
    for n, c in new.items():
        whole = pa.chunked_array(c.chunks if isinstance(c, pa.ChunkedArray) else [c], c.type)
        expected[n] = whole.to_pandas().set_axis(frame.index)
    before = frame.copy()
    joined = []
    monkeypatch.setattr(pd, "concat", lambda *a, **k: joined.append(1) or concat(*a, **k))
    got = _with_columns(frame, pa.table({}), "pandas", list(new), list(new.values()))
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == {"source": "requests"}
    assert (not joined) == (name in ONE_FRAME)
    for label in [*frame.columns, "new_f", "new_i"]:
        if len(got) and got[label].dtype.kind in "if":  # the result's own memory, writable
            got.loc[got.index[0], label] = 7
    pd.testing.assert_frame_equal(frame, before)  # the frame given is left as it was


concat = pd.concat
