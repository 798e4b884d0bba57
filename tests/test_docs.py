"""The README's and the documentation's examples run and print what they say (pages that use
Spark: tests/spark/test_docs.py), and the API reference covers every public name."""

from __future__ import annotations

import pytest

from tests.docs_examples import PAGES, ROOT, blocks, run_page, uses_spark

LOCAL = [p for p in PAGES if not uses_spark(p)]


@pytest.mark.parametrize("page", LOCAL, ids=[str(p.relative_to(ROOT)) for p in LOCAL])
def test_page_examples_print_what_they_say(page, tmp_path) -> None:
    run_page(page, tmp_path)


def test_every_page_has_its_examples_checked() -> None:
    """The pages hold examples at all, and every one that prints says what it prints (run_page
    compares the output with the ``# ->`` comments)."""
    python = [b for p in PAGES for lang, b in blocks(p) if lang == "python"]
    assert len(python) >= 15
    assert all("# ->" in b for b in python if "print(" in b)


def test_the_api_reference_covers_every_public_name() -> None:
    import windowagg
    import windowagg.spark

    for module, page in ((windowagg, "windowagg.md"), (windowagg.spark, "spark.md")):
        text = (ROOT / "docs" / "reference" / page).read_text()
        missing = [n for n in module.__all__ if f"::: {module.__name__}.{n}\n" not in text]
        assert not missing, (page, missing)
    assert "<!-- cli-reference -->" in (ROOT / "docs" / "reference" / "cli.md").read_text()


def test_the_cli_reference_lists_every_subcommand() -> None:
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from docs_hooks import _cli_reference
    finally:
        sys.path.pop(0)
    from windowagg.cli import build_parser, command_parsers

    text = _cli_reference()
    listed = build_parser().format_help().split("{", 1)[1].split("}", 1)[0].split(",")
    assert sorted(command_parsers()) == sorted(listed)  # every subcommand the parser takes
    for name, command in command_parsers().items():
        assert f"## `windowagg {name}`" in text
        command.prog = f"windowagg {name}"
        assert command.format_help().rstrip() in text, name


def _front_matter(page) -> dict:
    import yaml

    text = page.read_text()
    if not text.startswith("---\n"):
        return {}
    return yaml.safe_load(text[4 : text.index("\n---\n", 4)]) or {}


def test_every_bench_suite_has_a_page_generated_from_its_csv() -> None:
    """One benchmark page per suite (and one for the local suite's ``--threads`` mode), whose
    tables and chart come from the CSV its command wrote (committed under
    docs/benchmarks/data), with the machine and the date."""
    from windowagg.bench.render import read_rows
    from windowagg.bench.suites import SUITES

    pages = {}
    for page in sorted((ROOT / "docs" / "benchmarks").glob("*.md")):
        meta = _front_matter(page)
        if "csv" not in meta:
            continue
        rows = read_rows(page.parent / meta["csv"])
        suite = rows[0]["suite"]
        assert {r["suite"] for r in rows} == {suite}, page
        # the scaling rows: the local suite's --threads mode, on a page of their own
        command = (
            "windowagg bench local --threads "
            if suite == "scaling"
            else f"windowagg bench {suite} "
        )
        assert meta["command"].startswith(command), page
        assert "--csv" in meta["command"] and "--quick" not in meta["command"], page
        assert meta["machine"] and meta["date"], page
        assert "<!-- bench-results -->" in page.read_text(), page
        assert suite not in pages, (suite, page, pages.get(suite))
        pages[suite] = page
    assert sorted(pages) == sorted([*SUITES, "scaling"])
    index = (ROOT / "docs" / "benchmarks" / "index.md").read_text()
    assert all(f"({p.name})" in index for p in pages.values())


def test_the_spark_functions_table_lists_exactly_the_names_windowagg_accepts() -> None:
    """docs/guides/spark-functions.md: one row per Spark function windowagg accepts, each
    naming the built-in the name resolves to, and saying "yes" under "Spark SQL partials"
    exactly where the windows merge from them."""
    import re

    from windowagg.aggregations import SPARK_FUNCTIONS, aggregation
    from windowagg.engine.windows.partials import MERGED

    text = (ROOT / "docs" / "guides" / "spark-functions.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)", text, flags=re.M)
    assert sorted(n for n, _ in rows) == sorted(SPARK_FUNCTIONS)
    for spark_name, ours in rows:
        assert (
            aggregation(spark_name).name == aggregation(ours).name == SPARK_FUNCTIONS[spark_name]
        ), spark_name
    partials = dict(re.findall(r"^\| `(\w+)` \|[^|]*\|[^|]*\| (yes|no) \|", text, flags=re.M))
    assert partials.keys() == SPARK_FUNCTIONS.keys()
    for spark_name, said in partials.items():  # the column "Spark SQL partials"
        assert (said == "yes") == (SPARK_FUNCTIONS[spark_name] in MERGED), spark_name


def test_the_site_links_to_no_repository_it_is_not() -> None:
    """The project has no public repository: the site names none (a link to another
    project's organisation would send users to code that is not this)."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert "repo_url" not in config and "github.com" not in config
