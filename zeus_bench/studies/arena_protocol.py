"""The arena's protocol and its replays: every policy on the same seeds, paths and replicates.

:class:`Protocol` says how every policy of an arena is replayed and judged; :func:`run_arena`
replays each (job, policy) on the protocol's seeds and replicate traces into :class:`Draws`
(:func:`policies_draws`: a job's policies in one executor walk per trace), the paired references (:data:`PAIRED`) and Zeus (:data:`COMPARATOR`) beside
every policy. The statistics over these draws are in :mod:`zeus_bench.studies.arena_stats`; the
arena's tables are built by :mod:`zeus_bench.studies.arena`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
from zeus_bench.core.entry import check_tries
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import charged, check_path_draw
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.replay import JobModel, check_job, default_recurrences, replay_policies
from zeus_bench.sim.rules import KNOWN, Horizon, check_horizon, check_noise
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, judged_half, replicate_job, split_job, variant
from zeus_bench.studies.recurrences import references as job_refs
from zeus_bench.traces.jobs import JobTrace, TraceSet

log = logging.getLogger(__name__)

REFERENCES = ("baseline", "max-batch", "oracle")
"""Reference policies: not in the default arena (their expected costs are the references)."""
COMPARATOR = "zeus"
"""The policy every other is paired with (always replayed)."""
SAFE = 1.02
"""A seed is unsafe when its cumulative cost exceeds this multiple of the baseline's on the same seed."""
P_SAFE = 95.0
"""Percentile over seeds of the cost ratio the safety goal bounds."""


def default_policies() -> list[str]:
    """Every registered policy but the references (so newly registered ones join the arena)."""
    return [p for p in POLICIES if p not in REFERENCES]


Constants = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
"""Per policy, its constant overrides: ``((policy, ((name, value), ...)), ...)`` (hashable, picklable)."""


def frozen_constants(constants: dict[str, dict[str, Any]]) -> Constants:
    """``{policy: {name: value}}`` as :data:`Constants`."""
    return tuple((p, tuple(sorted(c.items()))) for p, c in sorted(constants.items()))


@dataclass(frozen=True)
class Protocol:
    """How every policy of an arena is replayed and judged.

    ``fold`` (:data:`~zeus_bench.studies.crossfit.FOLDS`) names the cross-fitting fold: ``half`` is
    the half it judges and ``constants`` the overrides chosen on its other half
    (:meth:`for_fold` sets both); ``split`` the split of the paths
    (:func:`~zeus_bench.studies.crossfit.path_halves`). ``replicates`` replicate traces
    (:func:`~zeus_bench.studies.crossfit.replicate_job`) are replayed on the first
    ``replicate_seeds`` seeds each (the path level of the intervals; 0: seeds only).
    ``recurrences``: replay every job this many times (None: ``2 x |B| x |P|`` of the whole job).
    ``path_draw``: how the intervals' draws shift by the path level
    (:func:`~zeus_bench.sim.metrics.path_shifts`: ``pick``, ``normal`` or ``t``).
    """

    seeds: tuple[int, ...]
    eta: float = DEFAULT_ETA
    beta: float = DEFAULT_BETA
    horizon: Horizon = KNOWN
    noise: float = 0.0
    half: str = "judge"
    fold: int = 1
    constants: Constants = field(default=())
    split: int = 1
    replicates: int = 0
    replicate_seeds: int = 1
    recurrences: int | None = None
    path_draw: str = "pick"

    def for_fold(self, fold: int) -> Protocol:
        """This protocol on fold ``fold``: its judged half and its constants (crossfit.FOLD_CONSTANTS).

        Overrides already in ``constants`` (``zeus-bench arena --set``) win over the fold's.
        """
        merged = {p: dict(c) for p, c in FOLD_CONSTANTS[fold].items()}
        for p, c in self.constants:
            merged.setdefault(p, {}).update(dict(c))
        return replace(self, fold=fold, half=judged_half(fold), constants=frozen_constants(merged))

    def policy(self, name: str) -> type[Policy]:
        """The registered policy ``name`` with this protocol's overrides of its constants."""
        return variant(name, dict(dict(self.constants).get(name, ())))


