"""Compiled kernels (numba): struct-of-arrays state, module-level ``@njit(cache=True)``
functions, nothing compiled at import. See ``families`` for how aggregations are compiled and
``fifo`` / ``btree`` for the algorithms."""
