"""What every compiled FIFO algorithm shares: the record of how its state arrays are sized and
grow (:class:`Storage`, read by :class:`windowagg.storage.fifo_state.FifoState`), and the
copy of one partial."""

from typing import NamedTuple

from ..jit import inline


class Storage(NamedTuple):
    """How an algorithm's arrays are sized and how they grow.

    ``rings``: the arrays with one column per stream position (``p & (cap - 1)``), moved into
    the new capacity when the window outgrows it (the others keep one column); ``iaux_rows``:
    the int rows of ``iaux`` when it is a ring; ``tree``: ``aux`` is a tree of ``2 cap``
    partials, ``"flat"`` (FlatFAT: leaves at ``cap + p``) or ``"levels"`` (B-Int: leaves at
    ``p``), its leaves moved and the rest rebuilt on growth; ``ranges``: ``aux`` holds one
    partial per range and the whole window, ``iaux`` the ranges (SlickDeque Inv), kept on
    growth; ``deque``: only the deque's nodes move (SlickDeque Non-Inv, slots 2 and 3)."""

    rings: tuple[str, ...]
    iaux_rows: int = 1
    tree: str = ""
    ranges: bool = False
    deque: bool = False


@inline
def copy_partial(d, di, s, si):
    for f in range(d.shape[0]):
        d[f, di] = s[f, si]


@inline
def no_rebuild(aux, ptr):
    pass
