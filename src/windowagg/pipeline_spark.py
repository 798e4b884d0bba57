"""``windowagg run`` on Spark: the files read by Spark's readers, the time column prepared
(ISO-8601 strings parsed, numbers as epoch times in ``--time-unit``, or plain numbers with
``none``), :func:`windowagg.spark.window_aggregate` or :func:`windowagg.spark.rolling_aggregate`
in Spark local mode or on ``--master``, and the output written by Spark into a temporary
directory beside the output, renamed into place when complete."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .run_args import (
    UNITS,
    RunArgs,
    UserError,
    aggregate,
    check_columns,
    check_queries,
    input_format,
    write_atomically,
)
from .spark import SparkUnavailable, rolling_aggregate, spark_session, window_aggregate

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["compute", "prepare_time", "read", "spark_writer"]


def read(spark: SparkSession, src: Path, fmt: str) -> DataFrame:
    reader = spark.read
    if fmt == "csv":
        return reader.option("header", True).option("inferSchema", True).csv(str(src))
    if fmt == "json":
        return reader.json(str(src))
    return reader.parquet(str(src))


def prepare_time(df: DataFrame, args: RunArgs, column: str | None = None) -> DataFrame:
    """The time column (``--time``'s, or ``column`` of the queries) as a timestamp (strings:
    ISO-8601; numbers: epoch in --time-unit), or plain numbers with --time-unit none."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import (
        IntegralType,
        NumericType,
        StringType,
        TimestampNTZType,
        TimestampType,
    )

    fields = {f.name: f.dataType for f in df.schema.fields}
    if column is None:
        check_columns(list(fields), args)
    name = column or args.time
    ttype = fields[name]
    col = F.col(name)
    if isinstance(ttype, TimestampType | TimestampNTZType):
        return df
    if isinstance(ttype, StringType):
        parsed = df.withColumn(name, F.try_to_timestamp(col))
        bad = df.where(F.try_to_timestamp(col).isNull() & col.isNotNull()).select(col).limit(1)
        rows = bad.collect()
        if rows:
            raise UserError(
                f"--time: cannot parse {rows[0][0]!r} in column {name!r} as "
                "a time (use ISO-8601, e.g. 2021-01-01 08:30:00)"
            )
        return parsed
    if isinstance(ttype, NumericType):
        if args.time_unit == "none":
            return df
        factor = 1_000_000 // UNITS[args.time_unit]
        # whole numbers as longs first: an int column times 10^6 overflows int (ANSI mode)
        micros = (
            col.cast("long") * factor
            if isinstance(ttype, IntegralType)
            else (col * factor).cast("long")
        )
        return df.withColumn(name, F.timestamp_micros(micros))
    raise UserError(f"--time: column {name!r} is {ttype.simpleString()}, not a time")


def spark_writer(result: DataFrame, fmt: str) -> Callable[[Path], None]:
    """Writes a Spark DataFrame into a directory that does not exist yet."""

    def write(directory: Path) -> None:
        writer = result.write.mode("error")
        if fmt == "csv":
            writer.option("header", True).csv(str(directory))
        else:
            writer.parquet(str(directory))

    return write


def compute(args: RunArgs, src: Path, fmt: str, log: Callable[[str], None]) -> int:
    """Read, compute and write on Spark; the number of rows written."""

    master = args.master or "local[2]"
    try:
        spark = spark_session(master, remote=args.remote)
    except SparkUnavailable as e:
        raise UserError(str(e)) from None
    log(f"reading {src} ({fmt})")
    try:
        df = read(spark, src, fmt)
    except Exception as e:  # Spark's own message, on one line
        raise UserError(f"cannot read {src}: {str(e).splitlines()[0]}") from None
    if not df.columns:
        raise UserError(f"{src}: no columns (an empty file?)")
    if df.isEmpty():
        raise UserError(f"{src}: no rows, only a header")
    queries = None
    if args.at is not None:
        at_src = Path(args.at).absolute()
        try:
            queries = read(spark, at_src, input_format(at_src))
        except Exception as e:  # Spark's own message, on one line
            raise UserError(f"cannot read {at_src}: {str(e).splitlines()[0]}") from None
        queries = prepare_time(queries, args, check_queries(queries.columns, args))
    result = aggregate(
        prepare_time(df, args), args, rolling_aggregate, window_aggregate, queries
    ).cache()
    what = "rolling frames" if args.rolling else "windows"
    if args.remote is not None:
        log(f"computing {what} on Spark Connect ({args.remote})")
    elif master.startswith("local"):
        log(f"computing {what} (Spark local mode)")
    else:
        log(f"computing {what} on {master}")
    rows = result.count()
    log(
        f"writing {rows:,} {'rows' if args.rolling else 'window rows'} to {args.output} "
        f"({args.format})"
    )
    write_atomically(spark_writer(result, args.format), Path(args.output))
    result.unpersist()
    return rows
