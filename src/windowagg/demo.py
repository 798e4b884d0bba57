"""The demo's data: a seeded, taxi-like keyed event stream with natural disorder.

Trips start in pickup zones; each zone has its own rate and fare level, rush hours raise the
rate, and events reach the system late by a heavy-tailed delay, so arrival order is not event
time order (as in the NYC TLC data this library is benchmarked on).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Trip:
    arrival: int  # arrival sequence number
    pickup_s: float  # event time, seconds since midnight of day 0
    zone: int
    fare: float
    minutes: float


def taxi_stream(n: int = 20_000, zones: int = 12, seed: int = 7) -> list[Trip]:
    """``n`` trips over ``zones`` pickup zones, in arrival order (seeded)."""
    rng = random.Random(seed)
    weights = [1.0 / (z + 1) for z in range(zones)]  # a few busy zones, many quiet ones
    base_fare = [rng.uniform(8, 25) for _ in range(zones)]
    t = 0.0
    events = []
    for _ in range(n):
        hour = (t / 3600) % 24
        rush = (
            1 + 1.5 * math.exp(-((hour - 8.5) ** 2) / 2) + 1.5 * math.exp(-((hour - 18) ** 2) / 3)
        )
        t += rng.expovariate(rush / 6.0)  # about one trip every few seconds
        zone = rng.choices(range(zones), weights)[0]
        minutes = max(2.0, rng.lognormvariate(2.4, 0.5))
        fare = round(base_fare[zone] + 2.5 * minutes * rng.uniform(0.6, 1.4), 2)
        delay = rng.expovariate(1 / 20.0) if rng.random() < 0.9 else rng.uniform(60, 900)
        events.append((t + delay, t, zone, fare, minutes))
    events.sort(key=lambda e: e[0])  # arrival order
    return [
        Trip(i, pickup, zone, fare, round(minutes, 1))
        for i, (_, pickup, zone, fare, minutes) in enumerate(events)
    ]
