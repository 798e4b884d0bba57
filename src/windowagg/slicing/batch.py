"""``WindowOperator.process_batch``: many tuples at once, the same result as a loop of
``process``.

For the built-in sum, count, mean, min and max over tumbling and sliding time windows the
batch goes to the compiled fast path (:mod:`.vector`) in one call; everything else runs the
loop. Complexity (fast path): O(n log n) numeric work per batch, independent of the number of
windows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt


def to_floats(xs: Iterable[object]) -> np.ndarray:
    """Values as floats, missing (None, NaN) as NaN; a clear error for anything else."""
    try:
        return np.array([np.nan if x is None else x for x in xs], dtype=float)
    except (TypeError, ValueError):
        for x in xs:
            if x is not None and not isinstance(x, int | float | np.number):
                raise TypeError(f"the aggregation needs numbers, got {x!r}") from None
        raise


def process_batch(op: Any, times: npt.ArrayLike, values: npt.ArrayLike) -> None:
    t, v = _arrays(op.clock.encode_array(times), values)
    if not len(t):
        return
    if not op._seq:
        op._build()
    if op._vector is None or v.dtype.kind not in "iufb":
        for tt, x in zip(t.tolist(), v.tolist()):
            op._process(tt, x)
        return
    op._drain()
    keep = t >= op.wm - op.allowed_lateness
    op.dropped += int(len(t) - keep.sum())
    t, v = t[keep], v[keep].astype(float)
    op._late.extend(t[t < op.wm].tolist())
    op._seq += len(t)
    op._vector.add(t, v)


def _arrays(times: npt.ArrayLike, values: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(times)
    v = np.asarray(values)
    if t.ndim != 1 or v.ndim != 1 or len(t) != len(v):
        raise ValueError(
            f"times and values must be 1-d and of one length, got shapes {t.shape} and {v.shape}"
        )
    if t.dtype.kind not in "iuf":
        raise TypeError(f"times must be numbers or datetimes, got dtype {t.dtype}")
    if t.dtype.kind == "f" and not np.isfinite(t).all():
        raise ValueError("times must be finite (no NaN or infinity)")
    return t, v
