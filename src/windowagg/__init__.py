"""windowagg: sliding-window aggregation over data streams.

In-order aggregators (``fifo``), out-of-order aggregators (``ooo``, ``TimeWindow``), and
built-in and user-defined aggregations (``aggregation``); per-row window functions on local
tables (``rolling_aggregate``) and window aggregates on them (``window_aggregate``).
"""

from .aggregations import AGGREGATIONS, Aggregation, BloomFilter, aggregation
from .arrays import sliding_aggregate
from .combined import combined
from .engine.memory import keep_freed_memory, release_memory
from .engine.parallel import get_threads, set_threads
from .errors import EmptyWindowError
from .fifo import ALGORITHMS as FIFO_ALGORITHMS
from .fifo import fifo
from .online import OnlineFeatures
from .ooo import ALGORITHMS as OOO_ALGORITHMS
from .ooo import TimeWindow, ooo
from .slicing import (
    ContextAwareWindow,
    ContextFreeWindow,
    FixedBand,
    Punctuation,
    Session,
    Sliding,
    Tumbling,
    WindowOperator,
    WindowResult,
)
from .tables import rolling_aggregate, window_aggregate

__all__ = [
    "AGGREGATIONS",
    "FIFO_ALGORITHMS",
    "OOO_ALGORITHMS",
    "Aggregation",
    "BloomFilter",
    "ContextAwareWindow",
    "ContextFreeWindow",
    "EmptyWindowError",
    "FixedBand",
    "OnlineFeatures",
    "Punctuation",
    "Session",
    "Sliding",
    "TimeWindow",
    "Tumbling",
    "WindowOperator",
    "WindowResult",
    "aggregation",
    "combined",
    "fifo",
    "get_threads",
    "keep_freed_memory",
    "ooo",
    "release_memory",
    "rolling_aggregate",
    "set_threads",
    "sliding_aggregate",
    "window_aggregate",
]

__version__ = "0.1.0"
