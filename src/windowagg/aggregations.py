"""Aggregations as monoids: the protocol and the built-ins (docs/concepts.md).

An aggregation is any object with ``identity``, ``lift(x)``, ``combine(a, b)`` and ``lower(p)``,
plus the optional flags ``invertible`` (with ``inverse(a, b)``), ``commutative`` and
``selective``. This is the lift/combine/lower framework of Tangwongsan et al. (DABA paper,
Section 2.2): ``lift`` turns a raw input into a partial aggregate, ``combine`` is the associative
operator (``a`` is the older part, ``b`` the younger), ``lower`` turns a partial into the result.

Missing values: ``NaN`` and ``None`` lift to the identity (as SQL NULL), so they keep their place
in a count-based window but do not change the result.

Partial aggregates of the built-ins are immutable values (numbers, tuples, bytes), so algorithms
may share them freely and aggregators pickle.

Each built-in carries its own facts (:class:`Facts`, the class attribute ``facts``): its kernel
family and code in the compiled engine, its result for an empty window, the kind of its result,
whether it takes ``(arg, value)`` pairs, and the partial columns that slicing and Spark SQL
pre-aggregate. Everything else (the compiled engine's boundary, ``algorithm="auto"``, the Spark
planner, warmup, tests and benchmarks) reads them through :func:`facts`; adding a built-in is
its class and its record.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import numbers
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "AGGREGATIONS",
    "M4",
    "Aggregation",
    "AggregationProtocol",
    "BloomFilter",
    "Facts",
    "Kernel",
    "aggregation",
    "facts",
    "resolve",
]

# --- the facts of an aggregation ---------------------------------------------------------------

#: the compiled families (windowagg.kernels.families): aggregations whose combine has the same
#: shape share one compiled family, told apart inside it by their code
SUMF, ADD, SELECT, XCOUNT, WELFORD = "sum", "add", "select", "xcount", "welford"
#: the kinds of result: one number (float, or int where only ints went in and ``keeps_ints``),
#: a count (always an int), the arg of a pair, an estimate (a float), a list, a struct, a filter
RESULTS = ("number", "count", "arg", "estimate", "list", "struct", "filter")


class Kernel(NamedTuple):
    """Where an aggregation lives in the compiled engine: its family and its code there."""

    family: str
    code: int


@dataclass(frozen=True)
class Facts:
    """What the library needs to know of an aggregation besides its monoid.

    ``kernel``: its compiled family and code (None: the Python reference only). ``empty``:
    the result for a window without values. ``result``: one of :data:`RESULTS`.
    ``keeps_ints``: int inputs give int results (of the values; of the args for ``arg``).
    ``pairs``: raw inputs are ``(arg, value)`` pairs. ``partials``: the columns slicing and
    Spark SQL pre-aggregate per slice (``s`` the sum, ``c`` the count of values, ``min`` and
    ``max`` the extremum; each is also the SQL function that computes it, but ``s``), empty
    when the aggregation is not pre-aggregated that way; ``lower_columns`` lowers them.
    ``frames``: how rolling frames and windows of a table answer it without a FIFO sweep of
    its partials: ``"quantile"`` (the nearest rank ``q``, by order statistics over the values'
    ranks), ``"distinct"`` (the exact number of distinct values, by a count per value) or
    ``"collect"`` (the frame's values themselves, sliced), O(log n), O(1) or the output's size
    per row whatever the frame; None: the sweep.
    """

    kernel: Kernel | None = None
    empty: Any = None
    result: str = "number"
    keeps_ints: bool = False
    pairs: bool = False
    partials: tuple[str, ...] = ()
    frames: str | None = None

    @property
    def scalar(self) -> bool:
        """Whether the result is one number (an array output holds it as a float)."""
        return self.result in ("number", "count", "arg", "estimate")


#: the facts of an aggregation that declares none (a user's own): the Python reference only
UNKNOWN = Facts(result="value")


def facts(agg: Any) -> Facts:
    """The facts of ``agg``: those its own class declares (a subclass that declares none, say a
    user's variant of ``sum``, is not taken for the built-in), else :data:`UNKNOWN`."""
    return type(agg).__dict__.get("facts", UNKNOWN)


@runtime_checkable
class AggregationProtocol(Protocol):
    """What every algorithm needs of an aggregation (flags default to False when absent)."""

    identity: Any

    def lift(self, x: Any) -> Any: ...
    def combine(self, a: Any, b: Any) -> Any: ...
    def lower(self, p: Any) -> Any: ...


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
        return type(other) is type(self) and other.params() == self.params()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))


# --- input validation ------------------------------------------------------------------------


def is_missing(x: Any) -> bool:
    """NaN and None are missing values (SQL NULL)."""
    return x is None or (isinstance(x, numbers.Real | Decimal) and x != x)


