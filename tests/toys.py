"""Toy aggregations, one for each way of adding an aggregation (CONTRIBUTING.md, "Adding an
aggregation"), each by its class and record alone, in a module Spark's workers import to
unpickle them:

* :class:`Drift` (Python only): the last value minus the first, in time order (associative,
  not commutative); no kernel, no SQL name: every path sweeps its own ``lift``/``combine``.
* :class:`Average` (a member of a compiled family): the mean, as a member of the ``add``
  family with the code of ``mean`` (whose lift and lower the family already holds: a new
  member adds its code and those two branches in ``kernels/families.py``, which a test cannot
  do), so that every path runs it compiled by its record alone.
* :class:`Spread` (a name under SQL's rules with a strategy of its own): the largest value
  minus the smallest, answered by :data:`SPREAD`, an evaluator of its own that serves the
  evaluation its record names (:class:`ToyEvaluation`), joined to the engine's evaluators
  when this module is imported (:func:`windowagg.engine.evaluate.add_evaluator`); without it
  no evaluator would serve the record and every call would stop.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
import pyarrow as pa

from windowagg.aggregations import ADD, Aggregation, Facts, Kernel, Mean, facts
from windowagg.engine.evaluate import add_evaluator


class Drift(Aggregation):
    """The last value minus the first, in time order (associative, not commutative)."""

    name = "drift"
    facts = Facts(result="number")
    identity = None

    def lift(self, x):
        return (float(x), float(x))

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (a[0], b[1])

    def lower(self, p):
        return None if p is None else p[1] - p[0]


class Average(Mean):
    """The mean of the values (``mean``'s monoid), a member of the compiled ``add`` family under
    a name and a record of its own."""

    name = "average"
    facts = Facts(Kernel(ADD, facts(Mean).kernel.code))  # type: ignore[union-attr]


class ToyEvaluation(Enum):
    """A strategy of the toys' own."""

    SPREAD = "spread"


class Spread(Aggregation):
    """The largest value minus the smallest (null for a frame without values), under SQL's
    rules; its record names a strategy of its own."""

    name = "spread"
    facts = Facts(sql=True, evaluation=ToyEvaluation.SPREAD)  # type: ignore[arg-type]
    identity = None
    commutative = True

    def lift(self, x):
        return (float(x), float(x))

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (min(a[0], b[0]), max(a[1], b[1]))

    def lower(self, p):
        return None if p is None else p[1] - p[0]


class SpreadEvaluator:
    """Serves :attr:`ToyEvaluation.SPREAD`: each frame's non-null values, the largest minus
    the smallest (a loop over the frame: a toy's strategy). ``calls`` counts its answers in
    this process."""

    SERVES = frozenset({ToyEvaluation.SPREAD})

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, col, fr, e, inputs) -> pa.Array:
        self.calls += 1
        lo, hi = fr.bounds()
        values, valid = col.floats(), col.valid
        out = []
        for a, b in zip(lo.tolist(), hi.tolist()):
            v = values[a:b][valid[a:b]]
            out.append(float(v.max() - v.min()) if len(v) else None)
        return pa.array(out, pa.float64())


SPREAD = SpreadEvaluator()
add_evaluator(SPREAD)


def brute(values: list, kind: str) -> float | None:
    """A toy's value over a frame's values in time order (nulls left out), by its definition."""
    xs = [v for v in values if v is not None and v == v]
    if not xs:
        return None
    if kind == "average":
        return sum(xs) / len(xs)
    return xs[-1] - xs[0] if kind == "drift" else float(np.max(xs) - np.min(xs))
