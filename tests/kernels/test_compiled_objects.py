"""fifo(..., backend="compiled") under the same traces as the Python reference: every
algorithm x every compiled aggregation (Spark's statistics on the algorithms of
:data:`tests.aggs.STATISTICS`) against the brute-force oracle, with NaNs, growth of
the capacity and query(last=r); batch methods; errors."""

from __future__ import annotations

import pytest

import windowagg
from tests.aggs import COMPILED, crossed
from tests.fifo.traces import RANGES, pairings, replay, trace
from windowagg.aggregations import facts
from windowagg.fifo.compiled import CompiledFifo
from windowagg.kernels.families import FAMILIES
from windowagg.storage import kernel_for, reference_partial

ALGORITHMS = tuple(windowagg.FIFO_ALGORITHMS)


CASES = [c for c in pairings(COMPILED) if crossed(*c.values)]


@pytest.mark.parametrize(("algorithm", "agg_name"), CASES)
def test_compiled_storage_matches_oracle(algorithm: str, agg_name: str) -> None:
    options = {"ranges": RANGES} if algorithm == "slickdeque" else {}
    w = windowagg.fifo(algorithm, agg_name, backend="compiled", **options)
    assert isinstance(w, CompiledFifo)
    replay(w, trace(agg_name)[:1500], last_every=3)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_batch_methods(algorithm: str) -> None:
    agg = "max" if algorithm == "slickdeque" else "sum"
    options = {"ranges": [5]} if algorithm == "slickdeque" else {}
    w = windowagg.fifo(algorithm, agg, backend="compiled", **options)
    ref = windowagg.fifo(algorithm, agg, backend="python", **options)
    for k in range(6):
        batch = [(7 * k + j) % 11 for j in range(100 * k + 3)]
        w.insert_many(batch)
        ref.insert_many(batch)
        w.evict_many(50 * k)
        ref.evict_many(50 * k)
        assert len(w) == len(ref)
        assert w.query() == ref.query()
    with pytest.raises(windowagg.EmptyWindowError):
        w.evict_many(len(w) + 1)


def test_auto_backend_picks_compiled_storage_for_numeric_builtins() -> None:
    assert isinstance(windowagg.fifo("daba", "mean"), CompiledFifo)
    assert not isinstance(windowagg.fifo("daba", "median"), CompiledFifo)
    assert not isinstance(windowagg.fifo("daba", "mean", backend="python"), CompiledFifo)
    with pytest.raises(ValueError, match="backend='compiled' serves the built-in numeric"):
        windowagg.fifo("daba", "collect", backend="compiled")


def test_compiled_errors_match_the_reference() -> None:
    w = windowagg.fifo("daba_lite", "sum", backend="compiled")
    with pytest.raises(TypeError, match="sum needs a number, got 'abc' \\(str\\)"):
        w.insert_many([1, 2, "abc"])
    assert len(w) == 0  # nothing half-applied
    g = windowagg.fifo("two_stacks", "geomean", backend="compiled")
    with pytest.raises(ValueError, match="geomean needs positive values"):
        g.insert(0)
    with pytest.raises(windowagg.EmptyWindowError):
        g.evict()
    with pytest.raises(TypeError, match="backend='python'"):
        g.query_partial()


@pytest.mark.parametrize("agg_name", COMPILED)
def test_kernel_identity_is_the_aggregations_identity(agg_name: str) -> None:
    """A family's identity has one home, its ``identity`` kernel: the partial it writes is, read
    back as the reference's partial, each aggregation's own ``identity`` (and lowers to the
    empty result)."""
    agg = windowagg.aggregation(agg_name)
    family, _ = kernel_for(agg)
    partial = FAMILIES[family].identity_partial
    assert reference_partial(agg, partial, ints=True) == agg.identity
    assert agg.lower(agg.identity) in (None, facts(agg).empty)
