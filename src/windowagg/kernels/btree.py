"""Compiled FiBA and classic augmented B-tree (FiBA paper, Sections 3-4; bulk paper, Section 4),
following :mod:`windowagg.ooo` step for step, over preallocated node arrays.

``lift, combine, identity, lower`` are free names, bound to one aggregation family by
:func:`.specialize.btree`. Node ``x`` of the pool:

* ``T[x, k]`` times, ``V[:, x * MA + k]`` partials of its ``NE[x]`` entries (MA = 2 MIN_ARITY
  slots: one spare for the moment before a split);
* ``C[x, k]`` children (``FL[x] & LEAF`` when none), ``P[x]`` the parent (-1 at the root);
* ``A[:, x]`` and ``K[x]``: the node's position-aware aggregate and entry count;
* ``FL[x]``: LEFT / RIGHT spine flags.

``meta``: ROOT, LF and RF (the fingers), FREE_TOP (stack ``FREE`` of released subtree roots:
a released node's children are only pushed when the node is reused, so dropping a subtree
costs O(1), the bulk paper's deferred free list), NEXT (first never-used node), MU (MIN_ARITY)
and CLASSIC (1: every node stores its up-aggregate, searches start at the root).

Numba compiles a helper once per argument types, and an id read from ``C`` or ``P`` is int32,
a constant a literal type: calls pass node ids as ``np.int64(...)`` and constants as
``np.bool_(...)`` / ``np.int64(...)`` so that every helper compiles once (six fewer versions,
some seconds less per family).
"""

import numpy as np

from .jit import helper, inline, kernel
from .layout import (
    ANSWER,
    CLASSIC,
    FREE_TOP,
    LEAF,
    LEFT,
    LF,
    MU,
    NEXT,
    OP_BULK_EVICT,
    OP_EVICT,
    OP_INSERT,
    OP_RANGE,
    OP_ROUND,
    RF,
    RIGHT,
    ROOT,
)

lift = combine = identity = lower = None  # bound per specialization
UP, INNER, LEFTK, RIGHTK = 0, 1, 2, 3


@inline
def _kind(FL, P, meta, x):
    if meta[CLASSIC] == 1:
        return UP
    if P[x] < 0:
        return INNER
    if FL[x] & LEFT:
        return LEFTK
    if FL[x] & RIGHT:
        return RIGHTK
    return UP


@inline
def _fold_into(A, x, src, si, first):
    """A[:, x] = src[:, si] if first else A[:, x] (x) src[:, si]."""
    if first:
        for f in range(A.shape[0]):
            A[f, x] = src[f, si]
    else:
        combine(A, x, A, x, src, si)


@helper
def _repair(T, V, C, A, K, NE, P, FL, meta, x):
    """The node's aggregate and count for its kind (FiBA paper, Fig. 2; node.py): the parent
    part on the right spine, the children and entries in order, the parent part on the left
    spine. The first part is copied, the others combined into it."""
    MA = T.shape[1]
    W = A.shape[0]
    kind = _kind(FL, P, meta, x)
    n = NE[x]
    p = P[x]
    parent_part = p >= 0 and P[p] >= 0 and kind in (LEFTK, RIGHTK)
    cnt = n
    first = True
    if kind == RIGHTK and parent_part:
        for f in range(W):
            A[f, x] = A[f, p]
        cnt += K[p]
        first = False
    if FL[x] & LEAF:
        if n > 0:
            base = x * MA
            if first:
                for f in range(W):
                    A[f, x] = V[f, base]
                first = False
            else:
                combine(A, x, A, x, V, base)
            for k in range(1, n):
                combine(A, x, A, x, V, base + k)
    else:
        lo = 0 if kind in (UP, RIGHTK) else 1
        hi = n + 1 if kind in (UP, LEFTK) else n
        for i in range(n + 1):
            if lo <= i < hi:
                c = C[x, i]
                _fold_into(A, x, A, c, first)
                first = False
                cnt += K[c]
            if i < n:
                _fold_into(A, x, V, x * MA + i, first)
                first = False
    if kind == LEFTK and parent_part:
        _fold_into(A, x, A, p, first)
        first = False
        cnt += K[p]
    if first:
        identity(A, x)
    K[x] = cnt


@helper
def _alloc(T, C, NE, P, FL, FREE, meta, leaf):
    top = meta[FREE_TOP]
    if top > 0:  # reuse a released node; its children join the free stack now
        x = FREE[top - 1]
        top -= 1
        if not (FL[x] & LEAF):
            for i in range(NE[x] + 1):
                FREE[top] = C[x, i]
                top += 1
        meta[FREE_TOP] = top
    else:
        x = meta[NEXT]
        meta[NEXT] = x + 1
    NE[x] = 0
    P[x] = -1
    FL[x] = LEAF if leaf else 0
    return x


@inline
def _release(FREE, meta, x):
    FREE[meta[FREE_TOP]] = x
    meta[FREE_TOP] += 1


@inline
def _child_index(C, NE, p, x):
    for i in range(NE[p] + 1):
        if C[p, i] == x:
            return i
    return -1


@inline
def _descend(T, C, NE, FL, x, t):
    """Classic search from node x: (node, index, found)."""
    while True:
        n = NE[x]
        i = 0
        while i < n and T[x, i] < t:
            i += 1
        if i < n and T[x, i] == t:
            return x, i, True
        if FL[x] & LEAF:
            return x, i, False
        x = C[x, i]


