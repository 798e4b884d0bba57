"""Per-row frames (SQL window frames): the one vocabulary for frames on local tables, Spark
and the command line.

``range:<start>,<end>``
    the rows of the key whose time is in ``[t + start, t + end]``, inclusive: peers with equal
    times are in each other's frames (SQL's ``RANGE BETWEEN``).
``rows:<start>,<end>``
    the rows at positions ``[i + start, i + end]`` of the key, in the order of time, then
    ``order_by`` (SQL's ``ROWS BETWEEN``).

Bounds are signed (``-1h``, ``0``, ``+30m``): durations with a unit for timestamp times, plain
numbers in the time column's own unit for numeric times, whole numbers for rows; or
``unbounded``. Shorthands: ``range:1h`` is ``range:-1h,0`` (the last hour up to the row and
its peers) and ``rows:100`` is ``rows:-99,0`` (the row and the 99 before it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .durations import NeedsUnitError, PlainNumbersError, SpecError, duration

__all__ = ["Frame", "FrameError", "frame", "whole"]


class FrameError(SpecError):
    """A frame that does not parse or cannot be."""


class FrameNeedsUnitError(FrameError, NeedsUnitError):
    """A frame's bare number where the time column holds timestamps."""


class FramePlainNumbersError(FrameError, PlainNumbersError):
    """A frame's duration with a unit where the time column holds plain numbers."""


@dataclass(frozen=True)
class Frame:
    """A parsed frame: ``kind`` ``"range"`` or ``"rows"``; ``start`` and ``end`` offsets (in
    the time column's unit for range frames, rows for rows frames), None where unbounded."""

    kind: str
    start: float | None
    end: float | None
    text: str

    @property
    def looks_forward(self) -> bool:
        """Whether a row's frame may hold later rows (a stream cannot answer it at once)."""
        return self.end is None or self.end > 0

    def __str__(self) -> str:
        return self.text


def whole(f: Frame) -> Frame:
    """A range frame over whole-number times (integers, timestamps) with whole-number
    bounds, the same rows: ``t + start <= x`` is ``t + ceil(start) <= x`` and ``x <= t +
    end`` is ``x <= t + floor(end)`` for whole ``t`` and ``x``, computed exactly (a Python
    int of any size)."""
    if f.kind != "range":
        return f
    start = None if f.start is None else math.ceil(f.start)
    end = None if f.end is None else math.floor(f.end)
    return Frame(f.kind, start, end, f.text)


_BOUND = re.compile(r"^([+-]?)(.+)$")


def _bound(text: str, kind: str, unit: float | None, whole: str) -> float | None:
    text = text.strip()
    if text.lower() == "unbounded":
        return None
    m = _BOUND.match(text)
    if not m:
        raise FrameError(f"bad frame bound {text!r} in {whole!r}")
    sign, body = m.groups()
    if body.strip() == "0":
        return 0
    if kind == "rows":
        if not body.isdigit():
            raise FrameError(
                f"a rows frame counts rows: bound {text!r} in {whole!r} is not a whole number"
            )
        value: float = int(body)
    else:
        try:
            value = duration(body, unit)
        except SpecError as e:  # of the same kind, in the frame's words
            error = FrameError
            if isinstance(e, NeedsUnitError):
                error = FrameNeedsUnitError
            elif isinstance(e, PlainNumbersError):
                error = FramePlainNumbersError
            raise error(f"frame {whole!r}: {e}") from None
    return -value if sign == "-" else value


def frame(text: str, unit: float | None = None) -> Frame:
    """Parse a frame (see the module docstring). ``unit``: how many time units one second is
    (1e6 for microsecond timestamps), or None for plain numeric times."""
    if isinstance(text, Frame):
        return text
    if not isinstance(text, str) or ":" not in text:
        raise FrameError(
            f"bad frame {text!r}: use range:<start>,<end> or rows:<start>,<end> "
            "(shorthands range:1h, rows:100)"
        )
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in ("range", "rows"):
        raise FrameError(f"bad frame {text!r}: the kind is range or rows, not {kind!r}")
    parts = rest.split(",")
    if len(parts) == 1:  # shorthand: the last span (range) or the last n rows, to the row
        b = parts[0].strip()
        if b.startswith(("+", "-")) or b.lower() == "unbounded":
            raise FrameError(
                f"frame {text!r}: a one-bound shorthand is a span back, like "
                f"{kind}:{'1h' if kind == 'range' else '100'}"
            )
        size = _bound(b, kind, unit, text)
        if not size or size < 0:
            raise FrameError(f"frame {text!r} must be longer than 0")
        start = -(size - 1) if kind == "rows" else -size
        return Frame(kind, start, 0, text)
    if len(parts) != 2:
        raise FrameError(f"bad frame {text!r}: give <start>,<end>")
    first = _bound(parts[0], kind, unit, text)
    last = _bound(parts[1], kind, unit, text)
    if first is not None and last is not None and first > last:
        raise FrameError(f"frame {text!r}: its start lies after its end")
    return Frame(kind, first, last, text)
