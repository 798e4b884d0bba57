"""User-defined aggregations for the tests: none inherits from windowagg's classes, none is
commutative, so they reveal any algorithm that combines in the wrong order."""

from __future__ import annotations

from typing import Any

import windowagg
from windowagg.aggregations import facts

P = 1_000_003  # a prime: 2x2 matrices over Z_P with non-zero determinant form a group


class Concat:
    """String concatenation: associative, not commutative, not invertible, not selective."""

    name = "concat"
    identity = ""

    def lift(self, x: Any) -> str:
        return f"{x}," if x == x else ""

    def combine(self, a: str, b: str) -> str:
        return a + b

    def lower(self, p: str) -> str:
        return p


def _mul(a: tuple, b: tuple) -> tuple:
    a0, a1, a2, a3 = a
    b0, b1, b2, b3 = b
    return (
        (a0 * b0 + a1 * b2) % P,
        (a0 * b1 + a1 * b3) % P,
        (a2 * b0 + a3 * b2) % P,
        (a2 * b1 + a3 * b3) % P,
    )


class MatMul:
    """Products of 2x2 matrices [[x, 1], [1, 0]] modulo a prime (continuants): associative, not
    commutative, invertible from the left (inverse(a, b) = b^-1 a)."""

    name = "matmul"
    identity = (1, 0, 0, 1)
    invertible = True

    def lift(self, x: Any) -> tuple:
        if x != x:
            return self.identity
        return (int(x) % P, 1, 1, 0)

    def combine(self, a: tuple, b: tuple) -> tuple:
        return _mul(a, b)

    def inverse(self, a: tuple, b: tuple) -> tuple:
        b0, b1, b2, b3 = b
        det_inv = pow((b0 * b3 - b1 * b2) % P, P - 2, P)
        b_inv = ((b3 * det_inv) % P, (-b1 * det_inv) % P, (-b2 * det_inv) % P, (b0 * det_inv) % P)
        return _mul(b_inv, a)

    def lower(self, p: tuple) -> tuple:
        return p


class Counting:
    """Wraps an aggregation and counts the invocations of ``combine``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.invertible = getattr(inner, "invertible", False)
        self.commutative = getattr(inner, "commutative", False)
        self.selective = getattr(inner, "selective", False)
        self.calls = 0

    def lift(self, x: Any) -> Any:
        return self.inner.lift(x)

    def combine(self, a: Any, b: Any) -> Any:
        self.calls += 1
        return self.inner.combine(a, b)

    def inverse(self, a: Any, b: Any) -> Any:
        return self.inner.inverse(a, b)

    def lower(self, p: Any) -> Any:
        return self.inner.lower(p)


#: the built-ins with a compiled kernel, read from their records
COMPILED = tuple(
    name for name, factory in windowagg.AGGREGATIONS.items() if facts(factory()).kernel is not None
)

#: where the compiled tests run the kernel families of Spark's statistics (moments,
#: co-moments, product): every algorithm is generic in its family and reads only the shape of
#: the state (its width, whether it has an inverse, whether it selects), which the other
#: families already give it on every algorithm; these three run on the FIFO algorithm of
#: rolling frames and DABA, and the widest state (co-moments, six values) on FiBA too. Every
#: (algorithm, family) pair compiles once, for about 5 s (FIFO) to 75 s (FiBA).
STATISTICS = {
    "moments": ("two_stacks_lite", "daba"),
    "comoments": ("two_stacks_lite", "daba", "fiba"),
    "product": ("two_stacks_lite", "daba"),
}


def crossed(algorithm: str, name: str) -> bool:
    """Whether the compiled tests run aggregation ``name`` on ``algorithm``."""
    kernel = facts(windowagg.AGGREGATIONS[name]()).kernel
    return kernel is None or algorithm in STATISTICS.get(str(kernel.family), (algorithm,))
