"""Moved to zeus_bench.optimizers._ziggurat; re-exported here for one release."""

from zeus_bench.optimizers._ziggurat import THRESHOLDS, WIDTHS

__all__ = ["THRESHOLDS", "WIDTHS"]