def _number(name: str, x: Any) -> Any:
    """Check that ``x`` is a real number (a ``Decimal`` included: exact arithmetic on the
    reference path); raise a TypeError naming the value otherwise."""
    if isinstance(x, numbers.Real | Decimal) and not isinstance(x, bool):
        return x
    if isinstance(x, bool):
        return int(x)
    raise TypeError(f"{name} needs a number, got {x!r} ({type(x).__name__})")


# --- sum-like (invertible, commutative) ------------------------------------------------------


class Sum(Aggregation):
    name = "sum"
    facts = Facts(Kernel(SUMF, 0), empty=0, keeps_ints=True, partials=("s",))

    def lower_columns(self, cols):
        return cols["s"]

    identity = 0
    invertible = True
    commutative = True

    def lift(self, x):
        return 0 if is_missing(x) else _number(self.name, x)

    def combine(self, a, b):
        return a + b

    def inverse(self, a, b):
        return a - b


class Count(Aggregation):
    """Number of non-missing values."""

    name = "count"
    facts = Facts(Kernel(ADD, 1), empty=0, result="count", partials=("c",))

    def lower_columns(self, cols):
        return cols["c"]

    identity = 0
    invertible = True
    commutative = True

    def lift(self, x):
        return 0 if is_missing(x) else 1

    def combine(self, a, b):
        return a + b

    def inverse(self, a, b):
        return a - b


class Mean(Aggregation):
    """Arithmetic mean; partial ``(sum, count)``."""

    name = "mean"
    facts = Facts(Kernel(ADD, 2), partials=("s", "c"))

    def lower_columns(self, cols):
        c = cols["c"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, cols["s"] / np.maximum(c, 1), np.nan)

    identity = (0, 0)
    invertible = True
    commutative = True

    def lift(self, x):
        return (0, 0) if is_missing(x) else (_number(self.name, x), 1)

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return p[0] / p[1] if p[1] else None


class StdDev(Aggregation):
    """Sample standard deviation (n - 1); partial ``(n, mean, M2)`` merged by Chan et al.'s
    parallel formula, which stays accurate where the sum-of-squares form cancels."""

    name = "stddev"
    facts = Facts(Kernel(WELFORD, 0))
    identity = (0, 0.0, 0.0)
    invertible = True
    commutative = True

    def lift(self, x):
        return self.identity if is_missing(x) else (1, float(_number(self.name, x)), 0.0)

    def combine(self, a, b):
        na, ma, qa = a
        nb, mb, qb = b
        if na == 0:
            return b
        if nb == 0:
            return a
        n = na + nb
        delta = mb - ma
        return (n, ma + delta * nb / n, qa + qb + delta * delta * na * nb / n)

    def inverse(self, a, b):
        n, m, q = a
        nb, mb, qb = b
        if nb == 0:
            return a
        nc = n - nb
        if nc == 0:
            return self.identity
        mc = (n * m - nb * mb) / nc
        delta = mb - mc
        t = delta * delta * nc * nb / n
        qc = q - qb - t
        # the subtraction cancels: what is left below its rounding error is zero spread
        return (nc, mc, qc if qc > 1e-12 * (q + qb + t) else 0.0)

    def lower(self, p):
        n, _, q = p
        return math.sqrt(q / (n - 1)) if n >= 2 else None


class GeoMean(Aggregation):
    """Geometric mean exp(mean(log x)) of positive values; partial ``(sum of logs, count)``."""

    name = "geomean"
    facts = Facts(Kernel(ADD, 3))
    identity = (0.0, 0)
    invertible = True
    commutative = True

    def lift(self, x):
        if is_missing(x):
            return self.identity
        v = _number(self.name, x)
        if v <= 0:
            raise ValueError(f"geomean needs positive values, got {x!r}")
        return (math.log(v), 1)

    def check_values(self, values):
        bad = values <= 0
        if bad.any():
            self.lift(float(values[np.argmax(bad)]))  # raises lift's ValueError

    def combine(self, a, b):
        return (a[0] + b[0], a[1] + b[1])

    def inverse(self, a, b):
        return (a[0] - b[0], a[1] - b[1])

    def lower(self, p):
        return math.exp(p[0] / p[1]) if p[1] else None


# --- max-like (selective) --------------------------------------------------------------------


class Min(Aggregation):
    name = "min"
    facts = Facts(Kernel(SELECT, 1), keeps_ints=True, partials=("min",))

    def lower_columns(self, cols):
        return cols["min"]

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
    facts = Facts(Kernel(SELECT, 0), keeps_ints=True, partials=("max",))

    def lower_columns(self, cols):
        return cols["max"]

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
    """The oldest non-missing value."""

    name = "first"
    facts = Facts(Kernel(SELECT, 4), keeps_ints=True)
    identity = MISSING
    selective = True

    def lift(self, x):
        return MISSING if is_missing(x) else x

    def combine(self, a, b):
        return b if a is MISSING else a

    def lower(self, p):
        return None if p is MISSING else p


