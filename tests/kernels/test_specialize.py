"""Kernels are ordinary modules specialised by binding their free names: each (algorithm,
family) variant is its own compiled function with its own cache entry, and nothing is written
outside numba's cache or added to sys.path."""

from __future__ import annotations

import sys

import numpy as np

from windowagg.kernels import driver as driver_module
from windowagg.kernels import specialize
from windowagg.kernels.layout import COUNT


def test_variants_bind_their_own_family_and_algorithm() -> None:
    s = specialize.driver("two_stacks_lite", "sum")
    m = specialize.driver("two_stacks_lite", "select")
    assert s.fifo_run is not m.fifo_run
    assert s.fifo_run.py_func.__code__ is driver_module.fifo_run.py_func.__code__
    assert s.fifo_run.py_func.__globals__["combine"].py_func.__name__ == "sum_combine"
    assert m.fifo_run.py_func.__globals__["push"].py_func.__name__ == "two_stacks_lite_push"
    assert "two_stacks_lite.sum" in s.fifo_run.py_func.__qualname__
    assert specialize.source_hash() in s.fifo_run.py_func.__qualname__
    assert specialize.driver("two_stacks_lite", "sum") is s  # built once per process


def test_the_module_itself_is_never_compiled_unbound() -> None:
    assert driver_module.push is None and driver_module.fifo_run.overloads == {}


def test_no_path_edits_and_no_generated_modules() -> None:
    before = list(sys.path)
    from windowagg.compiled.fifo_state import FifoState

    state = FifoState("daba", "sum", 16)
    out = np.empty((4, 1))
    x = np.arange(4.0)
    state.run(COUNT, values=x, args=x, size=2, out=out)
    assert out[:, 0].tolist() == [0.0, 1.0, 3.0, 5.0]
    assert sys.path == before
    assert not [m for m in sys.modules if m.startswith("wa_")]
