"""Moved to zeus_bench.traces.workloads; re-exported here for one release."""

from zeus_bench.traces.workloads import *  # noqa: F403
from zeus_bench.traces.workloads import (
    MAX_EPOCHS,
    WorkloadSpec,
    get_workload,
    load_workloads,
)

__all__ = [
    "MAX_EPOCHS",
    "WorkloadSpec",
    "get_workload",
    "load_workloads",
]
