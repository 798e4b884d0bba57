"""Every code block of the README and the documentation, run: Python blocks of a page in order
in one namespace, in a fresh directory, printing what their ``# -> ...`` comments say; shell
blocks command by command (``windowagg run`` runs, other ``windowagg`` commands must parse,
as must code and commands that need a Spark Connect server, ``sc://...``,
``make`` targets and ``pip`` extras must exist). Used by ``tests/test_docs.py`` (pages without
Spark) and ``tests/spark/test_docs.py`` (pages with Spark)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import tomllib
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
#: commands of the cluster guide that need a cluster: only their names are checked here; the
#: guide's standalone and packed-environment routes run in tests/spark/test_cluster.py
EXTERNAL = {
    "python",
    "export",
    "spark-submit",
    "pack-env/bin/pip",
    "pack-env/bin/venv-pack",
    "$SPARK_HOME/bin/spark-class",
}


def blocks(page: Path) -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in BLOCK.findall(page.read_text())]


def uses_spark(page: Path) -> bool:
    return any("windowagg.spark" in body or "windowagg run" in body for _, body in blocks(page))


def expected_output(block: str) -> list[str]:
    expected: list[str] = []
    for line in block.splitlines():
        m = re.search(r"#\s*->\s*(.*)$", line)
        if m:
            text = m.group(1).strip()
            # a print inside a loop lists one value per iteration, comma-separated
            expected += text.split(", ") if line.startswith("    ") else [text]
    return expected


def _commands(block: str) -> list[list[str]]:
    text = block.replace("\\\n", " ")
    return [words for line in text.splitlines() if (words := shlex.split(line, comments=True))]


def _trips() -> None:
    if not Path("trips.csv").exists():
        from windowagg.demo import taxi_stream, trips_frame

        trips_frame(taxi_stream(2_000)).to_csv("trips.csv", index=False)


def run_shell(block: str) -> None:
    from windowagg.cli import build_parser, main

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"])
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(), re.M))
    for words in _commands(block):
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd == "windowagg" and args[0] == "run" and "--remote" not in args:
            _trips()
            assert main(args) == 0, words
            out = args[args.index("--output") + 1]
            assert any(Path(out).iterdir()), words
        elif cmd == "windowagg":
            build_parser().parse_args(args)  # exits (fails the test) on a bad option
        elif cmd == "make":
            assert set(args) <= targets, words
        elif cmd == "pip" and args[0] == "install":
            for spec in args[1:]:
                m = re.fullmatch(r"\.(?:\[([\w,]+)\])?", spec)
                assert m, words
                assert set(filter(None, (m.group(1) or "").split(","))) <= extras, words
        else:
            assert cmd in EXTERNAL, f"a shell command the docs tests do not know: {words}"


def run_page(page: Path, tmp: Path) -> None:
    """Runs every block of ``page`` in ``tmp``; fails on the first wrong output."""
    module = types.ModuleType("__docs__")  # a module, so that dataclasses in examples work
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    old = os.getcwd()
    os.chdir(tmp)
    try:
        for lang, body in blocks(page):
            if lang == "python" and "sc://" in body:  # needs a Connect server: compiled only
                compile(body, str(page), "exec")
            elif lang == "python":
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(body, str(page), "exec"), namespace)
                assert out.getvalue().splitlines() == expected_output(body), (page.name, body)
            elif lang == "sh":
                run_shell(body)
            else:
                assert lang in ("", "text") and not re.search(
                    r"^\s*(import|from|def) ", body, re.M
                ), (page.name, lang)
    finally:
        os.chdir(old)