@helper
def _search(T, C, NE, P, FL, meta, t):
    """Finger search (FiBA paper Section 3.2): climb both spines in lockstep to the lowest
    node whose range holds t, then descend; the classic tree starts at the root."""
    top = meta[ROOT]
    if meta[CLASSIC] == 0:
        lft = meta[LF]
        rgt = meta[RF]
        while P[lft] >= 0:
            if t < T[P[lft], 0]:
                top = lft
                break
            pr = P[rgt]
            if T[pr, NE[pr] - 1] < t:
                top = rgt
                break
            lft = P[lft]
            rgt = P[rgt]
    return _descend(T, C, NE, FL, top, t)


_repair_inline = inline(_repair.py_func)  # in the loop of _repair_aggs, run on every insert


@helper
def _repair_aggs(T, V, C, A, K, NE, P, FL, meta, top, hitleft, hitright):
    """FiBA paper Fig. 7, lines 23-39: up-aggregates to the first spine node or the root, then
    down the spines that changed (the classic tree: everything up to the root). One loop with
    one repair in it, walking up (phase 0), down the left spine (1), then down the right (2):
    numba compiles an inlined function once per call site, and four sites took most of a
    family's compile time."""
    x = top
    phase = 0
    left = right = False
    while True:
        _repair_inline(T, V, C, A, K, NE, P, FL, meta, x)
        if phase == 0:
            if P[x] >= 0 and _kind(FL, P, meta, x) == UP:
                x = P[x]
                continue
            if meta[CLASSIC] == 1:
                return
            top = x
            is_root = P[top] < 0
            left = (FL[top] & LEFT) != 0 or (is_root and hitleft)
            right = (FL[top] & RIGHT) != 0 or (is_root and hitright)
            phase = 1
        if phase == 1:
            if left and not (FL[x] & LEAF):
                x = C[x, 0]
                continue
            phase = 2
            x = top
        if right and not (FL[x] & LEAF):
            x = C[x, NE[x]]
            continue
        return


@helper
def _split(T, V, C, A, K, NE, P, FL, FREE, meta, x):
    """Split an overflowing node (arity 2 MU + 1) into arities MU + 1 and MU; the middle entry
    moves up (a root split adds a level first)."""
    MA = T.shape[1]
    mu = meta[MU]
    W = V.shape[0]
    if P[x] < 0:  # height increase
        r = _alloc(T, C, NE, P, FL, FREE, meta, np.bool_(False))
        C[r, 0] = x
        P[x] = r
        meta[ROOT] = r
        FL[x] |= LEFT | RIGHT
    leaf = FL[x] & LEAF
    y = _alloc(T, C, NE, P, FL, FREE, meta, leaf != 0)
    n = NE[x]
    for k in range(mu + 1, n):
        T[y, k - mu - 1] = T[x, k]
        for f in range(W):
            V[f, y * MA + k - mu - 1] = V[f, x * MA + k]
    if not leaf:
        for k in range(mu + 1, n + 1):
            c = C[x, k]
            C[y, k - mu - 1] = c
            P[c] = y
    NE[y] = n - mu - 1
    NE[x] = mu
    if FL[x] & RIGHT:
        FL[y] |= RIGHT
        FL[x] &= ~RIGHT
    if meta[RF] == x:
        meta[RF] = y
    p = P[x]
    i = _child_index(C, NE, p, x)
    for k in range(NE[p], i, -1):  # open a slot for the middle entry at i
        T[p, k] = T[p, k - 1]
        for f in range(W):
            V[f, p * MA + k] = V[f, p * MA + k - 1]
        C[p, k + 1] = C[p, k]
    T[p, i] = T[x, mu]
    for f in range(W):
        V[f, p * MA + i] = V[f, x * MA + mu]
    C[p, i + 1] = y
    P[y] = p
    NE[p] += 1
    _repair(T, V, C, A, K, NE, P, FL, meta, x)
    _repair(T, V, C, A, K, NE, P, FL, meta, y)


@helper
def _insert(T, V, C, A, K, NE, P, FL, FREE, meta, tmp, code, t, x, arg):
    MA = T.shape[1]
    W = V.shape[0]
    node, i, found = _search(T, C, NE, P, FL, meta, t)
    if found:  # old (x) new
        lift(code, tmp, 0, x, arg)
        combine(V, node * MA + i, V, node * MA + i, tmp, 0)
        _repair_aggs(T, V, C, A, K, NE, P, FL, meta, node, np.bool_(False), np.bool_(False))
        return
    for k in range(NE[node], i, -1):
        T[node, k] = T[node, k - 1]
        for f in range(W):
            V[f, node * MA + k] = V[f, node * MA + k - 1]
    T[node, i] = t
    lift(code, V, node * MA + i, x, arg)
    NE[node] += 1
    hitleft = (FL[node] & LEFT) != 0
    hitright = (FL[node] & RIGHT) != 0
    while NE[node] == MA:  # rebalanceForInsert (Fig. 7, lines 40-50)
        if P[node] < 0:
            hitleft = True
            hitright = True
        _split(T, V, C, A, K, NE, P, FL, FREE, meta, node)
        node = P[node]
        hitleft = hitleft or (FL[node] & LEFT) != 0
        hitright = hitright or (FL[node] & RIGHT) != 0
    _repair_aggs(T, V, C, A, K, NE, P, FL, meta, node, hitleft, hitright)


@inline
def _size(K, P, FL, meta):
    r = meta[ROOT]
    if meta[CLASSIC] == 1 or (FL[r] & LEAF):
        return K[r]
    return K[meta[LF]] + K[r] + K[meta[RF]]