class Last(Aggregation):
    """The youngest non-missing value."""

    name = "last"
    facts = Facts(Kernel(SELECT, 5), keeps_ints=True)
    identity = MISSING
    selective = True

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


# --- holistic and sketches ---------------------------------------------------------------------


class Collect(Aggregation):
    """All non-missing values as a list in window order. Partials are tuples; the inverse drops
    the oldest part's prefix, so subtract-on-evict and SlickDeque (Inv) can serve it."""

    name = "collect"
    facts = Facts(empty=[], result="list", frames="collect")
    identity = ()
    invertible = True

    def lift(self, x):
        return () if is_missing(x) else (x,)

    def combine(self, a, b):
        return a + b if a and b else (a or b)

    def inverse(self, a, b):
        return a[len(b) :]

    def lower(self, p):
        return list(p)


class CountDistinct(Aggregation):
    """The number of distinct non-missing values (SQL's ``count(DISTINCT x)``). Partials map
    each value to how often it occurs, so the inverse removes the oldest part's occurrences
    and subtract-on-evict and SlickDeque (Inv) can serve it."""

    name = "count_distinct"
    facts = Facts(empty=0, result="count", frames="distinct")
    identity: Any = MappingProxyType({})
    invertible = True
    commutative = True

    def lift(self, x):
        return self.identity if is_missing(x) else MappingProxyType({x: 1})

    def combine(self, a, b):
        if not a or not b:
            return a or b
        out = dict(a)
        for x, n in b.items():
            out[x] = out.get(x, 0) + n
        return MappingProxyType(out)

    def inverse(self, a, b):
        out = dict(a)
        for x, n in b.items():
            left = out[x] - n
            if left:
                out[x] = left
            else:
                del out[x]
        return MappingProxyType(out)

    def lower(self, p):
        return len(p)


def _remove_sorted(a: tuple, b: tuple) -> tuple:
    """Multiset difference of sorted tuples ``a - b`` (``b`` must be contained in ``a``)."""
    out = []
    j = 0
    for x in a:
        if j < len(b) and x == b[j]:
            j += 1
        else:
            out.append(x)
    return tuple(out)


class Quantile(Aggregation):
    """Nearest-rank quantile: the ceil(q * n)-th smallest value (1-based), 0 < q <= 1.

    Partial: the sorted tuple of values (holistic; combine is a linear merge)."""

    name = "quantile"
    facts = Facts(frames="quantile")
    identity = ()
    invertible = True
    commutative = True

    def __init__(self, q: float = 0.5):
        if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 < q <= 1:
            raise ValueError(f"quantile needs q in (0, 1], got q={q!r}")
        self.q = float(q)

    def params(self):
        return {"q": self.q}

    def lift(self, x):
        return () if is_missing(x) else (_number(self.name, x),)

    def combine(self, a, b):
        if not a or not b:
            return a or b
        if a[-1] <= b[0]:
            return a + b
        return tuple(heapq.merge(a, b))

    def inverse(self, a, b):
        return _remove_sorted(a, b)

    def lower(self, p):
        if not p:
            return None
        return p[max(0, math.ceil(self.q * len(p)) - 1)]


class Median(Quantile):
    """Nearest-rank median: quantile with q = 0.5 (the lower middle value for even counts)."""

    name = "median"
    facts = Facts(frames="quantile")

    def __init__(self):
        super().__init__(0.5)

    def params(self):
        return {}


def _hash_bytes(x: Any) -> bytes:
    """A stable encoding (the same in every process) of a value for hashing."""
    if isinstance(x, bytes):
        return b"b" + x
    if isinstance(x, str):
        return b"s" + x.encode()
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        f = float(x)
        if f.is_integer() and abs(f) < 2**63:
            return b"i" + struct.pack("<q", int(f))
        return b"f" + struct.pack("<d", f)
    return b"r" + repr(x).encode()


@dataclass(frozen=True, repr=False)
class BloomFilter:
    """Result of the ``bloom`` aggregation: supports ``x in filter`` (no false negatives)."""

    bits: int
    nbits: int
    hashes: int

    def _positions(self, x: Any) -> list[int]:
        return _bloom_positions(x, self.nbits, self.hashes)

    def __contains__(self, x: Any) -> bool:
        return all(self.bits >> i & 1 for i in self._positions(x))

    def __len__(self) -> int:
        """Number of bits set."""
        return self.bits.bit_count()

    def __repr__(self) -> str:
        return f"BloomFilter(nbits={self.nbits}, hashes={self.hashes}, set={len(self)})"


