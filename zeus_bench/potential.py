"""Moved to zeus_bench.traces.potential; re-exported here for one release."""

from zeus_bench.traces.potential import *  # noqa: F403
from zeus_bench.traces.potential import (
    POTENTIAL_COLUMNS,
    Reference,
    at_max_power,
    potential_row,
    potential_table,
    saving_pct,
)

__all__ = [
    "POTENTIAL_COLUMNS",
    "Reference",
    "at_max_power",
    "potential_row",
    "potential_table",
    "saving_pct",
]