@inline
def _query_all(A, P, FL, meta, tmp, slot):
    """At most two invocations of the operator (FiBA paper, Theorem 5)."""
    r = meta[ROOT]
    if meta[CLASSIC] == 1 or (FL[r] & LEAF):
        for f in range(A.shape[0]):
            tmp[f, slot] = A[f, r]
    else:
        combine(tmp, slot, A, meta[LF], A, r)
        combine(tmp, slot, tmp, slot, A, meta[RF])


@helper
def _shift_left(T, V, C, NE, FL, x, k):
    """Drop the first k entries of x (and its first k children, when it has any)."""
    MA = T.shape[1]
    W = V.shape[0]
    n = NE[x]
    for j in range(k, n):
        T[x, j - k] = T[x, j]
        for f in range(W):
            V[f, x * MA + j - k] = V[f, x * MA + j]
    if not (FL[x] & LEAF):
        for j in range(k, n + 1):
            C[x, j - k] = C[x, j]
    NE[x] = n - k


@helper
def _release_empty(NE, FL, FREE, meta, x):
    """Release a node whose children live on elsewhere: reuse must not free them."""
    NE[x] = 0
    FL[x] = LEAF
    _release(FREE, meta, x)


@helper
def _merge(T, V, C, A, K, NE, P, FL, FREE, meta, p, i):
    """Children i and i + 1 of p and the separator between them become child i."""
    MA = T.shape[1]
    W = V.shape[0]
    lft = C[p, i]
    rgt = C[p, i + 1]
    n = NE[lft]
    T[lft, n] = T[p, i]
    for f in range(W):
        V[f, lft * MA + n] = V[f, p * MA + i]
    for k in range(NE[rgt]):
        T[lft, n + 1 + k] = T[rgt, k]
        for f in range(W):
            V[f, lft * MA + n + 1 + k] = V[f, rgt * MA + k]
    if not (FL[lft] & LEAF):
        for k in range(NE[rgt] + 1):
            c = C[rgt, k]
            C[lft, n + 1 + k] = c
            P[c] = lft
    NE[lft] = n + 1 + NE[rgt]
    for k in range(i, NE[p] - 1):  # remove separator i and child i + 1 from p
        T[p, k] = T[p, k + 1]
        for f in range(W):
            V[f, p * MA + k] = V[f, p * MA + k + 1]
        C[p, k + 1] = C[p, k + 2]
    NE[p] -= 1
    if FL[rgt] & RIGHT:
        FL[lft] |= RIGHT
    if meta[RF] == rgt:
        meta[RF] = lft
    _release_empty(NE, FL, FREE, meta, np.int64(rgt))
    _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(lft))
    return lft


@helper
def _move(T, V, C, A, K, NE, P, FL, meta, p, i, j):
    """Move one entry (and child) from sibling j into node i through the separator."""
    MA = T.shape[1]
    W = V.shape[0]
    x = C[p, i]
    s = C[p, j]
    leaf = FL[x] & LEAF
    if j == i + 1:
        n = NE[x]
        T[x, n] = T[p, i]
        for f in range(W):
            V[f, x * MA + n] = V[f, p * MA + i]
        T[p, i] = T[s, 0]
        for f in range(W):
            V[f, p * MA + i] = V[f, s * MA]
        if not leaf:
            c = C[s, 0]
            C[x, n + 1] = c
            P[c] = x
        NE[x] = n + 1
        _shift_left(T, V, C, NE, FL, np.int64(s), np.int64(1))
    else:
        n = NE[x]
        for k in range(n, 0, -1):
            T[x, k] = T[x, k - 1]
            for f in range(W):
                V[f, x * MA + k] = V[f, x * MA + k - 1]
        if not leaf:
            for k in range(n + 1, 0, -1):
                C[x, k] = C[x, k - 1]
        T[x, 0] = T[p, j]
        for f in range(W):
            V[f, x * MA] = V[f, p * MA + j]
        ns = NE[s]
        T[p, j] = T[s, ns - 1]
        for f in range(W):
            V[f, p * MA + j] = V[f, s * MA + ns - 1]
        if not leaf:
            c = C[s, ns]
            C[x, 0] = c
            P[c] = x
        NE[s] = ns - 1
        NE[x] = n + 1
    _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(x))
    _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(s))


@helper
def _collapse_root(C, NE, P, FL, FREE, meta):
    """Make child root while the root has a single child (bulk paper, Fig. 5)."""
    changed = False
    r = meta[ROOT]
    while not (FL[r] & LEAF) and NE[r] == 0:
        c = C[r, 0]
        P[c] = -1
        FL[c] &= ~(LEFT | RIGHT)
        _release_empty(NE, FL, FREE, meta, r)
        meta[ROOT] = c
        r = c
        changed = True
    return changed


@helper
def _rebalance_for_evict(T, V, C, A, K, NE, P, FL, FREE, meta, node):
    """FiBA paper Fig. 7, lines 52-75: merge with or move from a sibling, upwards."""
    mu = meta[MU]
    hitleft = (FL[node] & LEFT) != 0
    hitright = (FL[node] & RIGHT) != 0
    while P[node] >= 0 and NE[node] + 1 < mu:
        p = P[node]
        i = _child_index(C, NE, p, node)
        j = i + 1 if i + 1 <= NE[p] else i - 1
        s = C[p, j]
        hitleft = hitleft or (FL[s] & LEFT) != 0
        hitright = hitright or (FL[s] & RIGHT) != 0
        if NE[s] + 1 <= mu:
            merged = _merge(T, V, C, A, K, NE, P, FL, FREE, meta, p, min(i, j))
            if P[p] < 0 and NE[p] == 0:
                _collapse_root(C, NE, P, FL, FREE, meta)
                node = merged
                hitleft = True
                hitright = True
            else:
                node = p
        else:
            _move(T, V, C, A, K, NE, P, FL, meta, p, i, j)
            node = p
        hitleft = hitleft or (FL[node] & LEFT) != 0
        hitright = hitright or (FL[node] & RIGHT) != 0
    return node, hitleft, hitright


