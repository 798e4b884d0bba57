"""Hypothesis: any trace of events and watermarks, any lateness, both stores, a
non-commutative aggregation: the operator's final reports equal the oracle."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from windowagg import FixedBand, Session, Sliding, Tumbling

from ..aggs import Concat
from .harness import check

WINDOWS = [
    Tumbling(5),
    Sliding(6, 4),
    Session(3),
    Tumbling(3, measure="count"),
    Sliding(4, 2, measure="count"),
    FixedBand(2, 9),
]

event = st.tuples(st.just("ev"), st.integers(-5, 60), st.integers(0, 99))
mark = st.tuples(st.just("wm"), st.integers(-5, 70))
trace = st.lists(st.one_of(event, event, event, mark), max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=trace, lateness=st.sampled_from([0, 2, 10]), store=st.sampled_from(["eager", "lazy"]))
def test_any_trace(ops, lateness, store):
    check(ops, WINDOWS, Concat(), lateness, store)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=trace, lateness=st.sampled_from([0, 3]), agg=st.sampled_from(["sum", "min", "mean"]))
def test_any_trace_fast_path(ops, lateness, agg):
    check(ops, [Tumbling(5), Sliding(6, 4), Sliding(10, 5)], agg, lateness, "eager")
