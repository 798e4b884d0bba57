"""Point-in-time requests of a range of an online state's keys answered in one compiled call,
from the keys' runs in the parts as they lie: the keys a chunk at a time, each chunk's runs
merged in time order with its column (:func:`~.key_order.merged_keys`), its segments found,
and every entry answered over it (:func:`~.entries_at.entries_at`), the answers written at
the requests' rows of the batch. A chunk's events stay in the core's own cache from their
merge to their answers, and no step between them returns to Python (an online state's
batch on several threads: each range's call holds no lock of the interpreter)."""

from .entries_at import entries_at
from .jit import kernel
from .key_order import merged_keys


@kernel
def runs_at(
    laid_times,
    laid_values,
    run_lo,
    run_hi,
    first,
    stop,
    place,
    qtimes,
    at,
    chunk,
    lims,
    rows,
    lo_off,
    hi_off,
    unbounded,
    every,
    how,
    frame,
    limit,
    known,
    out_f,
    out_i,
    null,
    times,
    values,
    starts,
    sizes,
    counts,
    head,
    seg,
    qseg,
    lo,
    hi,
    got_f,
    got_i,
    got_null,
    sums,
    parts,
    overflow,
    keys,
    ids,
    tally,
    dq,
    ptr,
    picks,
):
    """Keys ``first`` to ``stop - 1`` of the runs (key ``w``'s rows of part ``p``:
    ``run_lo[p, w]`` to ``run_hi[p, w] - 1`` of the laid ``laid_times`` and ``laid_values``,
    :func:`~.key_order.merged_runs`) at the requests of key ``place[j]`` (-1: a null key,
    first; then by key, then time ``qtimes[j]``), each answer written at ``at[j]`` of the
    batch's ``out_f``, ``out_i`` and ``null`` (as :func:`~.entries_at.entries_at` writes
    them). The keys go in chunks of at most ``chunk`` events (a key of more, alone): each
    chunk's events merged into ``times`` and ``values``, each of its keys a segment (an empty
    one where it holds no event: its requests' frames are empty), and its requests answered
    into ``got_f``, ``got_i`` and ``got_null`` (room for every request) before they are
    written at their rows. The rest is :func:`~.entries_at.entries_at`'s (``lims`` to
    ``known``) and work space: ``times``, ``values``, ``starts`` and ``sizes`` one per event
    of the largest chunk, ``counts`` one per key, ``head`` one per part, ``seg`` one more
    than the keys, ``qseg``, ``sums``, ``overflow`` and ``picks`` one per request, ``lo``
    and ``hi`` one per frame and request, ``keys``, ``ids`` and ``dq`` as entries_at's over
    the largest chunk's events (empty where not read), ``tally`` ``limit``. Returns False
    (having answered some requests maybe, none kept) where a chunk's values are ones the
    evaluators treat apart."""
    nf = rows.shape[0]
    ne = how.shape[0]
    n = place.shape[0]
    j = 0
    w = first
    while True:  # one chunk at least (requests of a null key alone: none of its keys)
        # the chunk's keys: at least one, then as many as fit in ``chunk`` events
        end = w
        events = 0
        while end < stop:
            size = 0
            for p in range(run_lo.shape[0]):
                size += run_hi[p, end] - run_lo[p, end]
            if end > w and events + size > chunk:
                break
            events += size
            end += 1
        merged_keys(
            laid_times,
            laid_values,
            run_lo,
            run_hi,
            w,
            end,
            starts,
            sizes,
            times,
            values,
            counts,
            head,
        )
        seg[0] = 0
        for k in range(w, end):
            seg[k - w + 1] = seg[k - w] + counts[k]
        start = j
        while j < n and place[j] < end:
            qseg[j - start] = place[j] - w if place[j] >= 0 else -1
            j += 1
        q = j - start
        ok = entries_at(
            times[:events],
            seg[: end - w + 1],
            qseg[:q],
            qtimes[start:j],
            lims,
            rows,
            lo_off,
            hi_off,
            unbounded,
            values[: events if values.shape[0] else 0],
            every,
            how,
            frame,
            limit,
            known,
            lo[: nf * q].reshape((nf, q)),
            hi[: nf * q].reshape((nf, q)),
            got_f[: ne * q].reshape((ne, q)),
            got_i[: ne * q].reshape((ne, q)),
            got_null[: ne * q].reshape((ne, q)),
            sums[:q],
            parts,
            overflow[:q],
            keys[: events if keys.shape[0] else 0],
            ids[: events if ids.shape[0] else 0],
            tally,
            dq[: events + 1 if dq.shape[0] else 0],
            ptr,
            picks[:q].reshape((1, q)),
        )
        if not ok:
            return False
        for e in range(ne):
            for i in range(q):
                r = at[start + i]
                out_f[e, r] = got_f[e * q + i]
                out_i[e, r] = got_i[e * q + i]
                null[e, r] = got_null[e * q + i]
        w = end
        if w >= stop:
            return True
