"""The record picks how an aggregation is evaluated (CONTRIBUTING.md, "Adding an aggregation"):
no path outside the records' package and the parser tells aggregations apart by their names,
every built-in is served by exactly one evaluator of the table engine, its partials are kinds
of an enumeration, and the test oracles define every built-in independently of its own code."""

from __future__ import annotations

import ast
from pathlib import Path

import pyarrow as pa
import pytest

import tests.oracles as oracles
import windowagg
from windowagg.aggregations import (
    AGGREGATIONS,
    ALIASES,
    Evaluation,
    Need,
    PartialKind,
    facts,
)
from windowagg.engine.entries import Entry, evaluation_of
from windowagg.engine.evaluate import EVALUATORS, evaluator_of

ROOT = Path(windowagg.__file__).parent

#: aggregations' names, Spark's included
NAMES = set(AGGREGATIONS) | set(ALIASES)
#: what holds an aggregation's name where code compares it: an entry's or a partial's SQL name,
#: an aggregation's name, or a variable named for one
NAMED_ATTRIBUTES = {"sql", "fn", "name"}
NAMED_VARIABLES = {"sql", "fn", "agg", "name"}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _named(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in NAMED_ATTRIBUTES)
        or (isinstance(n, ast.Name) and n.id in NAMED_VARIABLES)
        for n in ast.walk(node)
    )


def name_comparisons(path: Path) -> list[str]:
    """The comparisons in ``path`` of a name-holding expression with an aggregation's name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            names = [s for o in operands for s in _strings(o) if s in NAMES]
            if names and any(_named(o) for o in operands if not _strings(o)):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_path_compares_an_aggregations_name_outside_the_records() -> None:
    """The engine, the slicing pass, windows from partials, the Spark layer and every other
    path ask the record; only the records' package (its parser included) holds the names. The
    benchmark harness is left out: its workloads are named by the aggregation they time and
    pick their baselines by it."""
    found = [
        c
        for p in sorted(ROOT.rglob("*.py"))
        if not {"aggregations", "bench"} & set(p.relative_to(ROOT).parts)
        for c in name_comparisons(p)
    ]
    assert not found, "\n".join(found)


def test_the_check_sees_a_comparison_with_a_name(tmp_path) -> None:
    probe = ROOT / "engine" / "_probe_for_the_records_test.py"
    try:
        probe.write_text("def f(e):\n    return e.sql in ('max', 'max_by')\n")
        assert len(name_comparisons(probe)) == 1
    finally:
        probe.unlink()


@pytest.mark.parametrize("name", sorted(AGGREGATIONS))
def test_each_builtin_is_served_by_exactly_one_evaluator(name) -> None:
    agg = AGGREGATIONS[name]()
    sql = name if facts(agg).sql else None
    evaluation = evaluation_of(agg, sql)
    assert evaluation is facts(agg).evaluation
    entry = Entry("o", agg, sql, "v", None, pa.float64())
    assert [m for m in EVALUATORS if entry.evaluation in m.SERVES] == [evaluator_of(entry)]


def test_an_evaluator_added_after_a_lookup_is_seen(monkeypatch) -> None:
    """Each evaluation's evaluator is found once, and found again once an evaluator is added:
    a second one serving the same evaluation is refused, not hidden by the first lookup."""
    from windowagg.engine import evaluate

    monkeypatch.setattr(evaluate, "EVALUATORS", list(EVALUATORS))
    entry = Entry("o", AGGREGATIONS["sum"](), "sum", "v", None, pa.float64())
    first = evaluate.evaluator_of(entry)
    assert evaluate.evaluator_of(entry) is first

    class Twin:
        SERVES = frozenset({entry.evaluation})

    evaluate.add_evaluator(Twin)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="2 evaluators serve"):
        evaluate.evaluator_of(entry)


def test_every_evaluation_has_its_evaluator() -> None:
    for evaluation in Evaluation:
        served = [m for m in EVALUATORS if evaluation in m.SERVES]
        assert len(served) == 1, (evaluation, served)


def test_partials_are_kinds_of_the_enumeration() -> None:
    for name, cls in AGGREGATIONS.items():
        record = facts(cls)
        assert all(isinstance(k, PartialKind) for k in record.partials), name
        assert all(
            isinstance(n, Need) and isinstance(n.kind, PartialKind) for n in record.sql_partials
        ), name


#: the built-ins whose definition is their merge (the sketches): the oracles fold them
MERGE_DEFINED = {"bloom", "hll"}


def _window(name: str) -> list:
    record = facts(AGGREGATIONS[name])
    if record.pairs:
        return [(1.0, 2.0), (3.0, 1.0), (2.0, 2.0)]
    if record.takes == "booleans":
        return [True, False, None, True]
    return [3.0, 1.0, None, 2.0, 2.0]


@pytest.mark.parametrize("name", sorted(set(AGGREGATIONS) - MERGE_DEFINED))
def test_every_builtin_has_an_independent_definition_in_the_oracles(monkeypatch, name) -> None:
    """``direct`` defines the built-in itself: it never falls back to folding the aggregation's
    own ``lift`` and ``combine`` (a new built-in without a definition there fails here)."""

    def no_fold(agg, window):
        raise AssertionError(f"{name}: no independent definition in tests/oracles.py")

    monkeypatch.setattr(oracles, "fold", no_fold)
    oracles.direct(AGGREGATIONS[name](), _window(name))