@helper
def _clear(NE, P, FL, FREE, meta):
    r = meta[ROOT]
    _release(FREE, meta, r)  # the whole tree, reclaimed lazily
    x = _alloc_leaf_root(NE, P, FL, FREE, meta)
    meta[ROOT] = x
    meta[LF] = x
    meta[RF] = x


@helper
def _alloc_leaf_root(NE, P, FL, FREE, meta):
    x = meta[NEXT]  # a fresh node, so that reuse of the released tree stays lazy
    meta[NEXT] = x + 1
    NE[x] = 0
    P[x] = -1
    FL[x] = LEAF
    return x


@helper
def _bulk_evict(T, V, C, A, K, NE, P, FL, FREE, meta, bnd, anc, nbr, t):
    """Remove every entry with time <= t (bulk paper, Section 4); ``bnd``, ``anc`` and
    ``nbr`` are work arrays as long as the tree is high. Returns how many were removed."""
    before = _size(K, P, FL, meta)
    lf, rf = meta[LF], meta[RF]
    if before == 0 or t < T[lf, 0]:
        return 0
    if not t < T[rf, NE[rf] - 1]:
        _clear(NE, P, FL, FREE, meta)
        _repair(T, V, C, A, K, NE, P, FL, meta, meta[ROOT])
        return before
    mu = meta[MU]
    # Step 1: boundary search, then the cut on the way down
    top = lf if meta[CLASSIC] == 0 else meta[ROOT]
    while P[top] >= 0 and not t < T[P[top], 0]:
        top = P[top]
    parent_of_top = P[top]
    nb = 0
    x = top
    while True:
        i = 0
        while i < NE[x] and T[x, i] <= t:
            i += 1
        exact = i > 0 and T[x, i - 1] == t
        if i > 0:
            if not (FL[x] & LEAF):
                for k in range(i):
                    _release(FREE, meta, C[x, k])  # dropped whole: never walked
            _shift_left(T, V, C, NE, FL, np.int64(x), np.int64(i))
        bnd[nb] = x
        nb += 1
        if (FL[x] & LEAF) or exact:
            break
        x = C[x, 0]
    start = 0
    if parent_of_top < 0:
        _collapse_root(C, NE, P, FL, FREE, meta)
        start = nb
        for k in range(nb):
            if bnd[k] == meta[ROOT]:
                start = k
    # the (ancestor, neighbour) pairs, top-down along two chains
    a = -1
    nbn = -1
    if parent_of_top >= 0 and start == 0:
        a = parent_of_top
        nbn = C[parent_of_top, 1]
    for k in range(start, nb):
        x = bnd[k]
        anc[k] = a
        nbr[k] = nbn
        if FL[x] & LEAF:
            break
        if NE[x] >= 1:
            a = x
            nbn = C[x, 1]
        elif nbn >= 0:
            nbn = C[nbn, 0]
    # Step 2: pass up the boundary
    k = nb - 1
    while k >= start and bnd[k] != meta[ROOT]:
        x = bnd[k]
        deficit = mu - (NE[x] + 1)
        if deficit <= 0:
            _repair(T, V, C, A, K, NE, P, FL, meta, x)
            k -= 1
        elif deficit <= NE[nbr[k]] + 1 - mu:
            _move_batch(T, V, C, A, K, NE, P, FL, meta, x, anc[k], nbr[k], deficit)
            k -= 1
        else:
            ak = anc[k]
            _merge_into_neighbour(T, V, C, A, K, NE, P, FL, FREE, meta, x, ak, nbr[k])
            k2 = -1
            for q in range(start, nb):
                if bnd[q] == ak:
                    k2 = q
            k = k2
    hitright = False
    top2 = meta[ROOT]
    if parent_of_top >= 0:
        top2, _hl, hitright = _rebalance_for_evict(
            T, V, C, A, K, NE, P, FL, FREE, meta, np.int64(parent_of_top)
        )
    if _collapse_root(C, NE, P, FL, FREE, meta):
        top2 = meta[ROOT]
        hitright = True
    # Step 3: pass down the new left spine (flags, finger), then the aggregates
    x = top2
    while not (FL[x] & LEAF):
        x = C[x, 0]
        FL[x] |= LEFT
    meta[LF] = x
    if FL[meta[ROOT]] & LEAF:
        meta[RF] = meta[ROOT]
    _repair_aggs(T, V, C, A, K, NE, P, FL, meta, top2, np.bool_(True), hitright or P[top2] < 0)
    return before - _size(K, P, FL, meta)


