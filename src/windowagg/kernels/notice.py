"""A message when a kernel's first call in a process takes more than a second: numba is compiling
it (a cache hit loads in a fraction of that), and a user who sees nothing for twenty seconds
reads it as a hang.

Numba says whether a function has been compiled or loaded in this process (its dispatcher's
``signatures``), not whether a call is about to compile; so the first call of each kernel entry
point starts a timer, and if the call is still running after :data:`AFTER` seconds the
``windowagg`` logger says what is compiling and that it happens once (the kernels are cached on
disk; ``windowagg warmup`` compiles all of them ahead). Later calls go straight to the kernel.
The message is a warning of the ``windowagg`` logger, so it shows without any logging set up
and a user silences it the usual way (``logging.getLogger("windowagg").setLevel("ERROR")``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

#: seconds a first call runs before the message
AFTER = 1.0
log = logging.getLogger("windowagg")

if TYPE_CHECKING:
    from collections.abc import Callable

    from .jit import Dispatcher


class Noticed:
    """A kernel entry point (a numba dispatcher) whose first call says so when it compiles for
    longer than :data:`AFTER`; every attribute is the dispatcher's."""

    __slots__ = ("dispatcher", "what")

    def __init__(self, dispatcher: Dispatcher, what: str) -> None:
        self.dispatcher = dispatcher
        self.what = what

    @property
    def py_func(self) -> Callable[..., object]:
        return self.dispatcher.py_func

    @property
    def signatures(self) -> list[tuple]:
        return self.dispatcher.signatures

    def __getattr__(self, name: str) -> object:
        return getattr(self.dispatcher, name)

    def __call__(self, *args: object) -> Any:  # what the kernel returns
        if self.dispatcher.signatures:  # compiled or loaded in this process already
            return self.dispatcher(*args)
        start = time.perf_counter()
        timer = threading.Timer(
            AFTER,
            log.warning,
            (
                "windowagg: compiling %s, once for this machine (cached on disk afterwards; "
                "`windowagg warmup` compiles every kernel ahead)",
                self.what,
            ),
        )
        timer.daemon = True
        timer.start()
        try:
            return self.dispatcher(*args)
        finally:
            timer.cancel()
            took = time.perf_counter() - start
            if took >= AFTER:
                log.warning("windowagg: %s ready after %.1f s", self.what, took)
