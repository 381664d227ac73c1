"""Moved to zeus_bench.optimizers.rng; re-exported here for one release."""

from zeus_bench.optimizers.rng import *  # noqa: F403
from zeus_bench.optimizers.rng import (
    FLOYD_MAX_POPULATION,
    LITTLE_ENDIAN,
    MASK32,
    REJECT_SET_MAX_N,
    ChoiceDraws,
    PathDraws,
    emulated,
    fast_normals,
    lemire_accept,
    measure_normal_tables,
    normal_tables,
    pcg64_step,
    pcg64_steps_between,
    rejectable_words,
    rejected_words,
    strip_densities,
    word_stream,
)

__all__ = [
    "FLOYD_MAX_POPULATION",
    "LITTLE_ENDIAN",
    "MASK32",
    "REJECT_SET_MAX_N",
    "ChoiceDraws",
    "PathDraws",
    "emulated",
    "fast_normals",
    "lemire_accept",
    "measure_normal_tables",
    "normal_tables",
    "pcg64_step",
    "pcg64_steps_between",
    "rejectable_words",
    "rejected_words",
    "strip_densities",
    "word_stream",
]
