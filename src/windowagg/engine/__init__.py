"""The columnar engine: windows and frames for all keys of a table in one compiled pass, rows
grouped into key segments. Its callers (local tables, Spark workers, the command line) are
thin. :mod:`.rolling` answers per-row frames."""
