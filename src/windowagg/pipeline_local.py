"""``windowagg run --engine local``: the same command without Spark or Java. The files are read
into one Arrow table (Arrow's readers and type inference), the time column is prepared by the
same rules as on Spark (ISO-8601 strings parsed, numbers as epoch times in ``--time-unit``,
or plain numbers with ``none``), :func:`windowagg.tables.window_aggregate` or
:func:`windowagg.tables.rolling_aggregate` runs the engine that Spark's workers run, and the
result is written as one Parquet or CSV file (``part-00000``) into a temporary directory
beside the output, renamed into place when complete.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .run_args import (
    UNITS,
    RunArgs,
    UserError,
    aggregate,
    check_columns,
    check_queries,
    files_of,
    input_format,
    write_atomically,
)
from .tables import rolling_aggregate, window_aggregate

__all__ = ["compute", "prepare_time", "read"]


def read(src: Path, fmt: str) -> pa.Table:
    """The input as one ``pyarrow.Table`` (every file of a directory, in name order)."""

    try:
        return ds.dataset([str(p) for p in files_of(src)], format=fmt).to_table()
    except (pa.ArrowException, OSError) as e:  # Arrow's own message, on one line
        raise UserError(f"cannot read {src}: {str(e).splitlines()[0]}") from None


def prepare_time(table: pa.Table, args: RunArgs, column: str | None = None) -> pa.Table:
    """The time column (``--time``'s, or ``column`` of the queries) as a timestamp (strings:
    ISO-8601; numbers: epoch in --time-unit), or plain numbers with --time-unit none; dates and
    timestamps as they are."""

    if column is None:
        check_columns(table.column_names, args)
    name = column or args.time
    at = table.column_names.index(name)
    col = table.column(at)
    if pa.types.is_timestamp(col.type) or pa.types.is_date(col.type):
        return table
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        try:
            parsed = pc.cast(col, pa.timestamp("us"))
        except pa.ArrowInvalid as e:
            bad = str(e).split("string: ", 1)[-1].split(" as a scalar")[0]
            raise UserError(
                f"--time: cannot parse {bad} in column {name!r} as a time "
                "(use ISO-8601, e.g. 2021-01-01 08:30:00)"
            ) from None
        return table.set_column(at, name, parsed)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        if args.time_unit == "none":
            return table
        factor = 1_000_000 // UNITS[args.time_unit]
        micros = pc.multiply(
            pc.cast(col, pa.int64()) if pa.types.is_integer(col.type) else col, factor
        )
        micros = pc.cast(micros, pa.int64(), safe=False)  # fractions truncated, as Spark's cast
        return table.set_column(at, name, pc.cast(micros, pa.timestamp("us")))
    raise UserError(f"--time: column {name!r} is {col.type}, not a time")


def _write(table: pa.Table, fmt: str) -> Callable[[Path], None]:
    def write(directory: Path) -> None:
        directory.mkdir()
        if fmt == "csv":
            pcsv.write_csv(table, directory / "part-00000.csv")
        else:
            pq.write_table(table, directory / "part-00000.parquet")

    return write


def compute(args: RunArgs, src: Path, fmt: str, log: Callable[[str], None]) -> int:
    """Read, compute and write on one machine; the number of rows written."""

    log(f"reading {src} ({fmt}, local engine)")
    table = read(src, fmt)
    if not table.num_columns:
        raise UserError(f"{src}: no columns (an empty file?)")
    if not table.num_rows:
        raise UserError(f"{src}: no rows, only a header")
    table = prepare_time(table, args)
    queries = None
    if args.at is not None:
        at_src = Path(args.at).absolute()
        queries = read(at_src, input_format(at_src))
        queries = prepare_time(queries, args, check_queries(queries.column_names, args))
    what = "rolling frames" if args.rolling else "windows"
    where = "" if queries is None else f" at {queries.num_rows:,} query rows"
    log(f"computing {what} over {table.num_rows:,} rows{where} (local engine)")
    result = aggregate(table, args, rolling_aggregate, window_aggregate, queries)
    log(
        f"writing {result.num_rows:,} {'rows' if args.rolling else 'window rows'} to "
        f"{args.output} ({args.format})"
    )
    write_atomically(_write(result, args.format), Path(args.output))
    return result.num_rows
