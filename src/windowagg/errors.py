"""Exceptions shared by every layer."""

__all__ = ["ArithmeticOverflowError", "EmptyWindowError"]


class EmptyWindowError(IndexError):
    """``evict()`` on an empty window."""


class ArithmeticOverflowError(ArithmeticError):
    """An integer sum beyond a long's range (Spark's ``ARITHMETIC_OVERFLOW`` under
    ``spark.sql.ansi.enabled``)."""
