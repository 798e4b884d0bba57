"""The decorators every kernel uses.

Kernels never allocate: their arrays come from Python. That lets them run without numba's
reference counting (``_nrt=False``), which matters: with it, every helper taking arrays pays
atomic increments and decrements that numba's pruning misses in branchy code, and a DABA step
slows down five times. Everything a driver calls is inlined at numba level (``inline``): LLVM
does not inline across numba's separately compiled functions, which costs DABA half its
speed; the drivers call each primitive from one place only, to keep compile times low.
"""

from numba import njit

kernel = njit(cache=True, _nrt=False)
inline = njit(cache=True, inline="always", _nrt=False)
