"""The largest or smallest value of a range of rows in O(1): a sparse table over blocks of
rows (each level ``j`` holding, for every block, the row of the best value over the ``2**j``
blocks from it), and a scan of the partial blocks at the range's two ends. Ties go to the
youngest row: the later one within a part (a key's rows lie in time order, ties in arrival
order), and across the parts of an online state the later time, then the later part (the
parts lie in arrival order). Where no row of the range holds a value, -1.

This is the range query of FiBA (Tangwongsan, Hirzel and Schneider, "Optimal and General
Out-of-Order Sliding-Window Aggregation", section 2, "Query Sharing") for ``max`` and
``min``, which are not invertible: a frame's answer combines O(1) precomputed partial
aggregates per part instead of a difference of two prefixes. The values compared hold no
NaN (a part that does is answered by the evaluation over its events)."""

from __future__ import annotations

from .jit import inline, kernel

__all__ = ["BLOCK", "extreme_tables", "extremes_at"]

#: rows per block of the tables
BLOCK = 32


@inline
def _beats(x, y, largest):
    """Whether value ``x`` is better than ``y`` (larger for ``max``, smaller for ``min``)."""
    return x > y if largest else x < y


@inline
def _later(values, largest, best, r):
    """Row ``r`` or row ``best`` (-1: none yet) of one part, whichever holds the better value,
    the later row on ties."""
    if r < 0:
        return best
    if best < 0 or _beats(values[r], values[best], largest):
        return r
    if values[r] == values[best] and r > best:
        return r
    return best


@inline
def _scan(values, valid, has_valid, largest, best, lo, hi):
    """``best`` against rows ``lo`` to ``hi - 1``, each with a value."""
    for r in range(lo, hi):
        if not has_valid or valid[r]:
            best = _later(values, largest, best, r)
    return best


@kernel
def extreme_tables(values, valid, has_valid, largest, start, end, table, tops):
    """Fill ``table`` (levels x blocks) for the part of rows ``start`` to ``end - 1`` of the
    laid ``values`` (``valid``: the laid validity, where ``has_valid``; else every row holds
    a value): level 0 the best row of each block of :data:`BLOCK` rows, level ``j`` the best
    of the ``2**j`` blocks from each (-1 where none); ``tops``, of the same shape, their
    values, so that each level reads the one before in order. False, the table unfinished,
    where a value is NaN."""
    levels, blocks = table.shape
    for i in range(blocks):
        lo = start + i * BLOCK
        best, top, nan = -1, values[lo], False  # the block's best row so far, its value
        for r in range(lo, min(lo + BLOCK, end)):
            if has_valid and not valid[r]:
                continue
            x = values[r]
            nan |= x != x
            take = best < 0 or (x >= top if largest else x <= top)  # the later row on ties
            best = r if take else best
            top = x if take else top
        if nan:
            return False
        table[0, i], tops[0, i] = best, top
    for j in range(1, levels):
        half = 1 << (j - 1)
        for i in range(blocks - (1 << j) + 1):
            a, b = table[j - 1, i], table[j - 1, i + half]
            # b lies after a: it wins on ties; -1 (no value) loses to any row
            if b >= 0 and (
                a < 0
                or _beats(tops[j - 1, i + half], tops[j - 1, i], largest)
                or tops[j - 1, i + half] == tops[j - 1, i]
            ):
                table[j, i], tops[j, i] = b, tops[j - 1, i + half]
            else:
                table[j, i], tops[j, i] = a, tops[j - 1, i]
    return True


@kernel
def extremes_at(values, valid, has_valid, times, largest, laid, offs, bounds, a, b, out):
    """Every request's best row over its frames in every part (rows ``a[p, q]`` to
    ``b[p, q] - 1`` of part ``p``: rows ``bounds[p]`` on of the laid ``values``, its table
    at ``offs[p]`` of ``laid``, levels x blocks), ties to the later time, then the later
    part; -1 where no frame holds a value."""
    parts, n = a.shape
    for q in range(n):
        best = -1
        for p in range(parts):
            lo, hi = a[p, q], b[p, q]
            if hi <= lo:
                continue
            start = bounds[p]
            blocks = (bounds[p + 1] - start + BLOCK - 1) // BLOCK
            first = (lo - start + BLOCK - 1) // BLOCK  # the first whole block
            last = (hi - start) // BLOCK  # past the last whole block
            if last - first < 1:
                r = _scan(values, valid, has_valid, largest, -1, lo, hi)
            else:
                r = _scan(values, valid, has_valid, largest, -1, lo, start + first * BLOCK)
                m = last - first
                k = 0
                while (2 << k) <= m:
                    k += 1
                row = offs[p] + k * blocks
                r = _later(values, largest, r, laid[row + first])
                r = _later(values, largest, r, laid[row + last - (1 << k)])
                r = _scan(values, valid, has_valid, largest, r, start + last * BLOCK, hi)
            if r < 0:
                continue
            if (
                best < 0
                or _beats(values[r], values[best], largest)
                or (values[r] == values[best] and times[r] >= times[best])
            ):
                best = r
        out[q] = best
