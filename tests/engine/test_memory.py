"""A call leaves the process as it found it (malloc, Arrow's default pool); malloc keeps freed
memory for the next call only where the user opts in (``keep_freed_memory``,
``WINDOWAGG_KEEP_MIB``). The engine's large arrays come from its own reserve of Arrow buffers,
taken again once no array refers to them, and let go after the last call."""

from __future__ import annotations

import ast
import os
import platform
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pytest

import windowagg
import windowagg.engine.memory as memory
import windowagg.engine.windows.table as window_table
from windowagg.engine.columns import moved, take, totals
from windowagg.engine.sweep import FrameBounds
from windowagg.frames import frame
from windowagg.tables import window_aggregate

SCRIPT = """
import ctypes, sys
calls = []
real = ctypes.CDLL("libc.so.6")
class Libc:
    def mallopt(self, param, value):
        calls.append((param, value))
        return real.mallopt(param, value)
import numpy as np
import windowagg
import windowagg
import windowagg.engine.memory as memory
from windowagg.tables import window_aggregate
memory._libc = Libc
if sys.argv[1:]:
    print(windowagg.keep_freed_memory(int(sys.argv[1])))
t = {"t": np.arange(10.0), "v": np.ones(10)}
for _ in range(2):
    window_aggregate(t, time="t", windows="tumbling:5", aggs={"s": ("sum", "v")})
print(calls)
"""

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")


def _calls(*args: str, **env: str) -> list:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "WINDOWAGG_"))}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        env=clean | env,
        capture_output=True,
        text=True,
        check=True,
    )
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_malloc_left_alone_by_default() -> None:
    assert _calls() == []
    assert _calls(WINDOWAGG_KEEP_MIB="0") == []


@glibc
def test_thresholds_raised_once_where_the_user_asks() -> None:
    assert _calls(WINDOWAGG_KEEP_MIB="64") == [(-3, 64 << 20), (-1, 64 << 20)]
    assert _calls("128") == [(-3, 128 << 20), (-1, 128 << 20)]


def test_a_malloc_setting_of_the_users_own_wins() -> None:
    assert _calls(WINDOWAGG_KEEP_MIB="64", MALLOC_TRIM_THRESHOLD_="1000000") == []
    assert _calls("64", MALLOC_TRIM_THRESHOLD_="1000000") == []


IMPORT = """
import os, sys
import pyarrow as pa
seen = {"fork": [], "pool": []}
real_fork = os.register_at_fork
def spy(**k):  # a handler windowagg's own code registers (not a library it imports)
    caller = sys._getframe(1).f_code.co_filename
    if os.sep + "windowagg" + os.sep in caller:
        seen["fork"].append(caller)
    return real_fork(**k)
os.register_at_fork = spy
mine = pa.system_memory_pool() if pa.default_memory_pool().backend_name != "system" else None
if mine is not None:
    pa.set_memory_pool(mine)
before = pa.default_memory_pool().backend_name
pa.set_memory_pool = lambda pool: seen["pool"].append(pool)
import numpy as np
import windowagg
from windowagg.tables import rolling_aggregate, window_aggregate
t = {"t": np.arange(300_000.0), "v": np.ones(300_000)}
for keep in (False, True):
    if keep:
        windowagg.keep_freed_memory(64)
    window_aggregate(t, time="t", windows="sliding:5/1", aggs={"s": ("sum", "v")})
    rolling_aggregate(t, time="t", aggs={"s": ("sum", "v", "rows:3")})
print(seen["fork"], seen["pool"], before == pa.default_memory_pool().backend_name)
"""


def test_import_and_calls_leave_the_process_as_they_found_it() -> None:
    """No fork handler registered at import, and Arrow's default pool (the user's own here)
    never set, neither by a call nor where the user asked to keep freed memory."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "WINDOWAGG_"))}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT], env=clean, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["[]", "[]", "True"]


@pytest.mark.parametrize("kept", [False, True])
def test_the_reserve_takes_from_the_pool_the_user_asked_for(monkeypatch, kept) -> None:
    reserve = memory.Reserve()
    monkeypatch.setattr(memory, "_reserve", reserve)
    monkeypatch.setattr(memory, "_kept", kept)
    default = pa.default_memory_pool().backend_name
    t = {"t": np.arange(300_000.0), "v": np.ones(300_000)}
    window_aggregate(t, time="t", windows="sliding:5/1", aggs={"s": ("sum", "v")})
    assert reserve.buffers and pa.default_memory_pool().backend_name == default
    pool = pa.system_memory_pool() if kept else pa.default_memory_pool()
    before = pool.bytes_allocated()
    reserve.release()
    assert pool.bytes_allocated() < before  # the reserve's buffers were that pool's


def test_a_forked_child_starts_an_empty_reserve(monkeypatch) -> None:
    reserve = memory.Reserve()
    monkeypatch.setattr(memory, "_reserve", reserve)
    held = [memory.empty(memory.LARGE // 4) for _ in range(2)]
    del held
    assert len(reserve.buffers) == 2  # both free: the parent would take one again
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first allocation finds the parent's reserve, and empties it
        again = memory.empty(memory.LARGE // 4)
        os.write(write, bytes([len(reserve.buffers), _root(again) is reserve.buffers[0]]))
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 2) == bytes([1, 1])
    assert reserve.pid == os.getpid() and len(reserve.buffers) == 2


def _root(a: np.ndarray):
    """What holds ``a``'s memory."""
    while isinstance(a, np.ndarray):
        a = a.base
    return a


def _from_arrow(a: np.ndarray) -> bool:
    """Whether ``a``'s memory is an Arrow buffer's."""
    return isinstance(_root(a), pa.Buffer)


