"""Where a call's time goes: the engine's stages (key codes, the time column, the sort, the
bounds, the sweeps, the output...) each timed while :func:`profile` runs a call, and whether
each ran on several threads (:func:`windowagg.engine.parallel.on_cores` notes it). Off, a stage
costs one test of a global; ``windowagg bench local --threads`` prints the profile at one
thread and at the largest count.

A stage's time is its own: a stage inside another is counted once, in the inner one; what no
stage covers (the front end's Python, planning) is reported as ``other``. Only the thread that
runs :func:`profile` times stages: work it hands to other threads counts in its stage that
waits for them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

__all__ = ["Stage", "profile", "stage"]

F = TypeVar("F", bound=Callable[..., Any])


class Stage(NamedTuple):
    """One stage of a profiled call: its own wall time, and whether any of it ran on
    several threads."""

    seconds: float
    parallel: bool


class _Run:
    def __init__(self) -> None:
        self.thread = threading.get_ident()  # the thread whose stages are timed
        self.stages: dict[str, list] = {}  # name -> [seconds, parallel]
        self.stack: list[list] = []  # [name, start, time of inner stages]


_RUN: _Run | None = None


class stage:
    """Times the code inside it as stage ``name`` while :func:`profile` runs (a context
    manager, or a decorator of a function)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        run = _RUN
        if run is not None and run.thread == threading.get_ident():
            run.stack.append([self.name, time.perf_counter(), 0.0])

    def __exit__(self, *exc: object) -> None:
        run = _RUN
        if run is None or not run.stack or run.thread != threading.get_ident():
            return
        name, start, inner = run.stack.pop()
        took = time.perf_counter() - start
        entry = run.stages.setdefault(name, [0.0, False])
        entry[0] += took - inner
        if run.stack:
            run.stack[-1][2] += took

    def __call__(self, fn: F) -> F:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if _RUN is None:
                return fn(*args, **kwargs)
            with self:
                return fn(*args, **kwargs)

        timed.__name__, timed.__doc__ = fn.__name__, fn.__doc__
        timed.__qualname__, timed.__wrapped__ = fn.__qualname__, fn  # type: ignore[attr-defined]
        return timed  # type: ignore[return-value]


def on_threads() -> None:
    """Note that the current stage ran work on several threads."""
    run = _RUN
    if run is not None and run.stack and run.thread == threading.get_ident():
        run.stages.setdefault(run.stack[-1][0], [0.0, False])[1] = True


def profile(call: Callable[[], Any]) -> tuple[Any, dict[str, Stage]]:
    """``call()``'s result and its stages, in the order they first ran, with ``other``: the
    time no stage covers."""
    global _RUN
    run = _Run()
    _RUN = run
    start = time.perf_counter()
    try:
        result = call()
    finally:
        total = time.perf_counter() - start
        _RUN = None
    stages = {name: Stage(s, p) for name, (s, p) in run.stages.items()}
    stages["other"] = Stage(total - sum(s.seconds for s in stages.values()), False)
    return result, stages
