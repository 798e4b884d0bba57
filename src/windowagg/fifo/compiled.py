"""The object behind ``fifo(..., backend="auto" | "compiled")`` for an aggregation with a
kernel: the interface of :class:`FifoAggregator` over compiled storage
(:class:`windowagg.storage.fifo_state.FifoState`), plus ``insert_many``/``evict_many``, which
stay in compiled code for a whole batch.

A value the kernels cannot hold exactly (:class:`windowagg.storage.NotHoldable`: a string for
``first``, a ``Decimal``, an int beyond 2^53, int sums that could pass 2^53) moves the window to
the Python reference on ``backend="auto"``, replaying the raw inputs still in the window, so
that the default backend answers what the reference answers; ``backend="compiled"`` refuses it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..aggregations import AggregationProtocol, name_of
from ..algorithm import record
from ..errors import EmptyWindowError
from ..kernels.layout import EVICT, INSERT, QUERY
from ..storage import NotHoldable, kernel_for, python_result, sums_exact, to_arrays
from ..storage.fifo_state import FifoState
from .base import check_last
from .slickdeque import _ranges, check_range


class _RawWindow:
    """The raw inputs in the window, oldest first, kept as the batches they came in: what a
    switch to the reference replays. O(1) per batch."""

    def __init__(self) -> None:
        self.batches: deque[Any] = deque()
        self.skip = 0  # inputs of the oldest batch already evicted

    def push(self, xs: Any) -> None:
        self.batches.append(np.array(xs) if isinstance(xs, np.ndarray) else xs)

    def pop(self, k: int) -> None:
        while k:
            left = len(self.batches[0]) - self.skip
            if k < left:
                self.skip += k
                return
            k -= left
            self.batches.popleft()
            self.skip = 0

    def items(self) -> list[Any]:
        out: list[Any] = []
        for i, b in enumerate(self.batches):
            part = b[self.skip :] if i == 0 else b
            out.extend(part.tolist() if isinstance(part, np.ndarray) else part)
        return out


class CompiledFifo:
    """A FIFO aggregator whose state lives in compiled storage; same interface and results as
    the Python reference, plus ``insert_many``/``evict_many`` in one compiled loop each.

    ``fallback``: move to the reference for a value the kernels cannot hold (else raise)."""

    def __init__(
        self, algorithm: str, agg: AggregationProtocol, ranges: Any = None, fallback: bool = True
    ) -> None:
        family, self._code = kernel_for(agg)
        self.agg = agg
        self.name = algorithm
        self.ranges = _ranges(ranges) if algorithm == "slickdeque" else ()
        self.shares_windows = record("fifo", algorithm).shares_windows
        self._state = FifoState(algorithm, family, 16, self.ranges)
        self._ints = True  # only integers seen so far: integer results stay integers
        self._largest = 0.0  # the largest magnitude of an int so far (exact sums)
        self._out = np.empty((1, max(1, len(self.ranges))))
        self._raw = _RawWindow() if fallback else None
        self._ref: Any = None  # the reference, once the window moved there

    @property
    def backend(self) -> str:
        """``"compiled"``, or ``"python"`` once a value moved the window to the reference."""
        return "compiled" if self._ref is None else "python"

    @property
    def variant(self) -> str:
        return "inv" if self._state.name == "slick_inv" else "noninv"

    def __len__(self) -> int:
        return len(self._state) if self._ref is None else len(self._ref)

    def __repr__(self) -> str:
        return f"CompiledFifo({self.name!r}, {self.agg!r}, len={len(self)})"

    def insert(self, x: Any) -> None:
        self.insert_many([x])

    def insert_many(self, xs: Any) -> None:
        """Append many raw inputs, oldest first, in one compiled loop."""
        if self._ref is not None:
            self._ref.insert_many(xs)
            return
        if not isinstance(xs, tuple | np.ndarray):
            xs = list(xs)  # a copy: the raw window keeps it
        try:
            values, args, ints = to_arrays(self.agg, xs)
            if ints and len(values):
                largest = max(self._largest, float(np.nanmax(np.abs(values), initial=0.0)))
                if not sums_exact(self.agg, largest, len(self) + len(values)):
                    raise NotHoldable(
                        f"compiled storage holds {name_of(self.agg)} as float64, and a sum of "
                        "these ints could pass 2^53; use backend='auto' or 'python'"
                    )
                self._largest = largest
        except NotHoldable:
            if self._raw is None:
                raise
            self._to_reference().insert_many(xs)
            return
        self._ints = self._ints and ints
        self._state.ensure(len(self) + len(values))
        self._state.run(INSERT, values=values, args=args, code=self._code)
        if self._raw is not None:
            self._raw.push(xs)

    @property
    def _ranged(self) -> bool:
        """Whether the algorithm's record takes the window sizes it answers (``ranges``)."""
        return "ranges" in record("fifo", self.name).options

    def _to_reference(self) -> Any:
        options = {"ranges": list(self.ranges)} if self._ranged else {}
        ref = record("fifo", self.name)(self.agg, **options)
        assert self._raw is not None  # the raw items are kept until the switch
        ref.insert_many(self._raw.items())
        self._ref, self._raw = ref, None
        return ref

    def evict(self) -> None:
        if not len(self):
            raise EmptyWindowError(f"evict() on an empty {self.name} window")
        self.evict_many(1)

    def evict_many(self, k: int) -> None:
        """Remove the ``k`` oldest elements in one compiled loop."""
        if self._ref is not None:
            self._ref.evict_many(k)
            return
        if k > len(self):
            raise EmptyWindowError(f"evict_many({k}) on a {self.name} window of {len(self)}")
        self._state.run(EVICT, size=k, code=self._code)
        if self._raw is not None:
            self._raw.pop(k)

    def query(self, last: int | None = None) -> Any:
        if self._ref is not None:
            return self._ref.query(last)
        if last is None:
            self._state.run(QUERY, out=self._out, code=self._code)
        else:
            r = self._check_last(last)
            self._state.run(QUERY, sizes=np.array([float(r)]), out=self._out, code=self._code)
        return self._result(float(self._out[0, 0]))

    def query_ranges(self) -> dict[int, Any]:
        """Answers for every range of ``ranges`` (SlickDeque's multi-query form), in one call."""
        if self._ref is not None:
            return self._ref.query_ranges()
        sizes = np.array([float(r) for r in self.ranges])
        out = np.empty((1, len(sizes)))
        self._state.run(QUERY, sizes=sizes, out=out, code=self._code)
        return {r: self._result(float(v)) for r, v in zip(self.ranges, out[0])}

    def query_partial(self, last: int | None = None) -> Any:
        if self._ref is not None:
            return self._ref.query_partial(last)
        raise TypeError(
            "query_partial() needs the Python reference's partials; build the aggregator "
            "with backend='python'"
        )

    def _check_last(self, last: Any) -> int:
        r = check_last(self.name, self.shares_windows, last)
        return check_range(self.ranges, r) if self._ranged else r

    def _result(self, v: float) -> Any:
        return python_result(self.agg, v, self._ints)

    def check_invariants(self) -> None:
        if self._ref is not None:
            self._ref.check_invariants()
            return
        st = self._state
        assert 0 <= len(st) <= st.cap, "window fits the capacity"
        assert st.cap & (st.cap - 1) == 0, "capacity is a power of two"
