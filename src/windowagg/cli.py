"""The ``windowagg`` command line (api.md section 7)."""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence

from . import __version__


def _demo(args: argparse.Namespace) -> int:
    """Sliding-window aggregates per zone over a generated taxi stream, with every FIFO
    algorithm that serves each aggregation cross-checked against the others."""
    from .aggregations import aggregation, flags
    from .demo import taxi_stream
    from .fifo import ALGORITHMS, fifo

    trips = taxi_stream(args.events, seed=args.seed)
    size = args.size
    out = sys.stdout
    print(f"windowagg {__version__} demo: {len(trips):,} taxi trips in arrival order", file=out)
    disorder = sum(a.pickup_s > b.pickup_s for a, b in itertools.pairwise(trips)) / len(trips)
    print(f"  {disorder:.0%} of trips arrive after a later pickup (natural disorder)", file=out)
    print(f"  per zone: aggregates over each zone's last {size} trips (count window)\n", file=out)

    queries = [("max", "fare"), ("mean", "minutes"), ("stddev", "fare"), ("maxcount", "fare")]
    zones = sorted({t.zone for t in trips})
    header = f"{'aggregation':<18}{'algorithms that agree':<24}{'zone 0':>10}{'zone 1':>10}{'s':>7}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for agg_name, field in queries:
        agg = aggregation(agg_name)
        invertible, _, selective = flags(agg)
        names = [
            a
            for a in ALGORITHMS
            if not (a == "soe" and not invertible)
            and not (a == "slickdeque" and not (invertible or selective))
        ]
        start = time.perf_counter()
        finals = {}
        for name in names:
            windows = {z: fifo(name, agg, backend="python") for z in zones}
            for trip in trips:
                w = windows[trip.zone]
                w.insert(getattr(trip, field))
                if len(w) > size:
                    w.evict()
            finals[name] = [windows[z].query() for z in zones]
        elapsed = time.perf_counter() - start
        reference = finals["recalc"]
        agree = [n for n in names if all(_close(a, b) for a, b in zip(finals[n], reference))]
        if len(agree) != len(names):
            print(f"error: algorithms disagree on {agg_name}", file=sys.stderr)
            return 1
        label = f"{agg_name}({field})"
        shown = f"{len(agree)} of {len(names)}"
        z0, z1 = (_fmt(v) for v in reference[:2])
        print(f"{label:<18}{shown:<24}{z0:>10}{z1:>10}{elapsed:>7.2f}", file=out)
    print("\nThe Spark pipeline arrives with the Spark integration; this demo runs the", file=out)
    print("in-order aggregators it will build on.", file=out)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .bench.core import plot, table, write_csv
    from .bench.suites import SUITES

    suite = SUITES[args.suite]
    mode = "quick" if args.quick else "full"
    print(f"windowagg bench {args.suite} ({mode}); progress:", flush=True)
    start = time.perf_counter()
    rows = suite(args.quick, lambda line: print(line, flush=True))
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
    from .kernels.specialize import cache_dir
    from .kernels.warmup import warmup

    print(f"compiling the kernels into {cache_dir()} ({args.jobs} processes)")
    warmup(args.jobs)
    return 0


def _close(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def _fmt(v: object) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="windowagg", description="Sliding-window aggregation over data streams."
    )
    parser.add_argument("--version", action="version", version=f"windowagg {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the end-to-end example on generated data")
    demo.add_argument("--events", type=_positive, default=20_000, help="trips to generate")
    demo.add_argument("--size", type=_positive, default=100, help="window size in trips")
    demo.add_argument("--seed", type=int, default=7, help="random seed of the generator")
    demo.set_defaults(func=_demo)
    from .bench.suites import SUITES

    bench = sub.add_parser("bench", help="run a benchmark suite")
    bench.add_argument("suite", choices=sorted(SUITES), help="which suite")
    bench.add_argument("--quick", action="store_true", help="a small version (minutes)")
    bench.add_argument("--csv", metavar="FILE", help="also write the results as CSV")
    bench.add_argument("--plot", metavar="FILE", help="also draw them into a PNG")
    bench.set_defaults(func=_bench)
    warm = sub.add_parser("warmup", help="compile every kernel once (cached for later runs)")
    warm.add_argument("--jobs", type=_positive, default=2, help="compiler processes")
    warm.set_defaults(func=_warmup)
    return parser


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
