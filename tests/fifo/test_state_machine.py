"""Hypothesis state machines: random interleavings of insert, evict and query for every FIFO
algorithm, against a plain list, with ``check_invariants()`` after every step."""

from __future__ import annotations

import unittest
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import windowagg
from tests.aggs import Concat, MatMul
from tests.oracles import direct, same

RANGES = (1, 2, 5)


def machine_for(algorithm: str, make_agg: Any, pairs: bool = False) -> type[RuleBasedStateMachine]:
    """A machine for ``algorithm`` over ``make_agg()``; ``pairs`` feeds ``(seq, x)`` pairs."""

    class FifoMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.agg = make_agg()
            options = {"ranges": RANGES} if algorithm == "slickdeque" else {}
            self.w = windowagg.fifo(algorithm, self.agg, backend="python", **options)
            self.model: list[Any] = []
            self.seq = 0

        def _insert(self, x: int) -> None:
            if pairs:
                self.seq += 1
                x = (self.seq, x)
            self.w.insert(x)
            self.model.append(x)

        @rule(x=st.integers(-3, 9))
        def insert(self, x: int) -> None:
            self._insert(x)

        @rule(k=st.integers(1, 40))
        def insert_many(self, k: int) -> None:
            for x in range(k):
                self._insert(x % 7)

        @precondition(lambda self: self.model)
        @rule()
        def evict(self) -> None:
            self.w.evict()
            self.model.pop(0)

        @precondition(lambda self: self.model)
        @rule(k=st.integers(1, 40))
        def evict_many(self, k: int) -> None:
            for _ in range(min(k, len(self.model))):
                self.w.evict()
                self.model.pop(0)

        @precondition(lambda self: not self.model)
        @rule()
        def evict_empty(self) -> None:
            try:
                self.w.evict()
            except windowagg.EmptyWindowError:
                return
            raise AssertionError("evict() on an empty window did not raise EmptyWindowError")

        @rule()
        def query(self) -> None:
            assert same(self.w.query(), direct(self.agg, self.model))

        @precondition(lambda self: self.w.shares_windows)
        @rule(r=st.sampled_from(RANGES))
        def query_last(self, r: int) -> None:
            assert same(self.w.query(last=r), direct(self.agg, self.model[-r:]))

        @invariant()
        def invariants(self) -> None:
            assert len(self.w) == len(self.model)
            self.w.check_invariants()

    FifoMachine.__name__ = f"FifoMachine_{algorithm}"
    return FifoMachine


# A non-commutative aggregation for each algorithm: concat where any aggregation is served,
# matmul (invertible) for subtract-on-evict and SlickDeque (Inv), and argmax (selective, ties
# to the oldest) for SlickDeque (Non-Inv), which sees pairs.
AGG_FOR = {alg: Concat for alg in windowagg.FIFO_ALGORITHMS}
AGG_FOR["soe"] = MatMul
AGG_FOR["slickdeque"] = MatMul


SETTINGS = settings(max_examples=40, stateful_step_count=40, deadline=None)


def _testcase(machine: type[RuleBasedStateMachine]) -> type[unittest.TestCase]:
    case = machine.TestCase
    case.settings = SETTINGS
    return case


for _alg, _agg in AGG_FOR.items():
    globals()[f"Test{_alg.title().replace('_', '')}Machine"] = _testcase(machine_for(_alg, _agg))

TestSlickDequeNonInvMachine = _testcase(
    machine_for("slickdeque", lambda: windowagg.aggregation("argmax"), pairs=True)
)