def test_large_arrays_come_from_arrows_pool(monkeypatch) -> None:
    # a reserve of its own: the process's may hold a free buffer of an earlier test's call
    monkeypatch.setattr(memory, "_reserve", memory.Reserve())
    pool = pa.default_memory_pool()
    before = pool.bytes_allocated()
    big = memory.empty((2, memory.LARGE // 16), np.int64)
    assert pool.bytes_allocated() - before >= big.nbytes and _from_arrow(big)
    big[:] = 7  # writable, its own memory
    assert big.shape == (2, memory.LARGE // 16) and (big == 7).all()
    assert (memory.zeros(memory.LARGE // 8) == 0).all()
    assert not _from_arrow(memory.empty(10)) and not _from_arrow(memory.empty(10**6, object))


def test_the_engines_bounds_and_totals_are_arrows_memory() -> None:
    n = memory.LARGE // 4
    times = np.sort(np.random.default_rng(1).uniform(0, n, n))  # about one row per unit
    seg = np.array([0, n // 3, n], np.int64)
    windows = window_table.window_bounds(windowagg.Sliding(10, 1), times, seg)
    assert len(windows.lo) * 8 >= memory.LARGE
    assert all(map(_from_arrow, [windows.start, windows.lo, windows.hi, windows.ends()]))
    sessions = window_table.window_bounds(windowagg.Session(0.2), times, seg)
    assert all(map(_from_arrow, [sessions.start, sessions.end, sessions.lo, sessions.hi]))
    frames = FrameBounds(times, seg, frame("rows:100"))
    assert all(map(_from_arrow, frames.bounds()))
    counts = totals(np.arange(n + 1), *frames.bounds())
    assert _from_arrow(counts) and (counts == frames.bounds()[1] - frames.bounds()[0]).all()


def test_a_buffer_is_taken_again_once_no_array_refers_to_it(monkeypatch) -> None:
    reserve = memory.Reserve()
    monkeypatch.setattr(memory, "_reserve", reserve)
    a = memory.empty(memory.LARGE // 4)
    first = id(_root(a))  # not a reference: one would keep the buffer in use
    view = a[10:]  # a view keeps the buffer in use
    del a
    b = memory.empty(memory.LARGE // 4)
    assert id(_root(b)) != first and len(reserve.buffers) == 2
    del view
    c = memory.empty(memory.LARGE // 4 - 1)  # free again, and large enough
    assert id(_root(c)) == first and len(reserve.buffers) == 2
    assert _root(memory.empty(memory.LARGE)) not in (
        _root(b),
        _root(c),
    )  # twice the size: a new one


def test_the_reserve_holds_at_most_its_bytes_and_lets_go_after_the_last_call(monkeypatch) -> None:
    reserve = memory.Reserve()
    monkeypatch.setattr(memory, "_reserve", reserve)
    monkeypatch.setattr(memory, "RESERVE_BYTES", 3 * memory.LARGE)
    held = [memory.empty(memory.LARGE // 8) for _ in range(5)]
    assert len(reserve.buffers) == 3  # the others are the arrays' own
    del held
    assert _root(memory.empty(memory.LARGE // 8)).size == memory.LARGE and len(reserve.buffers) == 3
    monkeypatch.setattr(memory, "RELEASE_AFTER", 0.05)
    kept = memory.zeros(memory.LARGE // 8)
    t = {"t": np.arange(10.0), "v": np.ones(10)}
    window_aggregate(t, time="t", windows="tumbling:5", aggs={"s": ("sum", "v")})
    deadline = time.monotonic() + 10
    while reserve.buffers and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reserve.buffers == [] and (kept == 0).all()  # arrays in use keep their memory


def _whole(x) -> pa.Array:
    return (x if isinstance(x, pa.ChunkedArray) else pa.chunked_array([x])).combine_chunks()


@pytest.mark.parametrize(
    "array",
    [
        pa.array(np.arange(300_000, dtype=np.int32)),
        pa.array(np.arange(300_000) * 1.5),
        pa.array(np.arange(300_000), pa.timestamp("us")),
        pa.array([None, *range(299_999)], pa.int64()),
        pa.array([str(i) for i in range(300_000)]),
        pa.chunked_array([np.arange(150_000.0), np.arange(150_000.0)]),
    ],
)
def test_take_and_moved_equal_arrows_take(array) -> None:
    order = np.random.default_rng(3).permutation(len(array))
    few = np.r_[0, order[:49]]  # fewer rows than the cores pay for: gathered by NumPy
    assert _whole(take(array, few)).equals(_whole(array).take(few))
    assert take(array, few).type == array.type
    taken = take(array, order)
    assert taken.type == array.type and _whole(taken).equals(_whole(array).take(order))
    labels = pa.array([f"r{i}" for i in range(len(array))])  # taken, not scattered
    back, labels_back = moved([taken, take(labels, order)], order)
    assert _whole(back).equals(_whole(array)) and labels_back.equals(labels)
    some = np.random.default_rng(4).permutation(50)  # few rows: gathered at the inverse
    head = _whole(array).slice(0, 50)
    assert [_whole(c) for c in moved([take(head, some), take(labels[:50], some)], some)] == [
        head,
        labels[:50],
    ]


def test_release_memory_lets_the_reserve_go_at_once(monkeypatch) -> None:
    reserve = memory.Reserve()
    monkeypatch.setattr(memory, "_reserve", reserve)
    in_use = memory.zeros(memory.LARGE // 8)
    del in_use
    assert len(reserve.buffers) == 1
    windowagg.release_memory()
    assert reserve.buffers == []
