"""Exceptions shared by every layer."""

__all__ = ["EmptyWindowError"]


class EmptyWindowError(IndexError):
    """``evict()`` on an empty window."""
