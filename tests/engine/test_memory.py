"""The engine keeps freed memory for its next call (glibc's thresholds raised once), unless
the user says otherwise."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

SCRIPT = """
import ctypes, sys
calls = []
real = ctypes.CDLL("libc.so.6")
class Libc:
    def mallopt(self, param, value):
        calls.append((param, value))
        return real.mallopt(param, value)
import numpy as np
import windowagg.engine.memory as memory
from windowagg.tables import window_aggregate
memory._libc = Libc
t = {"t": np.arange(10.0), "v": np.ones(10)}
for _ in range(2):
    window_aggregate(t, time="t", windows="tumbling:5", aggs={"s": ("sum", "v")})
print(calls)
"""


def _calls(**env) -> list:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "WINDOWAGG_"))}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=clean | env, capture_output=True, text=True, check=True
    )
    return eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_thresholds_raised_once_per_process() -> None:
    assert _calls() == [(-3, 512 << 20), (-1, 512 << 20)]
    assert _calls(WINDOWAGG_KEEP_MIB="64") == [(-3, 64 << 20), (-1, 64 << 20)]


def test_left_alone_when_the_user_says_so() -> None:
    assert _calls(WINDOWAGG_KEEP_MIB="0") == []
    assert _calls(MALLOC_TRIM_THRESHOLD_="1000000") == []


def _huge_pages_now() -> bool:
    from numpy._core.multiarray import _set_madvise_hugepage

    now = _set_madvise_hugepage(True)
    _set_madvise_hugepage(now)
    return bool(now)


@pytest.mark.parametrize("user_set", [False, True])
def test_huge_page_advice_off_during_a_call_and_restored(monkeypatch, user_set) -> None:
    seen = _during_calls(monkeypatch, kept=True, huge=None if user_set else "unset")
    before = _huge_pages_now()
    for calls in seen.values():
        assert calls and {huge for huge, _ in calls} == {before if user_set else False}
    assert _huge_pages_now() == before


@pytest.mark.parametrize("kept", [True, False])
def test_arrow_allocates_from_glibc_while_it_keeps_freed_memory(monkeypatch, kept) -> None:
    import pyarrow as pa

    before = pa.default_memory_pool().backend_name
    seen = _during_calls(monkeypatch, kept=kept, huge="unset")
    for calls in seen.values():
        assert calls and {pool for _, pool in calls} == {"system" if kept else before}
    assert pa.default_memory_pool().backend_name == before


def _during_calls(monkeypatch, kept: bool, huge: str | None) -> dict[str, list]:
    """NumPy's huge-page advice and Arrow's pool seen inside the engine, during a
    ``window_aggregate`` and a ``rolling_aggregate`` call."""
    import numpy as np
    import pyarrow as pa

    import windowagg.engine.memory as memory
    import windowagg.engine.rolling_table as rolling_table
    import windowagg.engine.window_table as window_table
    from windowagg.tables import rolling_aggregate, window_aggregate

    monkeypatch.setattr(memory, "_kept", kept)
    if huge is None:
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    else:
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    seen: dict[str, list] = {"window_table": [], "compute": []}
    for module, name in [(window_table, "window_table"), (rolling_table, "compute")]:
        real = getattr(module, name)

        def spy(*a, real=real, **k):
            seen[real.__name__].append((_huge_pages_now(), pa.default_memory_pool().backend_name))
            return real(*a, **k)

        monkeypatch.setattr(module, name, spy)
    monkeypatch.setattr("windowagg.tables.compute", rolling_table.compute)
    t = {"t": np.arange(10.0), "v": np.ones(10)}
    window_aggregate(t, time="t", windows="tumbling:5", aggs={"s": ("sum", "v")})
    rolling_aggregate(t, time="t", aggs={"s": ("sum", "v", "rows:1")})
    return seen
