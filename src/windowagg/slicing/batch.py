"""``WindowOperator.process_batch``: many tuples at once, the same result as a loop of
``process``.

The fast path (built-in sum, count, mean, min and max over tumbling and sliding time windows,
with count windows, sessions and context-aware windows absent) is vectorised: the slice of every
tuple comes from the slicer's grids at once, tuples are grouped by slice, each group is reduced
in numpy, and each slice is updated once per batch, whatever the order of the tuples in it (the
aggregations are commutative, so no tuples are kept; Scotty paper, Figure 4). Everything else
runs the loop. Complexity: O(n log n + grids * n) numeric work, O(slices touched) Python work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..aggregations import Aggregation
from .slicer import floors


def _sum(v, idx):
    return np.add.reduceat(np.where(np.isnan(v), 0.0, v), idx).tolist()


def _count(v, idx):
    return np.add.reduceat((~np.isnan(v)).astype(np.int64), idx).tolist()


def _mean(v, idx):
    return list(zip(_sum(v, idx), _count(v, idx)))


def _extreme(ufunc):
    def reduce(v, idx):
        with np.errstate(invalid="ignore"):
            r = ufunc.reduceat(v, idx)
        return [None if x != x else x for x in r.tolist()]  # all missing: the identity

    return reduce


REDUCERS = {"sum": _sum, "count": _count, "mean": _mean, "min": _extreme(np.fmin),
            "max": _extreme(np.fmax)}  # fmt: skip


def _fast(op: Any) -> bool:
    sm = op.slices
    return (
        isinstance(op.agg, Aggregation)
        and op.agg.name in REDUCERS
        and sm is not None
        and not op._counting
        and sm.gap is None
        and not sm.contexts
        and not sm.slicer.others
        and not sm.keep
    )


def _arrays(times: Any, values: Any) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(times)
    v = np.asarray(values)
    if t.ndim != 1 or v.ndim != 1 or len(t) != len(v):
        raise ValueError(f"times and values must be 1-d and of one length, got shapes "
                         f"{t.shape} and {v.shape}")  # fmt: skip
    if t.dtype.kind not in "iuf":
        raise TypeError(f"times must be numbers, got dtype {t.dtype}")
    if t.dtype.kind == "f" and not np.isfinite(t).all():
        raise ValueError("times must be finite (no NaN or infinity)")
    return t, v


def process_batch(op: Any, times: Any, values: Any) -> None:
    t, v = _arrays(times, values)
    if not len(t):
        return
    if not op._seq:
        op._build()
    if not _fast(op) or v.dtype.kind not in "iuf":
        for tt, x in zip(t.tolist(), v.tolist()):
            op.process(tt, x)
        return
    keep = t >= op.wm - op.allowed_lateness
    op.dropped += int(len(t) - keep.sum())
    t, v = t[keep], v[keep].astype(float)
    if not len(t):
        return
    op._late.extend(t[t < op.wm].tolist())
    op._seq += len(t)
    sm = op.slices
    keys = floors(sm.slicer, t)
    if t.dtype.kind in "iu" and all(float(p).is_integer() for p, _o in sm.slicer.grids):
        keys = keys.astype(np.int64)
    order = np.argsort(keys, kind="stable")
    ks, ts, vs = keys[order], t[order], v[order]
    idx = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    partials = REDUCERS[op.agg.name](vs, idx)
    lo = np.minimum.reduceat(ts, idx).tolist()
    hi = np.maximum.reduceat(ts, idx).tolist()
    n = np.diff(np.r_[idx, len(ks)]).tolist()
    for key, a, b, m, p in zip(ks[idx].tolist(), lo, hi, n, partials):
        sm.add_partial(key, a, b, m, p)
