"""Hypothesis state machines over the out-of-order interface, check_invariants() after every
step, a non-commutative aggregation (string concatenation) so that order errors show."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import windowagg
from tests.aggs import Concat
from tests.ooo.model import Model

TIMES = st.integers(0, 60)


def machine_for(algorithm: str, min_arity: int | None) -> type[RuleBasedStateMachine]:
    class OooMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            options = {} if min_arity is None else {"min_arity": min_arity}
            self.w = windowagg.ooo(algorithm, Concat(), **options)
            self.model = Model(self.w.agg)
            self.seq = 0

        def _x(self) -> str:
            self.seq += 1
            return f"x{self.seq}"

        @rule(t=TIMES)
        def insert(self, t: int) -> None:
            x = self._x()
            self.w.insert(t, x)
            self.model.insert(t, x)

        @rule(t=TIMES)
        def evict(self, t: int) -> None:
            assert self.w.evict(t) == self.model.evict(t)

        @rule(t=st.integers(-1, 61))
        def bulk_evict(self, t: int) -> None:
            assert self.w.bulk_evict(t) == self.model.bulk_evict(t)

        @rule(times=st.sets(TIMES, min_size=1, max_size=25))
        def bulk_insert(self, times: set[int]) -> None:
            items = [(t, self._x()) for t in sorted(times)]
            self.w.bulk_insert(items)
            for t, x in items:
                self.model.insert(t, x)

        @rule(lo=TIMES, width=st.integers(-2, 40))
        def range_query(self, lo: int, width: int) -> None:
            assert self.w.query(lo, lo + width) == self.model.query(lo, lo + width)

        @rule()
        def ends(self) -> None:
            keys = sorted(self.model.entries)
            assert self.w.oldest() == (keys[0] if keys else None)
            assert self.w.youngest() == (keys[-1] if keys else None)

        @invariant()
        def invariants(self) -> None:
            self.w.check_invariants()
            assert len(self.w) == len(self.model)
            assert self.w.query() == self.model.query()

    OooMachine.__name__ = f"OooMachine_{algorithm}_{min_arity}"
    return OooMachine


SETTINGS = settings(max_examples=60, stateful_step_count=50, deadline=None)


def _testcase(machine: type[RuleBasedStateMachine]) -> Any:
    case = machine.TestCase
    case.settings = SETTINGS
    return case


TestFibaArity2 = _testcase(machine_for("fiba", 2))
TestFibaArity3 = _testcase(machine_for("fiba", 3))
TestFibaArity4 = _testcase(machine_for("fiba", 4))
TestBClassicArity2 = _testcase(machine_for("bclassic", 2))
TestRecalc = _testcase(machine_for("recalc", None))
