"""A session setting as it was before a block, whatever the block set (the tests share one
session per process)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def restored(spark, key: str) -> Iterator[None]:
    before = spark.conf.get(key, None)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
