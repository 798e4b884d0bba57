"""The ``windowagg`` command line (docs/guides/cli.md)."""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Sequence

from . import __version__
from .bench.core import plot, table, write_csv
from .bench.scaling import scaling_suite
from .bench.suites import SUITES
from .demo import run_demo
from .kernels.notice import cache_location
from .pipeline import RunArgs, UserError, run
from .spark import SparkUnavailable
from .warmup import warmup

REMOTE_HELP = (
    "a Spark Connect server instead of a master: sc://HOST:PORT, or local[N] for one "
    "pyspark starts here (needs windowagg[connect])"
)


def _demo(args: argparse.Namespace) -> int:
    """Generated taxi trips per zone through the Spark pipeline (see windowagg.demo)."""

    where = f"Spark Connect, {args.remote}" if args.remote else args.master
    print(f"windowagg {__version__} demo: the Spark pipeline on generated data ({where})")
    try:
        summary = run_demo(
            args.events,
            args.seed,
            args.output,
            args.master,
            log=lambda m: print(m, flush=True),
            remote=args.remote,
        )
    except SparkUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not summary["agree"]:
        print("error: windowagg and Spark's window functions disagree", file=sys.stderr)
        return 1
    return 0


def _run(args: argparse.Namespace) -> int:
    ra = RunArgs(
        args.input,
        args.time,
        args.value,
        args.key or [],
        args.window or [],
        tuple(args.agg or ()),
        args.output,
        args.format,
        args.time_unit,
        args.master,
        tuple(args.rolling or ()),
        tuple(args.order_by or ()),
        args.engine,
        args.at,
        args.at_time,
        tuple(args.at_key or ()),
        args.remote,
    )
    try:
        summary = run(ra)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(
        f"{summary['rows']:,} {summary['kind']} written to {args.output} "
        f"in {summary['seconds']:.1f} s"
    )
    return 0


def _bench(args: argparse.Namespace) -> int:
    suite = SUITES[args.suite]
    if args.threads and args.suite != "local":
        print(f"error: --threads applies to the local suite, not {args.suite}", file=sys.stderr)
        return 2
    if args.events and not args.threads and "events" not in inspect.signature(suite).parameters:
        print(
            f"error: --events applies to the spark suite and to local --threads, not {args.suite}",
            file=sys.stderr,
        )
        return 2
    mode = "quick" if args.quick else "full"
    print(f"windowagg bench {args.suite} ({mode}); progress:", flush=True)
    start = time.perf_counter()
    sized = {"events": args.events} if args.events else {}
    report = lambda line: print(line, flush=True)  # noqa: E731
    if args.threads:
        rows = scaling_suite(args.threads, args.quick, report, args.events)
    else:
        rows = suite(args.quick, report, **sized)
    print()
    print(table(rows, "M ops/s" if args.suite == "latency" else "M elem/s"))
    print(f"\n{len(rows)} cases in {time.perf_counter() - start:.0f} s")
    if args.csv:
        write_csv(rows, args.csv)
        print(f"wrote {args.csv}")
    if args.plot:
        plot(rows, args.plot, args.suite)
        print(f"wrote {args.plot}")
    return 0


def _warmup(args: argparse.Namespace) -> int:
    print(f"compiling the kernels into {cache_location()} ({args.jobs} processes)")
    warmup(args.jobs)
    return 0


