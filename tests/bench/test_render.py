"""A suite's CSV rendered for the benchmark pages: every case and value in a table, a chart."""

from __future__ import annotations

from windowagg.bench.core import Row, write_csv
from windowagg.bench.render import markdown_tables, read_rows, svg_chart


def test_csv_renders_as_tables_and_a_chart(tmp_path) -> None:
    rows = [Row("fifo", case, "sum", "window size", x, t, 0.05, 1000, 7.0)
            for case, times in (("daba_lite", (0.002, 0.004)), ("numpy", (0.001, 0.003)))
            for x, t in zip((64, 4096), times)]  # fmt: skip
    write_csv(rows, str(tmp_path / "fifo.csv"))
    read = read_rows(tmp_path / "fifo.csv")
    text = markdown_tables(read)
    assert "### sum, window size" in text
    assert "| case | 64 | 4096 |" in text
    assert "| daba_lite | 2 ms ±5% | 4 ms ±5% |" in text
    assert "| numpy | 1 ms ±5% | 3 ms ±5% |" in text
    svg = svg_chart(read)
    assert svg.startswith('<figure class="bench-chart">\n<svg') and "daba_lite" in svg
