"""Each extra brings what its commands import: ``windowagg bench`` runs every suite with the
``bench`` extra, the Spark pipeline and the demo with the ``spark`` extra."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import windowagg

ROOT = Path(windowagg.__file__).parent
EXTRAS = tomllib.loads((ROOT.parents[1] / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]
#: import name -> distribution name, for the optional dependencies
OPTIONAL = {m: m for m in ("pyspark", "polars", "pandas", "matplotlib", "scipy", "duckdb")}


def _optional_imports(paths: list[Path]) -> set[str]:
    """The optional dependencies these files import (statements, or ``__import__``/
    ``_optional`` of a literal name)."""
    out = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                out.add((node.module or "").split(".")[0])
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("__import__", "_optional")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                out.add(str(node.args[0].value).split(".")[0])
    return {OPTIONAL[m] for m in out if m in OPTIONAL}


def _extra(name: str) -> set[str]:
    return {re.split(r"[<>=\[; ]", r, maxsplit=1)[0].lower() for r in EXTRAS[name]}


def test_bench_extra_runs_every_suite() -> None:
    used = _optional_imports([*ROOT.glob("bench/*.py"), *ROOT.glob("spark/*.py")])
    assert {"pyspark", "polars", "duckdb"} <= used  # the check sees the suites' imports
    assert used <= _extra("bench"), sorted(used - _extra("bench"))


def test_spark_extra_runs_the_pipeline_and_the_demo() -> None:
    files = [*ROOT.glob("spark/*.py"), ROOT / "pipeline_spark.py", ROOT / "demo.py"]
    used = _optional_imports(files)
    assert "pyspark" in used
    assert used <= _extra("spark"), sorted(used - _extra("spark"))
