"""Windows answered from their slices' partial states (Scotty, Section 5: a window is a run of
whole slices; Spark SQL computes each slice's state, :mod:`windowagg.engine.windows.partials`).

The free names ``combine, identity, lower`` (a family, :mod:`.families`) are bound per family
by :func:`.specialize.merge`.
"""

from .jit import kernel

# bound per specialization (see the module docstring)
combine = identity = lower = None


@kernel
def merge_ranges(code, states, lo, hi, acc, out):
    """``out[i]``: the states ``states[:, lo[i]:hi[i]]`` (a window's slices) combined in order,
    then lowered (``acc``: a one-column work buffer of the family's width)."""
    for i in range(lo.shape[0]):
        identity(acc, 0)
        for j in range(lo[i], hi[i]):
            combine(acc, 0, acc, 0, states, j)
        out[i] = lower(code, acc, 0)
