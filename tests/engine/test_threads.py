"""The engine's threads, a user's to set: ``set_threads``/``get_threads`` and
``WINDOWAGG_THREADS`` (read at import); the default is the cores this process may use (its CPU
affinity), not the machine's count; the work is split into as many parts as threads, and the
answers are the same on one thread and on several."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

import windowagg
from windowagg.engine import parallel


@pytest.fixture
def threads():
    before = windowagg.get_threads()
    yield
    windowagg.set_threads(before)


def run(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != parallel.ENV} | env
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=300
    )


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "two", None])
def test_a_bad_count_is_refused(bad, threads) -> None:
    with pytest.raises((TypeError, ValueError), match=r"set_threads\(n\) must be a whole number"):
        windowagg.set_threads(bad)


def test_set_and_get(threads) -> None:
    windowagg.set_threads(3)
    assert windowagg.get_threads() == 3
    seg = np.array([0, 100_000, 200_000, 300_000, 400_000], np.int64)
    assert len(parallel.parts(seg)) == 3 and len(parallel.chunks(400_000)) == 3
    windowagg.set_threads(1)
    assert windowagg.get_threads() == 1
    assert len(parallel.parts(seg)) == 1 and len(parallel.chunks(400_000)) == 1


def test_the_environment_variable_at_import() -> None:
    code = "import windowagg; print(windowagg.get_threads())"
    assert run(code, WINDOWAGG_THREADS="5").stdout.strip() == "5"
    bad = run(code, WINDOWAGG_THREADS="lots")
    assert bad.returncode != 0 and "WINDOWAGG_THREADS must be a whole number" in bad.stderr


def test_the_default_is_the_cores_this_process_may_use() -> None:
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "import windowagg; print(windowagg.get_threads(), os.cpu_count())"
    )
    threads, machine = run(code).stdout.split()
    assert threads == "1"
    assert windowagg.get_threads() == parallel.available() <= int(machine)


def test_one_thread_and_several_give_the_same_answers(threads) -> None:
    rng = np.random.default_rng(3)
    n = 300_000
    table = pa.table(
        {
            "k": rng.integers(0, 50, n),
            "t": rng.integers(0, 10**6, n),
            "x": rng.normal(size=n),
            "i": rng.integers(-100, 100, n),
        }
    )
    aggs = {
        "s": ("sum", "x", "range:100"),
        "m": ("max", "i", "rows:7"),
        "q": ("median", "x", "range:50"),
    }
    answers = []
    for count in (1, 3):
        windowagg.set_threads(count)
        rolled = windowagg.rolling_aggregate(table, time="t", key="k", aggs=aggs)
        windows = windowagg.window_aggregate(
            table, time="t", key="k", windows="sliding:1000/100", aggs={"s": ("sum", "i")}
        )
        answers.append((rolled, windows))
    assert answers[0][0].equals(answers[1][0]) and answers[0][1].equals(answers[1][1])


def test_a_piece_runs_its_own_work_on_its_thread(threads) -> None:
    """Pieces go to a thread each, the first on the calling thread; within a piece the
    engine's threads are 1, and pieces it hands out run there, one after the other (none
    waits for a thread of the pool that runs it)."""
    import threading

    windowagg.set_threads(3)
    here = threading.current_thread().name

    def piece(p: int) -> tuple[str, int, list[str]]:
        inner = parallel.on_cores(lambda _: threading.current_thread().name, [0, 1, 2])
        return threading.current_thread().name, parallel.get_threads(), inner

    ran = parallel.on_cores(piece, [0, 1, 2])
    assert ran[0][0] == here and all(name.startswith("windowagg") for name, _, _ in ran[1:])
    assert all(count == 1 and inner == [name] * 3 for name, count, inner in ran)
    assert parallel.get_threads() == 3  # the calling thread's own again


def test_pieces_claimed_as_threads_finish_go_to_the_free_thread(threads) -> None:
    """:func:`~windowagg.engine.parallel.claimed` runs every piece once, its results in the
    pieces' order, each thread claiming the next piece as it finishes one: where one piece
    holds its thread (a core busy with other work), the other thread runs every other piece
    meanwhile; within a piece, the pieces it hands out run on its thread, one after another."""
    import threading
    import time

    windowagg.set_threads(2)
    ran: list[tuple[int, str]] = []

    def piece(p: int) -> int:
        time.sleep(0.3 if p == 0 else 0.002)  # piece 0 holds its thread
        ran.append((p, threading.current_thread().name))
        return p * p

    assert parallel.claimed(piece, list(range(10))) == [p * p for p in range(10)]
    assert sorted(p for p, _ in ran) == list(range(10))  # each piece once
    slow = dict(ran)[0]
    assert [p for p, name in ran if name == slow] == [0]  # the other thread took the rest
    assert len({name for _, name in ran}) == 2

    def nested(p: int) -> list[str]:
        return parallel.claimed(lambda _: threading.current_thread().name, [0, 1, 2])

    for names in parallel.claimed(nested, [0, 1]):
        assert len(set(names)) == 1  # on the piece's own thread
    windowagg.set_threads(1)
    assert (
        parallel.claimed(lambda p: threading.current_thread().name, [0, 1])
        == [threading.current_thread().name] * 2
    )
