"""One input policy on every path: the defects found by differential testing of the default
(compiled) backend against the Python reference, each a case that failed before."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import windowagg
from tests.aggs import COMPILED


def _both(kind: str, algorithm: str, agg: str):
    make = windowagg.fifo if kind == "fifo" else windowagg.ooo
    return make(algorithm, agg), make(algorithm, agg, backend="python")


# --- values the kernels cannot hold go to the reference -------------------------------------


@pytest.mark.parametrize(
    ("agg", "values"),
    [
        ("first", ["abc", "def"]),
        ("last", ["abc", "def"]),
        ("argmax", [("a", 1.0), ("b", 3.0), ("c", 2.0)]),
        ("argmin", [("a", 1.0), ("b", 0.5)]),
        ("sum", [2**60, 1]),
        ("sum", [Decimal("0.1"), Decimal("0.2")]),
        ("mean", [Fraction(1, 3), Fraction(1, 6)]),
        ("max", [2**60 + 1, 2**60]),
        ("first", [dt.date(2030, 1, 2), dt.date(2030, 1, 1)]),
    ],
)
@pytest.mark.parametrize("algorithm", ["daba", "two_stacks_lite", "slickdeque", "flatfit"])
def test_fifo_default_backend_answers_what_the_reference_answers(agg, values, algorithm) -> None:
    if not windowagg.FIFO_ALGORITHMS[algorithm].serves(windowagg.aggregation(agg)):
        return  # slickdeque serves neither first's strings nor sums: covered by the others
    options = {"ranges": [1, 2]} if algorithm == "slickdeque" else {}
    w = windowagg.fifo(algorithm, agg, **options)
    ref = windowagg.fifo(algorithm, agg, backend="python", **options)
    w.insert(values[0] if agg not in ("argmax", "argmin") else ("z", 0.0))  # compiled so far
    ref.insert(values[0] if agg not in ("argmax", "argmin") else ("z", 0.0))
    for x in values:
        w.insert(x)
        ref.insert(x)
        got, want = w.query(), ref.query()
        assert got == want and type(got) is type(want)
    w.evict()
    ref.evict()
    assert w.query() == ref.query() and len(w) == len(ref)
    assert w.backend == "python"


def test_the_switch_replays_only_what_is_still_in_the_window() -> None:
    w = windowagg.fifo("daba", "sum")
    w.insert_many(np.arange(10))
    w.evict_many(7)  # 7, 8, 9 remain
    assert w.backend == "compiled" and w.query() == 24
    w.insert(2**60)
    assert w.backend == "python" and w.query() == 24 + 2**60
    assert isinstance(w.query(), int)


def test_exact_int_sums_that_could_pass_2_to_the_53() -> None:
    w = windowagg.fifo("two_stacks_lite", "sum")
    w.insert_many([2**52, 2**52, 1])
    assert w.query() == 2**53 + 1 and w.backend == "python"


@pytest.mark.parametrize("algorithm", ["fiba", "bclassic"])
@pytest.mark.parametrize(
    ("agg", "pairs"),
    [
        ("last", [(3, "abc"), (1, "x"), (2, "y")]),
        ("first", [(3, 1.5), (1, "x")]),
        ("sum", [(1, 2**60), (2, 1), (0, 5)]),
        ("argmax", [(1, ("a", 2.0)), (2, ("b", 1.0))]),
        ("mean", [(1, 1), (2, Decimal("0.5"))]),
        ("maxcount", [(1, 3), (2, 3), (3, 2**55)]),
    ],
)
def test_ooo_default_backend_answers_what_the_reference_answers(agg, pairs, algorithm) -> None:
    w, ref = _both("ooo", algorithm, agg)
    for t, x in [(10, 1 if agg != "argmax" else ("q", 0.5)), *pairs]:
        w.insert(t, x)
        ref.insert(t, x)
        assert w.query() == ref.query() and w.query(1, 2) == ref.query(1, 2)
        assert len(w) == len(ref)
    assert w.bulk_evict(1) == ref.bulk_evict(1)
    assert w.query() == ref.query() and w.oldest() == ref.oldest()
    assert w.backend == "python"
    w.check_invariants()


def test_ooo_times_the_kernels_cannot_hold() -> None:
    w, ref = _both("ooo", "fiba", "sum")
    for t, x in [(1, 1), (2**60 + 1, 2), ("a", 3)][:2]:
        w.insert(t, x)
        ref.insert(t, x)
    assert w.query() == ref.query() == 3 and w.youngest() == 2**60 + 1
    assert w.backend == "python"


def test_the_tree_moves_its_partials_exactly() -> None:
    """The switch reads every entry's partial from the kernel: repeats at one time combine."""
    w = windowagg.ooo("fiba", "mean")
    w.insert_many(np.array([5, 3, 5, 9]), [1, 2, 3, 4])
    assert w.items() == [(3, 2), (5, 2), (9, 4)]  # lowered: mean of 1 and 3 at time 5
    w.insert(7, Decimal("1.5"))
    assert w.backend == "python"
    assert w.items() == [(3, (2, 1)), (5, (4, 2)), (7, (Decimal("1.5"), 1)), (9, (4, 1))]
    assert w.query(4, 8) == (4 + Decimal("1.5")) / 3


