"""Build hooks of the documentation site (mkdocs.yml ``hooks``): pages that are generated, so
that they cannot drift from what they describe.

* ``<!-- cli-reference -->``: the command line's reference, from its argparse parser
  (:func:`windowagg.cli.build_parser`): every subcommand's usage and options.
* A benchmark page whose front matter names ``csv`` (a file that ``windowagg bench SUITE
  --csv`` wrote, committed under ``docs/benchmarks/data/``), ``command``, ``machine`` and
  ``date`` (and optionally ``ratios: true``, each time also as a multiple of the first case's;
  ``rates: true``, items per second instead of times):
  ``<!-- bench-results -->`` becomes the provenance, one table per measured parameter (cases
  as rows, the swept value as columns, median times), the suite's own measures, and a chart
  of the rates (:mod:`windowagg.bench.render`).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def _cli_reference() -> str:
    from windowagg.cli import build_parser, command_parsers

    parser = build_parser()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parts = ["```text", parser.format_help().rstrip(), "```"]
    for name, command in command_parsers().items():
        command.prog = f"windowagg {name}"
        parts += [f"## `windowagg {name}`", "", "```text", command.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _bench_results(meta: dict, page_path: Path) -> str:
    from windowagg.bench.render import markdown_tables, read_rows, svg_chart

    rows = read_rows(page_path.parent / meta["csv"])
    head = [
        f"Measured on {meta['machine']}, {meta['date']}, with",
        "",
        "```sh",
        meta["command"],
        "```",
        "",
        f"(the CSV it wrote: [{meta['csv']}]({meta['csv']})).",
        "",
    ]
    rates = bool(meta.get("rates"))
    tables = markdown_tables(rows, ratios=bool(meta.get("ratios")), rates=rates)
    return "\n".join(head) + "\n" + tables + "\n" + svg_chart(rows, rates) + "\n"


def on_page_markdown(markdown, page, config, files):  # mkdocs' hook signature
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", _cli_reference())
    if "<!-- bench-results -->" in markdown:
        path = Path(config["docs_dir"]) / page.file.src_path
        markdown = markdown.replace("<!-- bench-results -->", _bench_results(page.meta, path))
    return markdown
