"""Event times at the window operator's boundary: numbers, or datetimes as seconds since the
epoch (docs/concepts.md's time policy, the same as ``sliding_aggregate`` and ``ooo()``).

The first time the operator sees (an event or a watermark) fixes the kind: numbers, naive
datetimes, or timezone-aware datetimes (``datetime``, ``numpy.datetime64``, pandas
``Timestamp`` and timezone-aware arrays). With datetimes, window sizes, slides, gaps, allowed
lateness are seconds (lateness may also be a ``timedelta``), and the bounds of time windows
come back as datetimes (aware ones in UTC). A time of the other kind is a ``TypeError``.
"""

from __future__ import annotations

import datetime as dt
import numbers
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

#: an event time as the operator holds it (:meth:`Clock.encode`): a number, seconds for datetimes
Time: TypeAlias = float
#: an event time or a window bound as the user sees it: a number or a datetime
Instant: TypeAlias = float | dt.datetime | np.datetime64

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class Clock:
    """Encodes event times to numbers and decodes window bounds back."""

    def __init__(self) -> None:
        self.kind: str | None = None  # "number", "naive" or "aware", fixed by the first time

    def _fix(self, kind: str, t: object) -> None:
        if self.kind is None:
            self.kind = kind
        elif self.kind != kind:
            what = {"number": "numbers", "naive": "naive datetimes", "aware": "aware datetimes"}
            raise TypeError(
                f"event time {t!r} is not of the stream's kind: its times are {what[self.kind]}"
            )

    def encode(self, t: Instant, what: str = "event time") -> Time:
        """One time as a number (seconds since the epoch for datetimes; a number as given)."""
        if isinstance(t, np.datetime64):
            if np.isnat(t):
                raise ValueError(f"{what} must not be NaT")
            self._fix("naive", t)
            return float((t - np.datetime64(0, "us")) / np.timedelta64(1, "us")) / 1e6
        if isinstance(t, dt.datetime):
            self._fix("naive" if t.tzinfo is None else "aware", t)
            epoch = _EPOCH if t.tzinfo is None else _EPOCH_UTC
            return (t - epoch) / dt.timedelta(microseconds=1) / 1e6
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or t != t:
            raise TypeError(f"{what} must be a number or a datetime, got {t!r}")
        self._fix("number", t)
        return t  # as given: an int stays exact

    def encode_array(self, times: npt.ArrayLike) -> np.ndarray:
        """Many event times as numbers."""
        utc = naive_utc(times)
        if utc is not None:
            self._fix("aware", times)
            return _seconds(utc)
        t = np.asarray(times)
        if t.dtype.kind == "M":
            if np.isnat(t).any():
                raise ValueError("event times must not contain NaT")
            self._fix("naive", times)
            return _seconds(t)
        if t.dtype.kind == "O" and len(t):
            return np.array([self.encode(x) for x in t], float)
        if t.dtype.kind in "iuf" and len(t):
            self._fix("number", times)
        return t

    def decode(self, x: Time) -> Instant:
        """A window bound back in the stream's kind (infinite bounds stay numbers)."""
        if self.kind in (None, "number") or not np.isfinite(x):
            return x
        us = round(x * 1e6)
        return (_EPOCH if self.kind == "naive" else _EPOCH_UTC) + dt.timedelta(microseconds=us)


def naive_utc(times: object) -> np.ndarray | None:
    """Timezone-aware pandas times as naive UTC datetime64[ns]; None for anything else."""
    if getattr(getattr(times, "dtype", None), "tz", None) is None:
        return None
    import pandas as pd

    return pd.DatetimeIndex(times).tz_convert("UTC").tz_localize(None).to_numpy()


def _seconds(t: np.ndarray) -> np.ndarray:
    return (t.astype("datetime64[us]").astype(np.int64) / 1e6).astype(float)


def seconds(x: object) -> object:
    """A duration as seconds: timedeltas converted, numbers as they are."""
    if isinstance(x, dt.timedelta):
        return x.total_seconds()
    if isinstance(x, np.timedelta64):
        return float(x / np.timedelta64(1, "us")) / 1e6
    return x