def _bloom_positions(x: Any, nbits: int, hashes: int) -> list[int]:
    digest = hashlib.blake2b(_hash_bytes(x), digest_size=16).digest()
    h1, h2 = struct.unpack("<QQ", digest)
    h2 |= 1
    return [(h1 + i * h2) % nbits for i in range(hashes)]


class Bloom(Aggregation):
    """Bloom filter over the window's values (``bits`` bits, ``hashes`` hash functions, double
    hashing on BLAKE2b). Partial: the bit set as an int; combine is bitwise or."""

    name = "bloom"
    facts = Facts(result="filter")
    identity = 0
    commutative = True

    def __init__(self, bits: int = 2**14, hashes: int = 4):
        for label, v in (("bits", bits), ("hashes", hashes)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"bloom needs a positive integer {label}, got {label}={v!r}")
        self.bits = int(bits)
        self.hashes = int(hashes)

    def params(self):
        return {"bits": self.bits, "hashes": self.hashes}

    def lift(self, x):
        if is_missing(x):
            return 0
        out = 0
        for i in _bloom_positions(x, self.bits, self.hashes):
            out |= 1 << i
        return out

    def combine(self, a, b):
        return a | b

    def lower(self, p):
        return None if p == 0 else BloomFilter(p, self.bits, self.hashes)


class HyperLogLog(Aggregation):
    """Distinct count estimate with Apache DataSketches' HLL sketch (``lg_k`` = log2 of the
    number of buckets). Partials are serialized compact sketches (bytes): immutable and
    picklable; the identity is ``b""``. Rolling frames and windows of tables count exactly
    instead (a count per value costs O(1) per row there, less than merging sketches)."""

    name = "hll"
    facts = Facts(empty=0.0, result="estimate", frames="distinct")
    identity = b""
    commutative = True

    def __init__(self, lg_k: int = 12):
        if isinstance(lg_k, bool) or not isinstance(lg_k, numbers.Integral) or not 4 <= lg_k <= 21:
            raise ValueError(f"hll needs an integer lg_k in [4, 21], got lg_k={lg_k!r}")
        self.lg_k = int(lg_k)

    def params(self):
        return {"lg_k": self.lg_k}

    def lift(self, x):
        import datasketches

        if is_missing(x):
            return b""
        s = datasketches.hll_sketch(self.lg_k)
        if isinstance(x, numbers.Real) and not isinstance(x, bool):
            f = float(x)
            s.update(int(f) if f.is_integer() and abs(f) < 2**63 else f)
        elif isinstance(x, str | bytes | int):
            s.update(x)
        else:
            s.update(repr(x))
        return s.serialize_compact()

    def combine(self, a, b):
        import datasketches

        if not a:
            return b
        if not b:
            return a
        u = datasketches.hll_union(self.lg_k)
        u.update(datasketches.hll_sketch.deserialize(a))
        u.update(datasketches.hll_sketch.deserialize(b))
        return u.get_result().serialize_compact()

    def lower(self, p):
        import datasketches

        return 0.0 if not p else datasketches.hll_sketch.deserialize(p).get_estimate()


# --- registry --------------------------------------------------------------------------------

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
    )
}


#: Spark SQL's names for the built-ins (names are also taken in any case)
ALIASES = {"avg": "mean", "stddev_samp": "stddev", "std": "stddev",
           "approx_count_distinct": "hll", "countdistinct": "count_distinct"}  # fmt: skip


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
    import ast

    name, paren, rest = text.partition("(")
    if not paren:
        return aggregation(name)
    if not rest.rstrip().endswith(")"):
        raise ValueError(f"bad aggregation {text!r}: use name(param=value, ...)")
    try:
        call = ast.parse(f"f({rest.rstrip()[:-1]})", mode="eval").body
        params = {k.arg: ast.literal_eval(k.value) for k in call.keywords}  # type: ignore[attr-defined]
    except (SyntaxError, ValueError):
        raise ValueError(f"bad aggregation {text!r}: use name(param=value, ...) with "
                         "literal values") from None  # fmt: skip
    if call.args or None in params:  # type: ignore[attr-defined]
        raise ValueError(f"bad aggregation {text!r}: give parameters by name, like "
                         "quantile(q=0.95)")  # fmt: skip
    return aggregation(name, **params)


def resolve(agg: Any) -> Any:
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


def flags(agg: Any) -> tuple[bool, bool, bool]:
    """``(invertible, commutative, selective)`` of any aggregation, missing flags False."""
    return (
        bool(getattr(agg, "invertible", False)),
        bool(getattr(agg, "commutative", False)),
        bool(getattr(agg, "selective", False)),
    )


def fold(agg: Any, partials: Iterable[Any]) -> Any:
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
