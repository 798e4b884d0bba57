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

A first call compiles (or loads) the kernel for its arguments' types under an exclusive lock
on a file beside numba's cache (:func:`cache_location`), one file per kernel, and only then
runs it. Processes that share the cache (Spark's Python workers, an executor's, a test run's)
and need the same kernel at once compile it once: the others wait and load what the first
saved, instead of each compiling it again (a B-tree family takes 15 s to 40 s of a core).
Where the lock file cannot be made (the cache folder is read-only, or the platform has no
``fcntl``), the kernel compiles without it, as numba does. The table engine's own kernels
(``jit.kernel`` alone, a second or less each) are numba's dispatchers, unwrapped.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numba

try:
    import fcntl
except ImportError:  # no fcntl (Windows): kernels compile without the lock, as numba does
    fcntl = None  # type: ignore[assignment]  # the module or None

#: seconds a first call runs before the message
AFTER = 1.0
log = logging.getLogger("windowagg")

if TYPE_CHECKING:
    from collections.abc import Callable

    from .jit import Dispatcher


def cache_location() -> str:
    """Where numba caches the kernels: ``NUMBA_CACHE_DIR``, else beside this package (numba
    falls back to a per-user directory when that is not writable)."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(Path(__file__).resolve().parent / "__pycache__")


@contextmanager
def compiling(name: str) -> Iterator[None]:
    """Held while one process compiles the kernel ``name``: an exclusive lock on
    ``<cache>/<name>.lock`` (none where the file cannot be made)."""
    try:
        folder = cache_location()
        os.makedirs(folder, exist_ok=True)
        f = open(os.path.join(folder, f"{name}.lock"), "a") if fcntl else None  # noqa: SIM115
    except OSError:
        f = None
    if f is None:
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


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

    def compile(self, sig: tuple) -> object:
        return self.dispatcher.compile(sig)

    def _compile_locked(self, args: tuple) -> None:
        """Compile the version for ``args`` under the kernel's lock (or load it, where another
        process saved it meanwhile); an argument numba cannot type is left to the call."""
        try:
            types = tuple(numba.typeof(a) for a in args)
        except ValueError:
            return
        fn = self.dispatcher.py_func
        with compiling(f"{fn.__module__}.{fn.__qualname__}"):
            self.dispatcher.compile(types)

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
            self._compile_locked(args)
            return self.dispatcher(*args)
        finally:
            timer.cancel()
            took = time.perf_counter() - start
            if took >= AFTER:
                log.warning("windowagg: %s ready after %.1f s", self.what, took)
