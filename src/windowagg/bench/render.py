"""A suite's CSV (``windowagg bench SUITE --csv``) rendered for the benchmark pages of the
documentation: one Markdown table per measured (aggregation, parameter), cases as rows and the
swept value as columns, and one SVG chart of the rates."""

from __future__ import annotations

import csv
import io
from pathlib import Path

__all__ = ["markdown_tables", "read_rows", "svg_chart"]


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV written by ``windowagg bench --csv``."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no measurements")
    return rows


def _groups(rows: list[dict[str, str]]) -> dict[tuple[str, str], list[dict[str, str]]]:
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault((r["agg"], r["param"]), []).append(r)
    return groups


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def _xs(group: list[dict[str, str]]) -> list[str]:
    xs = list(dict.fromkeys(r["x"] for r in group))
    if all(_number(x) is not None for x in xs):
        xs.sort(key=float)
    return xs


def markdown_tables(rows: list[dict[str, str]]) -> str:
    """One table per (aggregation, parameter): the median time of every case at every swept
    value, and the spread (max - min over median) beside it."""
    out = []
    for (agg, param), group in _groups(rows).items():
        xs = _xs(group)
        cases = list(dict.fromkeys(r["case"] for r in group))
        cell = {(r["case"], r["x"]): r for r in group}
        out.append(f"### {agg}, {param}" if param else f"### {agg}")
        out.append("")
        out.append("| case | " + " | ".join(xs) + " |")
        out.append("|---|" + "---:|" * len(xs))
        for case in cases:
            vals = []
            for x in xs:
                r = cell.get((case, x))
                vals.append(
                    "" if r is None else
                    f"{_seconds(float(r['median_s']))} ±{100 * float(r['spread']):.0f}%"
                )  # fmt: skip
            out.append(f"| {case} | " + " | ".join(vals) + " |")
        out.append("")
    return "\n".join(out)


def svg_chart(rows: list[dict[str, str]]) -> str:
    """The rates (items per second) of every case, one panel per (aggregation, parameter),
    as an inline SVG figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _groups(rows)
    cols = min(3, len(groups))
    nrows = -(-len(groups) // cols)
    with matplotlib.rc_context({"svg.hashsalt": "windowagg", "svg.fonttype": "none"}):
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
        for ax in axes.flat[len(groups) :]:
            ax.set_visible(False)
        for ax, ((agg, param), group) in zip(axes.flat, groups.items()):
            xs = _xs(group)
            numeric = all(_number(x) is not None for x in xs) and len(xs) > 1
            for case in dict.fromkeys(r["case"] for r in group):
                pts = [(r["x"], float(r["rate_per_s"])) for r in group if r["case"] == case]
                pts.sort(key=lambda p: xs.index(p[0]))
                pos = [float(p[0]) if numeric else xs.index(p[0]) for p in pts]
                ax.plot(pos, [p[1] for p in pts], marker="o", label=case)
            if numeric and max(map(float, xs)) > 100 * max(min(map(float, xs)), 1e-300):
                ax.set_xscale("log")
            if not numeric:
                ax.set_xticks(range(len(xs)), xs)
            ax.set_yscale("log")
            ax.set_title(f"{agg}, {param}" if param else agg, fontsize=10)
            ax.set_ylabel("items / s")
            ax.legend(fontsize=7)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    svg = buf.getvalue()
    return '<figure class="bench-chart">\n' + svg[svg.index("<svg") :] + "\n</figure>"
