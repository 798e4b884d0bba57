"""A suite's CSV rendered for the benchmark pages: every case and value in a table, a chart."""

from __future__ import annotations

from windowagg.bench.core import Row, write_csv
from windowagg.bench.render import markdown_tables, read_rows, svg_chart


def test_csv_renders_as_tables_and_a_chart(tmp_path) -> None:
    rows = [
        Row("fifo", case, "sum", "window size", x, t, 0.05, 1000, 7.0)
        for case, times in (("daba_lite", (0.002, 0.004)), ("numpy", (0.001, 0.003)))
        for x, t in zip((64, 4096), times)
    ]
    write_csv(rows, str(tmp_path / "fifo.csv"))
    read = read_rows(tmp_path / "fifo.csv")
    text = markdown_tables(read)
    assert "### sum, window size" in text
    assert "| case | 64 | 4,096 |" in text
    assert "| daba_lite | 2 ms ±5% | 4 ms ±5% |" in text
    assert "| numpy | 1 ms ±5% | 3 ms ±5% |" in text
    svg = svg_chart(read)
    assert svg.startswith('<figure class="bench-chart">\n<svg') and "daba_lite" in svg


def test_ratios_sizes_and_a_suites_own_measures(tmp_path) -> None:
    """Each time as a multiple of the first case's; one table per size where an aggregation
    was measured at several; a suite's own columns (a percentile, a peak) in a table of their
    own, and a memory-only measure in no time table and no chart."""
    rows = [
        Row("local", "windowagg", "sum", "keys", 100, t, 0.1, n, 1.0, {"p99_us": p})
        for n, t, p in ((1000, 0.002, 3.5), (10_000, 0.02, 12.25))
    ]
    rows += [
        Row("local", "polars", "sum", "keys", 100, t, 0.1, n, 1.0)
        for n, t in ((1000, 0.005), (10_000, 0.03))
    ]
    rows.append(
        Row("local", "windowagg", "peak MiB", "keys", 100, 0.0, 0.0, 1000, 0.0, {"peak": 512.0})
    )
    write_csv(rows, str(tmp_path / "local.csv"))
    read = read_rows(tmp_path / "local.csv")
    text = markdown_tables(read, ratios=True)
    assert "### sum, keys, 1,000 items" in text and "### sum, keys, 10,000 items" in text
    assert "| polars | 5 ms ±10% (2.5x) |" in text
    assert "| polars | 30 ms ±10% (1.5x) |" in text
    assert "| windowagg | 2 ms ±10% |" in text  # the first case: no ratio to itself
    assert "| case | keys | p99_us |" in text  # the columns a table's rows have
    assert "| windowagg | 100 | 3.5 |" in text and "| windowagg | 100 | 12.2 |" in text
    peak = text[text.index("### peak MiB") :]
    assert "±" not in peak and "| case | keys | peak |" in peak
    assert "| windowagg | 100 | 512 |" in peak
    assert "(2.5x)" not in markdown_tables(read)
    svg = svg_chart(read)
    assert "peak MiB" not in svg and "sum, keys, 1,000 items" in svg


def test_rates_compare_across_sizes(tmp_path) -> None:
    rows = [
        Row("fifo", "recalc", "sum", "window size", 64, 0.001, 0.02, 2**19, 1.0),
        Row("fifo", "daba", "sum", "window size", 64, 0.004, 0.02, 2**22, 1.0),
    ]
    write_csv(rows, str(tmp_path / "fifo.csv"))
    text = markdown_tables(read_rows(tmp_path / "fifo.csv"), rates=True)
    assert text.count("###") == 1  # one table although the items differ
    assert "| recalc | 524 M/s ±2% |" in text and "| daba | 1.05 G/s ±2% |" in text


def test_a_parameter_that_names_its_aggregation_titles_alone(tmp_path) -> None:
    rows = [Row("spark", "windowagg", "median", "median, sliding s", 60, 1.0, 0.0, 10, 1.0)]
    write_csv(rows, str(tmp_path / "spark.csv"))
    text = markdown_tables(read_rows(tmp_path / "spark.csv"))
    assert text.startswith("### median, sliding s\n")
