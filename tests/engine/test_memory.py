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
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=clean | env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_thresholds_raised_once_per_process() -> None:
    assert _calls() == [(-3, 512 << 20), (-1, 512 << 20)]
    assert _calls(WINDOWAGG_KEEP_MIB="64") == [(-3, 64 << 20), (-1, 64 << 20)]


def test_left_alone_when_the_user_says_so() -> None:
    assert _calls(WINDOWAGG_KEEP_MIB="0") == []
    assert _calls(MALLOC_TRIM_THRESHOLD_="1000000") == []
