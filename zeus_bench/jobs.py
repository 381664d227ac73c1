"""Moved to zeus_bench.traces.jobs; re-exported here for one release."""

from zeus_bench.traces.jobs import *  # noqa: F403
from zeus_bench.traces.jobs import (
    POWER_COLUMNS,
    TRAIN_COLUMNS,
    ArrayF,
    ArrayI,
    Columns,
    JobTrace,
    TraceSet,
    build_job,
    inner_join,
)

__all__ = [
    "POWER_COLUMNS",
    "TRAIN_COLUMNS",
    "ArrayF",
    "ArrayI",
    "Columns",
    "JobTrace",
    "TraceSet",
    "build_job",
    "inner_join",
]
