"""Window spec strings: what parses to which window, and every bad spec as one clear error."""

from __future__ import annotations

import pytest

from windowagg.slicing import Session, Sliding, Tumbling
from windowagg.specs import SpecError, canonical, parse


@pytest.mark.parametrize(
    ("spec", "window"),
    [
        ("tumbling:1m", Tumbling(60e6)),
        ("sliding:1h/15m", Sliding(3600e6, 900e6)),
        ("sliding:10s/10s", Sliding(10e6, 10e6)),
        ("session:90s", Session(90e6)),
        ("count-tumbling:100", Tumbling(100, measure="count")),
        ("count-sliding:100/10", Sliding(100, 10, measure="count")),
    ],
)
def test_specs_parse(spec, window) -> None:
    got = parse(spec, 1e6)
    assert (type(got), got.size if hasattr(got, "size") else got.gap) == (
        type(window),
        window.size if hasattr(window, "size") else window.gap,
    )
    assert canonical(got, 1e6) == spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sliding:10s/20s", "the slide is longer than the window"),
        ("count-sliding:10/20", "the slide is longer than the window"),
        ("hopping:10s", "bad window spec"),
        ("sliding:10s", "bad window spec"),
        ("tumbling", "bad window spec"),
    ],
)
def test_bad_specs(spec, message) -> None:
    with pytest.raises(SpecError, match=message):
        parse(spec, 1e6)
