"""Moved to zeus_bench.core.cost; re-exported here for one release."""

from zeus_bench.core.cost import *  # noqa: F403
from zeus_bench.core.cost import (
    DEFAULT_BETA,
    DEFAULT_ETA,
    ArrayF,
    check_beta,
    check_eta,
    epoch_cost,
    zeus_cost,
)

__all__ = [
    "DEFAULT_BETA",
    "DEFAULT_ETA",
    "ArrayF",
    "check_beta",
    "check_eta",
    "epoch_cost",
    "zeus_cost",
]
