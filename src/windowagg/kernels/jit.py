"""The decorators every kernel uses.

Kernels never allocate: their arrays come from Python. That lets them run without numba's
reference counting (``_nrt=False``), which matters: with it, every helper taking arrays pays
atomic increments and decrements that numba's pruning misses in branchy code, and a DABA step
slows down five times. Everything a driver calls is inlined at numba level (``inline``): LLVM
does not inline across numba's separately compiled functions, which costs DABA half its
speed; the drivers call each primitive from one place only, to keep compile times low.

``compile_at(dispatcher, args, level)`` compiles (or loads from the cache) a driver at another
LLVM optimisation level than numba's default 3: the B-tree driver at level 1 compiles in a
quarter less time and runs 4% slower. It also has LLVM optimise and emit the driver's helpers
once, inside the driver, rather than once on their own and again in every caller: about 10 s
instead of 16 s per B-tree family, at the same speed.
"""

from contextlib import contextmanager

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
    with global_compiler_lock, _emitted_once(dispatcher.py_func.__qualname__):
        old = config.OPT
        config.OPT = type(old)(level)
        try:
            dispatcher.compile(tuple(typeof(a) for a in args))
        finally:
            config.OPT = old


def _patchable() -> bool:
    """Whether numba has the internals ``_emitted_once`` replaces for a while."""
    from numba.core.codegen import JITCodeLibrary, JITCPUCodegen

    names = ("_finalize_final_module", "_optimize_final_module", "_finalize_dynamic_globals",
             "_verify_declare_only_symbols")  # fmt: skip
    return all(hasattr(JITCodeLibrary, a) for a in names) and hasattr(JITCPUCodegen, "set_env")


@contextmanager
def _emitted_once(driver: str):
    """While ``driver`` compiles, the libraries of its helpers (compiled on the way, while
    numba types the driver's calls) are neither optimised as modules nor turned into machine
    code: numba links their IR into the driver's library, which optimises and emits all of it
    once. Otherwise each helper is optimised and emitted on its own and again inside every
    caller, about half of LLVM's time for the B-tree. Helpers are only ever called from the
    driver (``no_cpython_wrapper``), and they are not cached on their own (the driver's cached
    machine code holds them)."""
    from numba.core.codegen import JITCodeLibrary, JITCPUCodegen

    if not _patchable():
        yield  # another numba than the pinned one: compile the usual way
        return
    finalize = JITCodeLibrary._finalize_final_module
    optimize = JITCodeLibrary._optimize_final_module
    set_env = JITCPUCodegen.set_env
    pending = []  # a helper's environment pointer, set once the driver's code is loaded

    def set_env_later(codegen, name, env):
        if codegen._engine.get_global_value_address(name):
            set_env(codegen, name, env)
        else:
            pending.append((codegen, name, env))

    def ir_only(lib):
        if lib.name == driver:
            return finalize(lib)
        lib._finalize_dynamic_globals()
        lib._verify_declare_only_symbols()
        lib._finalized = True

    def driver_only(lib):
        if lib.name == driver:
            optimize(lib)

    JITCodeLibrary._finalize_final_module = ir_only
    JITCodeLibrary._optimize_final_module = driver_only
    JITCPUCodegen.set_env = set_env_later
    try:
        yield
    finally:
        JITCodeLibrary._finalize_final_module = finalize
        JITCodeLibrary._optimize_final_module = optimize
        JITCPUCodegen.set_env = set_env
        for codegen, name, env in pending:
            if codegen._engine.get_global_value_address(name):
                set_env(codegen, name, env)


#: a kernel called only from other kernels (the B-tree's helpers): without the wrappers that
#: make a function callable from Python, it compiles faster (FiBA: about 1.5 s per family)
helper = njit(cache=False, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
