"""Imports go one way (CONTRIBUTING.md): no module of windowagg imports one of a higher layer,
at the top of a file or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import windowagg

ROOT = Path(windowagg.__file__).parent

#: top-level module or package -> its layer (a module may import its own layer and lower)
LAYERS = {
    "errors": 0,
    "durations": 0,
    "frames": 0,
    "aggregations": 0,
    "combined": 0,
    "kernels": 1,
    "algorithm": 1,
    "compiled": 2,
    "fifo": 3,
    "ooo": 3,
    "arrays": 4,
    "engine": 4,
    "slicing": 4,
    "specs": 4,
    "tables": 5,
    "spark": 6,
    "pipeline": 6,
    "pipeline_local": 6,
    "warmup": 6,
    "bench": 7,
    "demo": 7,
    "cli": 8,
    "__init__": 9,
}


def _top(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[str]:
    """The top-level windowagg modules ``path`` imports."""
    here = path.relative_to(ROOT).parent.parts
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                parts = [*base, *(node.module or "").split(".")]
                parts = [p for p in parts if p]
                if not parts:  # from . import x (the package's own root)
                    parts = [a.name for a in node.names]
                out.append(parts[0])
            elif node.module and node.module.split(".")[0] == "windowagg":
                rest = node.module.split(".")[1:]
                out.append(rest[0] if rest else "__init__")
        elif isinstance(node, ast.Import):
            out.extend(a.name.split(".")[1] for a in node.names if a.name.startswith("windowagg."))
    return out


def test_every_module_has_a_layer() -> None:
    tops = {_top(p) for p in ROOT.rglob("*.py")}
    assert tops <= set(LAYERS), f"no layer for {sorted(tops - set(LAYERS))}"


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        mine = _top(path)
        for other in _imports(path):
            if other in LAYERS and LAYERS[other] > LAYERS[mine]:
                wrong.append(f"{path.relative_to(ROOT)} imports {other}")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_wrong_import(tmp_path) -> None:
    bad = ROOT / "kernels" / "_probe_for_the_layer_test.py"
    try:
        bad.write_text("def f():\n    from ..arrays import sliding_aggregate\n")
        assert "arrays" in _imports(bad)
    finally:
        bad.unlink()
