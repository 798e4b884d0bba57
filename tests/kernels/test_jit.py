"""compile_at: a driver and its helpers, compiled with the helpers emitted once inside the
driver, give the same answers as plain Python; numba is left as it was afterwards, also when
its internals are not the expected ones (then it compiles the usual way)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core.codegen import JITCodeLibrary, JITCPUCodegen

from windowagg.kernels.jit import compile_at, helper


def _driver():
    @helper
    def scaled(a, i, k):
        return a[i] * k

    @helper
    def twice(a, i):  # a helper calling a helper: linked twice before
        return scaled(a, i, 2.0) - a[i] * 0.0

    @njit(_nrt=False)
    def driver(a, out):
        s = 0.0
        for i in range(a.shape[0]):
            out[i] = twice(a, i)
            s += scaled(a, i, 3.0)
        return s

    return driver


def _check(driver) -> None:
    a = np.arange(10, dtype=float) - 3.5
    out = np.empty(10)
    compile_at(driver, (a, out), 1)
    assert len(driver.overloads) == 1
    assert driver(a, out) == sum(3.0 * x for x in a)
    assert out.tolist() == [2.0 * x for x in a]


def test_helpers_emitted_once_inside_the_driver() -> None:
    before = (JITCodeLibrary._finalize_final_module, JITCodeLibrary._optimize_final_module,
              JITCPUCodegen.set_env)  # fmt: skip
    _check(_driver())
    after = (JITCodeLibrary._finalize_final_module, JITCodeLibrary._optimize_final_module,
             JITCPUCodegen.set_env)  # fmt: skip
    assert after == before


def test_other_numba_internals_compile_the_usual_way(monkeypatch) -> None:
    from windowagg.kernels import jit

    assert jit._patchable()  # the pinned numba
    monkeypatch.setattr(jit, "_patchable", lambda: False)
    _check(_driver())
