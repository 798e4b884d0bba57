"""``windowagg bench``: seeded workloads after the papers' experiments, warm-up, repetitions,
median and spread, a checksum of all results, a table, CSV and a PNG plot on request."""
