"""The papers' worked examples, with the answers the papers print."""

from __future__ import annotations

import pytest

import windowagg
from windowagg.aggregations import flags

MAXCOUNT_ALGORITHMS = [
    a for a in windowagg.FIFO_ALGORITHMS if a not in ("soe", "slickdeque")
]  # maxcount is neither invertible nor selective


@pytest.mark.parametrize("algorithm", MAXCOUNT_ALGORITHMS)
def test_daba_paper_maxcount_trace(algorithm: str) -> None:
    """DABA paper, Section 2.3: the maxcount trace 4, 5, 3, 4, 0, 4, 4."""
    agg = windowagg.aggregation("maxcount")
    w = windowagg.fifo(algorithm, agg, backend="python")
    for x in (4, 5, 3, 4, 0, 4, 4):
        w.insert(x)
    assert w.query_partial() == (5, 1)  # max=5, maxcount=1
    assert w.query() == 1
    w.evict()  # 5, 3, 4, 0, 4, 4
    assert w.query_partial() == (5, 1)
    w.evict()  # 3, 4, 0, 4, 4: the max becomes 4, which occurs thrice (no inverse could do it)
    assert w.query_partial() == (4, 3)
    w.insert(2)  # 3, 4, 0, 4, 4, 2
    assert w.query_partial() == (4, 3)
    w.insert(6)  # 3, 4, 0, 4, 4, 2, 6
    assert w.query_partial() == (6, 1)
    w.check_invariants()


@pytest.mark.parametrize("algorithm", MAXCOUNT_ALGORITHMS)
def test_daba_paper_maxcount_trace_compiled(algorithm: str) -> None:
    """The same trace on compiled storage (the counts, as lowered)."""
    w = windowagg.fifo(algorithm, "maxcount", backend="compiled")
    w.insert_many([4, 5, 3, 4, 0, 4, 4])
    answers = [w.query()]
    for op in ("e", "e", 2, 6):
        w.evict() if op == "e" else w.insert(op)
        answers.append(w.query())
    assert answers == [1, 1, 3, 3, 1]


STREAM = (6, 5, 0, 1, 3, 4, 2, 7)  # SlickDeque paper, Examples 2 and 3


def _run_fixed_window(agg_name: str, backend: str) -> list[tuple[object, object]]:
    """Q1 and Q2 with ranges 3 and 5, slide 1, over a window of wSize = 5 partials."""
    w = windowagg.fifo("slickdeque", agg_name, ranges=[3, 5], backend=backend)
    answers = []
    for x in STREAM:
        if len(w) == 5:
            w.evict()
        w.insert(x)
        answers.append((w.query(last=3), w.query(last=5)))
        assert w.query_ranges() == {3: answers[-1][0], 5: answers[-1][1]}
        w.check_invariants()
    return answers


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_slickdeque_example_2_sum_inv(backend: str) -> None:
    """SlickDeque paper, Example 2 (Fig. 8): Sum over ranges 3 and 5, SlickDeque (Inv)."""
    assert windowagg.fifo("slickdeque", "sum", ranges=[3, 5], backend=backend).variant == "inv"
    assert _run_fixed_window("sum", backend) == [
        (6, 6),
        (11, 11),
        (11, 11),
        (6, 12),
        (4, 15),
        (8, 13),
        (9, 10),
        (13, 17),
    ]


@pytest.mark.parametrize("backend", ["python", "compiled"])
def test_slickdeque_example_3_max_noninv(backend: str) -> None:
    """SlickDeque paper, Example 3 (Fig. 9): Max over ranges 3 and 5, SlickDeque (Non-Inv)."""
    w = windowagg.fifo("slickdeque", "max", ranges=[3, 5], backend=backend)
    assert w.variant == "noninv"
    assert _run_fixed_window("max", backend) == [
        (6, 6),
        (6, 6),
        (6, 6),
        (5, 6),
        (3, 6),
        (4, 5),
        (4, 4),
        (7, 7),
    ]


def test_slickdeque_example_3_deque_contents() -> None:
    """Fig. 9's deque column after each step: only undominated partials are kept."""
    w = windowagg.fifo("slickdeque", "max", ranges=[3, 5], backend="python")
    deques = []
    for x in STREAM:
        if len(w) == 5:
            w.evict()
        w.insert(x)
        deques.append(w._val[w._head :])
    assert deques == [[6], [6, 5], [6, 5, 0], [6, 5, 1], [6, 5, 3], [5, 4], [4, 2], [7]]


def test_slickdeque_variant_follows_flags() -> None:
    for name in windowagg.AGGREGATIONS:
        agg = windowagg.aggregation(name)
        invertible, _, selective = flags(agg)
        if invertible or selective:
            w = windowagg.fifo("slickdeque", agg)
            assert w.variant == ("inv" if invertible else "noninv")
