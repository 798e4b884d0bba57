"""``windowagg warmup`` compiles ahead every kernel a call can need: the FIFO and B-tree kernels
of every family, and the table engine's own."""

from __future__ import annotations

import subprocess
import sys

from windowagg import warmup

#: in a fresh process, the table engine's kernels that the tables job must have run
CHECK = """
from windowagg import warmup
from windowagg.kernels import frames, keyed, select_frames
warmup.compile_one(("tables", "all"))
kernels = [frames.sliding_windows, frames.sliding_windows_int, frames.at_bounds,
           frames.session_windows, frames.range_bounds,
           frames.rows_bounds, frames.frame_totals, keyed.grid_cells, keyed.cell_sums,
           keyed.cell_extremes, keyed.code_counts, keyed.by_code, keyed.radix_segments,
           keyed.unpacked, keyed.refined, keyed.step_keys, keyed.run_cells,
           keyed.gather, keyed.scatter, keyed.doubles_of, keyed.int_span, keyed.step_span,
           keyed.compact_cells, keyed.renumbered, keyed.key_spans,
           keyed.keyed_cells, select_frames.select_frames]
print([k.__name__ for k in kernels if not k.signatures])
"""


def test_jobs_are_every_family_and_the_tables() -> None:
    jobs = warmup.jobs()
    assert {fam for alg, fam in jobs if alg == "btree"} == set(warmup._families())
    assert ("tables", "all") in jobs and jobs[0][0] == "btree"


def test_the_tables_job_runs_the_table_engines_kernels() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, timeout=600
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"