@pytest.mark.parametrize("name", COMPILED)
def test_every_compiled_aggregation_on_both_backends_over_values_it_cannot_hold(name) -> None:
    """Every public aggregator (FIFO and out-of-order) on its default backend against the
    reference, over ints beyond 2^53 (and pairs of them for argmin/argmax)."""
    big = [2**60 + 3, 2**60 + 1, 2**60 + 2]
    pairs = windowagg.aggregations.facts(windowagg.aggregation(name)).pairs
    xs = [(k, v) for k, v in zip((7, 8, 9), big)] if pairs else big
    if name == "geomean":
        xs = [Decimal(v) for v in big]
    for algorithm, record in {**windowagg.FIFO_ALGORITHMS}.items():
        agg = windowagg.aggregation(name)
        if not record.serves(agg):
            continue
        opts = {"ranges": [2]} if algorithm == "slickdeque" else {}
        w = windowagg.fifo(algorithm, name, **opts)
        ref = windowagg.fifo(algorithm, name, backend="python", **opts)
        for x in xs:
            w.insert(x)
            ref.insert(x)
            assert w.query() == ref.query(), (algorithm, name)
    for algorithm in windowagg.OOO_ALGORITHMS:
        w, ref = _both("ooo", algorithm, name)
        for t, x in enumerate(xs):
            w.insert(-t, x)
            ref.insert(-t, x)
            assert w.query() == ref.query(), (algorithm, name)


def test_compiled_backend_refuses_what_it_cannot_hold() -> None:
    w = windowagg.fifo("daba", "first", backend="compiled")
    with pytest.raises(ValueError, match="cannot hold 'abc' exactly; use backend='auto'"):
        w.insert("abc")
    t = windowagg.ooo("fiba", "sum", backend="compiled")
    with pytest.raises(ValueError, match="integers beyond 2\\^53"):
        t.insert_many([1], np.array([2**60]))


def test_evict_on_an_empty_compiled_window_says_evict() -> None:
    with pytest.raises(windowagg.EmptyWindowError, match=r"^evict\(\) on an empty daba window$"):
        windowagg.fifo("daba", "sum").evict()


def test_decimal_on_the_reference_path_is_exact() -> None:
    w = windowagg.fifo("two_stacks_lite", "sum", backend="python")
    for x in ("0.1", "0.2", "0.3"):
        w.insert(Decimal(x))
    assert w.query() == Decimal("0.6")
    assert windowagg.aggregation("mean").lift(Decimal("NaN")) == (0, 0)  # missing


# --- sliding_aggregate ---------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["auto", "bclassic", "fiba", "daba", "recalc"])
@pytest.mark.parametrize("agg", ["median", "sum", "max"])
def test_empty_input_on_every_path(algorithm, agg) -> None:
    out = windowagg.sliding_aggregate(np.array([]), size=2, agg=agg, algorithm=algorithm)
    assert out.shape == (0,)
    timed = "auto" if algorithm == "daba" else algorithm  # daba: no window sharing
    out = windowagg.sliding_aggregate([], size=[2, 3], agg=agg, times=np.array([]), algorithm=timed)
    assert out.shape == (0, 2)


def test_datetime_argmax_returns_the_elements_time() -> None:
    t = np.array(
        ["2021-01-01T00:00:00", "2021-01-01T00:00:30", "2021-01-01T00:01:10"], dtype="datetime64[s]"
    )
    for times in (t, t[[1, 0, 2]]):
        v = np.array([1.0, 5.0, 2.0]) if times is t else np.array([5.0, 1.0, 2.0])
        out = windowagg.sliding_aggregate(v, size="60s", agg="argmax", times=times)
        assert out.dtype == np.dtype("datetime64[ns]")
        assert out.tolist()[-1] == np.datetime64("2021-01-01T00:00:30", "ns").tolist()


@pytest.mark.parametrize("size", [60, 60.0, [60]])
def test_a_bare_number_is_not_a_duration_for_datetime_times(size) -> None:
    t = np.array(["2021-01-01T00:00:00", "2021-01-01T00:00:30"], dtype="datetime64[s]")
    with pytest.raises(ValueError, match="times are datetimes, so size must be a duration"):
        windowagg.sliding_aggregate([1.0, 2.0], size=size, times=t)


def test_durations_of_every_kind_agree() -> None:
    t = np.array(
        ["2021-01-01T00:00:00", "2021-01-01T00:00:30", "2021-01-01T00:01:10"], dtype="datetime64[s]"
    )
    want = [1.0, 3.0, 6.0]
    for size in ("60s", "1m", dt.timedelta(seconds=60), np.timedelta64(60, "s")):
        assert windowagg.sliding_aggregate([1.0, 2.0, 4.0], size=size, times=t).tolist() == want


