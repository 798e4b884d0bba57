"""The columnar engine: windows and frames for all keys of a table in one compiled pass, rows
grouped into key segments. Its callers (local tables, Spark workers, the command line) are
thin.

Two front ends over one core: :mod:`.rolling` (a frame per row: plan, table, stream,
point-in-time ``at=`` and ``at=`` over a stream) and :mod:`.windows` (windows of a table:
plan, table, stream, the slicing pass and windows from partials). The core, which neither
front end's modules import across, holds the keys and the sort (:mod:`.keys`), the columns
(:mod:`.columns`), the entries (:mod:`.entries`), the frames' bounds and sweeps
(:mod:`.sweep`), the evaluation of every entry (:mod:`.evaluate`), the threads
(:mod:`.parallel`), the stage profile (:mod:`.stages`) and the engine's memory
(:mod:`.memory`)."""
