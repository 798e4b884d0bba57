"""Durations as text (``5us``, ``250ms``, ``10s``, ``5m``, ``1h``, ``1d``, or a bare number in
the time column's own unit): one vocabulary for window specs, frames and ``sliding_aggregate``
sizes. ``unit`` is how many time units one second is (1e6 for microseconds, 1e9 for
nanoseconds), or None for plain numbers (bare numbers only)."""

from __future__ import annotations

import re

SECONDS = {"us": 1e-6, "ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
#: timestamps are handled as microseconds since the epoch, as Spark and Arrow store them
MICROS = 1_000_000
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(us|ms|s|m|h|d)?$")


class SpecError(ValueError):
    """A window spec that does not parse."""


class NeedsUnitError(SpecError):
    """A bare number where the time column holds timestamps (a duration needs a unit)."""


class PlainNumbersError(SpecError):
    """A duration with a unit where the time column holds plain numbers."""


def duration(text: str, unit: float | None) -> float:
    m = _DURATION.match(text.strip())
    if not m:
        raise SpecError(f"bad duration {text!r}: use a number with us, ms, s, m, h or d")
    number, suffix = float(m.group(1)), m.group(2)
    if suffix is None:
        if unit is not None and unit != 1:
            raise NeedsUnitError(f"duration {text!r} needs a unit (us, ms, s, m, h or d)")
        value = number
    else:
        if unit is None:
            raise PlainNumbersError(
                f"duration {text!r} has a unit, but the time column holds plain "
                "numbers: use a bare number"
            )
        value = number * SECONDS[suffix] * unit
        value = round(value, 6) if suffix == "us" else value  # 1us is one microsecond exactly
    if not value > 0:
        raise SpecError(f"duration {text!r} must be positive")
    return int(value) if float(value).is_integer() else value
