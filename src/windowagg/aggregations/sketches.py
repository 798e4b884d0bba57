"""Sketches (no kernel family): a Bloom filter and HyperLogLog (DataSketches), mergeable summaries
of a window's values."""

from __future__ import annotations

import hashlib
import numbers
import struct
from dataclasses import dataclass
from typing import Any

import datasketches

from .protocol import Aggregation, is_missing
from .record import Evaluation, Facts


def _hash_bytes(x: Any) -> bytes:
    """A stable encoding (the same in every process) of a value for hashing."""
    if isinstance(x, bytes):
        return b"b" + x
    if isinstance(x, str):
        return b"s" + x.encode()
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        f = float(x)
        if f.is_integer() and abs(f) < 2**63:
            return b"i" + struct.pack("<q", int(f))
        return b"f" + struct.pack("<d", f)
    return b"r" + repr(x).encode()


@dataclass(frozen=True, repr=False)
class BloomFilter:
    """Result of the ``bloom`` aggregation: supports ``x in filter`` (no false negatives)."""

    bits: int
    nbits: int
    hashes: int

    def _positions(self, x: Any) -> list[int]:
        return _bloom_positions(x, self.nbits, self.hashes)

    def __contains__(self, x: Any) -> bool:
        return all(self.bits >> i & 1 for i in self._positions(x))

    def __len__(self) -> int:
        """Number of bits set."""
        return self.bits.bit_count()

    def __repr__(self) -> str:
        return f"BloomFilter(nbits={self.nbits}, hashes={self.hashes}, set={len(self)})"


def _bloom_positions(x: Any, nbits: int, hashes: int) -> list[int]:
    digest = hashlib.blake2b(_hash_bytes(x), digest_size=16).digest()
    h1, h2 = struct.unpack("<QQ", digest)
    h2 |= 1
    return [(h1 + i * h2) % nbits for i in range(hashes)]


class Bloom(Aggregation):
    """Bloom filter over the window's values (``bits`` bits, ``hashes`` hash functions, double
    hashing on BLAKE2b). Partial: the bit set as an int; combine is bitwise or."""

    name = "bloom"
    facts = Facts(result="filter")
    identity = 0
    commutative = True

    def __init__(self, bits: int = 2**14, hashes: int = 4):
        for label, v in (("bits", bits), ("hashes", hashes)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"bloom needs a positive integer {label}, got {label}={v!r}")
        self.bits = int(bits)
        self.hashes = int(hashes)

    def params(self):
        return {"bits": self.bits, "hashes": self.hashes}

    def lift(self, x):
        if is_missing(x):
            return 0
        out = 0
        for i in _bloom_positions(x, self.bits, self.hashes):
            out |= 1 << i
        return out

    def combine(self, a, b):
        return a | b

    def lower(self, p):
        return None if p == 0 else BloomFilter(p, self.bits, self.hashes)


class HyperLogLog(Aggregation):
    """Distinct count estimate with Apache DataSketches' HLL sketch (``lg_k`` = log2 of the
    number of buckets). Partials are serialized compact sketches (bytes): immutable and
    picklable; the identity is ``b""``. Rolling frames and windows of tables count exactly
    instead (a count per value costs O(1) per row there, less than merging sketches)."""

    name = "hll"
    facts = Facts(empty=0.0, result="estimate", evaluation=Evaluation.DISTINCT)
    identity = b""
    commutative = True

    def __init__(self, lg_k: int = 12):
        if isinstance(lg_k, bool) or not isinstance(lg_k, numbers.Integral) or not 4 <= lg_k <= 21:
            raise ValueError(f"hll needs an integer lg_k in [4, 21], got lg_k={lg_k!r}")
        self.lg_k = int(lg_k)

    def params(self):
        return {"lg_k": self.lg_k}

    def lift(self, x):
        if is_missing(x):
            return b""
        s = datasketches.hll_sketch(self.lg_k)
        if isinstance(x, numbers.Real) and not isinstance(x, bool):
            f = float(x)
            s.update(int(f) if f.is_integer() and abs(f) < 2**63 else f)
        elif isinstance(x, str | bytes | int):
            s.update(x)
        else:
            s.update(repr(x))
        return s.serialize_compact()

    def combine(self, a, b):
        if not a:
            return b
        if not b:
            return a
        u = datasketches.hll_union(self.lg_k)
        u.update(datasketches.hll_sketch.deserialize(a))
        u.update(datasketches.hll_sketch.deserialize(b))
        return u.get_result().serialize_compact()

    def lower(self, p):
        return 0.0 if not p else datasketches.hll_sketch.deserialize(p).get_estimate()