def build_parser() -> argparse.ArgumentParser:
    return _parser_and_commands()[0]


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Each subcommand's parser, by name (the command line's reference is made from them)."""
    return _parser_and_commands()[1]


def _parser_and_commands() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="windowagg", description="Sliding-window aggregation over data streams."
    )
    parser.add_argument("--version", action="version", version=f"windowagg {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the Spark pipeline on a file or directory")
    run.add_argument("input", help="CSV (with a header), JSON lines or Parquet: file or directory")
    run.add_argument("--time", required=True, help="event-time column")
    run.add_argument("--value", help="the column of every --agg given without one")
    run.add_argument("--key", action="append", help="grouping column (repeat for several)")
    run.add_argument(
        "--window",
        action="append",
        metavar="SPEC",
        help="tumbling:SIZE, sliding:SIZE/SLIDE, session:GAP, count-tumbling:N, "
        "count-sliding:N/S (repeat for several)",
    )
    run.add_argument(
        "--agg",
        action="append",
        metavar="[NAME=]AGG[:COLUMN]",
        help="an aggregation per window, e.g. sum:fare, count, "
        "'p95=quantile(q=0.95):fare'; the output column is NAME, else "
        "AGG_COLUMN (sum_fare; count for rows) (repeat for several)",
    )
    run.add_argument(
        "--rolling",
        action="append",
        metavar="NAME=AGG:COLUMN:FRAME",
        help="a per-row column instead of windows, e.g. sum_1h=sum:amount:range:1h "
        "or n=count:*:rows:100 (repeat for several)",
    )
    run.add_argument(
        "--order-by",
        action="append",
        metavar="COLUMN",
        help="orders rows with equal times (rows frames; repeat)",
    )
    run.add_argument(
        "--at",
        metavar="QUERIES",
        help="with --rolling: the frames placed at these rows' times instead of the input's "
        "(point-in-time features); CSV, JSON lines or Parquet; every query row is written",
    )
    run.add_argument(
        "--at-time", metavar="COLUMN", help="the queries' time column (default --time)"
    )
    run.add_argument(
        "--at-key",
        action="append",
        metavar="COLUMN",
        help="the queries' key columns, matched to --key in order (default --key; repeat)",
    )
    run.add_argument("--output", required=True, help="output directory (must not exist)")
    run.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    run.add_argument(
        "--time-unit",
        choices=["s", "ms", "us", "none"],
        default="ms",
        help="unit of a numeric time column (none: plain numbers)",
    )
    run.add_argument("--master", help="Spark master (default local[2])")
    run.add_argument("--remote", help=REMOTE_HELP)
    run.add_argument(
        "--engine",
        choices=["spark", "local"],
        default="spark",
        help="spark (default), or local: the same engine on this machine, without Spark or Java",
    )
    run.set_defaults(func=_run)
    demo = sub.add_parser("demo", help="run the Spark pipeline on generated data")
    demo.add_argument("--events", type=_positive, default=200_000, help="trips to generate")
    demo.add_argument("--seed", type=int, default=7, help="random seed of the generator")
    demo.add_argument("--output", default="demo-output", help="where results and chart go")
    demo.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    demo.add_argument("--remote", help=REMOTE_HELP)
    demo.set_defaults(func=_demo)

    bench = sub.add_parser("bench", help="run a benchmark suite")
    bench.add_argument("suite", choices=sorted(SUITES), help="which suite")
    bench.add_argument("--quick", action="store_true", help="a small version (minutes)")
    bench.add_argument(
        "--events",
        type=_positive,
        metavar="N",
        help="events per case (spark suite, and local --threads; default 10,000,000)",
    )
    bench.add_argument(
        "--threads",
        type=_counts,
        metavar="N,N,...",
        help="local suite: every case at each thread count, beside Polars at the same count, "
        "with a stage profile (e.g. 1,2,4,8,16)",
    )
    bench.add_argument("--csv", metavar="FILE", help="also write the results as CSV")
    bench.add_argument("--plot", metavar="FILE", help="also draw them into a PNG")
    bench.set_defaults(func=_bench)
    warm = sub.add_parser("warmup", help="compile every kernel once (cached for later runs)")
    warm.add_argument("--jobs", type=_positive, default=2, help="compiler processes")
    warm.set_defaults(func=_warmup)
    return parser, {"run": run, "demo": demo, "bench": bench, "warmup": warm}


def _counts(text: str) -> list[int]:
    """Thread counts: whole numbers >= 1, comma-separated."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"thread counts are whole numbers >= 1: {text!r}")
    return list(dict.fromkeys(counts))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