@helper
def _move_batch(T, V, C, A, K, NE, P, FL, meta, x, a, nb, k):
    """Bulk paper Fig. 2: the ancestor's separator and the neighbour's first k - 1 entries
    (and first k children) move into x; the neighbour's k-th entry becomes the separator."""
    MA = T.shape[1]
    W = V.shape[0]
    n = NE[x]
    T[x, n] = T[a, 0]
    for f in range(W):
        V[f, x * MA + n] = V[f, a * MA]
    for q in range(k - 1):
        T[x, n + 1 + q] = T[nb, q]
        for f in range(W):
            V[f, x * MA + n + 1 + q] = V[f, nb * MA + q]
    T[a, 0] = T[nb, k - 1]
    for f in range(W):
        V[f, a * MA] = V[f, nb * MA + k - 1]
    if not (FL[x] & LEAF):
        for q in range(k):
            c = C[nb, q]
            C[x, n + 1 + q] = c
            P[c] = x
    NE[x] = n + k
    _shift_left(T, V, C, NE, FL, np.int64(nb), np.int64(k))
    _repair(T, V, C, A, K, NE, P, FL, meta, x)
    _repair(T, V, C, A, K, NE, P, FL, meta, nb)


@helper
def _merge_into_neighbour(T, V, C, A, K, NE, P, FL, FREE, meta, x, a, nb):
    """Bulk paper Fig. 3: x, the separator and the neighbour become one node; the empty chain
    from x up to the ancestor disappears."""
    MA = T.shape[1]
    W = V.shape[0]
    n = NE[x] + 1  # entries that arrive in front
    m = NE[nb]
    for q in range(m - 1, -1, -1):
        T[nb, q + n] = T[nb, q]
        for f in range(W):
            V[f, nb * MA + q + n] = V[f, nb * MA + q]
    for q in range(NE[x]):
        T[nb, q] = T[x, q]
        for f in range(W):
            V[f, nb * MA + q] = V[f, x * MA + q]
    T[nb, n - 1] = T[a, 0]
    for f in range(W):
        V[f, nb * MA + n - 1] = V[f, a * MA]
    if not (FL[x] & LEAF):
        for q in range(m, -1, -1):
            C[nb, q + n] = C[nb, q]
        for q in range(n):
            c = C[x, q]
            C[nb, q] = c
            P[c] = nb
    NE[nb] = m + n
    chain = C[a, 0]  # the empty chain from a's first child down to x
    # drops separator 0 and child 0 (the chain) of a
    _shift_left(T, V, C, NE, FL, np.int64(a), np.int64(1))
    while chain != x:
        nxt = C[chain, 0]
        _release_empty(NE, FL, FREE, meta, np.int64(chain))
        chain = nxt
    _release_empty(NE, FL, FREE, meta, x)
    _repair(T, V, C, A, K, NE, P, FL, meta, nb)
    y = P[nb]
    while y != a:  # the neighbour's chain up to the ancestor changed too
        _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(y))
        y = P[y]


@helper
def _subtree(V, C, A, NE, P, FL, meta, tmp, x, slot):
    """The product of x's whole subtree into tmp[:, slot]: its up-aggregate, or for a
    right-spine node a walk down the spine (whose other children store up-aggregates)."""
    MA = C.shape[1] - 1
    if _kind(FL, P, meta, x) == UP:
        for f in range(A.shape[0]):
            tmp[f, slot] = A[f, x]
        return
    first = True
    while True:
        leaf = FL[x] & LEAF
        n = NE[x]
        for k in range(n + 1):
            if not leaf and k < n:
                _fold_into(tmp, slot, A, C[x, k], first)
                first = False
            if k < n:
                _fold_into(tmp, slot, V, x * MA + k, first)
                first = False
        if leaf:
            break
        x = C[x, n]
        if _kind(FL, P, meta, x) == UP:
            _fold_into(tmp, slot, A, x, first)
            first = False
            break
    if first:
        identity(tmp, slot)


@helper
def _suffix(T, V, C, A, NE, P, FL, meta, tmp, x, lo, slot):
    """The product of the entries of x's subtree with time > lo into tmp[:, slot] (from the
    root: a range query ending at the youngest entry, FiBA paper Section 4): down the path of
    lo, combining what lies right of it on the way."""
    MA = T.shape[1]
    identity(tmp, 5)  # what lies right of the current node, already combined
    while True:
        n = NE[x]
        leaf = FL[x] & LEAF
        i = 0
        while i < n and T[x, i] <= lo:
            i += 1
        identity(tmp, 6)
        whole = i > 0 and T[x, i - 1] == lo and not leaf  # child i lies entirely right of lo
        if whole:
            _subtree(V, C, A, NE, P, FL, meta, tmp, C[x, i], 4)
            combine(tmp, 6, tmp, 6, tmp, 4)
        for k in range(i, n):
            combine(tmp, 6, tmp, 6, V, x * MA + k)
            if not leaf:
                _subtree(V, C, A, NE, P, FL, meta, tmp, C[x, k + 1], 4)
                combine(tmp, 6, tmp, 6, tmp, 4)
        combine(tmp, 5, tmp, 6, tmp, 5)
        if leaf or whole:
            break
        x = C[x, i]
    for f in range(tmp.shape[0]):
        tmp[f, slot] = tmp[f, 5]


@helper
def _prefix(T, V, C, A, NE, FL, tmp, x, hi, slot):
    """The product of the entries of x's subtree with time <= hi into tmp[:, slot]: down the
    path of hi, combining what lies left of it. x must not be on the left spine (its
    subtrees store up-aggregates then, FiBA paper Fig. 10)."""
    MA = T.shape[1]
    identity(tmp, slot)
    while True:
        n = NE[x]
        leaf = FL[x] & LEAF
        j = 0
        while j < n and T[x, j] <= hi:
            if not leaf:
                combine(tmp, slot, tmp, slot, A, C[x, j])
            combine(tmp, slot, tmp, slot, V, x * MA + j)
            j += 1
        if leaf or (j > 0 and T[x, j - 1] == hi):  # child j lies entirely right of hi
            return
        x = C[x, j]


