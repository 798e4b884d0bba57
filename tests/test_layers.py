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
    "storage": 2,
    "fifo": 3,
    "ooo": 3,
    "arrays": 4,
    "engine": 4,
    "slicing": 4,
    "specs": 4,
    "tables": 5,
    "online": 6,
    "spark": 6,
    "warmup": 6,
    "run_args": 6,
    "pipeline_local": 7,
    "pipeline_spark": 7,
    "pipeline": 8,
    "bench": 8,
    "demo": 8,
    "cli": 9,
    "__init__": 10,
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


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _module_imports(path: Path) -> set[str]:
    """The windowagg modules ``path`` imports (at the top or inside a function), dotted from
    the package root; ``from .x import y`` counts ``x.y`` where that is a module."""
    parts = [p for p in _module(path).split(".") if p]
    package = parts if path.name == "__init__.py" else parts[:-1]
    known = {_module(p) for p in ROOT.rglob("*.py")}
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            mod = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            for a in node.names:
                sub = f"{mod}.{a.name}".strip(".")
                out.add(sub if sub in known else mod)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("windowagg."):
            out.add(node.module.removeprefix("windowagg."))
    return {m for m in out if m in known}


def test_no_two_modules_import_each_other_round_a_cycle() -> None:
    """No module of windowagg reaches itself through its imports (a package's own
    ``__init__``, which gathers its modules' public names, left out)."""
    graph = {_module(p): _module_imports(p) for p in ROOT.rglob("*.py") if p.name != "__init__.py"}
    inits = {_module(p) for p in ROOT.rglob("__init__.py")}
    graph = {m: {x for x in deps if x not in inits and x != m} for m, deps in graph.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for x in sorted(graph.get(m, ())):
            if state.get(x) == 1:
                cycles.append(" -> ".join([*path[path.index(x) :], x]))
            elif x not in state:
                visit(x, [*path, x])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


#: the engine's core modules; every other module of the engine is in a front end's folder or
#: in the core's folder of evaluators (one module per strategy)
CORE = ("keys", "memory", "parallel", "stages", "sweep", "entries", "columns", "evaluate")
EVALUATORS = {"common", "sums", "select", "moments", "orders", "values", "sweep"}
#: the front ends, each a folder of its own over the core, and the modules each holds
FRONT_ENDS = {
    "rolling": {
        "plan",
        "table",
        "stream",
        "at",
        "at_stream",
        "compiled_at",
        "online",
        "key_codes",
        "part_index",
        "summaries",
    },
    "windows": {"plan", "table", "stream", "partials", "slices"},
}


def _part(module: str) -> str:
    """``engine.x`` and ``engine.evaluators.x`` (the core) or ``engine.<front end>.x``: the
    part of the engine it is in."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in FRONT_ENDS else "core"


def test_the_engine_is_a_core_under_two_front_ends() -> None:
    """The core's modules lie in ``engine/``, each front end's in a folder of its own; the
    core imports no front end, and the rolling and window front ends import the core and not
    each other."""
    engine = ROOT / "engine"
    assert {p.stem for p in engine.glob("*.py")} - {"__init__"} == set(CORE)
    for end, modules in FRONT_ENDS.items():
        assert {p.stem for p in (engine / end).glob("*.py")} - {"__init__"} == modules
    assert {p.stem for p in (engine / "evaluators").glob("*.py")} - {"__init__"} == EVALUATORS
    folders = {p.name for p in engine.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {*FRONT_ENDS, "evaluators"}
    wrong = []
    for path in sorted(engine.rglob("*.py")):
        if path.stem == "__init__":
            continue
        mine = _part(_module(path))
        for other in _module_imports(path):
            if other.startswith("engine.") and _part(other) not in ("core", mine):
                wrong.append(f"{path.relative_to(ROOT)} ({mine}) imports {other}")
    assert not wrong, "\n".join(wrong)


#: the optional dependencies (extras): imported inside the functions that need them, so that
#: windowagg imports without them; every other import is at the top of its module
OPTIONAL = {"pyspark", "polars", "pandas", "matplotlib", "scipy", "duckdb", "venv_pack"}


def _function_imports(path: Path) -> list[str]:
    """The imports inside functions of ``path`` that are not of an optional dependency."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." if node.level else node.module or ""]
            else:
                continue
            if any(n.split(".")[0] not in OPTIONAL for n in names):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    return out


def test_imports_are_at_the_top_but_optional_dependencies() -> None:
    inside = [i for p in sorted(ROOT.rglob("*.py")) for i in _function_imports(p)]
    assert not inside, "\n".join(inside)


def test_the_check_sees_an_import_inside_a_function() -> None:
    bad = ROOT / "kernels" / "_probe_for_the_layer_test.py"
    try:
        bad.write_text("def f():\n    import numpy\n\ndef g():\n    import pyspark\n")
        assert [i.split(" ", 1)[1] for i in _function_imports(bad)] == ["import numpy"]
    finally:
        bad.unlink()
