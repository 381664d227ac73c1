"""Moved to zeus_bench.traces.pareto; re-exported here for one release."""

from zeus_bench.traces.pareto import *  # noqa: F403
from zeus_bench.traces.pareto import (
    pareto_frontier,
    pareto_mask,
)

__all__ = [
    "pareto_frontier",
    "pareto_mask",
]