@helper
def _range(T, V, C, A, NE, P, FL, meta, tmp, lo, hi, slot):
    """The product of the entries with lo <= t <= hi (finite times) into tmp[:, slot] (FiBA
    paper Section 4, Fig. 10, without recursion): down from the root while the range lies
    inside one child; at the node that holds entries of the range, its entries and the
    children between them (up-aggregates), a suffix of the child on the left and a prefix of
    the child on the right. O(log n)."""
    MA = T.shape[1]
    x = meta[ROOT]
    while True:
        n = NE[x]
        i = 0
        while i < n and T[x, i] < lo:
            i += 1
        j = i
        while j < n and T[x, j] <= hi:
            j += 1
        if i < j:
            break
        if FL[x] & LEAF:
            identity(tmp, slot)
            return
        x = C[x, i]
    leaf = FL[x] & LEAF
    for f in range(tmp.shape[0]):
        tmp[f, 3] = V[f, x * MA + i]
    for k in range(i + 1, j):
        if not leaf:
            combine(tmp, 3, tmp, 3, A, C[x, k])
        combine(tmp, 3, tmp, 3, V, x * MA + k)
    if not leaf and T[x, i] > lo:  # entries >= lo, as entries > the float just below lo
        below = np.nextafter(lo, -np.inf)
        _suffix(T, V, C, A, NE, P, FL, meta, tmp, np.int64(C[x, i]), below, np.int64(1))
        combine(tmp, 3, tmp, 1, tmp, 3)
    if not leaf and T[x, j - 1] < hi:
        _prefix(T, V, C, A, NE, FL, tmp, C[x, j], hi, 2)
        combine(tmp, 3, tmp, 3, tmp, 2)
    for f in range(tmp.shape[0]):
        tmp[f, slot] = tmp[f, 3]


@helper
def _evict_one(T, V, C, A, K, NE, P, FL, FREE, meta, t):
    """Remove the entry at exactly t (FiBA paper Fig. 7, ``evict``, and Fig. 8,
    ``evictInner``: an inner node's entry is overwritten by its neighbour from a leaf, taken
    from the right subtree when that one can spare it). False when there is none."""
    MA = T.shape[1]
    node, i, found = _search(T, C, NE, P, FL, meta, t)
    if not found:
        return False
    if FL[node] & LEAF:
        _drop(T, V, NE, np.int64(node), np.int64(i))
        top, hitleft, hitright = _rebalance_for_evict(T, V, C, A, K, NE, P, FL, FREE, meta, node)
    else:
        rgt = C[node, i + 1]
        if NE[rgt] + 1 > meta[MU]:
            leaf = rgt
            while not (FL[leaf] & LEAF):
                leaf = C[leaf, 0]
            k = 0
        else:
            leaf = C[node, i]
            while not (FL[leaf] & LEAF):
                leaf = C[leaf, NE[leaf]]
            k = NE[leaf] - 1
        T[node, i] = T[leaf, k]
        for f in range(V.shape[0]):
            V[f, node * MA + i] = V[f, leaf * MA + k]
        _drop(T, V, NE, np.int64(leaf), np.int64(k))
        top, hitleft, hitright = _rebalance_for_evict(
            T, V, C, A, K, NE, P, FL, FREE, meta, np.int64(leaf)
        )
        y = P[top]
        while y >= 0 and y != node:
            y = P[y]
        if y == node:  # top lies below the overwritten node: repair the path up to it
            while top != node:
                _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(top))
                top = P[top]
                hitleft = hitleft or (FL[top] & LEFT) != 0
                hitright = hitright or (FL[top] & RIGHT) != 0
    _repair_aggs(T, V, C, A, K, NE, P, FL, meta, top, hitleft, hitright)
    return True


@helper
def _drop(T, V, NE, x, i):
    """Drop entry i of the leaf x."""
    MA = T.shape[1]
    n = NE[x] - 1
    for k in range(i, n):
        T[x, k] = T[x, k + 1]
        for f in range(V.shape[0]):
            V[f, x * MA + k] = V[f, x * MA + k + 1]
    NE[x] = n


@helper
def _repair_leaf(V, A, K, NE, P, meta, x, right):
    """_repair for a spine leaf that is not the root: its entries and, unless its parent is
    the root, the parent's aggregate (before them on the right spine, after on the left)."""
    MA = V.shape[1] // A.shape[1]
    n = NE[x]
    p = P[x]
    part = P[p] >= 0
    cnt = n
    if right and part:
        for f in range(A.shape[0]):
            A[f, x] = A[f, p]
        cnt += K[p]
        k0 = 0
    else:
        for f in range(A.shape[0]):
            A[f, x] = V[f, x * MA]
        k0 = 1
    for k in range(k0, n):
        combine(A, x, A, x, V, x * MA + k)
    if not right and part:
        combine(A, x, A, x, A, p)
        cnt += K[p]
    K[x] = cnt


#: the leaf helpers again, inlined where the in-order fast paths call them on every element
_repair_leaf_inline = inline(_repair_leaf.py_func)
_shift_left_inline = inline(_shift_left.py_func)


@inline
def _append_fast(T, V, C, A, K, NE, P, FL, FREE, meta, code, t, x, arg):
    """An insert after every entry (the in-order case, FiBA paper Section 3.2: O(1)) into the
    right finger's leaf, or a split of that leaf (``_split_right``); False when the general
    insert is needed."""
    rf = meta[RF]
    n = NE[rf]
    MA = T.shape[1]
    if meta[CLASSIC] != 0 or P[rf] < 0 or n == 0 or not T[rf, n - 1] < t:
        return False
    if n + 1 < MA:
        T[rf, n] = t
        lift(code, V, rf * MA + n, x, arg)
        NE[rf] = n + 1
        _repair_leaf_inline(V, A, K, NE, P, meta, rf, True)
        return True
    return _split_right(T, V, C, A, K, NE, P, FL, FREE, meta, code, t, x, arg)


