"""The evaluators of the table engine, one module per strategy (as DuckDB's window code has one
file per strategy, each saying which aggregates it serves): each has ``SERVES`` (the
:class:`~windowagg.aggregations.Evaluation` members it answers) and
``evaluate(col, frames, entry, inputs)``. An entry's evaluation is its aggregation's record's
(:attr:`windowagg.aggregations.Facts.evaluation`), so adding an aggregation with a new strategy
is its record and an evaluator here, listed in :data:`windowagg.engine.evaluate.EVALUATORS`."""
