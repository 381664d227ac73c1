"""Moved to zeus_bench.core.faults; re-exported here for one release."""

from zeus_bench.core.faults import *  # noqa: F403
from zeus_bench.core.faults import (
    FAULT_ENV,
    _reached,  # noqa: F401  (the crash tests clear it)
    fault_point,
)

__all__ = [
    "FAULT_ENV",
    "fault_point",
]
