"""Fixed constants of the replay shared by its executors (the rules themselves: :mod:`zeus_bench.sim.env`).

:mod:`zeus_bench.sim.replay` documents them and re-exports these names.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from zeus_bench.optimizers.bandit import BanditKnobs

MAX_TRIES = 20  # tries per recurrence
#: Zero-budget tries in a row after which a submission is given up (the paper's code: never).
MAX_ZERO_BUDGET_TRIES = 20
#: Tries in all after which a submission is given up (the paper's code: never).
MAX_SUBMISSION_TRIES = 1000
ZERO_BUDGET_PENALTY = 100.0  # a zero-budget try is observed at this x beta x min_cost


@functools.lru_cache(maxsize=4096)
def _seed_words(seed: int, n_words: int, dtype: Any) -> np.ndarray:
    """``SeedSequence(seed).generate_state(n_words, dtype)``, hashed once per process (read-only).

    A grid replays each seed on every job: the same words for each (1,200 jobs: 200 hashings, not 2,400).
    """
    words = np.random.SeedSequence(seed).generate_state(n_words, dtype)
    words.setflags(write=False)
    return words


class _SeedWords(np.random.bit_generator.ISeedSequence):
    """The :class:`numpy.random.SeedSequence` of a seed as its generators ask it: its words, hashed once.

    Both generators of a seed (and the seed's generators on every job) ask for the same words
    (PCG64: four 64-bit words); each gets a copy of the words a hashing gives.
    """

    def __init__(self, seed: int) -> None:
        """Words of ``SeedSequence(seed)``."""
        self._seed = seed

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        """``SeedSequence(seed).generate_state(n_words, dtype)`` (kept per process)."""
        return _seed_words(self._seed, n_words, dtype).copy()


def seed_generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """Environment (path sampling) and policy generators of a seed.

    Each is ``numpy.random.default_rng(seed)``, as the paper's simulator seeds its own and its
    optimizer's generators; they are separate objects, so the policy's draws never shift the
    paths sampled (the same seed samples the same paths under every policy).
    """
    # What default_rng(seed) hashes the seed with, once per seed (PCG64 takes any ISeedSequence).
    seeds = cast("np.random.SeedSequence", _SeedWords(seed))
    return np.random.Generator(np.random.PCG64(seeds)), np.random.Generator(np.random.PCG64(seeds))


#: ``--horizon``: what a policy is told about the number of recurrences (docs/policies.md).
KNOWN = "known"  # the replay's true number
UNKNOWN = "unknown"  # nothing: the policy's own online default
RELATIVE = "x"  # suffix of a misspecified horizon: "0.5x" tells half the replay's number, "2x" twice it
Horizon = int | str
#: Largest ``--noise``: relative standard deviation of the per-try factors on time and power.
MAX_NOISE = 0.1
NOISE_CLIP = 3.0  # a factor's standard normal draw is clipped at +-3 (a factor stays > 0.7)
NOISE_STREAM = 0x6E6F697365  # "noise": the noise generator's seed entropy besides the seed


def horizon_recurrences(horizon: Horizon, recurrences: int) -> int | None:
    """What :class:`~zeus_bench.sim.policies.PolicyContext` carries as ``recurrences``.

    ``known``: the replay's ``recurrences``; ``unknown``: None (the policy's own default); a
    positive integer: that number; ``<f>x`` (a misspecified horizon, e.g. ``0.5x`` or ``2x``):
    ``f`` times the replay's number, rounded half up, at least 1.
    """
    if horizon == KNOWN:
        return recurrences
    if horizon == UNKNOWN:
        return None
    if isinstance(horizon, str) and horizon.endswith(RELATIVE):
        return max(1, int(float(horizon[: -len(RELATIVE)]) * recurrences + 0.5))
    return int(horizon)


def noise_generator(seed: int) -> np.random.Generator:
    """The generator of a seed's per-try noise, a stream apart from the paths' and the policy's.

    So turning noise on changes no path sampled and no draw of the policy: the same seed samples
    the same training paths with and without noise, under every policy.
    """
    return np.random.default_rng([NOISE_STREAM, seed])


def check_horizon(horizon: Horizon, option: str = "--horizon") -> Horizon:
    """``known``, ``unknown``, a positive integer (as given, or parsed from its text) or ``<f>x``.

    ``option``: the option or key the horizon came from, named in the error.

    ``<f>x``: a positive factor of the true number of recurrences (``0.5x``, ``2x``), kept as text.

    Raises:
        ConfigError: anything else.
    """
    from zeus_bench.core.entry import parse_float
    from zeus_bench.core.errors import ConfigError

    if horizon in (KNOWN, UNKNOWN):
        return horizon
    text = str(horizon).strip()
    if isinstance(horizon, str) and text.endswith(RELATIVE):
        factor = text[: -len(RELATIVE)]
        try:
            f = parse_float(factor)
        except ValueError:
            f = math.nan
        if not (math.isfinite(f) and f > 0.0) or factor.strip() != factor or not factor:
            raise ConfigError(f"{option} <f>x needs a positive factor f (e.g. 0.5x, 2x), got {horizon!r}")
        return f"{f:g}{RELATIVE}"
    if isinstance(horizon, bool) or not text.isdigit() or int(text) < 1:
        raise ConfigError(
            f"{option} must be known, unknown, a positive integer or a factor such as 0.5x, got {horizon!r}"
        )
    n = int(text)
    return n


def check_noise(noise: float | str) -> float:
    """A per-try noise level in ``[0, MAX_NOISE]`` (relative standard deviation).

    Raises:
        ConfigError: out of range or not a number.
    """
    from zeus_bench.core.entry import parse_float
    from zeus_bench.core.errors import ConfigError

    try:
        level = parse_float(noise) if isinstance(noise, str) else float(noise)
    except (TypeError, ValueError):
        raise ConfigError(f"--noise must be a number in [0, {MAX_NOISE:g}], got {noise!r}") from None
    if not 0.0 <= level <= MAX_NOISE:  # NaN fails too
        raise ConfigError(f"--noise must lie in [0, {MAX_NOISE:g}] (relative std per try), got {noise!r}")
    return level


@dataclasses.dataclass(frozen=True)
class ReplayOptions:
    """How each replay runs (the defaults: the paper's recurring jobs)."""

    recurrences: int | None = None  # None: each job's default (zeus_bench.sim.replay.default_recurrences)
    window: int = 0  # the bandit's window (0: unbounded)
    horizon: Horizon = KNOWN  # what the policy is told of the recurrences (zeus_bench.sim.rules)
    noise: float = 0.0  # per-try noise on time and power (relative std; 0: none)
    knobs: BanditKnobs | None = None  # the batch-size optimizer's prior and pruning rounds (None: defaults)
    policy_modules: Sequence[str] = ()  # modules that register more policies


#: The paper's replay (:class:`ReplayOptions`' defaults).
PAPER_OPTIONS = ReplayOptions()


def replay_options(options: ReplayOptions | None, keywords: Mapping[str, Any]) -> ReplayOptions:
    """``options`` (None: the defaults) with the fields named in ``keywords`` replaced.

    What a replay function accepting both an options object and its fields as keywords
    (``replay(..., noise=0.05)``) runs under.

    Raises:
        TypeError: a keyword that is no field of :class:`ReplayOptions`.
    """
    base = PAPER_OPTIONS if options is None else options
    return dataclasses.replace(base, **keywords) if keywords else base
