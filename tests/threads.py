"""Running the engine's parallel paths on small tables in tests: every stage that splits its
work (chunks of rows, parts of keys, a hot key's pieces) does so from one row on, on the
given number of threads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

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
