"""Running the engine's parallel paths on small tables in tests: every stage that splits its
work (chunks of rows, parts of keys, a hot key's pieces) does so from one row on, on the
given number of threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from windowagg.engine import parallel

#: a long key's runs and a block of given frames in tests (the engine's: 2**17 rows)
LONG = 200


@contextmanager
def few_rows_on_threads(threads: int) -> Iterator[None]:
    """Within the block: the engine on ``threads`` threads, its work split from one row on
    (``threads=1``: one piece, as a call on one core), keys of more than :data:`LONG` rows
    cut into runs of that many on any number of threads."""
    rows, long, before = parallel.PARALLEL_ROWS, parallel.LONG, parallel.get_threads()
    parallel.PARALLEL_ROWS, parallel.LONG = 1, LONG
    parallel.set_threads(threads)
    try:
        yield
    finally:
        parallel.PARALLEL_ROWS, parallel.LONG = rows, long
        parallel.set_threads(before)


def alone_and_in_ranges(
    monkeypatch: Any,
    owner: Any,
    name: str,
    run: Callable[[], Any],
    keys: int,
    per_thread: int = 1,
    keys_of: Callable[[tuple], int] | None = None,
) -> tuple[Any, Any]:
    """``run()`` on one thread, then on three, with ``owner.name`` watched: a method called
    once per range of asked keys, with the queries, their places and the keys' runs, or any
    function called once per range, whose call's keys ``keys_of(args)`` counts. Up to
    ``per_thread`` calls on one thread, all on the calling thread; three on three (up to
    ``per_thread`` for each, where the keys are as many), the calling thread among those that
    ran them; over ``keys`` asked keys in all each time. Each watched
    call first waits a few milliseconds, so that every thread claims ranges while the others
    run theirs. Returns both answers."""
    ranges: list[tuple[str, int]] = []
    real = getattr(owner, name)

    def spy(*args: Any, **named: Any) -> Any:
        width = args[3].lo.shape[1] if keys_of is None else keys_of(args)  # self, queries, ...
        ranges.append((threading.current_thread().name, width))
        time.sleep(0.01)
        return real(*args, **named)

    monkeypatch.setattr(owner, name, spy)
    with few_rows_on_threads(1):
        alone = run()
    here = threading.current_thread().name
    assert 1 <= len(ranges) <= per_thread and {name for name, _ in ranges} == {here}
    assert sum(w for _, w in ranges) == keys
    ranges.clear()
    with few_rows_on_threads(3):
        split = run()
    assert 3 <= len(ranges) <= 3 * per_thread and sum(w for _, w in ranges) == keys
    assert {name for name, _ in ranges} - {here} and here in {name for name, _ in ranges}
    return alone, split
