"""Compiled storage for the FIFO aggregators: state allocation and growth in numpy, whole
loops in :func:`windowagg.kernels.driver.fifo_run` (numba, imported lazily).

Used by :func:`windowagg.fifo` (``backend="auto"`` or ``"compiled"`` with a built-in numeric
aggregation) and by :func:`windowagg.sliding_aggregate`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..aggregations import is_missing
from ..errors import EmptyWindowError

COUNT, TIME, INSERT, EVICT, QUERY, REBUILD = 0, 1, 2, 3, 4, 5  # the driver's modes

#: algorithms whose state is a ring of partials indexed by absolute stream position
_RINGS = {
    "recalc": ("buf",),
    "soe": ("buf",),
    "two_stacks": ("buf", "aux"),
    "two_stacks_lite": ("buf",),
    "daba": ("buf", "aux"),
    "daba_lite": ("buf",),
    "flatfit": ("buf", "iaux"),
}
SHARING = frozenset({"recalc", "flatfat", "bint", "flatfit", "slickdeque"})


def kernel_name(algorithm: str, family: str) -> str:
    """The compiled variant: SlickDeque is Inv for invertible families, Non-Inv otherwise."""
    from ..kernels.families import INVERTIBLE

    if algorithm == "slickdeque":
        return "slick_inv" if family in INVERTIBLE else "slick_noninv"
    return algorithm


def capacity_for(n: int) -> int:
    return 1 << max(1, int(n) - 1).bit_length() if n > 1 else 2


class FifoState:
    """The arrays of one compiled FIFO aggregator."""

    def __init__(self, algorithm: str, family: str, cap: int, ranges: tuple[int, ...] = ()):
        from ..kernels.families import FAMILIES, IDENTITIES

        self.name = kernel_name(algorithm, family)
        self.family = family
        self.fns = FAMILIES[family]
        self.width = self.fns[-1]
        self.identity = np.array(IDENTITIES[family])
        self.ranges = tuple(ranges)
        self.ptr = np.zeros(8, np.int64)
        self.tmp = self._filled(8)
        self._allocate(cap)

    def _filled(self, cols: int) -> np.ndarray:
        return np.repeat(self.identity[:, None], cols, axis=1)

    def _allocate(self, cap: int) -> None:
        name, w = self.name, self.width
        self.cap = cap
        self.buf = np.zeros((w, cap)) if name not in ("flatfat", "bint") else np.zeros((w, 1))
        self.aux = np.zeros((w, 1))
        self.iaux = np.zeros((1, 1), np.int64)
        if name in ("two_stacks", "daba"):
            self.aux = np.zeros((w, cap))
        elif name in ("flatfat", "bint"):
            self.aux = self._filled(2 * cap)
        elif name == "flatfit":
            self.iaux = np.zeros((2, cap), np.int64)
        elif name == "slick_noninv":
            self.iaux = np.zeros((1, cap), np.int64)
        elif name == "slick_inv":
            self.aux = self._filled(len(self.ranges) + 1)
            self.iaux = np.array([list(self.ranges) or [0]], np.int64)
            self.ptr[2] = len(self.ranges)

    def __len__(self) -> int:
        return int(self.ptr[1] - self.ptr[0])

    def ensure(self, n: int) -> None:
        """Make room for a window of ``n`` elements, keeping the contents."""
        if n <= self.cap:
            return
        old = {"buf": self.buf, "aux": self.aux, "iaux": self.iaux}
        oldcap = self.cap
        newcap = capacity_for(max(n, 2 * oldcap))
        f, e = int(self.ptr[0]), int(self.ptr[1])
        self._allocate(newcap)
        if self.name == "slick_noninv":
            lo, hi = int(self.ptr[2]), int(self.ptr[3])
            idx = np.arange(lo, hi)
            self.buf[:, idx & (newcap - 1)] = old["buf"][:, idx & (oldcap - 1)]
            self.iaux[:, idx & (newcap - 1)] = old["iaux"][:, idx & (oldcap - 1)]
        elif self.name == "slick_inv":
            idx = np.arange(f, e)
            self.buf[:, idx & (newcap - 1)] = old["buf"][:, idx & (oldcap - 1)]
            self.aux, self.iaux = old["aux"], old["iaux"]
        elif self.name in _RINGS:
            idx = np.arange(f, e)
            for attr in _RINGS[self.name]:
                getattr(self, attr)[:, idx & (newcap - 1)] = old[attr][:, idx & (oldcap - 1)]
        else:  # flatfat, bint: move the window's leaf partials, then rebuild the rest
            idx = np.arange(f, e)
            leaf_old = (oldcap if self.name == "flatfat" else 0) + (idx & (oldcap - 1))
            leaf_new = (newcap if self.name == "flatfat" else 0) + (idx & (newcap - 1))
            self.aux[:, leaf_new] = old["aux"][:, leaf_old]
            self.run(REBUILD)

    def run(self, mode: int, values=None, args=None, times=None, size=0, tsize=0.0, sizes=None,
            out=None, code: int = 0) -> None:  # fmt: skip
        """Call the compiled driver (see :mod:`windowagg.kernels.driver`); with ``sizes``, the
        window-sharing variant."""
        from ..kernels.specialize import specialize

        mod = specialize("driver", self.name, self.family)
        empty = np.empty(0)
        values = empty if values is None else values
        args = empty if args is None else args
        times = empty if times is None else times
        tbuf = np.empty(self.cap if mode == TIME else 1)
        out = np.empty((1, 1)) if out is None else out
        state = (self.buf, self.aux, self.iaux, self.ptr, self.tmp, tbuf)
        if sizes is None:
            mod.fifo_run(code, *state, mode, values, args, times, int(size), float(tsize), out)
        else:
            k = len(sizes)
            work = (np.empty(k, np.int64), np.empty(k))
            mod.fifo_run_sizes(code, *state, mode, values, args, times, sizes, *work, out)


# --- the object behind fifo(..., backend="compiled") -----------------------------------------

_COUNTS = frozenset({"count", "mincount", "maxcount"})
_INT_RESULTS = frozenset({"sum", "min", "max", "first", "last"})  # int in, int out
_EMPTY_ZERO = frozenset({"sum", "count", "mincount", "maxcount"})


def compiled_family(agg: Any) -> tuple[str, int] | None:
    """(family, code) when ``agg`` is a built-in with a compiled kernel, else None."""
    from ..aggregations import Aggregation
    from ..kernels.families import COMPILED

    if not isinstance(agg, Aggregation) or agg.name not in COMPILED:
        return None
    return COMPILED[agg.name]


def to_arrays(agg: Any, xs: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Values (and args, for argmin/argmax pairs) as float64 arrays, checked like ``lift``:
    a value that is not a number raises the same TypeError as the Python reference."""
    name = agg.name
    pairs = name in ("argmin", "argmax")
    if isinstance(xs, np.ndarray) and not pairs and xs.dtype.kind in "fiub":
        values = xs.astype(np.float64, copy=False)
        ints = xs.dtype.kind in "iub"
        args = np.zeros(len(values))
    else:
        items = list(xs)
        for x in items:  # lift's own checks, so the errors are the same
            if (pairs and not is_missing(x)) or not is_missing(x):
                agg.lift(x)
        if pairs:
            args = np.array([np.nan if is_missing(x) else float(x[0]) for x in items], np.float64)
            values = np.array([np.nan if is_missing(x) else _f(x[1]) for x in items], np.float64)
            ints = all(isinstance(x, tuple) and isinstance(x[0], int) for x in items)
        else:
            values = np.array([_f(x) for x in items], np.float64)
            args = np.zeros(len(values))
            ints = all(isinstance(x, int | np.integer) or is_missing(x) for x in items)
    if name == "geomean":
        bad = values <= 0
        if bad.any():
            agg.lift(float(values[np.argmax(bad)]))  # raises geomean's ValueError
    return values, args, ints


