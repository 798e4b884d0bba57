"""The operator's compiled fast path: slices as numpy arrays, for the built-in numeric
aggregations (sum, count, mean, min, max) over tumbling and sliding time windows.

The same slicing as the general path (Scotty paper, Sections 7 and 8; keys are the last edge at
or before a tuple), done for a whole batch at a time:

* **slicing**: the edges of every grid within the batch's time span are enumerated at once
  (query fusion still applies: fused grids only) and each tuple finds its slice by binary
  search, so the cost does not grow with the number of windows; a group-by reduces each slice's
  tuples and one merge updates the slice arrays (new slices inserted, existing ones combined:
  these aggregations are commutative, so no tuple is kept, Figure 4);
* **reporting** (the Window Manager, Section 5.3): at a watermark the windows of every
  definition that end since the previous one are enumerated from the grids (or, across a
  silent gap, from the slices), located by binary search, and answered from prefix sums (sum,
  count, mean) or a sparse table (min, max) over the slice partials, O(1) per window after
  O(slices) (O(slices log slices) for min and max) per watermark. Late tuples mark the windows
  holding them, as in the general path.

Sums are combined in a different order than the general path folds them, so float results agree
to rounding; integer-valued data agrees exactly up to 2^53.
"""

from __future__ import annotations

import numpy as np

from ..aggregations import COMBINE, Aggregation, AggregationProtocol, PartialKind, facts
from .clock import Time
from .manager import WindowResult
from .windows import Sliding

#: how partials that keep an extremum combine (:data:`windowagg.aggregations.COMBINE`; the
#: others add up), NaN skipped
EXTREMA = {
    kind: {PartialKind.MIN: np.fmin, PartialKind.MAX: np.fmax}[rule]
    for kind, rule in COMBINE.items()
    if rule in (PartialKind.MIN, PartialKind.MAX)
}


