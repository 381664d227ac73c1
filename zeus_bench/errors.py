"""Moved to zeus_bench.core.errors; re-exported here for one release."""

from zeus_bench.core.errors import *  # noqa: F403
from zeus_bench.core.errors import (
    ConfigError,
    TraceFormatError,
    UnknownWorkloadError,
    ZeusBenchError,
)

__all__ = [
    "ConfigError",
    "TraceFormatError",
    "UnknownWorkloadError",
    "ZeusBenchError",
]
