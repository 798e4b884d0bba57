"""The rolling front end: a frame per row (``rolling_aggregate``). :mod:`.plan` checks a call
and plans its entries, :mod:`.table` answers a whole table (arranged by key, time and order,
the answers moved back), :mod:`.stream` a stream of batches, :mod:`.at` the point-in-time
queries of ``at=`` and :mod:`.at_stream` those queries over a stream of events."""
