"""``windowagg bench bulk``: bulk evict and bulk insert against loops of single operations
(bulk paper, Section 6: throughput against bulk size). FiBA (min_arity 4) holds a window of n
in-order entries; each round removes the m oldest and adds m new youngest entries, either with
one ``bulk_evict`` and one ``bulk_insert`` or with m ``evict`` and m ``insert`` calls, then
queries. The readable reference implementation (Python) runs both, so the ratio shows the
algorithms, not the language. Two more rows run the same rounds on compiled storage
(``backend="compiled"``): one ``bulk_evict`` against ``evict_many`` of the m times, each
followed by ``insert_many`` of the m new entries (compiled storage inserts a batch one entry
at a time, in compiled code).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import windowagg

from ..ooo.compiled_tree import CompiledTree
from .core import Row, measure


def bulk(quick: bool, report: Callable[[str], None]) -> list[Row]:
    n = 2**12 if quick else 2**14
    work = 2**12 if quick else 2**14  # entries moved per run, whatever the bulk size
    sizes = [1, 16, 256, 4096] if quick else [1, 4, 16, 64, 256, 1024, 4096, 2**14]
    reps = 3
    rng = np.random.default_rng(5)
    vals = rng.normal(size=n + work)
    values = vals.tolist()
    rows: list[Row] = []
    for m in sizes:
        m = min(m, work)

        def setup():
            w = windowagg.ooo("fiba", "sum", backend="python")
            w.bulk_insert(zip(range(n), values[:n]))
            return w

        def bulk_run(m=m) -> np.ndarray:
            w, out = setup(), []
            for start in range(0, work, m):
                w.bulk_evict(start + m - 1)
                new = range(n + start, n + start + m)
                w.bulk_insert(zip(new, values[n + start : n + start + m]))
                out.append(w.query())
            return np.array(out)

        def single_run(m=m) -> np.ndarray:
            w, out = setup(), []
            for start in range(0, work, m):
                for t in range(start, start + m):
                    w.evict(t)
                for t in range(n + start, n + start + m):
                    w.insert(t, values[t])
                out.append(w.query())
            return np.array(out)

        def compiled_run(m=m, bulk=True) -> np.ndarray:
            w = windowagg.ooo("fiba", "sum", backend="compiled")
            assert isinstance(w, CompiledTree)  # its bulk and batch operations
            w.insert_many(np.arange(n), vals[:n])
            out = []
            for start in range(0, work, m):
                if bulk:
                    w.bulk_evict(start + m - 1)
                else:
                    w.evict_many(np.arange(start, start + m))
                w.insert_many(np.arange(n + start, n + start + m), vals[n + start : n + start + m])
                out.append(w.query())
            return np.array(out)

        cases = (
            ("bulk_evict + bulk_insert", bulk_run),
            ("single evict + insert", single_run),
            ("compiled bulk_evict + insert_many", compiled_run),
            ("compiled evict_many + insert_many", lambda m=m: compiled_run(m, bulk=False)),
        )
        for name, run in cases:
            med, spread, chk = measure(run, reps, warm=1)
            rows.append(Row("bulk", name, "sum", "bulk size", m, med, spread, 2 * work, chk))
            report(f"  m={m:>6d} {name:34s} {2 * work / med / 1e6:8.3f} M entries/s")
    return rows
