"""What a study charges each recurrence of a replay, and a job's reference costs.

The one place both the zeus-plus study (:mod:`zeus_bench.studies.study`), the warm-start tables
(:mod:`zeus_bench.studies.warmjobs`) and the arena (:mod:`zeus_bench.studies.arena`) take them from.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.sim.metrics import charged
from zeus_bench.sim.policies.builtin import max_limit_w, oracle_configuration
from zeus_bench.sim.replay import replay_many

if TYPE_CHECKING:
    from zeus_bench.sim.policies.base import Policy
    from zeus_bench.sim.replay import JobModel, SeedTries
    from zeus_bench.sim.scenarios.drift import Drift

__all__ = ["Refs", "anytime_floor", "probe_floor", "recurrence_costs", "references"]


@dataclass(frozen=True)
class Refs:
    """Expected cost per recurrence of the three references of a job (J)."""

    baseline: float
    max_batch: float
    oracle: float


_REFS: weakref.WeakKeyDictionary[JobModel, Refs] = weakref.WeakKeyDictionary()
""":func:`references` of each model alive (the arena asks once per replay of every policy)."""


def references(model: JobModel) -> Refs:
    """Expected recurrence costs of b0 and max-batch at their maximum limits, and of the oracle (found once per model)."""
    hit = _REFS.get(model)
    if hit is None:
        hit = _REFS[model] = _references(model)
    return hit


def _references(model: JobModel) -> Refs:
    job = model.job

    def at(b: int, p: float) -> float:
        return model.expected_cost[model.bs_index[b]][model.limit_index[p]]

    ob, op = oracle_configuration(job, model.cost)
    mb = job.max_batch()
    return Refs(at(job.b0, max_limit_w(job, job.b0)), at(mb, max_limit_w(job, mb)), at(ob, op))


def recurrence_costs(
    model: JobModel,
    cls: type[Policy],
    seeds: Sequence[int],
    beta: float,
    n: int,
    window: int = 0,
    drift: Drift | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """What every recurrence is charged, and whether it failed (rows: seeds, columns: recurrences).

    A failed recurrence (no try reached the target) is charged what its tries spent plus the
    baseline's expected cost (:func:`zeus_bench.sim.metrics.charged`, the summary's rule).
    """
    return tries_costs(model, replay_many(model, cls, list(seeds), beta, n, window=window, drift=drift), n)


def tries_costs(model: JobModel, tries: SeedTries, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`recurrence_costs` of a replay's rows (``tries``: its seeds' rows, ``n`` recurrences, on ``model``)."""
    cell = tries.seed * n + (tries.columns["recurrence"] - 1)  # (seed, recurrence), flat
    # bincount adds each cell's costs in row order (each seed's rows in turn), as np.add.at would
    spent = np.bincount(cell, weights=tries.columns["cost"], minlength=tries.seeds * n).reshape(
        tries.seeds, n
    )
    reached = np.zeros(tries.seeds * n, dtype=bool)
    reached[cell[tries.columns["reached"].astype(bool)]] = True
    failed = ~reached.reshape(tries.seeds, n)
    return charged(spent, failed.astype(float), references(model).baseline), failed


def _epoch_costs(model: JobModel) -> np.ndarray:
    """Cost of one epoch per (batch size, limit) at the model's cost (NaN where not measured)."""
    job = model.job
    return model.cost.epoch_cost(job.time_per_epoch_s, job.avg_power_w, job.max_power_w)


def probe_floor(model: JobModel, baseline_totals: np.ndarray) -> np.ndarray:
    """Per seed, the least paired cost ratio of a policy that makes one try of another batch size and drops it.

    ``baseline_totals`` are the baseline's cumulative costs on the seeds (b0 at its maximum limit),
    also the ratio's denominator (the same seed, the arena's paired ratio). Such a policy runs b0
    in every recurrence, at best at b0's cheapest limit (the seed's b0 paths at that limit's epoch
    cost), and its try ran at least one epoch: at least the cheapest epoch of any other batch size
    (at its cheapest limit). The trace's own bound, replaying no policy: above 1.02 on a seed, one
    dropped probe of one epoch already breaks the goal there. A job with b0 alone: b0's floor at
    its cheapest limit.
    """
    job = model.job
    costs = _epoch_costs(model)
    i0 = job.bs_index(job.b0)
    top = float(costs[i0][int(np.flatnonzero(job.power_limits == max_limit_w(job, job.b0))[0])])
    others = np.delete(costs, i0, axis=0)
    one_epoch = float(np.nanmin(others)) if np.isfinite(others).any() else 0.0
    return (baseline_totals * float(np.nanmin(costs[i0])) / top + one_epoch) / baseline_totals


def anytime_floor(model: JobModel, n: int, safety: float) -> float:
    """Least expected regret (%) over ``n`` recurrences of a policy that keeps the anytime guarantee.

    The guarantee (zeus-plus's anytime budget, its rule when the number of recurrences is
    unknown): after every recurrence the cumulative cost stays within ``(1 + safety) x`` the
    baseline's, even if the try under way does not reach the target, in which case a run that
    does must follow in the same recurrence. The floor holds for such a policy even if it knew
    every expected cost in advance:

    * until it tries another batch size, every recurrence runs b0, at best at its cheapest
      limit (``c0``, its least expected recurrence cost, with no profiling);
    * a try can reach the target only if it may spend at least the cheapest training path of
      any other batch size at that batch size's cheapest limit (``x_min``); it fits the
      guarantee in recurrence ``t`` only if ``(1 + safety) t B - (t - 1) c0 - c0 >= x_min``
      (``B`` the baseline's expected recurrence cost; the ``c0`` kept for the run after a
      failed try), i.e. first in ``t* = ceil(x_min / ((1 + safety) B - c0))``;
    * from ``t*`` on, at best the oracle's expected cost ``X``.

    So the floor is ``100 x min(t* - 1, n) x (c0 - X) / (n X)``: 0 where b0 at its cheapest
    limit is the oracle. A policy that bets on recurrences yet to run (a known or assumed
    horizon, a loan) is not bound by it.
    """
    job = model.job
    refs = references(model)
    i0 = job.bs_index(job.b0)
    c0 = float(np.nanmin(model.expected_cost[i0]))
    gain = c0 - refs.oracle
    if gain <= 0.0:
        return 0.0
    costs = _epoch_costs(model)
    x_min = math.inf
    for i, epochs in enumerate(job.target_epochs):
        reached = epochs[~np.isnan(epochs) & (epochs <= job.max_epochs)]
        if i != i0 and len(reached) and np.isfinite(costs[i]).any():
            x_min = min(x_min, float(reached.min()) * float(np.nanmin(costs[i])))
    rate = (1.0 + safety) * refs.baseline - c0  # what each recurrence at b0 adds to the funds
    waited = n if rate <= 0.0 or not math.isfinite(x_min) else min(n, math.ceil(x_min / rate) - 1)
    return 100.0 * max(0, waited) * gain / (n * refs.oracle)