@helper
def _split_right(T, V, C, A, K, NE, P, FL, FREE, meta, code, t, x, arg):
    """The right finger's leaf is full: split it as Fig. 7 does, its last entries and the new
    one into a new right finger, its middle entry up into the parent; False (nothing done)
    when that would overflow the parent or the pool."""
    rf = meta[RF]
    n = NE[rf]
    MA = T.shape[1]
    p = P[rf]
    if NE[p] + 1 >= MA or (meta[FREE_TOP] == 0 and meta[NEXT] >= T.shape[0]):
        return False
    mu = meta[MU]
    y = _alloc(T, C, NE, P, FL, FREE, meta, np.bool_(True))
    for k in range(mu + 1, n):
        T[y, k - mu - 1] = T[rf, k]
        for f in range(V.shape[0]):
            V[f, y * MA + k - mu - 1] = V[f, rf * MA + k]
    m = n - mu - 1
    T[y, m] = t
    lift(code, V, y * MA + m, x, arg)
    NE[y] = m + 1
    q = NE[p]  # rf is p's last child: the middle entry and y go at the end
    T[p, q] = T[rf, mu]
    for f in range(V.shape[0]):
        V[f, p * MA + q] = V[f, rf * MA + mu]
    C[p, q + 1] = y
    NE[p] = q + 1
    P[y] = p
    NE[rf] = mu
    FL[rf] &= ~RIGHT
    FL[y] |= RIGHT
    meta[RF] = y
    for f in range(A.shape[0]):  # rf is now off both spines: its up-aggregate
        A[f, rf] = V[f, rf * MA]
    for k in range(1, mu):
        combine(A, rf, A, rf, V, rf * MA + k)
    K[rf] = mu
    _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(p))  # first: y's aggregate includes p's
    _repair_leaf(V, A, K, NE, P, meta, np.int64(y), np.bool_(True))
    return True


@inline
def _evict_fast(T, V, C, A, K, NE, P, FL, FREE, meta, t):
    """bulk_evict(t) when only the left finger's leaf loses entries: it keeps its arity, or
    falls one short (``_evict_short``): the in-order cases of FiBA paper Fig. 7. How many it
    removed, or -1 for the general path."""
    lf = meta[LF]
    n = NE[lf]
    if n == 0:
        return -1
    if t < T[lf, 0]:
        return 0
    if meta[CLASSIC] != 0 or P[lf] < 0:
        return -1
    mu = meta[MU]
    i = 0
    while i < n and T[lf, i] <= t:
        i += 1
    if n - i + 1 >= mu:
        _shift_left_inline(T, V, C, NE, FL, lf, i)
        _repair_leaf_inline(V, A, K, NE, P, meta, lf, False)
        return i
    return _evict_short(T, V, C, A, K, NE, P, FL, FREE, meta, lf, i, t)


@helper
def _evict_short(T, V, C, A, K, NE, P, FL, FREE, meta, lf, i, t):
    """The left finger's leaf falls one short after losing its first i entries (and nothing
    beyond it goes): the single evict's rebalancing (FiBA paper Fig. 7), its two common cases
    (move one entry from the sibling leaf, or merge with it under a parent that keeps its
    arity) written out, the rest through ``_rebalance_for_evict``. -1 (nothing done) when
    more than the leaf goes or it falls further short: the general bulk evict."""
    n = NE[lf]
    mu = meta[MU]
    p = P[lf]
    s = C[p, 1]
    if n - i + 2 != mu or not (i < n or t < T[p, 0]):
        return -1
    MA = T.shape[1]
    common = i < n and P[p] >= 0 and not (FL[s] & RIGHT)
    _shift_left(T, V, C, NE, FL, np.int64(lf), np.int64(i))
    if not common or (NE[s] + 1 <= mu and NE[p] < mu):
        top, hitleft, hitright = _rebalance_for_evict(T, V, C, A, K, NE, P, FL, FREE, meta, lf)
        _repair_aggs(T, V, C, A, K, NE, P, FL, meta, top, hitleft, hitright)
        return i
    m = NE[lf]
    if NE[s] + 1 > mu:  # the sibling has one to spare: move it through the separator
        T[lf, m] = T[p, 0]
        T[p, 0] = T[s, 0]
        for f in range(V.shape[0]):
            V[f, lf * MA + m] = V[f, p * MA]
            V[f, p * MA] = V[f, s * MA]
        NE[lf] = m + 1
        _shift_left(T, V, C, NE, FL, np.int64(s), np.int64(1))
        for f in range(A.shape[0]):  # the sibling's up-aggregate: a leaf off both spines
            A[f, s] = V[f, s * MA]
        for k in range(1, NE[s]):
            combine(A, s, A, s, V, s * MA + k)
        K[s] = NE[s]
    else:  # lf, the separator and the sibling become lf
        T[lf, m] = T[p, 0]
        for f in range(V.shape[0]):
            V[f, lf * MA + m] = V[f, p * MA]
        for k in range(NE[s]):
            T[lf, m + 1 + k] = T[s, k]
            for f in range(V.shape[0]):
                V[f, lf * MA + m + 1 + k] = V[f, s * MA + k]
        NE[lf] = m + 1 + NE[s]
        for k in range(NE[p] - 1):  # the parent loses separator 0 and child 1
            T[p, k] = T[p, k + 1]
            for f in range(V.shape[0]):
                V[f, p * MA + k] = V[f, p * MA + k + 1]
            C[p, k + 1] = C[p, k + 2]
        NE[p] -= 1
        NE[s] = 0
        FL[s] = LEAF
        _release(FREE, meta, s)
    _repair(T, V, C, A, K, NE, P, FL, meta, np.int64(p))  # first: lf's aggregate includes p's
    _repair_leaf(V, A, K, NE, P, meta, np.int64(lf), np.bool_(False))
    return i


