"""Hypothesis state machines over the out-of-order interface, check_invariants() after every
step, a non-commutative aggregation so that order errors show: string concatenation on the
Python reference; on compiled storage ``first`` and ``last`` of arrival numbers (each sees
the order at one end of a range) with ``sum`` (which sees every part of it)."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import windowagg
from tests.aggs import Concat
from tests.ooo.model import Model

TIMES = st.integers(0, 60)


def machine_for(
    algorithm: str, min_arity: int | None, backend: str = "python"
) -> type[RuleBasedStateMachine]:
    aggs = [Concat()] if backend == "python" else ["first", "last", "sum"]

    class OooMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            options = {} if min_arity is None else {"min_arity": min_arity}
            self.ws = [windowagg.ooo(algorithm, a, backend=backend, **options) for a in aggs]
            self.models = [Model(w.agg) for w in self.ws]
            self.seq = 0

        def _x(self) -> Any:
            self.seq += 1
            return f"x{self.seq}" if backend == "python" else self.seq

        def _pairs(self) -> Any:
            return zip(self.ws, self.models)

        @rule(t=TIMES)
        def insert(self, t: int) -> None:
            x = self._x()
            for w, model in self._pairs():
                w.insert(t, x)
                model.insert(t, x)

        @rule(t=TIMES)
        def evict(self, t: int) -> None:
            for w, model in self._pairs():
                assert w.evict(t) == model.evict(t)

        @rule(t=st.integers(-1, 61))
        def bulk_evict(self, t: int) -> None:
            for w, model in self._pairs():
                assert w.bulk_evict(t) == model.bulk_evict(t)

        @rule(times=st.sets(TIMES, min_size=1, max_size=25))
        def bulk_insert(self, times: set[int]) -> None:
            items = [(t, self._x()) for t in sorted(times)]
            for w, model in self._pairs():
                w.bulk_insert(items)
                for t, x in items:
                    model.insert(t, x)

        @rule(lo=TIMES, width=st.integers(-2, 40))
        def range_query(self, lo: int, width: int) -> None:
            for w, model in self._pairs():
                assert w.query(lo, lo + width) == model.query(lo, lo + width)

        @rule()
        def ends(self) -> None:
            for w, model in self._pairs():
                keys = sorted(model.entries)
                assert w.oldest() == (keys[0] if keys else None)
                assert w.youngest() == (keys[-1] if keys else None)

        @invariant()
        def invariants(self) -> None:
            for w, model in self._pairs():
                w.check_invariants()
                assert len(w) == len(model)
                assert w.query() == model.query()

    OooMachine.__name__ = f"OooMachine_{algorithm}_{min_arity}_{backend}"
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
TestCompiledFibaArity2 = _testcase(machine_for("fiba", 2, "compiled"))
TestCompiledFibaArity3 = _testcase(machine_for("fiba", 3, "compiled"))
TestCompiledBClassicArity2 = _testcase(machine_for("bclassic", 2, "compiled"))
