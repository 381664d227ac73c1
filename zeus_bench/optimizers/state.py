"""Persisted optimizer state: a generator's state as JSON and back."""

from __future__ import annotations

from typing import Any

import numpy as np

from zeus_bench.core.errors import ConfigError

__all__ = ["rng_from_state", "rng_state"]


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """JSON-serializable state of a generator (its bit generator's state dict)."""
    return dict(rng.bit_generator.state)


def rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    """Rebuild a generator from :func:`rng_state` output."""
    name = state.get("bit_generator")
    bit_gen_cls = getattr(np.random, str(name), None)
    if bit_gen_cls is None or not isinstance(bit_gen_cls, type):
        raise ConfigError(f"unknown bit generator {name!r} in saved optimizer state")
    bit_gen = bit_gen_cls()
    bit_gen.state = state
    return np.random.Generator(bit_gen)