@inline
def _add(T, V, C, A, K, NE, P, FL, FREE, meta, tmp, code, t, x, arg):
    """insert(t, x): the in-order fast path, else the general insert."""
    if not _append_fast(T, V, C, A, K, NE, P, FL, FREE, meta, code, t, x, arg):
        _insert(T, V, C, A, K, NE, P, FL, FREE, meta, tmp, code, t, x, arg)


@inline
def _cut(T, V, C, A, K, NE, P, FL, FREE, meta, bnd, anc, nbr, t):
    """bulk_evict(t): the left finger's fast path, else the bulk paper's bulk evict."""
    m = _evict_fast(T, V, C, A, K, NE, P, FL, FREE, meta, t)
    if m < 0:
        m = _bulk_evict(T, V, C, A, K, NE, P, FL, FREE, meta, bnd, anc, nbr, t)
    return m


@inline
def _room(T, meta):
    """Whether the node pool has room for one more operation (else the caller grows it)."""
    return meta[FREE_TOP] > 0 or meta[NEXT] + 64 < T.shape[0]


@kernel
def btree_slide(
    T,
    V,
    C,
    A,
    K,
    NE,
    P,
    FL,
    FREE,
    meta,
    tmp,
    bnd,
    anc,
    nbr,
    code,
    times,
    values,
    args,
    sizes,
    out,
    start,
    clock,
):
    """Time windows of ``sizes`` over (possibly out-of-order) ``times`` (``sliding_aggregate``):
    for each element from ``start`` on, insert it (with its arg), advance ``clock[0]`` (the
    largest time so far), evict what fell out of the largest window, and answer every size
    into ``out[e, :]`` (one size: the whole window; several: suffix queries). Only what this
    needs is called, so that a first call compiles less than :func:`btree_run`. Returns the
    next element when the node pool may run short, -1 when done."""
    now = clock[0]
    k = sizes.shape[0]
    largest = sizes[0]
    for j in range(k):
        largest = max(largest, sizes[j])
    for e in range(start, times.shape[0]):
        if not _room(T, meta):
            clock[0] = now
            return e
        t = times[e]
        _add(T, V, C, A, K, NE, P, FL, FREE, meta, tmp, code, t, values[e], args[e])
        now = max(now, t)
        _cut(T, V, C, A, K, NE, P, FL, FREE, meta, bnd, anc, nbr, now - largest)
        for j in range(k):
            if k > 1:
                _suffix(
                    T, V, C, A, NE, P, FL, meta, tmp, meta[ROOT], now - sizes[j], np.int64(ANSWER)
                )
            else:
                _query_all(A, P, FL, meta, tmp, ANSWER)
            out[e, j] = lower(code, tmp, ANSWER)
    clock[0] = now
    return -1


@kernel
def btree_run(
    T, V, C, A, K, NE, P, FL, FREE, meta, tmp, bnd, anc, nbr, code, ops, a, b, c, out, start
):
    """Operation ``ops[e]`` for each element from ``start`` on, results in ``out[e, 0]``:

    * OP_INSERT insert(a, b) with argument c (argmin/argmax); OP_EVICT evict(a): 1 or 0;
      OP_BULK_EVICT bulk_evict(a): how many; OP_RANGE query(a, b); OP_ALL (any other) query():
      the lowered aggregate;
    * OP_ROUND a round of the FiBA paper's experiments: insert(a, b), bulk_evict(c), query().

    Each primitive is called from one place (the fast paths are inlined). Returns the next
    element when the node pool may run short (the caller grows it and calls again), -1 when
    done."""
    for e in range(start, ops.shape[0]):
        if not _room(T, meta):
            return e
        op = ops[e]
        t = a[e]
        if op == OP_EVICT:
            out[e, 0] = 1.0 if _evict_one(T, V, C, A, K, NE, P, FL, FREE, meta, t) else 0.0
            continue
        if op in (OP_INSERT, OP_ROUND):
            _add(
                T,
                V,
                C,
                A,
                K,
                NE,
                P,
                FL,
                FREE,
                meta,
                tmp,
                code,
                t,
                b[e],
                t if op == OP_ROUND else c[e],
            )
            if op == OP_INSERT:
                continue
        if op in (OP_BULK_EVICT, OP_ROUND):
            m = _cut(
                T,
                V,
                C,
                A,
                K,
                NE,
                P,
                FL,
                FREE,
                meta,
                bnd,
                anc,
                nbr,
                t if op == OP_BULK_EVICT else c[e],
            )
            if op == OP_BULK_EVICT:
                out[e, 0] = m
                continue
        if op == OP_RANGE:
            _range(T, V, C, A, NE, P, FL, meta, tmp, t, b[e], ANSWER)
        else:
            _query_all(A, P, FL, meta, tmp, ANSWER)
        out[e, 0] = lower(code, tmp, ANSWER)
    return -1
