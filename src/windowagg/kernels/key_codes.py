"""Whole-number codes for keys that are not whole numbers themselves (strings, binary, several
columns): a hash table, kept from call to call, of the byte strings seen so far, each with the
code it was given (0, 1, 2... in the order they were first seen).

The table is open addressing with linear probing over a power-of-two number of slots, each
holding a code or -1 (empty); it is kept at most half full, so a probe ends after about two
slots. A slot is taken only where the stored hash and every byte are equal: two byte strings
with the same hash get codes of their own (a collision costs a probe, never a wrong code).
The known byte strings lie one after another (``data``, each from ``offsets[c]`` to
``offsets[c + 1] - 1``), as an Arrow binary array's do. Python grows the arrays
(:class:`~windowagg.engine.rolling.key_codes.KeyCodes`): kernels never allocate."""

import numpy as np

from .jit import inline, kernel

#: FNV-1a's 64-bit offset basis and prime, as signed int64 (numba multiplies int64 with
#: wraparound, as the hash wants)
_BASIS = np.int64(-3750763034362895579)
_PRIME = np.int64(1099511628211)


@kernel
def byte_hashes(offsets, data, out):
    """``out[i]``: a 64-bit hash of byte string ``i`` (``data[offsets[i]:offsets[i + 1]]``):
    FNV-1a over its bytes and its length, then a finalizer that spreads every bit to the low
    ones the slots are chosen by (splitmix64's)."""
    for i in range(len(out)):
        h = _BASIS
        a, b = offsets[i], offsets[i + 1]
        for j in range(a, b):
            h = (h ^ np.int64(data[j])) * _PRIME
        h = (h ^ (b - a)) * _PRIME
        u = np.uint64(h)
        u = (u ^ (u >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        u = (u ^ (u >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out[i] = np.int64(u ^ (u >> np.uint64(31)))


@inline
def _same(data, a, b, known, c, d):
    """Whether ``data[a:b]`` and ``known[c:d]`` hold the same bytes."""
    same = b - a == d - c
    j = 0
    while same and j < b - a:
        same = data[a + j] == known[c + j]
        j += 1
    return same


@inline
def _find(hashes, offsets, data, i, slots, known):
    """The slot of byte string ``i``: the one holding its code, or the empty one where its
    probe ends (the string is not known)."""
    mask = slots.shape[0] - 1
    h = hashes[i]
    s = h & mask
    a, b = offsets[i], offsets[i + 1]
    while True:
        if slots[s, 0] < 0:
            return s
        if slots[s, 1] == h and _same(data, a, b, known, slots[s, 2], slots[s, 3]):
            return s
        s = (s + 1) & mask


@kernel
def looked_up(hashes, offsets, data, slots, known, out):
    """``out[i]``: the code of byte string ``i``, -1 where it is not known. Returns how many
    are not."""
    missing = 0
    for i in range(len(out)):
        c = slots[_find(hashes, offsets, data, i, slots, known), 0]
        out[i] = c
        if c < 0:
            missing += 1
    return missing


@kernel
def added(hashes, offsets, data, rows, slots, known, n, at, out):
    """The byte strings ``rows`` given their codes in ``out``: a string not known yet gets
    the next code from ``n``, its bytes written to ``known`` from ``at`` (it has room for
    every row's; ``slots`` stays at most half full). Returns the codes known then and where
    their bytes end."""
    for i in rows:
        s = _find(hashes, offsets, data, i, slots, known)
        if slots[s, 0] < 0:
            a, b = offsets[i], offsets[i + 1]
            for j in range(b - a):
                known[at + j] = data[a + j]
            slots[s, 0], slots[s, 1], slots[s, 2], slots[s, 3] = n, hashes[i], at, at + b - a
            n += 1
            at += b - a
        out[i] = slots[s, 0]
    return n, at


@kernel
def rehashed(old, slots):
    """``slots`` (all empty: codes -1) given every code of the table ``old``: a larger
    table's."""
    mask = slots.shape[0] - 1
    for r in range(old.shape[0]):
        if old[r, 0] >= 0:
            s = old[r, 1] & mask
            while slots[s, 0] >= 0:
                s = (s + 1) & mask
            for j in range(4):
                slots[s, j] = old[r, j]
