"""What the streaming queries (``window_aggregate``, ``rolling_aggregate`` and its ``at=`` on
streams) share: a per-group step run by ``applyInPandasWithState`` (:func:`grouped_with_state`),
the state a key group keeps between micro-batches (Arrow IPC bytes in one binary column,
:func:`kept_state`, :func:`keep_state`), the groups keys are hashed into, lists of values as
Spark columns and back, NaN flags beside doubles, and the watermark's delay."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..engine.columns import ArrowColumn
from ..engine.memory import engine_memory
from .plan import arrow_schema
from .sql import quoted, task_threads

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.streaming.state import GroupState
    from pyspark.sql.types import StructField

G, Z = "__wa_g", "__wa_z"  # the group column, the lists zipped


#: groups of keys: a micro-batch runs the engine once per group with rows or a timeout (a call
#: costs milliseconds in Spark's Python workers, whatever its rows), and the groups spread over
#: the shuffle partitions. Fixed, not derived from the session: a restarted query finds each
#: key's state in the group it was written to.
GROUPS = 32


def nan_flag(name: str | int) -> str:
    return f"__wa_n{name}"


def state_rows(
    schema: pa.Schema, frames: Iterable[pd.DataFrame], flags: dict[str, str]
) -> pa.Table | None:
    """The micro-batch's rows as Arrow in their own types: timestamps in the session's zone
    (pandas gets them as local wall times), NaN restored from its flag. Column by column, as
    each column's own type says (no schema inferred from the frame)."""
    import pandas as pd

    parts = [f for f in frames if len(f)]
    if not parts:
        return None
    whole = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    arrays = []
    for f in schema:
        col = whole[f.name]
        if pa.types.is_timestamp(f.type) and f.type.tz and col.dt.tz is None:
            col = col.dt.tz_localize(f.type.tz)
        arrays.append(pa.Array.from_pandas(col, type=f.type))
    for col, flag in flags.items():
        i = schema.get_field_index(col)
        nan = whole[flag].to_numpy(dtype=bool, na_value=False)
        if nan.any():
            arrays[i] = pc.if_else(pa.array(nan), np.nan, arrays[i])
    return pa.Table.from_arrays(arrays, schema=schema)


def group_of(keys: Sequence[Column | str]) -> Column:
    """The group of keys a row's ``keys`` (columns) fall in, for ``groupBy``."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(*keys), F.lit(GROUPS)).cast("int").alias(G)


def kept_state(state: GroupState) -> Any:
    """What a group kept (None: nothing), checked against the number of groups it was written
    with."""
    if not state.exists:
        return None
    return unpacked(state.get[0])


def keep_state(state: GroupState, kept: Any) -> None:
    state.update((packed(kept),))


def packed(kept: Any) -> bytes:
    """What a group keeps as state, with the number of groups it is kept under."""
    return pickle.dumps((kept, GROUPS), protocol=pickle.HIGHEST_PROTOCOL)


def unpacked(data: bytes) -> Any:
    """What :func:`packed` packed, checked against the number of groups it was written with."""
    kept, made = pickle.loads(data)
    if made != GROUPS:
        raise ValueError(
            f"this query's checkpoint holds its keys in {made} groups and this windowagg "
            f"makes {GROUPS}: start the query from a new checkpoint"
        )
    return kept


def listed(columns: dict[str, ArrowColumn]) -> pa.Table:
    """Rows as they cross to the JVM from a per-key function: one row, each column one array
    (Spark explodes them again, :func:`unlisted`; a row each through pandas costs several
    times more), a float's NaN as an array of flags beside it (pandas cannot tell NaN from
    null)."""

    cols = {}
    for name, col in columns.items():
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        offsets = pa.array([0, len(col)], pa.int32())
        cols[name] = pa.ListArray.from_arrays(offsets, col)
        if pa.types.is_floating(col.type):
            nan = np.isnan(col.to_numpy(zero_copy_only=False))  # a null is not NaN
            if col.null_count:
                nan &= col.is_valid().to_numpy(zero_copy_only=False)
            cols[nan_flag(name)] = pa.ListArray.from_arrays(offsets, pa.array(nan))
    return pa.table(cols)


def listed_fields(fields: list[StructField]) -> list[StructField]:
    """The per-key function's output fields for :func:`listed` columns of ``fields``."""
    from pyspark.sql.types import ArrayType, BooleanType, DoubleType, FloatType, StructField

    out = []
    for f in fields:
        out.append(StructField(f.name, ArrayType(f.dataType)))
        if isinstance(f.dataType, DoubleType | FloatType):
            out.append(StructField(nan_flag(f.name), ArrayType(BooleanType())))
    return out


