"""Several aggregations of one stream as one aggregation: partials side by side (the product of
their monoids, itself a monoid), so one pass of any algorithm answers all of them. What the
window operator takes as ``aggs``; tables and Spark take ``aggs`` entries directly (each entry
is then served by its own rule, over the same frames).
"""

from __future__ import annotations

from collections.abc import Mapping

from .aggregations import AggLike, Aggregation, Facts, flags, inverse_of, lift, resolve

__all__ = ["Combined", "combined"]


class Combined(Aggregation):
    """``aggs`` (output name -> aggregation) over the same values: ``lower`` gives a dict of
    each one's result. Invertible or commutative when every part is."""

    name = "combined"
    facts = Facts(result="struct")

    def __init__(self, aggs: Mapping[str, AggLike]):
        if not isinstance(aggs, dict) or not aggs:
            raise ValueError(
                "aggs must be a non-empty dict: output name -> aggregation, like "
                "{'total': 'sum', 'top': 'max'}"
            )
        for name in aggs:
            if not isinstance(name, str) or not name:
                raise TypeError(f"output names are non-empty strings, got {name!r}")
        self.names = tuple(aggs)
        self.parts = tuple(resolve(a) for a in aggs.values())
        self.identity = tuple(a.identity for a in self.parts)
        every = [flags(a) for a in self.parts]
        self.invertible = all(f[0] for f in every)
        self.commutative = all(f[1] for f in every)
        # each part's inverse, looked up once (the parts' flags say they have one)
        self._inverses = tuple(inverse_of(a) for a in self.parts) if self.invertible else ()

    def params(self) -> dict[str, object]:
        return {"aggs": tuple((n, repr(a)) for n, a in zip(self.names, self.parts))}

    def lift(self, x: object) -> tuple:
        return tuple(lift(a, x) for a in self.parts)

    def combine(self, a: tuple, b: tuple) -> tuple:
        return tuple(f.combine(x, y) for f, x, y in zip(self.parts, a, b))

    def inverse(self, a: tuple, b: tuple) -> tuple:
        if not self.invertible:
            return super().inverse(a, b)
        return tuple(inv(x, y) for inv, x, y in zip(self._inverses, a, b))

    def lower(self, p: tuple) -> dict[str, object]:
        return {n: f.lower(x) for n, f, x in zip(self.names, self.parts, p)}


def combined(aggs: Mapping[str, AggLike]) -> Combined:
    """``aggs`` (output name -> aggregation: a name, a name with parameters, or an object) as
    one aggregation whose result is a dict."""
    return Combined(aggs)
