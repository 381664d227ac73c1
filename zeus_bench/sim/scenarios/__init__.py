"""Scenarios a replay runs under: arrivals, Alibaba job groups, workload drift, warm-start priors.

Arrival tables of concurrent submissions come with their fused replay.

Each scenario's input table kind is registered on import of this package (``arrivals_schema``,
``drift_schema``); the cost terms' kinds by their registry, :mod:`~zeus_bench.sim.scenarios.terms`
(imported by :mod:`zeus_bench.sim.schema`).
"""

from zeus_bench.sim.scenarios import arrivals_schema, drift_schema

__all__ = ["arrivals_schema", "drift_schema"]
