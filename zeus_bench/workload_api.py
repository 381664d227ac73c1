"""Moved to zeus_bench.sweep.workload; re-exported here for one release."""

from zeus_bench.sweep.workload import *  # noqa: F403
from zeus_bench.sweep.workload import (
    ENTRY_POINT_GROUP,
    Batch,
    TrainingWorkload,
    available_workloads,
    load_workload,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Batch",
    "TrainingWorkload",
    "available_workloads",
    "load_workload",
]
