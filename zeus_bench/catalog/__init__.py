"""Every table kind the package writes, registered by importing this module.

Each writer owns its kinds and registers them in its own schema module; the store
(:mod:`zeus_bench.store`) holds the registry and never imports upward. This floor stands above every
writer, so a reader that meets any kind (``zeus-bench traces validate``, reading a table by the kind
in its metadata, the results README rendered from the schemas) imports it first.
"""

from __future__ import annotations

from zeus_bench.device import schema as device_schema
from zeus_bench.sim import schema as sim_schema
from zeus_bench.sim.scenarios import arrivals_schema, drift_schema, terms
from zeus_bench.store import TableSchema, schemas
from zeus_bench.studies import arena_schema, study_schema, validation_schema, warmjobs_schema
from zeus_bench.traces import analysis_schema
from zeus_bench.traces import schema as trace_schema

#: The modules that register the built-in kinds, lowest floor first.
SCHEMA_MODULES = (
    trace_schema,
    analysis_schema,
    device_schema,
    sim_schema,
    arrivals_schema,
    drift_schema,
    terms,  # every cost term's input kind (each term module imports its schema)
    arena_schema,
    study_schema,
    validation_schema,
    warmjobs_schema,
)


def all_schemas() -> dict[str, TableSchema]:
    """Every built-in table kind (and any a user module registered), by kind."""
    return schemas()


__all__ = ["SCHEMA_MODULES", "all_schemas"]
