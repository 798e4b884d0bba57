"""Kernels are ordinary modules specialised by binding their free names: each (algorithm,
family) variant is its own compiled function with its own cache entry, and nothing is written
outside numba's cache or added to sys.path."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from windowagg.kernels import driver as driver_module
from windowagg.kernels import notice, specialize
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
    from windowagg.storage.fifo_state import FifoState

    state = FifoState("daba", "sum", 16)
    out = np.empty((4, 1))
    x = np.arange(4.0)
    state.run(COUNT, values=x, args=x, size=2, out=out)
    assert out[:, 0].tolist() == [0.0, 1.0, 3.0, 5.0]
    assert sys.path == before
    assert not [m for m in sys.modules if m.startswith("wa_")]


def _double(x: float) -> float:
    return 2 * x


class _SlowFirstCall:
    """A stand-in dispatcher: nothing compiled until asked, and compiling takes ``seconds``."""

    py_func = staticmethod(_double)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.signatures: list[tuple] = []

    def compile(self, sig: tuple) -> None:
        time.sleep(self.seconds)
        self.signatures.append(sig)

    def __call__(self, x: float) -> float:
        assert self.signatures, "called before it was compiled"
        return _double(x)


def test_a_first_call_that_compiles_for_long_says_so_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notice, "AFTER", 0.05)
    slow = notice.Noticed(_SlowFirstCall(0.3), "btree kernels for sum")
    with caplog.at_level(logging.WARNING, logger="windowagg"):
        assert slow(1.5) == 3.0
        assert slow(2.0) == 4.0  # compiled: no timer, no message
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith("windowagg: compiling btree kernels for sum, once")
    assert "windowagg warmup" in messages[0]
    assert messages[1].startswith("windowagg: btree kernels for sum ready after 0.")


def test_a_quick_first_call_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    quick = notice.Noticed(_SlowFirstCall(0.0), "driver kernels for daba.sum")
    with caplog.at_level(logging.WARNING, logger="windowagg"):
        assert quick(1.0) == 2.0
    assert caplog.records == []


def test_every_entry_point_called_from_python_is_noticed() -> None:
    """The B-tree's, the FIFO driver's and the slice merge's entry points, which compile for up
    to tens of seconds, carry the notice; the functions they call stay numba's own."""
    tree = specialize.btree("sum")
    assert isinstance(tree.btree_run, notice.Noticed)
    assert isinstance(specialize.driver("daba", "sum").fifo_run, notice.Noticed)
    assert isinstance(specialize.merge("sum"), notice.Noticed)
    inner = tree.btree_run.py_func.__globals__
    assert not any(isinstance(v, notice.Noticed) for v in inner.values())


def test_processes_needing_a_kernel_at_once_compile_it_once(tmp_path) -> None:
    """While one process holds a kernel's compile lock (it compiles the kernel), another
    process's first call of the kernel waits, then loads what the first saved in numba's cache:
    it compiles nothing itself. Without the lock it would compile while the first waits."""
    (tmp_path / "tiny.py").write_text(
        "from numba import njit\n"
        "from windowagg.kernels.notice import Noticed\n"
        "plus_one = Noticed(njit(cache=True)(lambda x: x + 1), 'tiny')\n"
    )
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    ready = tmp_path / "ready"
    head = """
        import time
        from pathlib import Path
        import numba
        from windowagg.kernels import notice
        from tiny import plus_one
        fn = plus_one.py_func
    """
    holder = (
        head
        + f"""
        with notice.compiling(f"{{fn.__module__}}.{{fn.__qualname__}}"):
            Path({str(ready)!r}).touch()
            time.sleep(3)  # the other process asks meanwhile
            plus_one.compile((numba.typeof(41),))
    """
    )
    asker = (
        head
        + """
        assert plus_one(41) == 42
        stats = plus_one.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
    """
    )

    def start(code: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first = start(holder)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    second = start(asker)
    out, err = second.communicate(timeout=120)
    assert first.wait(timeout=120) == 0, first.communicate()
    assert second.returncode == 0, err
    assert out.split() == ["1", "0"]  # one version loaded from the cache, none compiled
