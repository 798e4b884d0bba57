"""FiBA as one class: the B-tree core (:mod:`.tree`), finger search and position-aware repair
(:mod:`.fingers`), bulk evict and bulk insert (:mod:`.bulk`) and range queries
(:mod:`.range_query`). See those modules for the paper sections they follow."""

from __future__ import annotations

from .bulk import BulkOperations
from .fingers import FingerSearchAndRepair
from .range_query import RangeQuery
from .tree import BTreeAggregator


class FiBA(FingerSearchAndRepair, BulkOperations, RangeQuery, BTreeAggregator):
    """Finger B-tree aggregator; option ``min_arity`` (default 4, any integer >= 2)."""

    name = "fiba"