def serves(agg: AggregationProtocol, windows: list) -> bool:
    """Whether this fast path serves an aggregation and a set of windows: an aggregation with
    partial columns (its record's ``partials``) over tumbling and sliding time windows only."""
    return bool(facts(agg).partials) and all(
        isinstance(w, Sliding) and w.measure == "time" for w in windows
    )


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All integers k with lo[i] <= k <= hi[i], and the i each came from."""
    cnt = np.maximum(hi - lo + 1, 0)
    owner = np.repeat(np.arange(len(lo)), cnt)
    first = np.repeat(lo - np.concatenate([[0], np.cumsum(cnt)[:-1]]), cnt)
    return first + np.arange(int(cnt.sum())), owner


class VectorSlices:
    """Slice arrays and the vectorised slicer and window manager over them."""

    def __init__(
        self, agg: AggregationProtocol, windows: list[Sliding], grids: list[tuple[Time, Time]]
    ) -> None:
        assert isinstance(agg, Aggregation)  # serves() takes built-ins with partial columns only
        self.agg = agg
        self.windows = windows
        self.z = np.array([w.size for w in windows])
        self.sl = np.array([w.slide for w in windows])
        self.gp = np.array([p for p, _o in grids])
        self.go = np.array([o for _p, o in grids])
        self.whole = all(float(x).is_integer() for x in (*self.z, *self.sl))
        self.starts = np.empty(0, np.int64 if self.whole else float)
        self.n = np.empty(0, np.int64)
        self.cols = {
            c: np.empty(0, np.int64 if c is PartialKind.COUNT else float)
            for c in facts(agg).partials
        }
        self.longest = float(self.z.max())
        self.widest = float(self.gp.max())

    # -- slicing -----------------------------------------------------------------------------

    def _keys(self, t: np.ndarray) -> np.ndarray:
        tmin, tmax = t.min(), t.max()
        k0 = (tmin - self.go) // self.gp
        k1 = (tmax - self.go) // self.gp
        if (k1 - k0 + 1).sum() <= 4 * len(t) + 64:
            k, g = _ranges(k0.astype(np.int64), k1.astype(np.int64))
            edges = np.unique(k * self.gp[g] + self.go[g])
            return edges[np.searchsorted(edges, t, "right") - 1]
        out = np.full(t.shape, -np.inf)
        for p, o in zip(self.gp, self.go):  # many edges in a long batch: per grid
            np.maximum(out, (t - o) // p * p + o, out=out)
        return out

    def add(self, t: np.ndarray, v: np.ndarray) -> None:
        """Tuples not dropped (any order), values as floats with NaN missing."""
        if not len(t):
            return
        if t.dtype.kind == "f" and self.starts.dtype.kind != "f":
            self.starts = self.starts.astype(float)
        keys = self._keys(t).astype(self.starts.dtype)
        order = np.argsort(keys, kind="stable")
        ks, vs = keys[order], v[order]
        idx = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        new_keys = ks[idx]
        counts = np.diff(np.r_[idx, len(ks)])
        missing = np.isnan(vs)
        part = {}
        if PartialKind.SUM in self.cols:
            part[PartialKind.SUM] = np.add.reduceat(np.where(missing, 0.0, vs), idx)
        if PartialKind.COUNT in self.cols:
            part[PartialKind.COUNT] = np.add.reduceat((~missing).astype(np.int64), idx)
        for c in self.cols.keys() & EXTREMA.keys():
            with np.errstate(invalid="ignore"):
                part[c] = EXTREMA[c].reduceat(vs, idx)
        self.merge(new_keys, counts, part)

    def merge(self, keys: np.ndarray, counts: np.ndarray, part: dict) -> None:
        """Combine per-slice partials (sorted unique slice keys, tuple counts, and the partial
        columns of the aggregation's record) into the slice arrays."""
        if keys.dtype.kind == "f" and self.starts.dtype.kind != "f":
            self.starts = self.starts.astype(float)
        pos = np.searchsorted(self.starts, keys)
        old = pos < len(self.starts)
        old[old] = self.starts[pos[old]] == keys[old]
        p = pos[old]
        self.n[p] += counts[old]
        for c, arr in self.cols.items():
            if c in EXTREMA:
                arr[p] = EXTREMA[c](arr[p], part[c][old])
            else:
                arr[p] += part[c][old]
        fresh = ~old
        if not fresh.any():
            return
        at = pos[fresh]
        if at[0] == len(self.starts):  # in order: every new slice comes after the others
            join = np.concatenate
            self.starts = join([self.starts, keys[fresh]])
            self.n = join([self.n, counts[fresh]])
            for c in self.cols:
                self.cols[c] = join([self.cols[c], part[c][fresh]])
        else:
            self.starts = np.insert(self.starts, at, keys[fresh])
            self.n = np.insert(self.n, at, counts[fresh])
            for c in self.cols:
                self.cols[c] = np.insert(self.cols[c], at, part[c][fresh])

    def release(self, h: Time) -> None:
        """Forget slices no window ending after h can hold."""
        cut = int(np.searchsorted(self.starts, h - self.longest - self.widest))
        if cut:
            self.starts = self.starts[cut:]
            self.n = self.n[cut:]
            for c in self.cols:
                self.cols[c] = self.cols[c][cut:]

    # -- reporting ---------------------------------------------------------------------------

    def _windows_from_slices(self, lo_end: Time, hi_end: Time) -> tuple[np.ndarray, np.ndarray]:
        """(k, definition) of every window holding a slice, with lo_end < end <= hi_end."""
        s = self.starts
        d = np.repeat(np.arange(len(self.z)), len(s))
        ss = np.tile(s, len(self.z))
        z, sl = self.z[d], self.sl[d]
        k, owner = _ranges(((ss - z) // sl + 1).astype(np.int64), (ss // sl).astype(np.int64))
        dd = d[owner]
        end = k * self.sl[dd] + self.z[dd]
        keep = (end > lo_end) & (end <= hi_end)
        pairs = np.unique(np.stack([dd[keep], k[keep]]), axis=1)
        return pairs[1], pairs[0]

    def _candidates(self, prev: Time, wm: Time) -> tuple[np.ndarray, np.ndarray]:
        first, last = self.starts[0], self.starts[-1]
        lo_end = max(prev, first)
        hi_end = np.minimum(wm, last + self.z)
        k_lo = (lo_end - self.z) // self.sl + 1
        k_hi = (hi_end - self.z) // self.sl
        total = np.maximum(k_hi - k_lo + 1, 0).sum()
        if total > 8 * len(self.starts) * max(1.0, float((self.z / self.sl).max())) + 1024:
            return self._windows_from_slices(lo_end, wm)  # a silent gap: only where tuples are
        return _ranges(k_lo.astype(np.int64), k_hi.astype(np.int64))

    def _late_windows(self, late: np.ndarray, prev: Time) -> tuple[np.ndarray, np.ndarray]:
        d = np.repeat(np.arange(len(self.z)), len(late))
        tt = np.tile(late, len(self.z))
        z, sl = self.z[d], self.sl[d]
        k, owner = _ranges(((tt - z) // sl + 1).astype(np.int64), (tt // sl).astype(np.int64))
        dd = d[owner]
        keep = k * self.sl[dd] + self.z[dd] <= prev
        if not keep.any():
            return np.empty(0, np.int64), np.empty(0, np.int64)
        pairs = np.unique(np.stack([dd[keep], k[keep]]), axis=1)
        return pairs[1], pairs[0]

    def _values(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Window values as an array: NaN where the aggregation has no value (None)."""
        cols = self.cols
        extremum = cols.keys() & EXTREMA.keys()
        if extremum:  # min, max: a sparse table over the slices
            (name,) = extremum
            m = cols[name]
            ufunc = EXTREMA[name]
            levels = [m]
            span = 1
            while 2 * span <= len(m):
                prev = levels[-1]
                levels.append(ufunc(prev[: len(prev) - span], prev[span:]))
                span *= 2
            j = np.floor(np.log2(hi - lo)).astype(np.int64)
            out = np.empty(len(lo))
            for q in np.unique(j):  # one sparse-table level at a time
                sel = j == q
                table = levels[q]
                out[sel] = ufunc(table[lo[sel]], table[hi[sel] - (1 << int(q))])
            return self.agg.lower_columns({name: out})
        prefix = {c: np.concatenate([[0], np.cumsum(a)]) for c, a in cols.items()}
        return self.agg.lower_columns({c: p[hi] - p[lo] for c, p in prefix.items()})

    def report_arrays(self, prev: Time, wm: Time, late: list) -> tuple:
        """(definition index, start, end, value, update) arrays of the windows to report, by
        definition, then end, then start; values NaN where there is none."""
        if not len(self.starts):
            e = np.empty(0, np.int64)
            return e, e, e, np.empty(0), np.empty(0, bool)
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
        if late:
            late_t = np.array(late)
            k, d = self._late_windows(late_t, prev)
            parts.append((k, d, late_t))
        k, d = self._candidates(prev, wm)
        parts.append((k, d, None))
        cols: list[list] = [[], [], [], [], []]
        for k, d, lt in parts:
            if not len(k):
                continue
            a = k * self.sl[d]
            b = a + self.z[d]
            if self.whole and self.starts.dtype.kind != "f":
                a, b = a.astype(np.int64), b.astype(np.int64)
            lo = np.searchsorted(self.starts, a)
            hi = np.searchsorted(self.starts, b)
            keep = hi > lo
            if lt is not None:  # an update when the window held tuples before the late ones
                held = np.concatenate([[0], np.cumsum(self.n)])
                fresh = np.searchsorted(lt, b) - np.searchsorted(lt, a)
                update = (held[hi] - held[lo]) > fresh
            else:
                update = np.zeros(len(k), bool)
            order = np.lexsort((a, b, d))
            order = order[keep[order]]
            values = self._values(lo[order], hi[order])
            for col, arr in zip(cols, (d[order], a[order], b[order], values, update[order])):
                col.append(arr)
        return tuple(np.concatenate(c) if c else np.empty(0) for c in cols)

    def report(self, prev: Time, wm: Time, late: list) -> list[WindowResult]:
        d, a, b, v, u = self.report_arrays(prev, wm, late)
        ws = self.windows
        vals = v.tolist()
        if v.dtype.kind == "f":
            vals = [None if x != x else x for x in vals]
        return list(
            map(WindowResult, [ws[i] for i in d.tolist()], a.tolist(), b.tolist(), vals, u.tolist())
        )
