"""Brute-force window semantics (api.md section 5), straight from the definitions: which
events are dropped, and every window's final value over the events kept."""

from __future__ import annotations

import itertools
import math
from typing import Any

from windowagg import FixedBand, Punctuation, Session, Sliding
from windowagg.aggregations import fold


def kept_events(ops: list, lateness: Any) -> tuple[list, int]:
    """(t, seq, x) of the events the operator must keep, in time order; and how many drop."""
    wm = -math.inf
    kept, dropped, seq = [], 0, 0
    for op in ops:
        if op[0] == "wm":
            wm = max(wm, op[1])
        elif op[1] < wm - lateness:
            dropped += 1
        else:
            seq += 1
            kept.append((op[1], seq, op[2]))
    return sorted(kept), dropped


def windows_of(w: Any, events: list) -> dict:
    """{(start, end): [x, ...] in time order} of every non-empty window of w."""
    out: dict = {}
    times = [t for t, _s, _x in events]
    if isinstance(w, Sliding) and w.measure == "count":
        n, size, slide = len(events), int(w.size), int(w.slide)
        k = 0
        while k * slide + size <= n:
            out[(k * slide, k * slide + size)] = [
                x for _t, _s, x in events[k * slide : k * slide + size]
            ]
            k += 1
        return out
    if isinstance(w, Sliding):
        for t in times:
            k = math.floor(t / w.slide)
            while k * w.slide + w.size > t:
                out.setdefault((k * w.slide, k * w.slide + w.size), None)
                k -= 1
    elif isinstance(w, Session):
        start = last = None
        for t in times:
            if start is not None and t - last > w.gap:
                out[(start, last + w.gap)] = None
                start = None
            if start is None:
                start = t
            last = t
        if start is not None:
            out[(start, last + w.gap)] = None
    elif isinstance(w, FixedBand):
        out[(w.start, w.start + w.length)] = None
    elif isinstance(w, Punctuation):
        edges = sorted({t for t, _s, x in events if x == w.marker})
        for a, b in itertools.pairwise(edges):
            out[(a, b)] = None
    for a, b in list(out):
        xs = [x for t, _s, x in events if a <= t < b]
        if xs:
            out[(a, b)] = xs
        else:
            del out[(a, b)]
    return out


def final_values(w: Any, events: list, agg: Any) -> dict:
    return {k: agg.lower(fold(agg, map(agg.lift, xs))) for k, xs in windows_of(w, events).items()}
