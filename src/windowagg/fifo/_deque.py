"""A double-ended queue with O(1) worst-case access by absolute position.

The DABA paper (Definition 4) assumes pointers into a deque that support dereference, increment
and decrement in worst-case O(1), implemented with chunked arrays. This is that deque: elements
live in fixed-size chunks kept in a dict keyed by chunk number, so an element's absolute
position (its insertion number) never changes while it is in the queue.
"""

from __future__ import annotations

from typing import Any

_SHIFT = 8
_CHUNK = 1 << _SHIFT
_MASK = _CHUNK - 1


class IndexedDeque:
    """Deque addressed by absolute positions ``front <= i < end``."""

    __slots__ = ("_chunks", "end", "front")

    def __init__(self) -> None:
        self._chunks: dict[int, list[Any]] = {}
        self.front = 0  # absolute position of the oldest element
        self.end = 0  # one past the youngest element

    def __len__(self) -> int:
        return self.end - self.front

    def push_back(self, x: Any) -> None:
        i = self.end
        if i & _MASK == 0:
            self._chunks[i >> _SHIFT] = [None] * _CHUNK
        self._chunks[i >> _SHIFT][i & _MASK] = x
        self.end = i + 1

    def pop_front(self) -> Any:
        i = self.front
        if i == self.end:
            raise IndexError("pop from an empty deque")
        chunk = self._chunks[i >> _SHIFT]
        x = chunk[i & _MASK]
        chunk[i & _MASK] = None  # drop the reference at once
        self.front = i + 1
        if self.front & _MASK == 0:  # the chunk is used up
            del self._chunks[i >> _SHIFT]
        return x

    def __getitem__(self, i: int) -> Any:
        if not self.front <= i < self.end:
            raise IndexError(f"position {i} outside [{self.front}, {self.end})")
        return self._chunks[i >> _SHIFT][i & _MASK]

    def __setitem__(self, i: int, x: Any) -> None:
        if not self.front <= i < self.end:
            raise IndexError(f"position {i} outside [{self.front}, {self.end})")
        self._chunks[i >> _SHIFT][i & _MASK] = x

    def range(self, start: int, stop: int):
        """Elements at positions ``start <= i < stop``, oldest first."""
        for i in range(start, stop):
            yield self._chunks[i >> _SHIFT][i & _MASK]
