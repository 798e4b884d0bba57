"""Named regressions: faults found in Scotty's own implementation, none of which may happen
here. Expected values are worked out by hand from api.md section 5."""

from __future__ import annotations

import pytest

from windowagg import Session, Sliding, Tumbling, WindowOperator

from ..aggs import Concat


def op_with(*windows, agg=None, lateness=0, store="eager"):
    op = WindowOperator(agg or Concat(), allowed_lateness=lateness, store=store)
    for w in windows:
        op.add_window(w)
    return op


def bounds(results, window=None):
    return [
        (r.start, r.end, r.value, r.update) for r in results if window is None or r.window == window
    ]


STORES = pytest.mark.parametrize("store", ["eager", "lazy"])


@STORES
def test_slice_after_a_gap_does_not_span_several_windows(store):
    op = op_with(Tumbling(10), Sliding(10, 5), store=store)
    for t, x in [(1, "a"), (55, "b"), (25, "c"), (58, "d")]:  # a gap, then a tuple inside it
        op.process(t, x)
    got = op.watermark(100)
    assert bounds(got, Tumbling(10)) == [
        (0, 10, "a,", False),
        (20, 30, "c,", False),
        (50, 60, "b,d,", False),
    ]
    assert bounds(got, Sliding(10, 5)) == [
        (-5, 5, "a,", False),
        (0, 10, "a,", False),
        (20, 30, "c,", False),
        (25, 35, "c,", False),
        (50, 60, "b,d,", False),
        (55, 65, "b,d,", False),
    ]


@STORES
def test_first_watermark_keeps_windows_that_ended_before_it(store):
    op = op_with(Tumbling(10), store=store)
    for t in (1, 12, 25):
        op.process(t, t)
    assert bounds(op.watermark(100)) == [
        (0, 10, "1,", False),
        (10, 20, "12,", False),
        (20, 30, "25,", False),
    ]


@STORES
def test_sliding_window_neither_one_unit_early_nor_twice(store):
    op = op_with(Sliding(10, 5), store=store)
    for t in (0, 4, 9):
        op.process(t, t)
    assert bounds(op.watermark(9)) == [(-5, 5, "0,4,", False)]
    assert bounds(op.watermark(9.5)) == []  # [0, 10) ends at 10: not before
    assert bounds(op.watermark(10)) == [(0, 10, "0,4,9,", False)]
    assert bounds(op.watermark(10)) == []
    assert bounds(op.watermark(14)) == []
    assert bounds(op.flush()) == [(5, 15, "9,", False)]


@STORES
def test_count_window_neither_one_tuple_early_nor_skipped_after_a_watermark(store):
    w = Tumbling(3, measure="count")
    op = op_with(w, store=store)
    for t in (1, 2):
        op.process(t, t)
    assert bounds(op.watermark(50)) == []  # two tuples: incomplete
    op.process(53, 53)
    assert bounds(op.watermark(53)) == []  # complete, but a tuple at 52 could still come first
    assert bounds(op.watermark(54)) == [(0, 3, "1,2,53,", False)]
    for t in (60, 61, 62, 63):
        op.process(t, t)
    assert bounds(op.watermark(100)) == [(3, 6, "60,61,62,", False)]
    assert bounds(op.flush()) == []  # [6, 9) holds one tuple: never reported


@STORES
def test_dropped_tuples_do_not_count_towards_a_count_window(store):
    op = op_with(Tumbling(2, measure="count"), store=store)
    op.process(10, "a")
    op.watermark(20)
    op.process(5, "late")  # behind the watermark: dropped
    op.process(30, "b")
    assert op.dropped == 1
    assert bounds(op.flush()) == [(0, 2, "a,b,", False)]


@STORES
def test_equal_timestamps_survive_tuples_shifting_between_slices(store):
    s = Session(5)
    op = op_with(s, Tumbling(10), agg="collect", lateness=100, store=store)
    for t, x in [(10, 1), (10, 2), (10, 3), (20, 4), (20, 5), (30, 6), (30, 7)]:
        op.process(t, x)
    first = op.watermark(40)
    assert bounds(first, s) == [
        (10, 15, [1, 2, 3], False),
        (20, 25, [4, 5], False),
        (30, 35, [6, 7], False),
    ]
    op.process(15, 8)  # fuses the first two sessions (the gap shrinks to 5)
    op.process(25, 9)  # and the result with the third
    op.process(10, 10)  # one more at an existing time: after the others (arrival order)
    got = op.watermark(40)
    assert bounds(got, s) == [(10, 35, [1, 2, 3, 10, 8, 4, 5, 9, 6, 7], True)]
    assert bounds(got, Tumbling(10)) == [
        (10, 20, [1, 2, 3, 10, 8], True),
        (20, 30, [4, 5, 9], True),
    ]


@STORES
def test_watermark_after_every_session_was_reported(store):
    op = op_with(Session(5), store=store)
    op.process(1, 1)
    op.process(2, 2)
    assert bounds(op.watermark(100)) == [(1, 7, "1,2,", False)]
    assert op.watermark(200) == []
    assert op.flush() == []


@STORES
def test_late_tuple_extends_the_earliest_session_backwards(store):
    op = op_with(Session(5), lateness=15, store=store)
    op.process(20, 20)
    op.process(21, 21)
    assert bounds(op.watermark(30)) == [(20, 26, "20,21,", False)]
    op.process(17, 17)  # within lateness, within the gap of the session's first tuple
    assert bounds(op.watermark(31)) == [(17, 26, "17,20,21,", True)]
    assert op.flush() == []


@STORES
def test_late_tuple_moving_a_session_start_keeps_tumbling_boundaries(store):
    s, tw = Session(5), Tumbling(10)
    op = op_with(s, tw, Sliding(10, 5), lateness=20, store=store)
    op.process(12, 12)
    op.process(13, 13)
    op.process(8, 8)  # moves the session's start from 12 back over the edge at 10
    got = op.watermark(30)
    assert bounds(got, s) == [(8, 18, "8,12,13,", False)]
    assert bounds(got, tw) == [(0, 10, "8,", False), (10, 20, "12,13,", False)]
    assert bounds(got, Sliding(10, 5)) == [
        (0, 10, "8,", False),
        (5, 15, "8,12,13,", False),
        (10, 20, "12,13,", False),
    ]


def test_equal_timestamps_many_and_out_of_order_with_a_non_commutative_aggregation():
    op = op_with(Tumbling(10), lateness=5)
    for x in "abc":
        op.process(5, x)
    op.process(7, "d")
    op.process(5, "e")  # out of order, equal to earlier times: after them, before d
    assert bounds(op.flush()) == [(0, 10, "a,b,c,e,d,", False)]
