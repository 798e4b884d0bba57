"""The numbers the kernels and their callers share, named once: the FIFO driver's modes, the
B-tree driver's operations, the slots of the state arrays. Plain integers, no numba: the
Python side (:mod:`windowagg.engine`) imports them without compiling anything."""

# FIFO driver (driver.fifo_run): what one call does
COUNT, TIME, INSERT, EVICT, QUERY, REBUILD = 0, 1, 2, 3, 4, 5
# FIFO state: ptr[F] = absolute position of the oldest element, ptr[E] = one past the youngest;
# ptr[2:] belong to the algorithm (B for the two-stacks family, L R A B for DABA, ...)
F, E = 0, 1
# the scratch partial the FIFO drivers answer into (tmp[:, ANSWER])
ANSWER = 7

# B-tree driver (btree.btree_run): one operation per element
OP_INSERT, OP_EVICT, OP_BULK_EVICT, OP_RANGE, OP_ALL, OP_ROUND = 0, 1, 2, 3, 4, 6
# B-tree meta slots: the root, the fingers, the free stack's top, the first never-used node,
# MIN_ARITY, and 1 for the classic tree (every node holds its up-aggregate)
ROOT, LF, RF, FREE_TOP, NEXT, MU, CLASSIC = 0, 1, 2, 3, 4, 5, 6
# B-tree node flags
LEFT, RIGHT, LEAF = 1, 2, 4
