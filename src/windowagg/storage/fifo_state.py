"""The state arrays of a compiled FIFO aggregator: allocation and growth in numpy, whole loops
in :func:`windowagg.kernels.driver.fifo_run` (numba, imported lazily).

Used by :class:`windowagg.fifo.compiled.CompiledFifo` and :func:`windowagg.sliding_aggregate`.
"""

from __future__ import annotations

import numpy as np

from ..kernels.families import FAMILIES
from ..kernels.fifo import slick_inv, slick_noninv
from ..kernels.layout import REBUILD, TIME
from ..kernels.specialize import FIFO, driver


def kernel_name(algorithm: str, family: str) -> str:
    """The compiled variant: SlickDeque is Inv for invertible families, Non-Inv otherwise."""

    if algorithm == "slickdeque":
        return "slick_inv" if FAMILIES[family].invertible else "slick_noninv"
    return algorithm


def capacity_for(n: int) -> int:
    return 1 << max(1, int(n) - 1).bit_length() if n > 1 else 2


class FifoState:
    """The arrays of one compiled FIFO aggregator."""

    def __init__(self, algorithm: str, family: str, cap: int, ranges: tuple[int, ...] = ()):
        self.name = kernel_name(algorithm, family)
        self.storage = FIFO[self.name].STORAGE
        self.family = family
        self.width = FAMILIES[family].width
        self.identity = FAMILIES[family].identity_partial
        self.ranges = tuple(ranges)
        self.ptr = np.zeros(8, np.int64)
        self.tmp = self._filled(8)
        self._allocate(cap)

    def _filled(self, cols: int) -> np.ndarray:
        return np.repeat(self.identity[:, None], cols, axis=1)

    def _allocate(self, cap: int) -> None:
        """The arrays for ``cap`` positions, as the algorithm's ``STORAGE`` says."""
        store, w = self.storage, self.width
        self.cap = cap
        self.buf = np.zeros((w, cap if "buf" in store.rings else 1))
        self.aux = np.zeros((w, cap if "aux" in store.rings else 1))
        self.iaux = np.zeros((store.iaux_rows, cap if "iaux" in store.rings else 1), np.int64)
        if store.tree:
            self.aux = self._filled(2 * cap)
        if store.ranges:
            self.aux = self._filled(len(self.ranges) + 1)
            self.iaux = np.array([list(self.ranges) or [0]], np.int64)
            self.ptr[slick_inv.AT_K] = len(self.ranges)

    def __len__(self) -> int:
        return int(self.ptr[1] - self.ptr[0])

    def ensure(self, n: int) -> None:
        """Make room for a window of ``n`` elements, keeping the contents."""
        if n <= self.cap:
            return
        old: dict[str, np.ndarray] = {"buf": self.buf, "aux": self.aux, "iaux": self.iaux}
        oldcap = self.cap
        newcap = capacity_for(max(n, 2 * oldcap))
        f, e = int(self.ptr[0]), int(self.ptr[1])
        self._allocate(newcap)
        store = self.storage
        if store.deque:  # the deque's nodes only
            f, e = int(self.ptr[slick_noninv.AT_HEAD]), int(self.ptr[slick_noninv.AT_TAIL])
        idx = np.arange(f, e)
        for attr in store.rings:
            getattr(self, attr)[:, idx & (newcap - 1)] = old[attr][:, idx & (oldcap - 1)]
        if store.ranges:  # the ranges' products do not depend on the capacity
            self.aux, self.iaux = old["aux"], old["iaux"]
        if store.tree:  # move the window's leaf partials, then rebuild the rest
            flat = store.tree == "flat"
            leaf_old = (oldcap if flat else 0) + (idx & (oldcap - 1))
            leaf_new = (newcap if flat else 0) + (idx & (newcap - 1))
            self.aux[:, leaf_new] = old["aux"][:, leaf_old]
            self.run(REBUILD)

    def run(
        self,
        mode: int,
        values=None,
        args=None,
        times=None,
        size=0,
        tsize=0.0,
        sizes=None,
        out=None,
        code: int = 0,
    ) -> None:
        """Call the compiled driver (see :mod:`windowagg.kernels.driver`); with ``sizes``, the
        window-sharing variant."""

        mod = driver(self.name, self.family)
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

    def frames(
        self,
        code: int,
        values,
        args,
        times,
        seg,
        lo_off,
        hi_off,
        lo_unb,
        hi_unb,
        given,
        restart,
        lo_row,
        hi_row,
        pos,
        out,
    ) -> None:
        """Per-row frames (:func:`windowagg.kernels.driver.fifo_frames`); ``pos`` says where
        to start and where the call stopped."""

        mod = driver(self.name, self.family)
        state = (self.buf, self.aux, self.iaux, self.ptr, self.tmp)
        mod.fifo_frames(
            code,
            *state,
            self.cap,
            values,
            args,
            times,
            seg,
            lo_off,
            hi_off,
            lo_unb,
            hi_unb,
            given,
            restart,
            lo_row,
            hi_row,
            pos,
            out,
        )
