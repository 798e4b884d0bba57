"""windowagg: sliding-window aggregation over data streams.

In-order aggregators (``fifo``), built-in and user-defined aggregations (``aggregation``).
"""

from .aggregations import AGGREGATIONS, Aggregation, BloomFilter, aggregation
from .errors import EmptyWindowError
from .fifo import ALGORITHMS as FIFO_ALGORITHMS
from .fifo import fifo

__all__ = [
    "AGGREGATIONS",
    "FIFO_ALGORITHMS",
    "Aggregation",
    "BloomFilter",
    "EmptyWindowError",
    "aggregation",
    "fifo",
]

__version__ = "0.1.0"
