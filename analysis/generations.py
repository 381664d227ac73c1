"""Moved to analysis.plots.sweeps; re-exported here for one release."""

from analysis.plots.sweeps import *  # noqa: F403
from analysis.plots.sweeps import (
    OWN_SOFTWARE,
    ZEUS_SOFTWARE,
    at_max_limit,
    generation_table,
    plot_generations,
    samples_per_epoch,
)

__all__ = [
    "OWN_SOFTWARE",
    "ZEUS_SOFTWARE",
    "at_max_limit",
    "generation_table",
    "plot_generations",
    "samples_per_epoch",
]
