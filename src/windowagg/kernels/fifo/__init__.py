"""Compiled FIFO aggregators: the ten algorithms of :mod:`windowagg.fifo` as four primitives
each over one state layout, so a single driver (:mod:`windowagg.kernels.driver`) runs them
all; one module per algorithm, named after its reference (SlickDeque's two variants:
``slick_inv``, ``slick_noninv``), with its named slots and its :class:`.state.Storage`.

``lift, combine, identity, inverse`` are free names, bound to one family's functions
(:mod:`windowagg.kernels.families`) by
:func:`windowagg.kernels.specialize.fifo_primitives`.

State (allocated by :mod:`windowagg.storage.fifo_state` as each module's ``STORAGE`` says):
``buf`` and ``aux`` float64 ``[W, .]`` arrays of partials, ``iaux`` int64 ``[2, .]``, ``ptr``
int64 scalars (``ptr[0]`` = F, the absolute position of the oldest element, ``ptr[1]`` = E,
one past the youngest; the algorithm's own named slots from 2) and ``tmp`` float64 ``[W, 8]``
scratch partials. Rings are indexed by absolute position ``& (cap - 1)``.

Primitives of algorithm ``a`` (``a_query_last`` for the window-sharing ones, ``a_rebuild``
for FlatFAT and B-Int)::

    a_push(code, buf, aux, iaux, ptr, tmp, x, arg)
    a_pop(buf, aux, iaux, ptr, tmp)
    a_query(buf, aux, iaux, ptr, tmp, dst, di)          # whole window into dst[:, di]
    a_query_last(buf, aux, iaux, ptr, tmp, r, dst, di)  # the youngest r, 0 < r < n
    a_rebuild(aux, ptr)                                 # after the capacity grew

Each follows the pseudocode of the Python reference module of the same name (and its paper).
"""
