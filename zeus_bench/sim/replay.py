"""The replay loop: run a recurring job's tries on its trace under a policy, one row per try.

Rules (``docs/policies.md``, "The replay rules", with where they depart from the paper's code):

* Each recurrence runs tries until one reaches the target, at most :data:`MAX_TRIES`. Its cost
  is the sum of its tries' costs; a successful recurrence cheaper than ``min_cost`` lowers it.
* A try runs the policy's decision. A decision without a power limit profiles the batch size
  just in time: the limit of least epoch cost is chosen (ties to the higher limit) and the try's
  first epoch costs the mean energy and time per epoch over all limits of that batch size.
* The try samples one training path of its batch size uniformly at random (the environment's
  generator, ``integers(0, n_paths)`` per try, paths in trace order). With early stopping its epoch budget is ``max_epochs`` while ``min_cost`` is
  infinite, else ``min((beta x min_cost) // epoch cost, max_epochs)`` with the epoch cost's
  MAXPOWER that of the batch size (the paper's quirk). A zero budget means the try never runs:
  the policy observes cost ``100 x beta x min_cost``, not reached; no row is written, and the
  try counts towards the :data:`MAX_TRIES` of the recurrence. A recurrence in which no try ran
  still gets one row (:func:`~zeus_bench.sim.executor.missed_row`: ``ran`` False, nothing consumed, ``attempt``
  the tries attempted, the last decision's configuration), so every recurrence is a row.
* The path reaches the target if its target epoch is within the budget; the try then ran that
  many epochs, else the whole budget. Its cost is :meth:`zeus_bench.core.cost.Cost.zeus_cost` with the
  global MAXPOWER (and its emissions at the recurrence's carbon intensity, with a series).
* In the first recurrence a try that does not reach the target is an error (b0 must converge).
  A recurrence whose 20 tries all fail is recorded as failed (the paper's code stops there).

Per (job, cost) the per-configuration figures are computed once (:class:`JobModel`). Each rule
above is one function of :mod:`zeus_bench.sim.env`, which the executor
(:mod:`zeus_bench.sim.executor`: one step loop on arrays over a job's seeds) calls;
:func:`replay` is the executor with one seed, :func:`replay_many` with many, each asking the
policy's face over seeds (:meth:`~zeus_bench.sim.policies.Policy.batched`; the default: one
policy object per seed; ``zeus``: its optimizer's batched rules,
:mod:`zeus_bench.sim.policies.seed_zeus`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zeus_bench.optimizers.bandit import BanditKnobs
from zeus_bench.sim.executor import DriftHook, Lanes, Run, SeedDrifts, execute, execute_blocks
from zeus_bench.sim.model import (
    RUN_FIELDS,
    JitConfig,
    JobModel,
    Row,
    SeedTries,
    check_job,
    default_recurrences,
)
from zeus_bench.sim.policies import Policy, PolicyContext
from zeus_bench.sim.rules import (
    KNOWN,
    MAX_TRIES,
    Horizon,
    ReplayOptions,
    horizon_recurrences,
    noise_generator,
    replay_options,
    seed_generators,
)

__all__ = [
    "KNOWN",
    "MAX_TRIES",
    "RUN_FIELDS",
    "BanditKnobs",
    "JitConfig",
    "JobModel",
    "Row",
    "SeedTries",
    "check_job",
    "default_recurrences",
    "replay",
    "replay_drifts",
    "replay_many",
    "replay_policies",
    "replay_seeds",
    "seed_generators",
]


def replay(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    recurrences: int,
    *,
    drift: Callable[[int, int], float] | None = None,
    options: ReplayOptions | None = None,
    **keywords: Any,
) -> list[Row]:
    """Replay one recurring job for ``recurrences`` recurrences under one policy and seed.

    ``drift`` (:mod:`zeus_bench.sim.scenarios.drift`) scales each sampled path's target epoch by a factor
    per (recurrence, batch-size index); the rows' expected columns stay the undrifted trace's.
    ``options`` (:class:`~zeus_bench.sim.rules.ReplayOptions`, default the paper's), whose fields
    may also be given as keywords (``window=``, ``horizon=``, ``noise=``, ``knobs=``; a field named
    overrides the object's): ``window`` the bandit's window (0: unbounded); ``horizon`` what
    the policy is told about the number of recurrences
    (:func:`~zeus_bench.sim.rules.horizon_recurrences`); ``noise`` > 0 scales every try's time
    and average power by seeded factors (:func:`~zeus_bench.sim.executor.noisy`, a generator of its own);
    ``knobs`` the batch-size optimizer's prior and pruning rounds (default: the paper's).
    ``options.recurrences`` and ``options.policy_modules`` are not read here.

    Returns:
        One row per try that ran (and one per recurrence in which none ran), fields as
        :data:`RUN_FIELDS`.

    Raises:
        TypeError: a keyword that is no field of :class:`~zeus_bench.sim.rules.ReplayOptions`.
    """
    return replay_many(
        model, policy_cls, [seed], beta, recurrences, drift=drift, options=options, **keywords
    )[0]


def replay_many(
    model: JobModel,
    policy_cls: type[Policy],
    seeds: Sequence[int],
    beta: float,
    recurrences: int,
    *,
    drift: Callable[[int, int], float] | None = None,
    options: ReplayOptions | None = None,
    **keywords: Any,
) -> SeedTries:
    """:func:`replay` of every seed, in one run of the executor over the seeds.

    Returns the rows as columns (``seed``: each row's position among ``seeds``); ``[k]`` gives
    seed ``k``'s rows, :func:`replay`'s.

    Each seed has its own policy object, asked through the policy's face over seeds
    (:meth:`~zeus_bench.sim.policies.Policy.batched`), its
    own environment, policy and noise generators (:func:`~zeus_bench.sim.rules.seed_generators`,
    :func:`~zeus_bench.sim.rules.noise_generator`): its rows are those it has replayed alone.
    """
    opts = replay_options(options, keywords)
    knobs = opts.knobs or BanditKnobs()
    told = horizon_recurrences(opts.horizon, recurrences)
    generators = [seed_generators(seed) for seed in seeds]
    policies = [
        policy_cls(PolicyContext(model.job, model.cost, beta, opts.window, pol_rng, told, *knobs))
        for _, pol_rng in generators
    ]
    noise = opts.noise
    noise_rngs = [noise_generator(seed) for seed in seeds] if noise > 0.0 else None
    env_rngs = [e for e, _ in generators]
    run = Run(beta, recurrences, drift, noise)
    return execute(model, policy_cls.batched(model, policies), env_rngs, run, noise_rngs)[0]


def replay_policies(
    model: JobModel,
    policy_classes: Sequence[type[Policy]],
    seeds: Sequence[int],
    beta: float,
    recurrences: int,
    horizon: Horizon = KNOWN,
    noise: float = 0.0,
) -> list[SeedTries]:
    """:func:`replay_many` of each policy class (no window, drift or knobs), all in one run of the executor.

    Each class's seeds get their own policy objects and generators, as in :func:`replay_many`,
    so its rows are those :func:`replay_many` gives it; the executor's work per step is shared
    (:func:`~zeus_bench.sim.executor.execute_blocks`).
    """
    lanes = [Lane(model, tuple(seeds), tuple(policy_classes))]
    return replay_lanes(lanes, beta, recurrences, horizon, noise)[0]


@dataclass(frozen=True)
class Lane:
    """One set of a job's training paths (``model``), replayed on ``seeds`` under each of ``classes``.

    ``horizon``: what its policies are told (None: the walk's, :func:`replay_lanes`'s ``horizon``).
    """

    model: JobModel
    seeds: tuple[int, ...]
    classes: tuple[type[Policy], ...]
    horizon: Horizon | None = None


def replay_lanes(
    lanes: Sequence[Lane],
    beta: float,
    recurrences: int,
    horizon: Horizon = KNOWN,
    noise: float = 0.0,
) -> list[list[SeedTries]]:
    """:func:`replay_policies` of each lane, all in one run of the executor.

    The lanes' models are one job's with other training paths (other halves of its paths, replicate
    traces: :class:`~zeus_bench.sim.executor.Lanes`; the executor refuses models that differ in
    more). A class that does not read its job's paths (``reads_paths`` False) is asked through one
    face over its seeds of every lane, its objects built on the first such lane's job; one that
    does gets a face per lane, on the lane's own job. Classes of one face family
    (:meth:`Policy.face_family <zeus_bench.sim.policies.Policy.face_family>`: the arena's fold
    variants of ``zeus-plus`` and ``zeus-plus-safe``) share that face, each seed with an object of
    its own class. A lane may tell its policies a horizon of its own (:attr:`Lane.horizon`): a face
    serves the lanes told the same. Returns, per lane, each of its classes' rows:
    those :func:`replay_policies` on the lane alone gives (each seed keeps its own policy object
    and generators, and draws its paths from its lane's model).
    """
    if not lanes:
        return []
    told = [
        horizon_recurrences(horizon if lane.horizon is None else lane.horizon, recurrences) for lane in lanes
    ]
    groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}  # face -> its (lane, class position)s
    for k, lane in enumerate(lanes):
        for c, cls in enumerate(lane.classes):
            family = cls.face_family()
            key = (family, told[k]) if not cls.reads_paths else (family, told[k], k)
            groups.setdefault(key, []).append((k, c))
    models = list(dict.fromkeys(lane.model for lane in lanes))
    faces: list[Any] = []
    env_rngs: list[list[Any]] = []
    noise_rngs: list[list[Any]] = []
    of_seed: list[int] = []
    for (family, *_), members in groups.items():
        base = lanes[members[0][0]].model
        generators = [seed_generators(seed) for k, _ in members for seed in lanes[k].seeds]
        classes = [lanes[k].classes[c] for k, c in members for _ in lanes[k].seeds]
        policies = [
            cls(PolicyContext(base.job, base.cost, beta, 0, pol_rng, told[members[0][0]], *BanditKnobs()))
            for cls, (_, pol_rng) in zip(classes, generators, strict=True)
        ]
        faces.append(family.batched(base, policies))
        env_rngs.append([e for e, _ in generators])
        if noise > 0.0:
            noise_rngs.append([noise_generator(seed) for k, _ in members for seed in lanes[k].seeds])
        of_seed += [models.index(lanes[k].model) for k, _ in members for _ in lanes[k].seeds]
    run = Run(beta, recurrences, noise=noise)
    seed_lanes = Lanes(tuple(models), np.array(of_seed, dtype=np.int64)) if len(models) > 1 else None
    out = execute_blocks(models[0], faces, env_rngs, run, noise_rngs if noise > 0.0 else None, seed_lanes)
    rows: list[list[SeedTries]] = [[None] * len(lane.classes) for lane in lanes]  # type: ignore[list-item]
    for tries, members in zip(out, groups.values(), strict=True):
        start = 0
        for k, c in members:
            rows[k][c] = tries.seed_range(start, start + len(lanes[k].seeds))
            start += len(lanes[k].seeds)
    return rows


def replay_drifts(
    model: JobModel,
    runs: Sequence[tuple[type[Policy], int]],
    seeds: Sequence[int],
    drifts: Sequence[DriftHook | None],
    beta: float,
    recurrences: int,
) -> list[list[SeedTries]]:
    """:func:`replay_many` of each run (a policy class and its window) under each drift hook, all in one walk.

    Returns ``out[k][g]``: run ``k``'s rows under ``drifts[g]``, those ``replay_many(model, cls,
    seeds, beta, recurrences, window=window, drift=drifts[g])`` gives (the paper's options
    otherwise). A run's seeds under every hook are one face (its objects and generators their
    own, seed by seed), each seed's hook its own (:class:`~zeus_bench.sim.executor.SeedDrifts`):
    the executor's work per step is shared by all of them.
    """
    if not runs or not drifts or not seeds:
        return [
            [replay_many(model, cls, seeds, beta, recurrences, window=w, drift=d) for d in drifts]
            for cls, w in runs
        ]
    told = horizon_recurrences(KNOWN, recurrences)
    faces: list[Any] = []
    env_rngs: list[list[Any]] = []
    for cls, window in runs:
        generators = [seed_generators(seed) for _ in drifts for seed in seeds]
        policies = [
            cls(PolicyContext(model.job, model.cost, beta, window, pol_rng, told, *BanditKnobs()))
            for _, pol_rng in generators
        ]
        faces.append(cls.batched(model, policies))
        env_rngs.append([e for e, _ in generators])
    group = [g for _ in runs for g in range(len(drifts)) for _ in seeds]
    per_seed = SeedDrifts.of(drifts, group, recurrences, len(model.job.batch_sizes))
    out = execute_blocks(model, faces, env_rngs, Run(beta, recurrences, per_seed))
    n = len(seeds)
    return [[tries.seed_range(g * n, (g + 1) * n) for g in range(len(drifts))] for tries in out]


def replay_seeds(
    model: JobModel,
    policy_cls: type[Policy],
    seeds: Sequence[int],
    beta: float,
    recurrences: int,
    window: int = 0,
) -> dict[int, list[Row]]:
    """:func:`replay` for each seed."""
    return dict(
        zip(seeds, replay_many(model, policy_cls, seeds, beta, recurrences, window=window), strict=True)
    )
