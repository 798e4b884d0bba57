"""Window spec strings (docs/guides/cli.md): parsing into window objects and the canonical
spelling used in output (each duration in the largest unit that divides it exactly).

Grammar: ``tumbling:SIZE``, ``sliding:SIZE/SLIDE``, ``session:GAP``, ``count-tumbling:N``,
``count-sliding:N/S``. Durations: ``250ms``, ``10s``, ``5m``, ``1h``, ``1d``, or a bare number in
the time column's own unit. ``unit`` is how many time units one second is (1e6 for
microseconds, the internal unit of timestamps), or None for plain numbers (bare numbers only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .durations import MICROS, SECONDS, SpecError, duration
from .slicing import Session, Sliding, Tumbling, Window

__all__ = ["SECONDS", "SpecError", "canonical", "duration", "parse", "windows_of"]


def _count(text: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()) or int(text) <= 0:
        raise SpecError(f"bad count {text!r}: use a whole number > 0")
    return int(text)


def parse(spec: str, unit: float | None) -> Window:
    """The window of a spec string (see the module docstring)."""
    if not isinstance(spec, str) or ":" not in spec:
        raise SpecError(
            f"bad window spec {spec!r}: use tumbling:SIZE, sliding:SIZE/SLIDE, "
            "session:GAP, count-tumbling:N or count-sliding:N/S"
        )
    kind, _, arg = spec.partition(":")
    parts = arg.split("/")
    kind = kind.strip().lower()
    if kind == "tumbling" and len(parts) == 1:
        return Tumbling(duration(parts[0], unit))
    if kind in ("sliding", "count-sliding") and len(parts) == 2:
        size, slide = (duration(p, unit) if kind == "sliding" else _count(p) for p in parts)
        if slide > size:  # Spark's window() refuses it too
            raise SpecError(
                f"window spec {spec!r}: the slide is longer than the window, so "
                "events between two windows would be in none; use a slide up to "
                "the window's size"
            )
        measure = "time" if kind == "sliding" else "count"
        return Sliding(size, slide, measure=measure)
    if kind == "session" and len(parts) == 1:
        return Session(duration(parts[0], unit))
    if kind == "count-tumbling" and len(parts) == 1:
        return Tumbling(_count(parts[0]), measure="count")
    raise SpecError(
        f"bad window spec {spec!r}: use tumbling:SIZE, sliding:SIZE/SLIDE, "
        "session:GAP, count-tumbling:N or count-sliding:N/S"
    )


def spell(value: float, unit: float | None) -> str:
    """A duration in the largest unit that divides it exactly."""
    if unit is not None:
        finest = ("ms", "us") if unit > MICROS else ("ms",)  # nanoseconds: a microsecond too
        for suffix in ("d", "h", "m", "s", *finest):
            q = value / (SECONDS[suffix] * unit)
            if abs(q - round(q)) < 1e-9 and round(q) > 0:
                return f"{round(q)}{suffix}"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def canonical(w: Window, unit: float | None) -> str:
    """The canonical spec string of a window (``tumbling:1m``, ``sliding:30s/5s``,
    ``session:90s``, ``count-sliding:100/10``)."""
    if isinstance(w, Session):
        return f"session:{spell(w.gap, unit)}"
    if isinstance(w, Sliding):
        if w.measure == "count":
            if isinstance(w, Tumbling):
                return f"count-tumbling:{int(w.size)}"
            return f"count-sliding:{int(w.size)}/{int(w.slide)}"
        if isinstance(w, Tumbling):
            return f"tumbling:{spell(w.size, unit)}"
        return f"sliding:{spell(w.size, unit)}/{spell(w.slide, unit)}"
    raise SpecError(f"window {w!r} has no spec string")


def windows_of(items: str | Window | Iterable[str | Window], unit: float | None) -> list[Window]:
    """Window objects or spec strings, as window objects (sizes of objects given for a
    timestamp column are in seconds)."""
    if isinstance(items, str | Window):
        items = [items]
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(parse(item, unit))
        elif isinstance(item, Window):
            out.append(_scaled(item, unit) if unit not in (None, 1) else item)
        else:
            raise SpecError(f"not a window or spec string: {item!r}")
    if not out:
        raise SpecError("give at least one window")
    return out


def _scaled(w: Window, unit: float) -> Window:
    def f(x):
        v = x * unit
        return int(v) if float(v).is_integer() else v

    if isinstance(w, Session):
        return Session(f(w.gap))
    if isinstance(w, Tumbling) and w.measure == "time":
        return Tumbling(f(w.size))
    if isinstance(w, Sliding) and w.measure == "time":
        return Sliding(f(w.size), f(w.slide))
    if isinstance(w, Sliding):
        return w
    raise SpecError(f"window {w!r} is not supported here (tumbling, sliding, session, count)")
