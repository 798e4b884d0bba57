"""``windowagg warmup`` compiles ahead every kernel a call can need: the FIFO and B-tree kernels
of every family, and the table engine's own."""

from __future__ import annotations

import subprocess
import sys

from windowagg import warmup

#: in a fresh process, the table engine's kernels that the tables job must have run
CHECK = """
from windowagg import warmup
from windowagg.kernels import bounds, cells, exact_moments, key_order, order_stats, passes
from windowagg.kernels import distinct_groups, extremes, key_codes, part_answers, select_frames
from windowagg.kernels import runs_at
warmup.compile_one(("tables", "all"))
kernels = [bounds.sliding_windows, bounds.sliding_windows_int, bounds.at_bounds,
           bounds.session_windows, bounds.range_bounds,
           bounds.rows_bounds, bounds.frame_totals, cells.grid_cells, cells.cell_sums,
           cells.cell_extremes, key_order.code_counts, key_order.by_code, key_order.radix_segments,
           key_order.unpacked, key_order.refined, cells.step_keys, cells.run_cells,
           passes.gather, passes.scatter, passes.doubles_of, passes.int_span, cells.step_span,
           cells.compact_cells, cells.renumbered, cells.key_spans,
           cells.keyed_cells, select_frames.select_frames, exact_moments.exact_moments,
           key_order.merged_rows, key_order.part_runs, key_order.merged_runs,
           key_order.query_segments, passes.stretched, order_stats.span_ids,
           order_stats.whole_span,
           passes.whole_frame_sums, passes.whole_prefix, extremes.extreme_tables,
           extremes.extremes_at, part_answers.frames_at, part_answers.summed_at,
           part_answers.ends_at, part_answers.values_at, distinct_groups.value_groups,
           distinct_groups.group_starts, distinct_groups.merged_groups,
           distinct_groups.key_first_groups, distinct_groups.walked_groups,
           distinct_groups.distinct_at, key_codes.byte_hashes,
           key_codes.looked_up, key_codes.added, key_codes.rehashed, runs_at.runs_at]
print([k.__name__ for k in kernels if not k.signatures])
"""


def test_jobs_are_every_family_and_the_tables() -> None:
    jobs = warmup.jobs()
    assert {fam for alg, fam in jobs if alg == "btree"} == set(warmup._families())
    assert ("tables", "all") in jobs and jobs[0][0] == "btree"


def test_the_btree_job_runs_both_entry_points(monkeypatch) -> None:
    """Windows over times (``sliding_aggregate``) call ``btree_slide``; the trees of
    ``windowagg.ooo`` call ``btree_run``: each compiles on its own, so the job runs both."""
    called: list[tuple[str, str]] = []

    class Recorder:
        def __init__(self, family: str) -> None:
            self.family = family

        def slide(self, *args) -> None:
            called.append(("slide", self.family))

        def run(self, *args) -> None:
            called.append(("run", self.family))

    monkeypatch.setattr(warmup, "BTreeState", Recorder)
    assert warmup.compile_one(("btree", "sum"))[:2] == ("btree", "sum")
    assert sorted(called) == [("run", "sum"), ("slide", "sum")]


def test_the_tables_job_runs_the_table_engines_kernels() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, timeout=600
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"
