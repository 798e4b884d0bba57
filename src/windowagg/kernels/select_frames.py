"""The largest value of several frames that end together, in one pass: SlickDeque's
non-invertible deque (SlickDeque paper, Section 4.2, with its multi-range queries of Section
4.3) shared by every frame, one pointer per frame.

The deque holds, oldest first, the positions of the values that are larger than every value
after them (ties: the newest stays), so the largest value of any suffix of the window is the
first deque entry inside it. Frames that end at the same row but start at different rows are
suffixes of the longest one: frame j's answer is the first entry at or after its start, found by
a pointer that only moves forward, and moved back to the entry being added when a push removes
the one it points at. Each row is pushed and removed once, each pointer moves O(rows) in all:
O(rows x frames) for every frame together, whatever their lengths. Rows before every frame's
start are never pushed (the deque starts afresh there): frames with gaps between them, as
point-in-time queries leave, cost the rows of the frames alone.
"""

from .jit import kernel


@kernel
def select_frames(keys, lo, hi, a, b, first, dq, ptr, out):
    """``out[j, i]`` for the answers ``a`` to ``b - 1``: the row of the largest ``keys`` value
    (NaN: missing) among rows ``lo[j, i]`` to ``hi[i] - 1``, or -1 if none; ``lo[j]`` and
    ``hi`` never decrease, and no frame of these answers reaches before row ``first``. ``dq``
    (int64, one per row of these frames) and ``ptr`` (int64, one per frame) are work space."""
    k = lo.shape[0]
    tail = 0
    pushed = first
    for j in range(k):
        ptr[j] = 0
    for i in range(a, b):
        h = hi[i]
        if pushed < lo[0, i]:  # (one compare where frames overlap, as rolling frames do)
            start = lo[0, i]
            for j in range(1, k):
                start = min(start, lo[j, i])
            if pushed < start:  # the rows before lie in no frame from here on: a fresh deque
                pushed = start
                tail = 0
                for j in range(k):
                    ptr[j] = 0
        while pushed < h:
            x = keys[pushed]
            if x == x:
                while tail > 0 and keys[dq[tail - 1]] <= x:
                    tail -= 1
                for j in range(k):
                    if ptr[j] > tail:
                        ptr[j] = tail
                dq[tail] = pushed
                tail += 1
            pushed += 1
        for j in range(k):
            p = ptr[j]
            start = lo[j, i]
            while p < tail and dq[p] < start:
                p += 1
            ptr[j] = p
            out[j, i] = dq[p] if p < tail and dq[p] < h else -1
