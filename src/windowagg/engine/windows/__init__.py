"""The windows front end: tumbling, sliding, session and count windows of a table
(``window_aggregate``). :mod:`.plan` checks a call and plans it, :mod:`.table` answers a whole
table, :mod:`.stream` a stream of batches, :mod:`.slices` is the slicing pass (each slice's
partials from the rows, Scotty's general slicing) and :mod:`.partials` the windows merged from
partials (the same partials Spark SQL pre-aggregates)."""
