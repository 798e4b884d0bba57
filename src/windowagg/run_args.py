"""The command line's arguments of ``windowagg run``, shared by both engines: what they mean
(entries, windows, frames, formats), every check that needs no input, and writing the output
into place only when complete (:mod:`windowagg.pipeline`)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from .aggregations import resolve
from .durations import NeedsUnitError, PlainNumbersError
from .frames import frame
from .specs import SpecError, parse

#: a table of the engine the command line runs on (a pandas or a Spark DataFrame)
Frame = TypeVar("Frame")

FORMATS = {
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}
UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000}


class UserError(Exception):
    """A mistake in the command's arguments or input: one line on stderr, exit status 1."""


@dataclass
class RunArgs:
    input: str
    time: str
    value: str | None
    key: list[str]
    windows: list[str]
    agg: tuple[str, ...] | str | None
    output: str
    format: str = "parquet"
    time_unit: str = "ms"
    master: str | None = None  # Spark's master; None: local[2]
    rolling: tuple[str, ...] = ()
    order_by: tuple[str, ...] = ()
    engine: str = "spark"  # or "local": the same engine on one machine, without Spark
    at: str | None = None  # the query rows' files (--at): point-in-time frames
    at_time: str | None = None
    at_key: tuple[str, ...] = ()
    remote: str | None = None  # a Spark Connect server (--remote) instead of a master


def rolling_entries(
    specs: tuple[str, ...] | list[str],
) -> dict[str, tuple[str, str | tuple[str, ...], str]]:
    """``NAME=AGG:COLUMN:FRAME`` (the frame has its own colon: ``range:1h``; two columns as
    ``X,Y``) as ``aggs``."""
    aggs: dict[str, tuple[str, str | tuple[str, ...], str]] = {}
    for spec in specs:
        name, eq, rest = spec.partition("=")
        parts = rest.split(":", 2)
        if not eq or not name.strip() or len(parts) != 3 or not all(p.strip() for p in parts):
            raise UserError(
                f"--rolling {spec!r}: use NAME=AGG:COLUMN:FRAME, like "
                "sum_1h=sum:amount:range:1h or n=count:*:rows:100"
            )
        if name.strip() in aggs:
            raise UserError(f"--rolling: the name {name.strip()!r} is given twice")
        aggs[name.strip()] = (parts[0].strip(), _columns(parts[1]), parts[2].strip())
    return aggs


def _columns(text: str) -> str | tuple[str, ...]:
    """A column, or the pair ``X,Y`` of a two-column aggregation (``max_by:price,time``)."""
    names = tuple(c.strip() for c in text.split(","))
    return names[0] if len(names) == 1 else names


def _split_outside_parens(text: str) -> tuple[str, str | None]:
    """``AGG:COLUMN`` at the first colon outside the aggregation's parameters."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ":" and depth == 0:
            return text[:i].strip(), text[i + 1 :].strip()
    return text.strip(), None


def window_entries(
    specs: tuple[str, ...] | list[str] | str | None, value: str | None
) -> dict[str, tuple[str, str | tuple[str, ...] | None]]:
    """``[NAME=]AGG[:COLUMN]`` (repeatable; two columns as ``X,Y``) as ``aggs``: without a
    column, ``--value``'s
    (``count`` without either counts rows); the name defaults to ``AGG_COLUMN`` (``sum_fare``,
    ``quantile_q_0_95_fare``; ``count`` for rows), and to ``value`` for the one aggregation
    of ``--value`` (the output of earlier versions)."""

    specs = [specs] if isinstance(specs, str) else list(specs or [])
    if not specs:
        raise UserError("give --agg with --window, like --agg sum:fare (or --rolling)")
    aggs: dict[str, tuple[str, str | tuple[str, ...] | None]] = {}
    for spec in specs:
        m = re.fullmatch(r"\s*([A-Za-z_][\w.]*)\s*=(.*)", spec)
        name, rest = (m.group(1), m.group(2)) if m else (None, spec)
        agg, column = _split_outside_parens(rest)
        if not agg or column == "":
            raise UserError(
                f"--agg {spec!r}: use [NAME=]AGG[:COLUMN], like sum:fare, count "
                "or p95=quantile(q=0.95):fare"
            )
        base = re.sub(r"\W+", "_", agg).strip("_").lower()
        if column is None and value is not None:
            column = value
            name = name or ("value" if len(specs) == 1 else f"{base}_{value}")
        elif column is None:
            if base != "count":
                raise UserError(f"--agg {spec!r}: which column? use {agg}:COLUMN (or --value)")
            column = "*"
        name = name or (base if column == "*" else base + "_" + re.sub(r"\W+", "_", column))
        if name in aggs:
            raise UserError(
                f"--agg: the output column {name!r} comes twice; name one with "
                f"NAME=, like --agg {name}2={rest.strip()}"
            )
        aggs[name] = (agg, None if column == "*" else _columns(column))
    return aggs


def files_of(path: Path) -> list[Path]:
    """The input's files: ``path`` itself, or every file under it but hidden ones, in order."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))


