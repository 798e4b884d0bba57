"""``process_batch``: many tuples at once (filled in below)."""

from __future__ import annotations

from typing import Any


def process_batch(op: Any, times: Any, values: Any) -> None:
    for t, x in zip(times, values):
        op.process(t, x)