def seed_costs(
    model: JobModel, policy_cls: type[Policy], protocol: Protocol, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Charged cost of every recurrence (rows: seeds, columns: recurrences) and failed flags.

    A failed recurrence (no try reached the target) is charged its tries plus the baseline's
    expected recurrence cost (:func:`~zeus_bench.sim.metrics.charged`).
    """
    return policies_seed_costs(model, [policy_cls], protocol, n)[0]


def policies_seed_costs(
    model: JobModel, classes: Sequence[type[Policy]], protocol: Protocol, n: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`seed_costs` of each policy class, every class's seeds replayed in one executor walk."""
    seeds = list(protocol.seeds)
    runs = replay_policies(model, classes, seeds, protocol.beta, n, protocol.horizon, protocol.noise)
    baseline = job_refs(model).baseline
    out = []
    for tries in runs:
        spent = np.zeros((len(seeds), n))
        reached = np.zeros((len(seeds), n), dtype=bool)
        cols = tries.columns
        rec = cols["recurrence"] - 1
        np.add.at(spent, (tries.seed, rec), cols["cost"])
        np.logical_or.at(reached, (tries.seed, rec), cols["reached"])
        failed = ~reached
        out.append((charged(spent, failed.astype(float), baseline), failed))
    return out


def replayed_total(model: JobModel, name: str, protocol: Protocol, n: int) -> np.ndarray:
    """Per seed, the cumulative charged cost of the registered policy ``name`` (a paired reference)."""
    return seed_costs(model, get_policy(name), protocol, n)[0].sum(axis=1)


@dataclass(frozen=True)
class Draws:
    """One (job, policy)'s replays under a protocol: on the recorded paths and on replicate traces.

    ``recorded``/``failed``: per seed, the cumulative charged cost and the failed recurrences on the
    judged half's recorded paths; ``replicates``: shape ``(R, S)``, the cumulative charged cost on
    each replicate trace and seed; ``oracle``: shape ``(R,)``, each replicate's expected oracle
    recurrence cost (its regret's reference).
    """

    recorded: np.ndarray
    failed: np.ndarray
    replicates: np.ndarray = field(default_factory=lambda: np.zeros((0, 1)))
    oracle: np.ndarray = field(default_factory=lambda: np.zeros(0))


def replay_draws(job: JobTrace, n: int, policy_cls: type[Policy], protocol: Protocol) -> Draws:
    """Replay ``policy_cls`` on the job's recorded paths (every seed) and its replicate traces."""
    return policies_draws(job, n, [policy_cls], protocol)[0]


def policies_draws(job: JobTrace, n: int, classes: Sequence[type[Policy]], protocol: Protocol) -> list[Draws]:
    """:func:`replay_draws` of each policy class, the classes replayed together on each trace."""
    recorded = policies_seed_costs(JobModel(job, Cost(protocol.eta)), classes, protocol, n)
    reps: list[list[np.ndarray]] = [[] for _ in classes]
    oracle = []
    few = replace(protocol, seeds=protocol.seeds[: protocol.replicate_seeds])
    for r in range(protocol.replicates):
        model = JobModel(replicate_job(job, protocol.split, protocol.fold, r), Cost(protocol.eta))
        for k, (costs, _) in enumerate(policies_seed_costs(model, classes, few, n)):
            reps[k].append(costs.sum(axis=1))
        oracle.append(job_refs(model).oracle)
    width = len(few.seeds)
    return [
        Draws(
            costs.sum(axis=1),
            failed.sum(axis=1),
            np.array(rep).reshape(len(rep), width),
            np.array(oracle, dtype=float),
        )
        for (costs, failed), rep in zip(recorded, reps, strict=True)
    ]


PAIRED = ("baseline", "max-batch")
"""The references replayed on the same seeds, paths and replicates as every policy (paired ratios)."""


@dataclass(frozen=True)
class _Task:
    job: JobTrace
    policies: tuple[str, ...]
    protocol: Protocol
    recurrences: int
    policy_modules: tuple[str, ...] = ()


def _run(task: _Task) -> list[tuple[str, str, str, Draws]]:
    """(gpu, workload, policy, its draws) of each policy of a task (its job's, replayed together)."""
    from zeus_bench.sim.policies.base import load_policy_module

    for module in task.policy_modules:
        load_policy_module(module)
    classes = [task.protocol.policy(p) for p in task.policies]
    draws = policies_draws(task.job, task.recurrences, classes, task.protocol)
    return [(task.job.gpu, task.job.workload.id, p, d) for p, d in zip(task.policies, draws, strict=True)]


@dataclass(frozen=True)
class ArenaJob:
    """A job restricted to one half of its paths, replayed as often as the whole job recurs.

    ``recurrences`` is ``2 x |B| x |P|`` of the *whole* job: leaving a single-path batch size out of
    both halves does not change how often the job recurs.
    """

    job: JobTrace
    recurrences: int


def judged_jobs(
    traces: dict[str, TraceSet],
    gpus: Sequence[str],
    workloads: Sequence[str] | None,
    half: str,
    split: int = 1,
    recurrences: int | None = None,
) -> list[ArenaJob]:
    """Every (GPU, workload) job restricted to ``half`` of its training paths (of split ``split``).

    ``recurrences``: replay each job this many times (None: ``2 x |B| x |P|`` of the whole job).

    Raises:
        ConfigError: an unknown GPU or workload, or a job whose split is empty.
    """
    jobs = []
    for gpu in gpus:
        ts = traces[gpu]
        if gpu not in ts.gpus:
            raise ts.unknown_gpu(gpu)
        ids = ts.workload_ids(gpu) if workloads is None else list(workloads)
        if not ids:
            raise ConfigError(f"no workloads on GPU {gpu!r}")
        for w in ids:
            whole = ts.job(gpu, w)
            job = split_job(whole, half, split)
            check_job(job)
            jobs.append(ArenaJob(job, recurrences or default_recurrences(whole)))
    return jobs


def as_arena_jobs(jobs: Sequence[ArenaJob | JobTrace]) -> list[ArenaJob]:
    """Plain jobs recur ``2 x |B| x |P|`` times (their own batch sizes)."""
    return [j if isinstance(j, ArenaJob) else ArenaJob(j, default_recurrences(j)) for j in jobs]


class Runs(dict[tuple[str, str, str], Draws]):
    """``{(gpu, workload, policy): draws}`` of one (split, fold); ``policies``: those asked for (rows)."""

    policies: tuple[str, ...] = ()


def run_arena(
    jobs: Sequence[ArenaJob | JobTrace],
    policies: Sequence[str],
    protocol: Protocol,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> Runs:
    """Replay every (job, policy) on the protocol's seeds and replicates.

    Zeus is added when missing (every policy is paired with it), and so are the paired references
    (:data:`PAIRED`, the ratios' denominators).
    """
    names = list(dict.fromkeys([COMPARATOR, *policies, *PAIRED]))
    for p in names:
        get_policy(p)
    if not protocol.seeds:
        raise ConfigError("no seeds given")
    check_horizon(protocol.horizon)
    check_noise(protocol.noise)
    check_path_draw(protocol.path_draw)  # before the replays, not after them in the statistics
    tasks = [
        _Task(j.job, tuple(names), protocol, j.recurrences, tuple(policy_modules))
        for j in as_arena_jobs(jobs)
    ]
    check_tries(
        sum(len(protocol.seeds) * t.recurrences * len(names) for t in tasks),
        f"{len(protocol.seeds)} seed(s) x {len(names)} policies x {len(tasks)} job(s) x their recurrences",
    )
    out = Runs()
    out.policies = tuple(n for n in names if n not in PAIRED or n in policies)
    if jobs_n > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs_n) as pool:
            done = pool.map(_run, tasks)
            for runs in done:
                _collect(out, runs, progress)
    else:
        for t in tasks:
            _collect(out, _run(t), progress)
    return out


def _collect(
    out: Runs, runs: list[tuple[str, str, str, Draws]], progress: Callable[[int], None] | None
) -> None:
    """A task's draws into ``out``; ``progress`` told one (job, policy) at a time."""
    for gpu, w, p, draws in runs:
        out[(gpu, w, p)] = draws
        if progress is not None:
            progress(1)
