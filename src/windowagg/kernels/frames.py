"""Where every row's frame starts and ends (SQL's RANGE BETWEEN over sorted times): two
pointers per key segment, each moving forward only, so O(rows) whatever the frame's length.
A binary search per row (``np.searchsorted``) costs O(rows log rows) and, at a million rows,
more than the aggregation itself."""

from .jit import kernel


@kernel
def range_bounds(times, seg, lo_off, hi_off, lo_unb, hi_unb, lo_row, hi_row):
    """Row i of key k (rows ``seg[k]`` to ``seg[k + 1] - 1``, times ascending) gets the rows
    ``lo_row[i]`` to ``hi_row[i] - 1``: those of its key with
    ``times[i] + lo_off <= times[j] <= times[i] + hi_off``; a side flagged unbounded reaches
    the key's first or last row. A time of -inf (a null time, sorted first) is a peer of every
    other -inf and in no finite row's frame. An empty frame has ``lo_row == hi_row``."""
    for k in range(seg.shape[0] - 1):
        s = seg[k]
        e = seg[k + 1]
        lo = s
        hi = s
        for i in range(s, e):
            t = times[i]
            if lo_unb:
                lo = s
            else:
                while lo < e and times[lo] < t + lo_off:
                    lo += 1
            if hi_unb:
                hi = e
            else:
                if hi < lo:
                    hi = lo
                while hi < e and times[hi] <= t + hi_off:
                    hi += 1
            lo_row[i] = lo
            hi_row[i] = hi if hi > lo else lo