def python_result(name: str, v: float, ints: bool) -> Any:
    """A kernel's lowered float as the Python reference returns it: None for an empty
    window (0 for the counting aggregations), an int where only ints went in."""
    if math.isnan(v):
        return 0 if name in _EMPTY_ZERO else None
    if name in _COUNTS or (ints and name in _INT_RESULTS and v.is_integer()):
        return int(v)
    if ints and name in ("argmin", "argmax") and v.is_integer():
        return int(v)
    return v


def _f(x: Any) -> float:
    return math.nan if is_missing(x) else float(x)


class CompiledFifo:
    """A FIFO aggregator whose state lives in compiled storage (see :class:`FifoState`);
    same interface and results as the Python reference, plus ``insert_many``/``evict_many``
    that stay in compiled code for a whole batch."""

    def __init__(self, algorithm: str, agg: Any, ranges: Any = None) -> None:
        from .slickdeque import _ranges

        family, self._code = compiled_family(agg)  # type: ignore[misc]
        self.agg = agg
        self.name = algorithm
        self.ranges = _ranges(ranges) if algorithm == "slickdeque" else ()
        self.shares_windows = algorithm in SHARING
        self._state = FifoState(algorithm, family, 16, self.ranges)
        self._ints = True  # only integers seen so far: integer results stay integers
        self._out = np.empty((1, max(1, len(self.ranges))))

    @property
    def variant(self) -> str:
        return "inv" if self._state.name == "slick_inv" else "noninv"

    def __len__(self) -> int:
        return len(self._state)

    def __repr__(self) -> str:
        return f"CompiledFifo({self.name!r}, {self.agg!r}, len={len(self)})"

    def insert(self, x: Any) -> None:
        self.insert_many([x])

    def insert_many(self, xs: Any) -> None:
        """Append many raw inputs, oldest first, in one compiled loop."""
        values, args, ints = to_arrays(self.agg, xs)
        self._ints = self._ints and ints
        self._state.ensure(len(self) + len(values))
        self._state.run(INSERT, values=values, args=args, code=self._code)

    def evict(self) -> None:
        self.evict_many(1)

    def evict_many(self, k: int) -> None:
        """Remove the ``k`` oldest elements in one compiled loop."""
        if k > len(self):
            raise EmptyWindowError(
                f"evict_many({k}) on a {self.name} window of {len(self)} elements"
            )
        self._state.run(EVICT, size=k, code=self._code)

    def query(self, last: int | None = None) -> Any:
        if last is None:
            self._state.run(QUERY, out=self._out, code=self._code)
        else:
            r = self._check_last(last)
            self._state.run(QUERY, sizes=np.array([float(r)]), out=self._out, code=self._code)
        return self._result(float(self._out[0, 0]))

    def query_ranges(self) -> dict[int, Any]:
        """Answers for every range of ``ranges`` (SlickDeque's multi-query form), in one call."""
        sizes = np.array([float(r) for r in self.ranges])
        out = np.empty((1, len(sizes)))
        self._state.run(QUERY, sizes=sizes, out=out, code=self._code)
        return {r: self._result(float(v)) for r, v in zip(self.ranges, out[0])}

    def query_partial(self, last: int | None = None) -> Any:
        raise TypeError(
            "query_partial() needs the Python reference's partials; build the aggregator "
            "with backend='python'"
        )

    def _check_last(self, last: Any) -> int:
        from .base import check_last
        from .slickdeque import check_range

        r = check_last(self.name, self.shares_windows, last)
        return check_range(self.ranges, r) if self.name == "slickdeque" else r

    def _result(self, v: float) -> Any:
        return python_result(self.agg.name, v, self._ints)

    def check_invariants(self) -> None:
        st = self._state
        assert 0 <= len(st) <= st.cap, "window fits the capacity"
        assert st.cap & (st.cap - 1) == 0, "capacity is a power of two"
