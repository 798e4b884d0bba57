"""The built-ins by name: :data:`AGGREGATIONS`, Spark SQL's names for them (:data:`ALIASES`,
:data:`SPARK_FUNCTIONS`), and the parser of a name with parameters (``"quantile(q=0.95)"``)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .collect import Collect, CollectList, CollectSet, CountDistinct, Mode
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
)
from .orders import Median, Percentile, PercentileApprox, PercentileDisc, Quantile
from .protocol import AggLike, Aggregation, AggregationProtocol
from .record import facts
from .select import ArgMax, ArgMin, First, Last, M4Agg, Max, MaxBy, MaxCount, Min, MinBy, MinCount
from .sketches import Bloom, HyperLogLog
from .sums import BoolAnd, BoolOr, Count, CountIf, GeoMean, Mean, Sum

AGGREGATIONS: dict[str, Callable[..., Aggregation]] = {
    cls.name: cls
    for cls in (
        Sum,
        Count,
        Mean,
        StdDev,
        GeoMean,
        Min,
        Max,
        ArgMin,
        ArgMax,
        MinCount,
        MaxCount,
        First,
        Last,
        M4Agg,
        Collect,
        CountDistinct,
        Bloom,
        Median,
        Quantile,
        HyperLogLog,
        VarSamp,
        VarPop,
        StdDevPop,
        Skewness,
        Kurtosis,
        CovarSamp,
        CovarPop,
        Corr,
        Product,
        CountIf,
        BoolAnd,
        BoolOr,
        MaxBy,
        MinBy,
        Percentile,
        PercentileDisc,
        PercentileApprox,
        Mode,
        CollectList,
        CollectSet,
    )
}


#: Spark SQL's names for the built-ins (names are also taken in any case)
ALIASES = {
    "avg": "mean",
    "stddev_samp": "stddev",
    "std": "stddev",
    "variance": "var_samp",
    "approx_count_distinct": "hll",
    "countdistinct": "count_distinct",
    "approx_percentile": "percentile_approx",
    "every": "bool_and",
    "some": "bool_or",
    "any": "bool_or",
    "any_value": "first",
    "first_value": "first",
    "last_value": "last",
}


#: the built-ins that follow SQL's rules on tables, as Spark evaluates them, under Spark's names
#: (their records say ``sql``)
SQL = tuple(name for name, cls in AGGREGATIONS.items() if facts(cls).sql)


#: Spark's aggregate functions windowagg accepts under Spark's name, each with the built-in it
#: resolves to; on tables each computes what Spark computes (docs/guides/spark-functions.md)
SPARK_FUNCTIONS = {
    **{n: n for n in SQL},
    **{
        n: ALIASES[n]
        for n in (
            "avg",
            "stddev_samp",
            "std",
            "variance",
            "approx_percentile",
            "every",
            "some",
            "any",
            "any_value",
            "first_value",
            "last_value",
        )
    },
}


def aggregation(name: str, **params: Any) -> Aggregation:
    """Return the built-in aggregation called ``name`` (or one of Spark's names for it, in any
    case: ``avg``, ``stddev_samp``, ``approx_count_distinct``), built with ``params``.

    Raises ``ValueError`` for an unknown name (listing the valid ones) or bad parameters.
    """
    if isinstance(name, str):
        name = ALIASES.get(name.strip().lower(), name.strip().lower())
    try:
        factory = AGGREGATIONS[name]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(AGGREGATIONS))
        raise ValueError(f"unknown aggregation {name!r}; valid names: {valid}") from None
    try:
        return factory(**params)
    except TypeError as e:
        raise ValueError(f"bad parameters for aggregation {name!r}: {e}") from None


def parse(text: str) -> Aggregation:
    """A built-in from its text: a name, or a name with parameters by keyword,
    ``"quantile(q=0.95)"`` (values are Python literals)."""

    name, paren, rest = text.partition("(")
    if not paren:
        return aggregation(name)
    if not rest.rstrip().endswith(")"):
        raise ValueError(f"bad aggregation {text!r}: use name(param=value, ...)")
    try:
        call = ast.parse(f"f({rest.rstrip()[:-1]})", mode="eval").body
        if not isinstance(call, ast.Call):  # a closing parenthesis inside: "q(x) + (y)"
            raise ValueError(text)
        params = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, ValueError):
        raise ValueError(
            f"bad aggregation {text!r}: use name(param=value, ...) with literal values"
        ) from None
    if call.args or None in params:
        raise ValueError(
            f"bad aggregation {text!r}: give parameters by name, like quantile(q=0.95)"
        )
    return aggregation(name, **{str(k): v for k, v in params.items()})


def resolve(agg: AggLike) -> AggregationProtocol:
    """Turn a name (:func:`parse`) into a built-in aggregation; check that any other object
    is one."""
    if isinstance(agg, str):
        return parse(agg)
    missing = [m for m in ("identity", "lift", "combine", "lower") if not hasattr(agg, m)]
    if missing:
        raise TypeError(
            f"{agg!r} is not an aggregation: it lacks {', '.join(missing)} "
            "(see windowagg.aggregations.AggregationProtocol)"
        )
    return agg
