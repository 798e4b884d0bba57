"""The decorators every kernel uses, and the options :mod:`.specialize` needs to rebuild a kernel
for another binding of its free names.

Kernels never allocate: their arrays come from Python. That lets them run without numba's
reference counting (``_nrt=False``), which matters: with it, every helper taking arrays pays
atomic increments and decrements that numba's pruning misses in branchy code, and a DABA step
slows down five times. Numba has no public switch for this: ``_nrt`` is an option of ``njit``
that its documentation does not list, the one private name windowagg uses (the tested numba
range is pinned in ``pyproject.toml``). Small functions are inlined at numba level (``inline``):
LLVM does not inline across numba's separately compiled functions, which costs DABA half its
speed. Larger pieces called from several places (the B-tree's split, merge, repair) are
``helper``s, compiled once per specialization and called, so that they are not copied into every
caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from numba import njit


class Dispatcher(Protocol):
    """A compiled function (a numba dispatcher) as windowagg calls it."""

    @property
    def py_func(self) -> Callable[..., object]: ...  # the Python function it compiles

    @property
    def signatures(self) -> list[tuple]: ...  # the argument types compiled or loaded so far

    def __call__(self, *args: Any) -> Any: ...  # numba types the arguments at the call

    def compile(self, sig: tuple) -> object: ...  # compiles (or loads) one version


def _decorator(**options: Any):
    def decorate(fn):
        dispatcher = njit(**options)(fn)
        dispatcher.windowagg_options = options  # what specialize() rebuilds it with
        return dispatcher

    return decorate


#: an entry point called from Python, cached on disk; it releases the GIL, so that threads
#: can run it on different keys at once (:func:`windowagg.engine.parallel.on_cores`)
kernel = _decorator(cache=True, _nrt=False, nogil=True)
#: inlined into its callers at numba level
inline = _decorator(inline="always", _nrt=False)
#: a kernel called only from other kernels (the B-tree's helpers): without the wrappers that
#: make a function callable from Python, it compiles faster (FiBA: about 1.5 s per family)
helper = _decorator(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
