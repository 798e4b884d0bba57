"""The protocol every aggregation follows, the base class of the built-ins, and the helpers every
path uses on any aggregation (a user's included): missing values, flags, the inverse, folds.

This is the lift/combine/lower framework of Tangwongsan et al. (DABA paper, Section 2.2):
``lift`` turns a raw input into a partial aggregate, ``combine`` is the associative operator
(``a`` is the older part, ``b`` the younger), ``lower`` turns a partial into the result."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class AggregationProtocol(Protocol):
    """What every algorithm needs of an aggregation (flags default to False when absent)."""

    identity: Any

    def lift(self, x: Any) -> Any: ...
    def combine(self, a: Any, b: Any) -> Any: ...
    def lower(self, p: Any) -> Any: ...


#: an aggregation, or the name of a built-in (``"sum"``, ``"quantile(q=0.9)"``; :func:`parse`)
AggLike = str | AggregationProtocol


def name_of(agg: AggregationProtocol) -> str:
    """An aggregation's name for messages: its ``name``, else its repr (a user's own)."""
    return str(getattr(agg, "name", None) or repr(agg))


def check_values(agg: AggregationProtocol, values: np.ndarray) -> None:
    """A built-in's domain check of a float64 array (:meth:`Aggregation.check_values`); a user's
    own aggregation never runs compiled, so it has none."""
    if isinstance(agg, Aggregation):
        agg.check_values(values)


class Aggregation:
    """Base class of the built-in aggregations; user aggregations need not inherit from it."""

    name: str = "aggregation"
    identity: Any = None
    invertible: bool = False
    commutative: bool = False
    selective: bool = False

    def lift(self, x: Any) -> Any:
        raise NotImplementedError

    def combine(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def lower(self, p: Any) -> Any:
        return p

    def inverse(self, a: Any, b: Any) -> Any:
        raise TypeError(f"aggregation {self.name!r} is not invertible")

    def params(self) -> dict[str, Any]:
        """Constructor parameters (used for equality, repr and the compiled engine)."""
        return {}

    def check_values(self, values: np.ndarray) -> None:
        """Raise what ``lift`` raises for the first value of a float64 array outside the
        aggregation's domain (arrays skip ``lift`` on the compiled paths)."""

    def lower_columns(self, cols: dict[str, np.ndarray]) -> np.ndarray:
        """``lower`` over arrays of partials given as the columns of ``facts.partials`` (the
        windows of the slicing fast path and of Spark's pre-aggregation): NaN where the
        result is None. Only aggregations with partial columns define it."""
        raise NotImplementedError(f"{self.name} has no partial columns")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"aggregation({self.name!r}{', ' if args else ''}{args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params() == self.params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))


def is_missing(x: Any) -> bool:
    """NaN and None are missing values (SQL NULL)."""
    return x is None or (isinstance(x, numbers.Real | Decimal) and x != x)


def lift(agg: AggregationProtocol, x: Any) -> Any:
    """``agg.lift(x)``, or the identity where ``x`` is missing (None or NaN): a missing value
    never reaches an aggregation's own ``lift``, the user's included (SQL's rule: nulls are
    skipped; windowagg's: NaN is missing too)."""
    return agg.identity if is_missing(x) else agg.lift(x)


def _number(name: str, x: Any) -> Any:
    """Check that ``x`` is a real number (a ``Decimal`` included: exact arithmetic on the
    reference path); raise a TypeError naming the value otherwise."""
    if isinstance(x, numbers.Real | Decimal) and not isinstance(x, bool):
        return x
    if isinstance(x, bool):
        return int(x)
    raise TypeError(f"{name} needs a number, got {x!r} ({type(x).__name__})")


def flags(agg: AggregationProtocol) -> tuple[bool, bool, bool]:
    """``(invertible, commutative, selective)`` of any aggregation, missing flags False."""
    return (
        bool(getattr(agg, "invertible", False)),
        bool(getattr(agg, "commutative", False)),
        bool(getattr(agg, "selective", False)),
    )


def inverse_of(agg: AggregationProtocol) -> Callable[[Any, Any], Any]:
    """``agg.inverse``, of an aggregation whose ``invertible`` flag is set (a TypeError else)."""
    inverse = getattr(agg, "inverse", None)
    if not flags(agg)[0] or not callable(inverse):
        raise TypeError(f"aggregation {name_of(agg)!r} is not invertible")
    return inverse


def fold(agg: AggregationProtocol, partials: Iterable[Any]) -> Any:
    """Combine partials in order, starting from the identity."""
    acc = agg.identity
    for p in partials:
        acc = agg.combine(acc, p)
    return acc


def approx_equal(a: Any, b: Any, rel: float = 1e-9, abs_tol: float = 1e-9) -> bool:
    """Equality of partials or results that forgives floating-point reassociation."""
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, numbers.Real) and isinstance(b, numbers.Real)):
            return False
        if a != a or b != b:
            return a != a and b != b
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(approx_equal(x, y, rel, abs_tol) for x, y in zip(a, b))
    return a == b
