"""The record of an aggregation (:class:`Facts`): everything the library needs to know of it
besides its monoid. Every path reads it through :func:`facts`: the compiled engine's boundary,
``algorithm="auto"``, the table engine's evaluators, the slicing pass, windows from partials,
the Spark planner and SQL, warmup, tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, NamedTuple

#: the compiled families (windowagg.kernels.families): aggregations whose combine has the same
#: shape share one compiled family, told apart inside it by their code
SUMF, ADD, SELECT, XCOUNT, WELFORD = "sum", "add", "select", "xcount", "welford"
PRODUCT, MOMENTS, COMOMENTS = "product", "moments", "comoments"

#: the kinds of result: one number (float, or int where only ints went in and ``keeps_ints``),
#: a count (always an int), the arg of a pair, an estimate (a float), a truth value, a list, a
#: struct, a filter
RESULTS = ("number", "count", "arg", "estimate", "bool", "list", "struct", "filter")


class Evaluation(Enum):
    """How the table engine evaluates an entry over its frames' bounds; each is served by one
    evaluator of :mod:`windowagg.engine.evaluators`, which says so from the record."""

    #: the FIFO sweep of the aggregation's own partials (the library's and the user's own)
    SWEEP = "sweep"
    #: the non-null values (prefix counts)
    COUNT = "count"
    #: the sum: exact prefix sums of integers and decimals, the sweep of doubles
    SUM = "sum"
    #: the mean, from the sum and the count
    MEAN = "mean"
    #: the true values, and whether all or any of the non-null values are true
    COUNT_TRUE, EVERY, SOME = "count_true", "every", "some"
    #: the row holding the largest or the smallest value (or ``y``, where the record ``orders``
    #: by ``"by"``), ties to the youngest: the value itself, in its type
    LARGEST, SMALLEST = "largest", "smallest"
    #: the frame's first or last row (its first or last non-null one with ``ignorenulls``)
    FIRST, LAST = "first", "last"
    #: a moment or the product, compiled over the non-NaN values, SQL's null rules
    MOMENTS = "moments"
    #: a co-moment of ``(x, y)`` pairs
    COMOMENTS = "comoments"
    #: Spark's interpolated percentile
    PERCENTILE = "percentile"
    #: the value at the nearest rank, as a double or (``keeps_type``) in the input's type
    NEAREST_RANK = "nearest_rank"
    #: the most frequent value, ties to the smallest
    MODE = "mode"
    #: the frame's non-null values in order (NaN a value)
    LIST = "list"
    #: the frame's distinct values, ascending
    SET = "set"
    #: the library's: the frame's values without nulls or NaN, sliced
    VALUES = "values"
    #: the library's: the nearest-rank quantile, by order statistics over the values' ranks
    QUANTILE = "quantile"
    #: the library's: the exact number of distinct values, by a count per value
    DISTINCT = "distinct"


#: the evaluations whose result over a frame of one row is that row's value (nulls and NaN
#: included): a window of one slice over partials takes its partial as it is
ONE_ROW = frozenset({Evaluation.SUM, Evaluation.LARGEST, Evaluation.SMALLEST})


class PartialKind(StrEnum):
    """A partial a slice keeps, as an aggregate of a column per (key, slice): by the slicing
    fast path (:mod:`windowagg.slicing.vector`), the engine's slicing pass and Spark SQL's
    pre-aggregation, for windows from partials (:mod:`windowagg.engine.windows.partials`)."""

    SUM = "sum"
    #: the slice's rows (a count of them, null or not)
    ROWS = "rows"
    #: a sum in doubles (a mean of integers, as Spark's avg sums them)
    FSUM = "fsum"
    COUNT = "count"
    MIN = "min"
    MAX = "max"
    #: the slice's first and last time (sessions, count windows)
    TMIN = "tmin"
    TMAX = "tmax"
    COUNT_IF = "count_if"
    BOOL_AND = "bool_and"
    BOOL_OR = "bool_or"
    PRODUCT = "product"
    #: the value of the row with the largest (smallest) ``y``, of ``(x, y)`` pairs
    MAX_BY = "max_by"
    MIN_BY = "min_by"
    #: a family's state (:data:`STATES`): the mean, the sums of squared, cubed and fourth powers
    #: of the deviations, the pair's summed co-deviations
    AVG = "avg"
    M2 = "m2"
    M3 = "m3"
    M4 = "m4"
    C2 = "c2"

    @property
    def paired(self) -> bool:
        """Whether it reads both columns of a pair (the value and its ordering ``y``)."""
        return self in (PartialKind.MAX_BY, PartialKind.MIN_BY)


class Need(NamedTuple):
    """A partial an entry merges from: its ``kind``, of the entry's column ``x``, or (``of_y``)
    of its pair's ``y`` (the ordering column's own extreme, for ``max_by``; a state's field of
    ``y``, over the pairs)."""

    kind: PartialKind
    of_y: bool = False


#: how two partials of one kind combine (the kinds the slicing passes compute): sums and counts
#: add up, extrema (of values, of times) keep the extremum
COMBINE = {
    PartialKind.SUM: PartialKind.SUM,
    PartialKind.FSUM: PartialKind.SUM,
    PartialKind.COUNT: PartialKind.SUM,
    PartialKind.MIN: PartialKind.MIN,
    PartialKind.MAX: PartialKind.MAX,
    PartialKind.TMIN: PartialKind.MIN,
    PartialKind.TMAX: PartialKind.MAX,
}

#: the partials of a slice's state where a family keeps one (count first, then the family's
#: other fields in order: :mod:`windowagg.kernels.families`), as SQL aggregates of the entry's
#: column ``x`` and its pair's ``y`` (``of_y``: of ``y`` and ``x``): ``count``, ``avg`` and
#: ``m2`` (squared deviations) of x, over the rows where y is not null when there is a y;
#: ``m3``, ``m4`` of x; ``c2``, the pair's summed co-deviations
STATES = {
    WELFORD: (Need(PartialKind.COUNT), Need(PartialKind.AVG), Need(PartialKind.M2)),
    MOMENTS: tuple(
        Need(k)
        for k in (
            PartialKind.COUNT,
            PartialKind.AVG,
            PartialKind.M2,
            PartialKind.M3,
            PartialKind.M4,
        )
    ),
    COMOMENTS: (
        Need(PartialKind.COUNT),
        Need(PartialKind.AVG),
        Need(PartialKind.AVG, of_y=True),
        Need(PartialKind.C2),
        Need(PartialKind.M2),
        Need(PartialKind.M2, of_y=True),
    ),
}


class Kernel(NamedTuple):
    """Where an aggregation lives in the compiled engine: its family and its code there."""

    family: str
    code: int


@dataclass(frozen=True)
class Facts:
    """What the library needs to know of an aggregation besides its monoid: one record per
    aggregation, read by every path through :func:`facts`. Fields marked SQL's rule apply to
    built-ins under Spark's names on tables (``sql``)."""

    #: its compiled family and code (None: the Python reference only)
    kernel: Kernel | None = None
    #: it follows SQL's rules on tables under Spark's name, as Spark evaluates it
    sql: bool = False
    #: its result type's rule where that is not a double, the input's type (``keeps_type``) or
    #: its ``result`` kind's: ``"sum"`` (Spark's sum: long for integers, ``decimal(p + 10,
    #: s)``) or ``"avg"`` (``decimal(p + 4, s + 4)`` for decimals)
    sql_type: str = ""
    #: the result for a window without values
    empty: Any = None
    #: the kind of result, one of :data:`RESULTS`
    result: str = "number"
    #: int inputs give int results (of the values; of the args for ``arg``)
    keeps_ints: bool = False
    #: raw inputs are ``(arg, value)`` pairs
    pairs: bool = False
    #: the partials a slice keeps for it (kinds of :data:`COMBINE`: the sum and count of the
    #: values, their min and max), read by the slicing fast path and by windows from partials;
    #: empty when it is not answered that way; its ``lower_columns`` lowers them
    partials: tuple[PartialKind, ...] = ()
    #: the SQL aggregates per slice a window merges from where they are not ``partials``
    #: (its own: count_if, bool_and, bool_or, product; ``max_by`` with the ordering column's
    #: extreme; a family's state, :data:`STATES`); :attr:`merged` is the one or the other
    sql_partials: tuple[Need, ...] = ()
    #: how the table engine evaluates it (:class:`Evaluation`; the one evaluator that serves
    #: it, :mod:`windowagg.engine.evaluators`)
    evaluation: Evaluation = Evaluation.SWEEP
    #: how many columns an entry over a table names (2: ``(x, y)`` pairs, as ``max_by(x, y)``
    #: or ``corr(x, y)``; arrays take the pairs themselves)
    columns: int = 1
    #: SQL's rule: the fewest non-null values that give a result, fewer give null (the
    #: variances, moments, co-moments and the product; 0: any number does)
    fewest: int = 0
    #: SQL's rule: a NaN the kernel gives from a zero divisor, not from a NaN value, is null
    #: (skewness, kurtosis, corr)
    zero_null: bool = False
    #: SQL's rule: a frame holding an infinity gives NaN (the moments: Spark's running mean
    #: turns infinite, and its deviations from it NaN; not the product)
    infinity_nan: bool = False
    #: SQL's rule: the column an entry names holds ``numbers``, ``booleans`` (count_if,
    #: bool_and, bool_or) or ``any`` type (count, first, last, min, max, mode, the
    #: collections, max_by and min_by)
    takes: str = "numbers"
    #: SQL's rule: the result is one of the input's values, in the input's type (min, max,
    #: first, last, percentile_approx, mode, max_by, min_by)
    keeps_type: bool = False
    #: SQL's rule: which column it compares, so that it must be orderable: ``"value"`` (min,
    #: max, mode, collect_set) or ``"by"`` (the second column of max_by and min_by)
    orders: str = ""
    #: SQL's rule: an entry may name no column (``"*"``: the rows, ``count(*)``)
    rows: bool = False
    #: SQL's rule: the result is never null (a count of nothing is 0)
    never_null: bool = False

    @property
    def merged(self) -> tuple[Need, ...]:
        """The SQL partials a window merges from (empty: it reads the rows)."""
        return self.sql_partials or tuple(Need(k) for k in self.partials)

    @property
    def scalar(self) -> bool:
        """Whether the result is one number (an array output holds it as a float)."""
        return self.result in ("number", "count", "arg", "estimate", "bool")


#: the facts of an aggregation that declares none (a user's own): the Python reference only
UNKNOWN = Facts(result="value")


def facts(agg: object) -> Facts:
    """The facts of ``agg``: those its own class declares (a subclass that declares none, say a
    user's variant of ``sum``, is not taken for the built-in), else :data:`UNKNOWN`; of a class,
    those it declares."""
    return vars(agg if isinstance(agg, type) else type(agg)).get("facts", UNKNOWN)
