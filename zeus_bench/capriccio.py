"""Moved to zeus_bench.traces.capriccio; re-exported here for one release."""

from zeus_bench.traces.capriccio import *  # noqa: F403
from zeus_bench.traces.capriccio import (
    INDEX,
    MAX_TWEETS,
    PAPER_SEED,
    PAPER_SLICE_SIZE,
    PAPER_SLICES,
    PAPER_START,
    PAPER_TRAIN_FRACTION,
    POLARITIES,
    TRAIN_NAME,
    VAL_NAME,
    Tweets,
    build_slices,
    read_tweets,
    slice_starts,
)

__all__ = [
    "INDEX",
    "MAX_TWEETS",
    "PAPER_SEED",
    "PAPER_SLICES",
    "PAPER_SLICE_SIZE",
    "PAPER_START",
    "PAPER_TRAIN_FRACTION",
    "POLARITIES",
    "TRAIN_NAME",
    "VAL_NAME",
    "Tweets",
    "build_slices",
    "read_tweets",
    "slice_starts",
]
