"""The object behind ``ooo("fiba" | "bclassic", agg, backend="auto" | "compiled")`` for a
built-in numeric aggregation: the interface of :class:`OooAggregator`
(docs/guides/algorithms.md) over compiled storage (:class:`BTreeState`, the driver ``btree_run`` of
:mod:`windowagg.kernels.btree`), plus
``insert_many``, ``evict_many`` and ``query_many``, which stay in compiled code for a whole
batch.

Times live in the kernel as float64: real numbers that float64 holds exactly (finite floats,
ints up to 2^53 in magnitude, fractions like 1/2) and datetimes (as microseconds since 1970,
years 1685-2255). A time or a value the kernels cannot hold (:class:`windowagg.storage.
NotHoldable`) moves the window to the Python reference on ``backend="auto"`` (its entries'
partials read out of the kernel arrays), so that the default backend answers what the
reference answers; ``backend="compiled"`` raises it, naming ``backend="python"``, which takes
any totally ordered times and any values.
"""

from __future__ import annotations

import functools
import math
import numbers
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from ..aggregations import AggregationProtocol, name_of
from ..algorithm import record
from ..kernels.layout import CLASSIC, LEAF, LF, RF, ROOT
from ..kernels.layout import OP_ALL as ALL
from ..kernels.layout import OP_BULK_EVICT as BULK_EVICT
from ..kernels.layout import OP_EVICT as EVICT
from ..kernels.layout import OP_INSERT as INSERT
from ..kernels.layout import OP_RANGE as RANGE
from ..storage import (
    EXACT,
    NotHoldable,
    NotHoldableType,
    kernel_for,
    python_result,
    reference_partial,
    sums_exact,
    to_arrays,
)
from ..storage.btree_state import BTreeState
from .base import OooAggregator

_US = timedelta(microseconds=1)


class _Times:
    """Times to float64 and back: numbers as themselves, datetimes as microseconds since the
    epoch (in the first time's zone, so that aware and naive datetimes stay apart)."""

    def __init__(self) -> None:
        self.epoch: datetime | None = None
        self.ints = True  # every time so far an int: oldest()/youngest() return ints

    def encode(self, t: Any) -> float:
        if isinstance(t, datetime):
            if self.epoch is None:
                self.epoch = datetime(1970, 1, 1, tzinfo=t.tzinfo and UTC)
            us = (t - self.epoch) // _US
            return self._number(us, t)
        if isinstance(t, numbers.Real) and not isinstance(t, bool):
            return self._number(t, t)
        raise NotHoldableType(
            f"compiled storage takes real numbers or datetimes as times, got {t!r} "
            f"({type(t).__name__}); use backend='python' for other ordered times"
        )

    @staticmethod
    def _number(v: Any, t: Any) -> float:
        f = float(v)
        if not math.isfinite(f) or f != v:  # Python compares ints and fractions exactly
            raise NotHoldable(
                f"compiled storage holds times as float64 and cannot hold {t!r} exactly; "
                f"use backend='python'"
            )
        return f

    def encode_array(self, ts: np.ndarray) -> np.ndarray:
        """A numeric array of times as float64."""
        out = ts.astype(np.float64)
        bad = ~np.isfinite(out) | (np.abs(out) > EXACT)
        if bad.any():
            self._number(ts[np.argmax(bad)].item(), ts[np.argmax(bad)].item())
        return out

    def note(self, ints: bool) -> None:
        """Times went in: results stay ints while every time was one."""
        self.ints = self.ints and ints

    def decode(self, v: float) -> Any:
        if self.epoch is not None:
            return self.epoch + int(v) * _US
        return int(v) if self.ints else v


def _insert_many(ref: Any, times: Any, values: Any) -> None:
    times, values = list(times), list(values)
    if len(values) != len(times):
        raise ValueError(
            f"insert_many needs as many values ({len(values)}) as times ({len(times)})"
        )
    for t, x in zip(times, values):
        ref.insert(t, x)


def _evict_many(ref: Any, times: Any) -> np.ndarray:
    return np.array([ref.evict(t) for t in times], bool)


