"""Exceptions shared by every layer."""

from __future__ import annotations

__all__ = ["ArithmeticOverflowError", "EmptyWindowError"]


class EmptyWindowError(IndexError):
    """``evict()`` on an empty window."""


class ArithmeticOverflowError(ArithmeticError):
    """An integer sum beyond a long's range (Spark's ``ARITHMETIC_OVERFLOW`` under
    ``spark.sql.ansi.enabled``)."""

    @classmethod
    def of_sum(cls, what: str, total: int) -> ArithmeticOverflowError:
        """The error for ``what`` (an entry or a column) summing to ``total``."""
        return cls(
            f"{what}: integer overflow, a sum of {total} is beyond a long's range (Spark "
            "raises ARITHMETIC_OVERFLOW under spark.sql.ansi.enabled, its default); cast the "
            "column to a decimal or a double, or on Spark turn spark.sql.ansi.enabled off to "
            "wrap as Java's longs do"
        )
