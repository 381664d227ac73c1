"""Moved to zeus_bench.optimizers.jit; re-exported here for one release."""

from zeus_bench.optimizers.jit import *  # noqa: F403
from zeus_bench.optimizers.jit import jit_power_limit

__all__ = ["jit_power_limit"]
