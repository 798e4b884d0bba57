"""One compiled variant per (kernel module, algorithm, family), with no generated source.

A kernel module (one per FIFO algorithm in :mod:`.fifo`, :mod:`.driver`, :mod:`.btree`,
:mod:`.merge`) is an ordinary module whose functions call free names: a family's ``lift,
combine, identity, lower, inverse`` (:mod:`.families`) and, in the FIFO driver, an algorithm's
``push, pop, query, query_last, rebuild`` (its module in :mod:`.fifo`). Numba binds a
function's global names at compile time, so :func:`rebuild` rebuilds each compiled function
of a module over a copy of the module's globals in which those names are bound (the same code
object, new globals), and compiles the copies with the decorator options of the originals.
Each copy has its own qualified name (``fifo_run.daba.select.<hash>``), so numba's on-disk
cache keeps one entry per variant beside the module (or under ``NUMBA_CACHE_DIR``); the hash
covers the kernel sources, because numba only watches the file a function is defined in and
not the functions it calls.

Nothing compiles here; numba compiles a variant on its first call, or loads it from its cache.
"""

from __future__ import annotations

import hashlib
import types
from functools import cache
from pathlib import Path

from numba import njit

from . import btree as btree_kernels
from . import driver as driver_kernels
from . import families
from . import merge as merge_kernels
from .fifo import (
    bint,
    daba,
    daba_lite,
    flatfat,
    flatfit,
    recalc,
    slick_inv,
    slick_noninv,
    soe,
    two_stacks,
    two_stacks_lite,
)
from .fifo.state import no_rebuild
from .jit import Dispatcher
from .notice import Noticed

_HERE = Path(__file__).resolve().parent
#: the modules whose code is compiled into the kernels (their hash is part of each variant)
SOURCES = ("btree.py", "driver.py", "families.py", "layout.py", "merge.py", "fifo/*.py")
#: a compiled FIFO variant's name -> its module
FIFO = {
    m.__name__.rsplit(".", 1)[1]: m
    for m in (
        recalc,
        soe,
        two_stacks,
        two_stacks_lite,
        daba,
        daba_lite,
        flatfat,
        bint,
        flatfit,
        slick_inv,
        slick_noninv,
    )
}


@cache
def source_hash() -> str:
    h = hashlib.sha256()
    for pattern in SOURCES:
        for path in sorted(_HERE.glob(pattern)):
            h.update(str(path.relative_to(_HERE)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:10]


def rebuild(
    module: types.ModuleType, tag: str, bindings: dict[str, Dispatcher]
) -> dict[str, Dispatcher]:
    """Every compiled function defined in ``module``, rebuilt over the module's globals with
    ``bindings`` bound; returns them by name (they see each other as globals). Those called from
    Python (cached entry points) come wrapped in :class:`.notice.Noticed`."""

    scope = dict(vars(module))
    scope.update(bindings)
    out: dict[str, Dispatcher] = {}
    entries: list[str] = []
    for name, obj in vars(module).items():
        options = getattr(obj, "windowagg_options", None)
        if options is None or obj.py_func.__module__ != module.__name__:
            continue
        fn = obj.py_func
        copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)
        copy.__qualname__ = f"{fn.__qualname__}.{tag}.{source_hash()}"
        copy.__module__ = fn.__module__
        copy.__doc__ = fn.__doc__
        out[name] = njit(**options)(copy)
        if options.get("cache"):  # an entry point, called from Python
            entries.append(name)
    scope.update(out)  # the kernels call each other as numba functions
    what = f"{module.__name__.rsplit('.', 1)[1]} kernels for {tag}"
    noticed: dict[str, Dispatcher] = {name: Noticed(out[name], what) for name in entries}
    return out | noticed


@cache
def family(name: str) -> dict[str, Dispatcher]:
    """The functions of a family under the names the kernels call."""

    f = families.FAMILIES[name]
    return {
        "lift": f.lift,
        "combine": f.combine,
        "identity": f.identity,
        "lower": f.lower,
        "inverse": f.inverse,
    }


@cache
def fifo_primitives(algorithm: str, family_name: str) -> dict[str, Dispatcher]:
    """The FIFO variant's primitives over one family, under the names the driver calls; one
    without ``query_last`` or ``rebuild`` (never called for it) binds Recalc's and none."""
    prims = rebuild(FIFO[algorithm], family_name, family(family_name))
    return {
        "push": prims[f"{algorithm}_push"],
        "pop": prims[f"{algorithm}_pop"],
        "query": prims[f"{algorithm}_query"],
        "query_last": prims.get(f"{algorithm}_query_last")
        or rebuild(recalc, family_name, family(family_name))["recalc_query_last"],
        "rebuild": prims.get(f"{algorithm}_rebuild", no_rebuild),
    }


@cache
def driver(algorithm: str, family_name: str) -> types.SimpleNamespace:
    """The FIFO driver (``fifo_run``, ``fifo_run_sizes``) for one algorithm and family."""

    bindings = {**family(family_name), **fifo_primitives(algorithm, family_name)}
    return types.SimpleNamespace(**rebuild(driver_kernels, f"{algorithm}.{family_name}", bindings))


@cache
def btree(family_name: str) -> types.SimpleNamespace:
    """The B-tree kernels (FiBA and the classic tree) for one family."""
    return types.SimpleNamespace(**rebuild(btree_kernels, family_name, family(family_name)))


@cache
def merge(family_name: str) -> Dispatcher:
    """The kernel that merges a window's slices' states (:mod:`.merge`) for one family."""
    return rebuild(merge_kernels, family_name, family(family_name))["merge_ranges"]
