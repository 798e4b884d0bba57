"""The decorators every kernel uses.

Kernels never allocate: their arrays come from Python. That lets them run without numba's
reference counting (``_nrt=False``), which matters: with it, every helper taking arrays pays
atomic increments and decrements that numba's pruning misses in branchy code, and a DABA step
slows down five times. Everything a driver calls is inlined at numba level (``inline``): LLVM
does not inline across numba's separately compiled functions, which costs DABA half its
speed; the drivers call each primitive from one place only, to keep compile times low.

``compile_at(dispatcher, args, level)`` compiles (or loads from the cache) a driver at another
LLVM optimisation level than numba's default 3: the B-tree driver at level 1 compiles in a
quarter less time (about 19 s instead of 25 s per family) and runs 4% slower.
"""

from numba import njit, typeof
from numba.core import config
from numba.core.compiler_lock import global_compiler_lock

kernel = njit(cache=True, _nrt=False)
inline = njit(cache=True, inline="always", _nrt=False)


def compile_at(dispatcher, args: tuple, level: int) -> None:
    """Compile ``dispatcher`` for ``args`` at LLVM optimisation level ``level`` unless it
    has a compiled version already; numba reads the level from its global configuration, so
    it is set under numba's compiler lock and restored afterwards."""
    if dispatcher.overloads:  # (cheap: ``signatures`` hashes every type)
        return
    with global_compiler_lock:
        old = config.OPT
        config.OPT = type(old)(level)
        try:
            dispatcher.compile(tuple(typeof(a) for a in args))
        finally:
            config.OPT = old


#: a kernel called only from other kernels (the B-tree's helpers): without the wrappers that
#: make a function callable from Python, it compiles faster (FiBA: about 1.5 s per family)
helper = njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
