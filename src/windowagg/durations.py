"""Durations as text (``100ns``, ``5us``, ``250ms``, ``10s``, ``5m``, ``1h``, ``1d``, or a
bare number in the time column's own unit): one vocabulary for window specs, frames and
``sliding_aggregate`` sizes. ``unit`` is how many time units one second is (1e6 for
microseconds, 1e9 for nanoseconds), or None for plain numbers (bare numbers only)."""

from __future__ import annotations

import re
from fractions import Fraction

import pyarrow as pa

#: a unit's seconds, exactly: a duration in a timestamp's own unit is computed without rounding
_EXACT = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
    "d": Fraction(86400),
}
SECONDS = {k: float(v) for k, v in _EXACT.items()}
#: microseconds: how Spark holds timestamps, and dates here
MICROS = 1_000_000
#: how many of a timestamp unit one second is
PER_SECOND = {"s": 1, "ms": 1_000, "us": MICROS, "ns": 1_000_000_000}


def unit_of(type_: pa.DataType) -> int | None:
    """How many time units one second is in a time column of this type: a timestamp's own
    unit (s, ms, us, ns), microseconds for a date; None for plain numbers."""
    if pa.types.is_timestamp(type_):
        return PER_SECOND[type_.unit]
    if pa.types.is_date(type_):
        return MICROS
    return None


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ns|us|ms|s|m|h|d)?$")


class SpecError(ValueError):
    """A window spec that does not parse."""


class NeedsUnitError(SpecError):
    """A bare number where the time column holds timestamps (a duration needs a unit)."""


class PlainNumbersError(SpecError):
    """A duration with a unit where the time column holds plain numbers."""


def duration(text: str, unit: float | None) -> float:
    """A duration in the time column's unit, computed exactly: a whole number of units is an
    int (of any size), a fraction of one a float."""
    m = _DURATION.match(text.strip())
    if not m:
        raise SpecError(f"bad duration {text!r}: use a number with ns, us, ms, s, m, h or d")
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix is None:
        if unit is not None and unit != 1:
            raise NeedsUnitError(f"duration {text!r} needs a unit (ns, us, ms, s, m, h or d)")
        value = number
    else:
        if unit is None:
            raise PlainNumbersError(
                f"duration {text!r} has a unit, but the time column holds plain "
                "numbers: use a bare number"
            )
        value = number * _EXACT[suffix] * Fraction(unit)
    if not value > 0:
        raise SpecError(f"duration {text!r} must be positive")
    return int(value) if value.denominator == 1 else float(value)
