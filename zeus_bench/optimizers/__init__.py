"""Batch-size optimizers and the JIT power-limit choice: pure algorithms, no I/O and no clock.

The simulator replays them on traces and :mod:`zeus_bench.online` runs them inside a training
loop, across recurrences of a job. Every batch-size optimizer keeps one contract,
:class:`Optimizer`, and :data:`OPTIMIZERS` finds it by policy name:

* ``zeus``: pruning exploration, then Gaussian Thompson Sampling (Zeus's own optimizer,
  :class:`~zeus_bench.optimizers.bandit.PruningThompsonSampling`, under the contract as
  :class:`ZeusOptimizer`);
* ``zeus-plus``: safe, budgeted hill climbing (:class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb`).

A run goes: :meth:`Optimizer.predict` (its batch size), :meth:`Optimizer.stop_cost` after each
epoch (the cost at which the run stops early), :meth:`Optimizer.observe` once it ends. The
power-limit choices are in :mod:`zeus_bench.optimizers.jit`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, Self, cast

import numpy as np

from zeus_bench.optimizers.bandit import PRUNE_ROUNDS, PruningThompsonSampling
from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.optimizers.jit import LimitMeasurement, MinCostPerSample, OptimumStrategy, jit_power_limit

__all__ = [
    "OPTIMIZERS",
    "PRUNE_ROUNDS",
    "LimitMeasurement",
    "MinCostPerSample",
    "Optimizer",
    "OptimumStrategy",
    "PruningThompsonSampling",
    "SafeHillClimb",
    "ZeusOptimizer",
    "jit_power_limit",
]


class Optimizer(Protocol):
    """What every batch-size optimizer offers (:data:`OPTIMIZERS`); costs in J.

    ``for_job`` builds one before any run from the settings a job has (each optimizer takes the
    ones it uses); ``state_dict``/``from_state_dict`` persist it as JSON between recurrences, and
    a restored optimizer continues exactly as the original would, random draws included.
    """

    batch_sizes: list[int]
    default_batch_size: int

    @classmethod
    def for_job(
        cls,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        *,
        seed: int = 0,
        window: int = 0,
        prune_rounds: int | None = None,
        recurrences: int = 0,
    ) -> Self:
        """The optimizer before any run of a job (``prune_rounds`` None: the optimizer's default).

        ``recurrences``: how many times the job will run, when known (0: unknown); an optimizer
        that budgets its exploration over them takes it, the others ignore it.
        """
        ...

    def predict(self) -> int:
        """Batch size of the next run."""
        ...

    def stop_cost(self, default: float, epoch_cost: float = math.nan) -> float:
        """Cost at which the run just predicted stops; ``default`` is beta x the best cost.

        ``epoch_cost`` is the cost of its first epoch (measured, or NaN). Never above ``default``.
        """
        ...

    def observe(
        self, batch_size: int, cost: float, reached: bool, epochs: float = math.nan, overhead: float = 0.0
    ) -> None:
        """Feed back one run: batch size, cost (so far, if stopped), whether it reached the target.

        ``epochs`` is how many it ran; ``overhead`` what its first epoch cost more than it would
        have at the limit chosen (it profiled every limit). An optimizer may ignore either.
        """
        ...

    def best_batch_size(self) -> int:
        """Best batch size known so far."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable state."""
        ...

    @classmethod
    def from_state_dict(cls, d: dict[str, Any]) -> Self:
        """Restore an optimizer saved with ``state_dict``."""
        ...


class ZeusOptimizer(PruningThompsonSampling):
    """Zeus's optimizer, :class:`PruningThompsonSampling`, under the :class:`Optimizer` contract.

    Its draws, decisions and ``state_dict`` are the bandit's own. Zeus learns from each run's
    whole cost, as the paper's optimizer does (``epochs`` and ``overhead`` are not used), and
    stops a run only at ``beta x`` the best cost (``stop_cost`` returns the default).
    """

    @classmethod
    def for_job(
        cls,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        *,
        seed: int = 0,
        window: int = 0,
        prune_rounds: int | None = None,
        recurrences: int = 0,
    ) -> Self:
        """The bandit at pruning round 1, drawing from ``numpy.random.default_rng(seed)`` (``recurrences`` unused)."""
        rounds = PRUNE_ROUNDS if prune_rounds is None else prune_rounds
        return cls(
            batch_sizes, default_batch_size, np.random.default_rng(seed), prune_rounds=rounds, window=window
        )

    def stop_cost(self, default: float, epoch_cost: float = math.nan) -> float:
        """``default``: Zeus stops a run at beta x the best cost and nowhere else."""
        return default

    def observe(
        self, batch_size: int, cost: float, reached: bool, epochs: float = math.nan, overhead: float = 0.0
    ) -> None:
        """Feed back one run (:meth:`PruningThompsonSampling.observe`; ``epochs``, ``overhead`` unused)."""
        super().observe(batch_size, cost, reached)

    @classmethod
    def from_state_dict(cls, d: dict[str, Any]) -> Self:
        """Restore one saved with ``state_dict`` (the bandit's own format: states saved by it load)."""
        return cast(Self, super().from_state_dict(d))


#: The batch-size optimizer of each policy that runs online, by policy name.
OPTIMIZERS: dict[str, type[Optimizer]] = {"zeus": ZeusOptimizer, "zeus-plus": SafeHillClimb}
