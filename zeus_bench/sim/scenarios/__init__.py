"""Scenarios a replay runs under: arrivals, Alibaba job groups, workload drift, warm-start priors.

Arrival tables of concurrent submissions come with their fused replay.

Each scenario's input table kind is registered on import of this package (``arrivals_schema``,
``carbon_schema``, ``drift_schema``).
"""

from zeus_bench.sim.scenarios import arrivals_schema, carbon_schema, drift_schema

__all__ = ["arrivals_schema", "carbon_schema", "drift_schema"]