def input_format(path: Path) -> str:
    files = files_of(path)
    kinds = {FORMATS[p.suffix.lower()] for p in files if p.suffix.lower() in FORMATS}
    if not files or not kinds:
        raise UserError(f"{path}: no CSV, JSON lines or Parquet files found")
    if len(kinds) > 1:
        raise UserError(f"{path}: mixes formats ({', '.join(sorted(kinds))}); use one")
    return kinds.pop()


def check(args: RunArgs) -> tuple[Path, str]:
    """Everything that can be checked without Spark."""
    src = Path(args.input).absolute()  # Spark resolves relative paths against its own cwd
    if not src.exists():
        raise UserError(f"input {args.input} does not exist")
    fmt = input_format(src)
    out = Path(args.output)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"output {args.output} exists and is not an empty directory")
    if args.engine not in ("spark", "local"):
        raise UserError(f"--engine must be spark or local, got {args.engine!r}")
    if args.engine == "local" and args.master is not None:
        raise UserError(
            "--master runs Spark; --engine local runs on this machine without it: "
            "give one or the other"
        )
    if args.remote is not None and (args.engine == "local" or args.master is not None):
        raise UserError(
            "--remote runs on a Spark Connect server: give it without --master and --engine local"
        )
    if args.time_unit not in (*UNITS, "none"):
        raise UserError(f"--time-unit must be s, ms, us or none, got {args.time_unit!r}")
    if args.at is not None:
        if not args.rolling:
            raise UserError("--at places --rolling frames at the queries' rows: give --rolling")
        if not Path(args.at).exists():
            raise UserError(f"--at {args.at} does not exist")
        input_format(Path(args.at))
    elif args.at_time is not None or args.at_key:
        raise UserError("--at-time and --at-key name the columns of --at's table: give --at")
    if args.rolling:
        if args.windows or args.value or args.agg:
            raise UserError(
                "--rolling adds columns to every row; --window, --value and --agg "
                "compute windows: give one or the other"
            )
        for name, (agg, _column, text) in rolling_entries(args.rolling).items():
            try:
                resolve(agg)
                frame(text, 1_000_000)
            except PlainNumbersError:  # checked again once the time column is known
                pass
            except (ValueError, TypeError) as e:
                raise UserError(f"--rolling {name}: {e}") from None
        return src, fmt
    for name, (agg, _col) in window_entries(args.agg, args.value).items():
        try:
            resolve(agg)
        except (ValueError, TypeError) as e:
            raise UserError(f"--agg {name}: {e}") from None
    if not args.windows:
        raise UserError("give at least one --window (or --rolling)")
    for spec in args.windows:
        try:  # the unit matters only for numbers without one; checked again once it is known
            parse(spec, 1_000_000)
        except NeedsUnitError:
            pass
        except SpecError as e:
            raise UserError(str(e)) from None
    return src, fmt


def check_columns(columns: list[str], args: RunArgs) -> None:
    """Every column the arguments name is in the input."""
    named = [
        (args.time, "--time"),
        *((k, "--key") for k in args.key),
        *((o, "--order-by") for o in args.order_by),
    ]
    if args.value:
        named.append((args.value, "--value"))
    for name, role in named:
        if name not in columns:
            raise UserError(
                f"{role}: no column {name!r} in the input (columns: {', '.join(columns)})"
            )


def write_atomically(write: Callable[[Path], None], out: Path) -> int:
    """``write`` a temporary sibling directory, then rename it into place."""
    out = out.resolve()
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        if out.exists():
            out.rmdir()  # checked empty before the run
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def check_queries(columns: list[str], args: RunArgs) -> str:
    """Every column ``--at-time`` and ``--at-key`` name is in the query table; the queries'
    time column."""
    at_time = args.at_time or args.time
    for name, role in [(at_time, "--at-time"), *((k, "--at-key") for k in args.at_key)]:
        if name not in columns:
            raise UserError(
                f"{role}: no column {name!r} in {args.at} (columns: {', '.join(columns)})"
            )
    return at_time


def aggregate(
    table: Frame,
    args: RunArgs,
    rolling_aggregate: Callable[..., Frame],
    window_aggregate: Callable[..., Frame],
    at: Frame | None = None,
) -> Frame:
    """``rolling_aggregate`` (``--rolling``, at the rows of ``at``: ``--at``) or
    ``window_aggregate`` of Spark's or the local tables' functions on ``table``, as the
    arguments say; their errors as a UserError."""
    try:
        if args.rolling:
            at_args = {}
            if at is not None:
                at_args = {"at": at, "at_time": args.at_time, "at_key": list(args.at_key) or None}
            return rolling_aggregate(
                table,
                time=args.time,
                key=args.key or None,
                aggs=rolling_entries(args.rolling),
                order_by=list(args.order_by) or None,
                **at_args,
            )
        return window_aggregate(
            table,
            time=args.time,
            windows=args.windows,
            aggs=window_entries(args.agg, args.value),
            key=args.key or None,
        )
    except (SpecError, ValueError, TypeError) as e:
        raise UserError(str(e)) from None