def _query_many(ref: Any, t_from: Any, t_to: Any) -> np.ndarray:
    lo, hi = list(t_from), list(t_to)
    if len(lo) != len(hi):
        raise ValueError(f"query_many needs as many t_from ({len(lo)}) as t_to ({len(hi)})")
    out = [ref.query(a, b) for a, b in zip(lo, hi)]
    return np.array([math.nan if r is None else float(r) for r in out])


#: the compiled tree's batch methods, one call per element on the reference
_ON_REFERENCE = {"insert_many": _insert_many, "evict_many": _evict_many, "query_many": _query_many}


def _or_reference(method):
    """Run ``method`` on compiled storage, or on the reference once the window moved there; a
    time or value the kernels cannot hold moves it there first (``fallback``), or is raised."""
    name = method.__name__

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if self._ref is None:
            try:
                return method(self, *args, **kwargs)
            except NotHoldable:
                if not self._fallback:
                    raise
                self._to_reference()
        batch = _ON_REFERENCE.get(name)
        if batch is not None:
            return batch(self._ref, *args, **kwargs)
        return getattr(self._ref, name)(*args, **kwargs)

    return run


class CompiledTree(OooAggregator):
    """FiBA or the classic augmented B-tree in compiled storage; same results as the Python
    reference (:class:`FiBA`, :class:`ClassicBTree`) for every built-in numeric aggregation.

    ``fallback``: move to the reference for a time or value the kernels cannot hold (else
    raise)."""

    def __init__(
        self, algorithm: str, agg: AggregationProtocol, min_arity: int = 4, fallback: bool = True
    ) -> None:
        super().__init__(agg)
        family, self._code = kernel_for(self.agg)
        self.name = algorithm
        self.min_arity = min_arity
        self.max_arity = 2 * min_arity
        self._state = BTreeState(family, min_arity, classic=algorithm == "bclassic")
        self._times = _Times()
        self._ints = True  # only int values so far: int results stay ints
        self._scratch = (np.zeros(1, np.int8), np.zeros((3, 1)), np.zeros((1, 1)))
        self._largest = 0.0  # the largest magnitude of an int value so far
        self._values = 0  # int values inserted so far (a bound on what a sum may add up)
        self._fallback = fallback
        self._ref: Any = None  # the reference, once the window moved there

    @property
    def backend(self) -> str:
        """``"compiled"``, or ``"python"`` once a time or value moved the window there."""
        return "compiled" if self._ref is None else "python"

    def __repr__(self) -> str:
        return f"CompiledTree({self.name!r}, {self.agg!r}, len={len(self)})"

    def __len__(self) -> int:
        return self._state.size() if self._ref is None else len(self._ref)

    def _to_reference(self) -> None:
        """Move the window to the reference: every entry's partial, read from the kernel."""

        ref = record("ooo", self.name)(self.agg, min_arity=self.min_arity)
        st = self._state
        pairs = []
        for t, (x, k) in zip(self._stored_times(), self._entries()):
            p = reference_partial(self.agg, st.v[:, x * st.ma + k], self._ints)
            pairs.append((self._times.decode(t), p))
        if pairs:
            ref._check_time(pairs[0][0])
            ref._bulk_insert(pairs)
        self._ref = ref

    def _values_in(self, values: np.ndarray, ints: bool) -> None:
        """Note values going in; raise NotHoldable when int sums could pass 2^53."""
        if ints and len(values):
            largest = max(self._largest, float(np.nanmax(np.abs(values), initial=0.0)))
            if not sums_exact(self.agg, largest, self._values + len(values)):
                raise NotHoldable(
                    f"compiled storage holds {name_of(self.agg)} as float64, and a sum of these "
                    "ints could pass 2^53; use backend='auto' or 'python'"
                )
            self._largest = largest
            self._values += len(values)
        self._ints = self._ints and ints

    # -- batches: one kernel call each ------------------------------------------------------

    def _run(self, op: int, a: np.ndarray, b: Any = None, c: Any = None) -> np.ndarray:
        n = len(a)
        out = np.zeros((n, 1))
        b = np.zeros(n) if b is None else b
        c = np.zeros(n) if c is None else c
        self._state.run(self._code, np.full(n, op, np.int8), a, b, c, out)
        return out[:, 0]

    def _one(self, op: int, a: float = 0.0, b: float = 0.0, c: float = 0.0) -> float:
        """One operation through preallocated arrays (a single call costs microseconds)."""
        ops, xs, out = self._scratch
        ops[0] = op
        xs[0, 0], xs[1, 0], xs[2, 0] = a, b, c
        self._state.run(self._code, ops, xs[0], xs[1], xs[2], out)
        return float(out[0, 0])

    def _time(self, t: Any) -> float:
        """``t`` checked (as every aggregator checks it, and that compiled storage holds it)
        and encoded."""
        return self._times.encode(super()._check_time(t))

    def _check_time(self, t: Any) -> Any:
        self._time(t)  # for the checks of OooAggregator.bulk_insert
        return t

    def _encode(self, ts: Any) -> tuple[np.ndarray, bool]:
        """Times checked and as float64, and whether all of them are ints."""
        if isinstance(ts, np.ndarray) and ts.dtype.kind in "iuf" and self._times.epoch is None:
            if len(ts):
                self._time(ts[0].item())  # compares with the window's times
            return self._times.encode_array(ts), ts.dtype.kind in "iu"
        ts = list(ts)
        out = np.array([self._time(t) for t in ts], np.float64)
        return out, all(isinstance(t, numbers.Integral) for t in ts)

    @_or_reference
    def insert_many(self, times: Any, values: Any) -> None:
        """Insert ``values[k]`` at ``times[k]`` for every k, in order (times in any order,
        repeats combine as in :meth:`insert`), in one compiled loop. Every time and value is
        checked before anything changes."""
        ts, int_times = self._encode(times)
        vals, args, ints = to_arrays(self.agg, values)
        if len(vals) != len(ts):
            raise ValueError(f"insert_many needs as many values ({len(vals)}) as times ({len(ts)})")
        self._values_in(vals, ints)
        self._times.note(int_times)
        self._run(INSERT, ts, vals, args)

    @_or_reference
    def evict_many(self, times: Any) -> np.ndarray:
        """Evict the entry at each of ``times`` in order; a bool array: which were present."""
        ts = self._encode(times)[0]
        if not len(self):
            return np.zeros(len(ts), bool)
        return self._run(EVICT, ts) > 0

    @_or_reference
    def query_many(self, t_from: Any, t_to: Any) -> np.ndarray:
        """The lowered aggregate of each range ``[t_from[k], t_to[k]]`` as float64, empty
        ranges as :func:`windowagg.sliding_aggregate` reports empty windows (0 for sum, count,
        mincount, maxcount; NaN otherwise)."""
        lo, hi = self._encode(t_from)[0], self._encode(t_to)[0]
        if len(lo) != len(hi):
            raise ValueError(f"query_many needs as many t_from ({len(lo)}) as t_to ({len(hi)})")
        return self._run(RANGE, lo, hi)

    # -- the interface of OooAggregator ------------------------------------------------------

    @_or_reference
    def insert(self, t: Any, x: Any) -> None:
        ft = self._time(t)
        vals, args, ints = to_arrays(self.agg, (x,))
        self._values_in(vals, ints)
        self._times.note(isinstance(t, numbers.Integral))
        self._one(INSERT, ft, vals[0], args[0])

    @_or_reference
    def evict(self, t: Any) -> bool:
        return len(self) > 0 and self._one(EVICT, self._time(t)) > 0

    @_or_reference
    def bulk_evict(self, t: Any) -> int:
        return int(self._one(BULK_EVICT, self._time(t))) if len(self) else 0

    @_or_reference
    def bulk_insert(self, items: Any) -> None:
        super().bulk_insert(items)

    def _bulk_value(self, x: Any) -> Any:
        return x  # checked with the whole batch by insert_many

    def _bulk_insert(self, pairs: list[tuple[Any, Any]]) -> None:
        self.insert_many([t for t, _ in pairs], [x for _, x in pairs])

    @_or_reference
    def query(self, t_from: Any = None, t_to: Any = None) -> Any:
        if t_from is None and t_to is None:
            v = self._one(ALL)
        elif not len(self):
            v = math.nan
        else:
            lo = -math.inf if t_from is None else self._time(t_from)
            hi = math.inf if t_to is None else self._time(t_to)
            v = self._one(RANGE, lo, hi) if lo <= hi else math.nan
        return python_result(self.agg, float(v), self._ints)

    @_or_reference
    def query_partial(self, t_from: Any = None, t_to: Any = None) -> Any:
        raise TypeError(
            "query_partial() needs the Python reference's partials; build the aggregator "
            "with backend='python'"
        )

    @_or_reference
    def oldest(self) -> Any:
        st = self._state
        return self._times.decode(float(st.t[st.meta[LF], 0])) if len(self) else None

    @_or_reference
    def youngest(self) -> Any:
        st = self._state
        rf = st.meta[RF]
        return self._times.decode(float(st.t[rf, st.ne[rf] - 1])) if len(self) else None

    def _entries(self) -> list[tuple[int, int]]:
        """``(node, slot)`` of every entry in time order (an in-order walk of the nodes)."""
        st = self._state
        out: list[tuple[int, int]] = []

        def walk(x: int) -> None:
            n = int(st.ne[x])
            for k in range(n + 1):
                if not st.fl[x] & LEAF:
                    walk(int(st.c[x, k]))
                if k < n:
                    out.append((x, k))

        walk(int(st.meta[ROOT]))
        return out

    def _stored_times(self) -> np.ndarray:
        """The stored times in order."""
        st = self._state
        return np.array([st.t[x, k] for x, k in self._entries()], np.float64)

    @_or_reference
    def items(self) -> list[tuple[Any, Any]]:
        """``(t, lowered aggregate of the entry at t)`` in time order: compiled storage keeps
        no Python partials (for tests and debugging; O(n log n))."""
        ts = self._stored_times()
        vals = self._run(RANGE, ts, ts) if len(ts) else ts
        return [
            (self._times.decode(t), python_result(self.agg, float(v), self._ints))
            for t, v in zip(ts, vals)
        ]

    @_or_reference
    def check_invariants(self) -> None:
        """Order, arity, parent pointers, equal leaf depths, spine flags, fingers, counts of
        the nodes that store up-aggregates, and query() (position-aware aggregates) equal to
        the range query over everything (up-aggregates)."""
        st = self._state
        root = int(st.meta[ROOT])
        classic = st.meta[CLASSIC] == 1
        depths: set[int] = set()

        def walk(
            x: int, parent: int, depth: int, lo: float, hi: float, left: bool, right: bool
        ) -> int:
            n = int(st.ne[x])
            ts = st.t[x, :n]
            assert int(st.p[x]) == parent, "parent pointer"
            assert (np.diff(ts) > 0).all(), "times inside a node increase"
            assert n == 0 or (lo < ts[0] and ts[-1] < hi), "order against the separators"
            if x != root:
                assert self.min_arity <= n + 1 <= self.max_arity, f"arity {n + 1}"
                assert bool(st.fl[x] & 1) == left and bool(st.fl[x] & 2) == right, "spines"
            else:
                assert n + 1 <= self.max_arity and not st.fl[x] & 3
            count = n
            if st.fl[x] & LEAF:
                depths.add(depth)
            else:
                assert n >= 1, "an inner node has two children or more"
                for k in range(n + 1):
                    count += walk(
                        int(st.c[x, k]),
                        x,
                        depth + 1,
                        float(ts[k - 1]) if k else lo,
                        float(ts[k]) if k < n else hi,
                        (x == root or left) and k == 0,
                        (x == root or right) and k == n,
                    )
            if classic or (x != root and not left and not right):
                assert int(st.k[x]) == count, "count of an up-aggregate"
            return count

        total = walk(root, -1, 0, -math.inf, math.inf, False, False)
        assert len(depths) <= 1, "all leaves at the same depth"
        assert total == len(self), "len() counts every entry"
        lf = rf = root
        while not st.fl[lf] & LEAF:
            lf = int(st.c[lf, 0])
        while not st.fl[rf] & LEAF:
            rf = int(st.c[rf, st.ne[rf]])
        assert (int(st.meta[LF]), int(st.meta[RF])) == (lf, rf), "fingers"
        if total:
            whole = self._one(ALL)
            ranged = self._one(RANGE, -math.inf, math.inf)
            assert math.isclose(whole, ranged, rel_tol=1e-9, abs_tol=1e-9) or (
                math.isnan(whole) and math.isnan(ranged)
            ), f"query() {whole} but the range over everything {ranged}"