def unlisted(
    df: DataFrame, fields: list[StructField], keep: tuple[str, ...] | list[str] = ()
) -> DataFrame:
    """:func:`listed` rows exploded back into one row per element (``keep``: columns beside
    the arrays, repeated), NaN restored from its flags."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    arrays = [f.name for f in listed_fields(fields)]
    zipped = F.explode(F.arrays_zip(*[F.col(quoted(n)) for n in arrays])).alias(Z)
    z = F.col(Z)

    def value(f: StructField) -> Column:
        if not isinstance(f.dataType, DoubleType | FloatType):
            return z.getField(f.name).alias(f.name)
        nan = z.getField(nan_flag(f.name))
        return (
            F.when(nan, F.lit(float("nan")).cast(f.dataType))
            .otherwise(z.getField(f.name))
            .alias(f.name)
        )

    return df.select(*keep, zipped).select(*keep, *[value(f) for f in fields])


def watermark_delay_ms(df: DataFrame, time: str) -> int:
    for f in df.schema.fields:
        if f.name == time and "spark.watermarkDelayMs" in (f.metadata or {}):
            return int(f.metadata["spark.watermarkDelayMs"])
    raise ValueError(
        f"a streaming DataFrame needs a watermark on {time!r}: "
        f"df.withWatermark({time!r}, '1 minute')"
    )


def grouped(df: DataFrame, keys: list[Column]) -> tuple[DataFrame, pa.Schema, dict[str, str]]:
    """``df`` ready to be grouped by :data:`G`: its columns, a NaN flag beside each float
    column (for :func:`state_rows`), the group of its ``keys``; with ``df``'s Arrow schema and
    the flags."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType

    floats = [f.name for f in df.schema.fields if isinstance(f.dataType, DoubleType | FloatType)]
    flags = {c: nan_flag(i) for i, c in enumerate(floats)}
    base = df.select(
        *[F.col(quoted(c)) for c in df.columns],
        *[F.isnan(F.col(quoted(c))).alias(flags[c]) for c in floats],
        group_of(keys or [F.lit(0)]),
    )
    return base, arrow_schema(df), flags


#: a key group's step: (its kept rows or None, its new rows or None, the watermark in
#: microseconds, or -inf before the first) -> (record batches to emit, rows to keep or None)
Step = Callable[[Any, "pa.Table | None", float], "tuple[list[pa.RecordBatch], pa.Table | None]"]
#: when a group with kept rows wakes: (the rows kept, the watermark in ms) -> a timestamp (ms)
Wake = Callable[["pa.Table", int], int]


def grouped_with_state(
    df: DataFrame, keys: list[Column], step: Callable[[pa.Schema], Step], wake: Wake, fields: list
) -> DataFrame:
    """``df`` in :data:`GROUPS` groups of ``keys`` through ``applyInPandasWithState`` (append
    mode, event-time timeouts): per group, ``step`` (made for ``df``'s Arrow schema) takes the
    kept rows and the micro-batch's, and what it emits comes out as rows of ``fields``; the
    rows it keeps are the group's state, and the group wakes at ``wake``'s time."""
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import BinaryType, StructField, StructType

    base, schema, flags = grouped(df, keys)
    advance = step(schema)

    def run(key: tuple, frames: Iterable[pd.DataFrame], state: GroupState) -> Iterator:
        task_threads()
        carry = kept_state(state)
        rows = None if state.hasTimedOut else state_rows(schema, frames, flags)
        wm_ms = state.getCurrentWatermarkMs()
        with engine_memory():
            out, carry = advance(carry, rows, wm_ms * 1000 if wm_ms > 0 else -math.inf)
        if out:
            table = pa.Table.from_batches(out)
            yield listed({n: table.column(n) for n in table.column_names}).to_pandas(
                integer_object_nulls=True
            )
        if carry is None or not carry.num_rows:
            state.remove()
            return
        keep_state(state, carry)
        state.setTimeoutTimestamp(wake(carry, wm_ms))

    out = base.groupBy(G).applyInPandasWithState(
        run,
        StructType(listed_fields(fields)),
        StructType([StructField("rows", BinaryType())]),
        "append",
        GroupStateTimeout.EventTimeTimeout,
    )
    return unlisted(out, fields)
