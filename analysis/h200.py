"""Moved to analysis.plots.sweeps; re-exported here for one release."""

from analysis.plots.sweeps import *  # noqa: F403
from analysis.plots.sweeps import _log_ticks, markdown_table, plot_sweep

__all__ = ["_log_ticks", "markdown_table", "plot_sweep"]
