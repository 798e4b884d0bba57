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


def _groups(rows: list[dict[str, str]], rates: bool = False) -> dict[str, list[dict[str, str]]]:
    """The rows by title: aggregation and parameter, and (unless ``rates``: rates compare
    across sizes) the items per run where one (aggregation, parameter) was measured at several
    sizes."""
    sizes: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        sizes.setdefault((r["agg"], r["param"]), set()).add(r["items"])
    groups: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        title = f"{r['agg']}, {r['param']}" if r["param"] else r["agg"]
        if r["param"].startswith(r["agg"]):  # a parameter that names the aggregation itself
            title = r["param"]
        if not rates and len(sizes[r["agg"], r["param"]]) > 1:
            title += f", {_label(r['items'])} items"
        groups.setdefault(title, []).append(r)
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


def _label(x: str) -> str:
    """A swept value as a column heading: whole numbers without a decimal point."""
    v = _number(x)
    return f"{int(v):,}" if v is not None and v.is_integer() else x


def _xs(group: list[dict[str, str]]) -> list[str]:
    xs = list(dict.fromkeys(r["x"] for r in group))
    if all(_number(x) is not None for x in xs):
        xs.sort(key=float)
    return xs


#: the columns every row has; any other column is a suite's own measure (a percentile, a peak)
COMMON = (
    "suite",
    "case",
    "agg",
    "param",
    "x",
    "median_s",
    "spread",
    "items",
    "rate_per_s",
    "checksum",
)


def _extras(group: list[dict[str, str]]) -> list[str]:
    return [k for k in group[0] if k not in COMMON and any(r.get(k) for r in group)]


def _value(text: str) -> str:
    v = _number(text)
    if v is None:
        return text
    return f"{v:,.0f}" if v.is_integer() or abs(v) >= 100 else f"{v:.3g}"


def _rate(per_s: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_s >= div:
            return f"{per_s / div:.3g} {unit}/s"
    return f"{per_s:.3g} /s"


def _times(
    group: list[dict[str, str]], xs: list[str], cases: list[str], ratios: bool, rates: bool
) -> list[str]:
    cell = {(r["case"], r["x"]): r for r in group}
    out = ["| case | " + " | ".join(map(_label, xs)) + " |", "|---|" + "---:|" * len(xs)]
    for case in cases:
        vals = []
        for x in xs:
            r, first = cell.get((case, x)), cell.get((cases[0], x))
            text = ""
            if r is not None:
                shown = _rate(float(r["rate_per_s"])) if rates else _seconds(float(r["median_s"]))
                text = f"{shown} ±{100 * float(r['spread']):.0f}%"
            if ratios and r is not None and first is not None and case != cases[0]:
                text += f" ({float(r['median_s']) / float(first['median_s']):.2g}x)"
            vals.append(text)
        out.append(f"| {case} | " + " | ".join(vals) + " |")
    return [*out, ""]


def markdown_tables(rows: list[dict[str, str]], ratios: bool = False, rates: bool = False) -> str:
    """One table per (aggregation, parameter): the median time of every case at every swept
    value, and the spread (max - min over median) beside it; ``ratios``: each time also as a
    multiple of the first case's at the same value; ``rates``: items per second instead of
    times, one table per (aggregation, parameter) whatever the sizes. A suite's own measures
    (columns beyond :data:`COMMON`: latency percentiles, peak memory) follow in a table of
    their own."""
    out = []
    for title, group in _groups(rows, rates).items():
        xs = _xs(group)
        cases = list(dict.fromkeys(r["case"] for r in group))
        param = group[0]["param"]
        out.append(f"### {title}")
        out.append("")
        if any(float(r["median_s"]) > 0 for r in group):  # not a memory-only measure
            out += _times(group, xs, cases, ratios, rates)
        extras = _extras(group)
        if extras:
            out.append(f"| case | {param or 'x'} | " + " | ".join(extras) + " |")
            out.append("|---|---:|" + "---:|" * len(extras))
            for r in group:
                if any(r.get(k) for k in extras):
                    cells = [r["case"], _label(r["x"]), *(_value(r.get(k, "")) for k in extras)]
                    out.append("| " + " | ".join(cells) + " |")
            out.append("")
    return "\n".join(out)


def svg_chart(rows: list[dict[str, str]], rates: bool = False) -> str:
    """The rates (items per second) of every timed case, one panel per table of
    :func:`markdown_tables` (``rates`` as there), as an inline SVG figure ("" where nothing
    was timed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = {
        title: [r for r in group if float(r["median_s"]) > 0]
        for title, group in _groups(rows, rates).items()
    }
    groups = {title: group for title, group in groups.items() if group}  # memory: no rate
    if not groups:
        return ""
    cols = min(3, len(groups))
    nrows = -(-len(groups) // cols)
    with matplotlib.rc_context({"svg.hashsalt": "windowagg", "svg.fonttype": "none"}):
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
        for ax in axes.flat[len(groups) :]:
            ax.set_visible(False)
        for ax, (title, group) in zip(axes.flat, groups.items()):
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
            ax.set_title(title, fontsize=10)
            ax.set_xlabel(group[0]["param"])
            ax.set_ylabel("items / s")
            ax.legend(fontsize=7)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    svg = buf.getvalue()
    return '<figure class="bench-chart">\n' + svg[svg.index("<svg") :] + "\n</figure>"
