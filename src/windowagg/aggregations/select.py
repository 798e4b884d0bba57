"""Max-like aggregations (selective: the result is one of the inputs), the kernel families
``select`` and ``xcount`` (:mod:`windowagg.kernels.families`): min, max, their args, max_by and
min_by of ``(x, y)`` pairs, the extremes with their counts, first, last, and M4 (min, max,
first and last at once)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from .protocol import Aggregation, _number, is_missing
from .record import SELECT, XCOUNT, Evaluation, Facts, Kernel, Need, PartialKind


class Min(Aggregation):
    name = "min"
    facts = Facts(
        Kernel(SELECT, 1),
        sql=True,
        keeps_ints=True,
        partials=(PartialKind.MIN,),
        evaluation=Evaluation.SMALLEST,
        takes="any",
        keeps_type=True,
        orders="value",
    )

    def lower_columns(self, cols):
        return cols[PartialKind.MIN]

    identity = None
    commutative = True
    selective = True

    def lift(self, x):
        return None if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a <= b else b


class Max(Aggregation):
    name = "max"
    facts = Facts(
        Kernel(SELECT, 0),
        sql=True,
        keeps_ints=True,
        partials=(PartialKind.MAX,),
        evaluation=Evaluation.LARGEST,
        takes="any",
        keeps_type=True,
        orders="value",
    )

    def lower_columns(self, cols):
        return cols[PartialKind.MAX]

    identity = None
    commutative = True
    selective = True

    def lift(self, x):
        return None if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a >= b else b


def _pair(name: str, x: Any) -> tuple[Any, Any] | None:
    if is_missing(x):
        return None
    try:
        arg, value = x
    except (TypeError, ValueError):
        raise TypeError(f"{name} needs (arg, value) pairs, got {x!r}") from None
    return None if is_missing(value) else (arg, _number(name, value))


class ArgMin(Aggregation):
    """The arg of the smallest value among ``(arg, value)`` pairs; ties go to the oldest."""

    name = "argmin"
    facts = Facts(Kernel(SELECT, 3), result="arg", keeps_ints=True, pairs=True)
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a[1] <= b[1] else b

    def lower(self, p):
        return None if p is None else p[0]


class ArgMax(Aggregation):
    """The arg of the largest value among ``(arg, value)`` pairs; ties go to the oldest."""

    name = "argmax"
    facts = Facts(Kernel(SELECT, 2), result="arg", keeps_ints=True, pairs=True)
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a if a[1] >= b[1] else b

    def lower(self, p):
        return None if p is None else p[0]


class MaxBy(Aggregation):
    """Spark's ``max_by(x, y)``: the x of the largest y among ``(x, y)`` pairs (rows without a
    y skipped); ties go to the youngest, as Spark's rows in order give."""

    name = "max_by"
    facts = Facts(
        Kernel(SELECT, 6),
        sql=True,
        sql_partials=(Need(PartialKind.MAX_BY), Need(PartialKind.MAX, of_y=True)),
        evaluation=Evaluation.LARGEST,
        result="arg",
        keeps_ints=True,
        pairs=True,
        columns=2,
        takes="any",
        keeps_type=True,
        orders="by",
    )
    identity = None
    selective = True

    def lift(self, x):
        return _pair(self.name, x)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return b if b[1] >= a[1] else a

    def lower(self, p):
        return None if p is None else p[0]


class MinBy(MaxBy):
    """Spark's ``min_by(x, y)``: the x of the smallest y; ties go to the youngest."""

    name = "min_by"
    facts = replace(
        MaxBy.facts,
        kernel=Kernel(SELECT, 7),
        sql_partials=(Need(PartialKind.MIN_BY), Need(PartialKind.MIN, of_y=True)),
        evaluation=Evaluation.SMALLEST,
    )

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return b if b[1] <= a[1] else a


class MinCount(Aggregation):
    """How often the minimum occurs; partial ``(min, count)`` (DABA paper maxcount, mirrored)."""

    name = "mincount"
    facts = Facts(Kernel(XCOUNT, 1), empty=0, result="count")
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a[0] < b[0]:
            return a
        if b[0] < a[0]:
            return b
        return (a[0], a[1] + b[1])

    def lower(self, p):
        return 0 if p is None else p[1]


class MaxCount(Aggregation):
    """How often the maximum occurs; partial ``(max, count)`` (DABA paper, Section 2.2)."""

    name = "maxcount"
    facts = Facts(Kernel(XCOUNT, 0), empty=0, result="count")
    identity = None
    commutative = True

    def lift(self, x):
        return None if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        if a[0] > b[0]:
            return a
        if b[0] > a[0]:
            return b
        return (a[0], a[1] + b[1])

    def lower(self, p):
        return 0 if p is None else p[1]


class _Missing:
    """The identity of ``first``/``last``: distinct from every value, None included."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self):
        return (_Missing, ())

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class First(Aggregation):
    """The oldest non-missing value. On tables, Spark's ``first``: the frame's first row, null
    or not, or with ``ignorenulls=True`` its first non-null value."""

    name = "first"
    facts = Facts(
        Kernel(SELECT, 4),
        sql=True,
        keeps_ints=True,
        takes="any",
        keeps_type=True,
        evaluation=Evaluation.FIRST,
    )
    identity = MISSING
    selective = True

    def __init__(self, ignorenulls: bool = False):
        if not isinstance(ignorenulls, bool):
            raise ValueError(f"{self.name} needs ignorenulls True or False, got {ignorenulls!r}")
        self.ignorenulls = ignorenulls

    def params(self):
        return {"ignorenulls": True} if self.ignorenulls else {}

    def lift(self, x):
        return MISSING if is_missing(x) else x

    def combine(self, a, b):
        return b if a is MISSING else a

    def lower(self, p):
        return None if p is MISSING else p


class Last(First):
    """The youngest non-missing value. On tables, Spark's ``last``: the frame's last row, null
    or not, or with ``ignorenulls=True`` its last non-null value."""

    name = "last"
    facts = Facts(
        Kernel(SELECT, 5),
        sql=True,
        keeps_ints=True,
        takes="any",
        keeps_type=True,
        evaluation=Evaluation.LAST,
    )

    def lift(self, x):
        return MISSING if is_missing(x) else x

    def combine(self, a, b):
        return a if b is MISSING else b

    def lower(self, p):
        return None if p is MISSING else p


class M4(NamedTuple):
    """Result of the ``m4`` aggregation (min, max, first, last) used for line-chart reduction."""

    min: Any
    max: Any
    first: Any
    last: Any


class M4Agg(Aggregation):
    name = "m4"
    facts = Facts(result="struct")
    identity = None

    def lift(self, x):
        if is_missing(x):
            return None
        v = _number(self.name, x)
        return (v, v, v, v)

    def combine(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (min(a[0], b[0]), max(a[1], b[1]), a[2], b[3])

    def lower(self, p):
        return None if p is None else M4(*p)
