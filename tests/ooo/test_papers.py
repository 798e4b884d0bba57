"""The FiBA paper's worked example (Section 2): max and maxcount over a 5-second window."""

from __future__ import annotations

import pytest

import windowagg

CASES = [
    ("fiba", {"min_arity": 2}, "python"),
    ("fiba", {}, "python"),
    ("bclassic", {"min_arity": 2}, "python"),
    ("recalc", {}, "python"),
    ("fiba", {"min_arity": 2}, "compiled"),
    ("bclassic", {"min_arity": 2}, "compiled"),
]


@pytest.mark.parametrize(("algorithm", "options", "backend"), CASES)
def test_fiba_paper_section_2_maxcount(algorithm: str, options: dict, backend: str) -> None:
    """The paper's (max, maxcount) partials; compiled storage keeps no Python partials, so
    there the lowered maxcount is checked."""
    w = windowagg.ooo(algorithm, "maxcount", backend=backend, **options)

    def check(partial: tuple[int, int]) -> None:
        assert w.query() == partial[1]
        if backend == "python":
            assert w.query_partial() == partial

    for t, x in [(2.0, 4), (3.0, 3), (4.0, 0), (6.0, 4)]:
        w.insert(t, x)
    check((4, 2))  # max 4, maxcount 2
    w.insert(6.5, 4)  # in order: appended
    check((4, 3))
    w.insert(2.3, 5)  # out of order: between 2.0 and 3.0
    check((5, 1))
    assert [t for t, _ in w.items()] == [2.0, 2.3, 3.0, 4.0, 6.0, 6.5]
    assert w.bulk_evict(7.2 - 5) == 1  # the watermark reaches 7.2: 2.0 leaves
    check((5, 1))
    assert w.bulk_evict(7.7 - 5) == 1  # 7.7: 2.3 leaves; no inverse could find the new max
    check((4, 2))
    assert w.query(3.0, 4.0) == 1  # max 3 once
    w.check_invariants()


def test_fiba_paper_section_2_with_time_window() -> None:
    tw = windowagg.TimeWindow(
        windowagg.ooo("fiba", "maxcount", min_arity=2, backend="python"), size=5
    )
    for t, x in [(2.0, 4), (3.0, 3), (4.0, 0), (6.0, 4), (6.5, 4), (2.3, 5)]:
        tw.insert(t, x)
    assert tw.query() == 1  # max 5, once
    tw.insert(7.2, 0)  # now 7.2: 2.0 leaves, 2.3 stays
    assert tw.aggregator.query_partial() == (5, 1)
    tw.insert(7.7, 0)  # now 7.7: 2.3 leaves
    assert tw.aggregator.query_partial() == (4, 2)


def test_insert_at_present_time_combines_old_then_new() -> None:
    w = windowagg.ooo("fiba", "collect", min_arity=2)
    for t in range(20):
        w.insert(t, f"a{t}")
    w.insert(7, "b7")
    w.insert(7, "c7")
    w.bulk_insert([(3, "b3"), (25, "a25")])
    assert w.query(3, 7) == ["a3", "b3", "a4", "a5", "a6", "a7", "b7", "c7"]
    w.check_invariants()
