"""Aggregations as monoids: the protocol, the record, the built-ins by family, and their names
(docs/concepts.md).

An aggregation is any object with ``identity``, ``lift(x)``, ``combine(a, b)`` and ``lower(p)``,
plus the optional flags ``invertible`` (with ``inverse(a, b)``), ``commutative`` and
``selective`` (:mod:`.protocol`; the DABA paper's framework, Section 2.2).

Missing values: ``NaN`` and ``None`` count as the identity (as SQL NULL; :func:`lift`), so they
keep their place in a count-based window but do not change the result; they never reach an
aggregation's own ``lift``, a user's included.

The built-ins live in one module per family, lined up with the compiled kernel families
(:mod:`windowagg.kernels.families`): :mod:`.sums`, :mod:`.moments`, :mod:`.select`, and those
without a family, :mod:`.collect`, :mod:`.orders`, :mod:`.sketches`. Spark's aggregate
functions are built-ins under Spark's names (:mod:`.registry`; docs/guides/spark-functions.md),
and on tables they compute what Spark computes.

Partial aggregates of the built-ins are immutable values (numbers, tuples, bytes), so algorithms
may share them freely and aggregators pickle.

Each built-in carries its own record (:class:`~.record.Facts`, the class attribute ``facts``):
its kernel family and code, its result for an empty window, the kind of its result, how the
table engine evaluates it, and the partials that slicing and Spark SQL pre-aggregate.
Everything else reads them through :func:`facts`; adding a built-in is its class and its record
(CONTRIBUTING.md, "Adding an aggregation").
"""

from .collect import (
    Collect,
    CollectList,
    CollectSet,
    CountDistinct,
    Mode,
)
from .moments import (
    Corr,
    CovarPop,
    CovarSamp,
    Kurtosis,
    Product,
    Skewness,
    StdDev,
    StdDevPop,
    VarPop,
    VarSamp,
    merge_moments,
)
from .orders import (
    Median,
    Percentile,
    PercentileApprox,
    PercentileDisc,
    Quantile,
    interpolate,
)
from .protocol import (
    AggLike,
    Aggregation,
    AggregationProtocol,
    approx_equal,
    check_values,
    flags,
    fold,
    inverse_of,
    is_missing,
    lift,
    name_of,
)
from .record import (
    ADD,
    COMBINE,
    COMOMENTS,
    MOMENTS,
    ONE_ROW,
    PRODUCT,
    RESULTS,
    SELECT,
    STATES,
    SUMF,
    UNKNOWN,
    WELFORD,
    XCOUNT,
    Evaluation,
    Facts,
    Kernel,
    Need,
    PartialKind,
    facts,
)
from .registry import (
    AGGREGATIONS,
    ALIASES,
    SPARK_FUNCTIONS,
    SQL,
    aggregation,
    parse,
    resolve,
)
from .select import (
    M4,
    MISSING,
    ArgMax,
    ArgMin,
    First,
    Last,
    M4Agg,
    Max,
    MaxBy,
    MaxCount,
    Min,
    MinBy,
    MinCount,
)
from .sketches import (
    Bloom,
    BloomFilter,
    HyperLogLog,
)
from .sums import (
    BoolAnd,
    BoolOr,
    Count,
    CountIf,
    GeoMean,
    Mean,
    Sum,
)

__all__ = [
    "ADD",
    "AGGREGATIONS",
    "ALIASES",
    "COMBINE",
    "COMOMENTS",
    "M4",
    "MISSING",
    "MOMENTS",
    "ONE_ROW",
    "PRODUCT",
    "RESULTS",
    "SELECT",
    "SPARK_FUNCTIONS",
    "SQL",
    "STATES",
    "SUMF",
    "UNKNOWN",
    "WELFORD",
    "XCOUNT",
    "AggLike",
    "Aggregation",
    "AggregationProtocol",
    "ArgMax",
    "ArgMin",
    "Bloom",
    "BloomFilter",
    "BoolAnd",
    "BoolOr",
    "Collect",
    "CollectList",
    "CollectSet",
    "Corr",
    "Count",
    "CountDistinct",
    "CountIf",
    "CovarPop",
    "CovarSamp",
    "Evaluation",
    "Facts",
    "First",
    "GeoMean",
    "HyperLogLog",
    "Kernel",
    "Kurtosis",
    "Last",
    "M4Agg",
    "Max",
    "MaxBy",
    "MaxCount",
    "Mean",
    "Median",
    "Min",
    "MinBy",
    "MinCount",
    "Mode",
    "Need",
    "PartialKind",
    "Percentile",
    "PercentileApprox",
    "PercentileDisc",
    "Product",
    "Quantile",
    "Skewness",
    "StdDev",
    "StdDevPop",
    "Sum",
    "VarPop",
    "VarSamp",
    "aggregation",
    "approx_equal",
    "check_values",
    "facts",
    "flags",
    "fold",
    "interpolate",
    "inverse_of",
    "is_missing",
    "lift",
    "merge_moments",
    "name_of",
    "parse",
    "resolve",
]