def test_tz_aware_pandas_timestamps() -> None:
    pd = pytest.importorskip("pandas")
    times = pd.Series(pd.to_datetime(["2021-01-01 01:00:00", "2021-01-01 01:00:30"]))
    aware = times.dt.tz_localize("Europe/Berlin")
    got = windowagg.sliding_aggregate([1.0, 2.0], size="45s", times=aware)
    assert got.tolist() == [1.0, 3.0]
    got = windowagg.sliding_aggregate([1.0, 2.0], size="20s", times=list(aware))
    assert got.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("bad", [float("inf"), -float("inf")])
def test_infinite_times_are_refused(bad) -> None:
    with pytest.raises(ValueError, match="infinite times \\(first at index 1\\)"):
        windowagg.sliding_aggregate([1.0, 2.0, 3.0], size=2, times=[0, bad, 1])


def test_none_is_a_missing_value() -> None:
    got = windowagg.sliding_aggregate([1.0, None, 3.0], size=2, agg="mean")
    assert got.tolist() == [1.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="got 'x' \\(str\\) at index 1"):
        windowagg.sliding_aggregate([1.0, "x", None], size=2)


def test_sliding_aggregate_out_of_order_runs_the_compiled_tree(monkeypatch) -> None:
    """Not only equal numbers: the Python reference is never built, the kernel is called."""
    from windowagg.ooo import bclassic, fiba
    from windowagg.storage.btree_state import BTreeState

    def refuse(*args, **kwargs):
        raise AssertionError("the Python reference ran")

    monkeypatch.setattr(fiba.FiBA, "__init__", refuse)
    monkeypatch.setattr(bclassic.ClassicBTree, "__init__", refuse)
    calls = []
    slide = BTreeState.slide
    monkeypatch.setattr(BTreeState, "slide", lambda self, *a: calls.append(1) or slide(self, *a))
    rng = np.random.default_rng(5)
    t = rng.permutation(200).astype(float)
    v = rng.random(200)
    for algorithm in ("auto", "fiba", "bclassic"):
        out = windowagg.sliding_aggregate(v, size=20, times=t, agg="max", algorithm=algorithm)
        want = [max(v[j] for j in range(i + 1) if t[j] > t[: i + 1].max() - 20) for i in range(200)]
        np.testing.assert_allclose(out, want)
    out = windowagg.sliding_aggregate(v, size=[5, 9], algorithm="fiba")  # count windows
    np.testing.assert_allclose(out[:, 1], [v[max(0, i - 8) : i + 1].sum() for i in range(200)])
    assert len(calls) == 4


# --- the window operator --------------------------------------------------------------------


def _op(lateness=0):
    op = windowagg.WindowOperator("sum", allowed_lateness=lateness)
    op.add_window(windowagg.Tumbling(60))
    op.add_window(windowagg.Session(30))
    return op


@pytest.mark.parametrize("tz", [None, dt.UTC, dt.timezone(dt.timedelta(hours=2))])
def test_operator_takes_datetimes_as_seconds(tz) -> None:
    t0 = dt.datetime(2030, 1, 1, 12, 0, 0, tzinfo=tz)
    events = [(t0 + dt.timedelta(seconds=s), v) for s, v in ((5, 1), (70, 2), (65, 4), (20, 8))]
    op, ref = _op(), _op()
    for t, v in events:
        op.process(t, v)
        ref.process(t.timestamp() if tz else (t - dt.datetime(1970, 1, 1)).total_seconds(), v)
    got, want = op.flush(), ref.flush()
    assert [r.value for r in got] == [r.value for r in want]
    start = got[0].start
    assert isinstance(start, dt.datetime) and (start.tzinfo is None) == (tz is None)
    minute = t0.replace(second=0)
    assert (got[0].start, got[0].end) == (minute, minute + dt.timedelta(minutes=1))


def test_operator_batches_of_datetime64_and_tz_aware_pandas() -> None:
    pd = pytest.importorskip("pandas")
    ts = np.array(
        ["2030-01-01T00:00:05", "2030-01-01T00:01:10", "2030-01-01T00:00:50"],
        dtype="datetime64[ms]",
    )
    op = _op()
    op.process_batch(ts, [1.0, 2.0, 4.0])
    res = {(r.window, r.start): r.value for r in op.flush()}
    assert res[(windowagg.Tumbling(60), dt.datetime(2030, 1, 1))] == 5.0
    aware = pd.Series(pd.to_datetime(ts)).dt.tz_localize("UTC")
    op = _op(lateness=dt.timedelta(seconds=30))
    op.process_batch(aware, [1.0, 2.0, 4.0])
    got = op.watermark(dt.datetime(2030, 1, 1, 0, 1, tzinfo=dt.UTC))
    assert [(r.start.tzinfo, r.value) for r in got if r.window == windowagg.Tumbling(60)] == [
        (dt.UTC, 5.0)
    ]


def test_operator_refuses_mixed_kinds_of_time() -> None:
    op = _op()
    op.process(dt.datetime(2030, 1, 1), 1)
    with pytest.raises(TypeError, match="not of the stream's kind: its times are naive"):
        op.process(5.0, 1)
    with pytest.raises(TypeError, match="must be a number or a datetime, got 'x'"):
        op.process("x", 1)
