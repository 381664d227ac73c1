"""The arena's protocol and its replays: every policy on the same seeds, paths and replicates.

:class:`Protocol` says how every policy of an arena is replayed and judged; :func:`run_arena`
replays each (job, policy) on the protocol's seeds and replicate traces into :class:`Draws`
(:func:`parts_draws`: a job's policies under every protocol of a run, on its recorded paths and
replicate traces, in one executor walk), the paired references (:data:`PAIRED`) and Zeus
(:data:`COMPARATOR`) beside
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
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.replay import (
    JobModel,
    Lane,
    SeedTries,
    check_job,
    default_recurrences,
    replay_lanes,
    replay_policies,
)
from zeus_bench.sim.rules import KNOWN, Horizon, check_horizon, check_noise, horizon_recurrences
from zeus_bench.sim.two_stage import check_path_draw
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, judged_half, replicate_job, split_job, variant
from zeus_bench.studies.recurrences import references as job_refs
from zeus_bench.studies.recurrences import tries_costs
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
    (:func:`~zeus_bench.sim.two_stage.path_shifts`: ``pick``, ``normal`` or ``t``).
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

    def recorded_only(self) -> Protocol:
        """This protocol on the recorded paths alone: no replicate trace, its replicate settings the defaults."""
        return replace(
            self, replicates=0, replicate_seeds=Protocol.replicate_seeds, path_draw=Protocol.path_draw
        )

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
    runs = replay_policies(
        model, classes, list(protocol.seeds), protocol.beta, n, protocol.horizon, protocol.noise
    )
    return _charged_costs(model, runs, n)


def _charged_costs(model: JobModel, runs: Sequence[SeedTries], n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each run's charged cost of every recurrence (rows: seeds) and failed flags, on ``model``."""
    return [tries_costs(model, tries, n) for tries in runs]


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
    return parts_draws([(job, classes, protocol)], n)[0]


def check_rules(protocols: Sequence[Protocol]) -> None:
    """Refuse protocols of other eta, beta or noise: one executor walk (and one arena run) needs them shared.

    (A walk's lanes may tell other horizons: :attr:`~zeus_bench.sim.replay.Lane.horizon`.)

    Raises:
        ValueError: naming the rules they must share.
    """
    if len({(p.eta, p.beta, p.noise) for p in protocols}) > 1:
        raise ValueError("parts replayed in one walk must share eta, beta and noise")


JobPart = tuple[JobTrace, Sequence[type[Policy]], Protocol]
"""One part of a job's replays: its judged half, the policy classes, the protocol."""


def parts_draws(parts: Sequence[JobPart], n: int | Sequence[int]) -> list[list[Draws]]:
    """:func:`policies_draws` of each part (a job's judged half, its classes, its protocol): an executor walk per length.

    The parts are one job's halves under protocols that differ in their split, fold, constants,
    seeds, replicates, horizon and number of recurrences (``n``: one for all, or one per part)
    alone. The parts replayed as often are replayed in one walk (:func:`walk_draws`; each told its
    own horizon), the longest first, a horizon's parts after those of the horizons before it. A
    part that is an earlier part but for the horizon
    and a number of recurrences no larger (the same job, classes and protocol otherwise; a part of
    no replicate trace may take them from one with replicates: :func:`_twins`) replays
    only its classes that read the horizon (:meth:`~zeus_bench.sim.policies.Policy.reads_horizon`),
    and none when the earlier part told them the same (``unknown``: nothing, whatever the length;
    :func:`~zeus_bench.sim.rules.horizon_recurrences`); the others' draws are the earlier part's,
    over its first recurrences: a policy told the same replays its first recurrences as a longer
    replay does (the executor's rows of a recurrence do not depend on the later ones), bit for bit.

    Raises:
        ValueError: parts that differ in eta, beta or noise.
    """
    check_rules([p for _, _, p in parts])
    ns = [n] * len(parts) if isinstance(n, int) else [int(x) for x in n]
    if len(ns) != len(parts):
        raise ValueError(f"{len(ns)} numbers of recurrences for {len(parts)} parts")
    horizons = list(dict.fromkeys(p.horizon for _, _, p in parts))
    out: list[list[Draws] | None] = [None] * len(parts)
    kept: dict[int, list[_Charged]] = {}  # each part's classes' costs per recurrence
    done: list[int] = []  # the parts replayed with every class: in longer walks, or earlier in this one
    for length in sorted(set(ns), reverse=True):  # each one walk, the longest first
        walk: list[JobPart] = []
        places: list[tuple[int, int | None, list[int]]] = []  # (part, its twin, the classes replayed)
        for h in horizons:
            for i, (job, classes, protocol) in enumerate(parts):
                if protocol.horizon != h or ns[i] != length:
                    continue
                twins = [j for j in done if ns[j] >= length and _twins(parts[j], parts[i])]
                told = horizon_recurrences(protocol.horizon, length)
                # (an earlier part told the same, e.g. no horizon at all: every class's draws are its)
                same = next(
                    (j for j in twins if horizon_recurrences(parts[j][2].horizon, ns[j]) == told), None
                )
                twin = same if same is not None else next(iter(twins), None)
                replayed = [
                    k for k, c in enumerate(classes) if twin is None or (same is None and c.reads_horizon())
                ]
                places.append((i, twin, replayed))
                if replayed:
                    walk.append((job, [classes[k] for k in replayed], protocol))
                if twin is None:
                    done.append(i)
        walked = iter(walk_charged(walk, length) if walk else [])
        for i, twin, replayed in places:  # (a twin's place comes before the places that read it)
            fresh = dict(zip(replayed, next(walked), strict=True)) if replayed else {}
            earlier = [] if twin is None else kept[twin]
            mine = parts[i][2]
            if twin is not None and not mine.replicates:  # the twin's draws on the recorded paths alone
                earlier = [c.recorded_only(len(mine.seeds[: mine.replicate_seeds])) for c in earlier]
            kept[i] = [fresh[k] if k in fresh else earlier[k] for k in range(len(parts[i][1]))]
            out[i] = [c.draws(length) for c in kept[i]]
    assert all(d is not None for d in out)
    return out  # type: ignore[return-value]


def _twins(a: JobPart, b: JobPart) -> bool:
    """Whether part ``b`` may take part ``a``'s draws: the same job (its contents), classes and protocol, but for the horizon and the number of recurrences.

    A ``b`` of no replicate trace (the recorded paths alone) may also differ in the replicate
    settings (replicates, their seeds and their path draw): its draws are ``a``'s on the recorded
    paths, the same lanes.
    """

    def bare(p: Protocol) -> Protocol:
        out = replace(p, horizon=KNOWN, recurrences=None)
        return out if b[2].replicates else out.recorded_only()

    return tuple(a[1]) == tuple(b[1]) and bare(a[2]) == bare(b[2]) and a[0].same_as(b[0])


@dataclass(frozen=True)
class _Charged:
    """One (part, class)'s charged cost of every recurrence: on the recorded paths (rows: seeds) and each replicate trace."""

    costs: np.ndarray
    failed: np.ndarray
    replicates: list[np.ndarray]
    oracle: np.ndarray
    replicate_seeds: int

    def recorded_only(self, replicate_seeds: int) -> _Charged:
        """These costs on the recorded paths alone, as a part of no replicate trace (``replicate_seeds`` of them) has them."""
        return _Charged(self.costs, self.failed, [], np.array([], dtype=float), replicate_seeds)

    def draws(self, n: int) -> Draws:
        """The :class:`Draws` of the first ``n`` recurrences (the sums of a replay of ``n``, bit for bit)."""

        def first(a: np.ndarray) -> np.ndarray:
            return a if a.shape[1] == n else np.ascontiguousarray(a[:, :n])

        rep = [first(c).sum(axis=1) for c in self.replicates]
        return Draws(
            first(self.costs).sum(axis=1),
            first(self.failed).sum(axis=1),
            np.array(rep).reshape(len(rep), self.replicate_seeds),
            self.oracle,
        )


def walk_draws(parts: Sequence[JobPart], n: int) -> list[list[Draws]]:
    """:func:`policies_draws` of each part, in one executor walk.

    Each part's recorded paths and replicate traces are lanes of one
    :func:`~zeus_bench.sim.replay.replay_lanes` (a class that reads no paths is asked through one
    face for all of them told the same horizon), so each seed's rows are those of its part
    replayed alone.

    Raises:
        ValueError: parts that differ in eta, beta or noise.
    """
    return [[c.draws(n) for c in part] for part in walk_charged(parts, n)]


def walk_charged(parts: Sequence[JobPart], n: int) -> list[list[_Charged]]:
    """:func:`walk_draws`, each class's costs of every recurrence kept (a shorter part's draws are their first columns).

    Each part's lanes tell its own horizon (:attr:`~zeus_bench.sim.replay.Lane.horizon`), so parts
    told other horizons share the walk too.
    """
    first = parts[0][2]
    check_rules([p for _, _, p in parts])
    cost = Cost(first.eta)
    lanes: list[Lane] = []
    # per part: its first lane, its models (recorded paths, then replicates), its replicate seeds
    spans: list[tuple[int, list[JobModel], tuple[int, ...]]] = []
    for job, classes, protocol in parts:
        few = tuple(protocol.seeds[: protocol.replicate_seeds])
        models = [JobModel(job, cost)] + [
            JobModel(replicate_job(job, protocol.split, protocol.fold, r), cost)
            for r in range(protocol.replicates)
        ]
        spans.append((len(lanes), models, few))
        lanes.append(Lane(models[0], tuple(protocol.seeds), tuple(classes), protocol.horizon))
        lanes += [Lane(m, few, tuple(classes), protocol.horizon) for m in models[1:]]
    runs = replay_lanes(lanes, first.beta, n, first.horizon, first.noise)
    out = []
    for (_, classes, _), (at, models, few) in zip(parts, spans, strict=True):
        recorded = _charged_costs(models[0], runs[at], n)
        reps: list[list[np.ndarray]] = [[] for _ in classes]
        oracle = []
        for i, model in enumerate(models[1:], start=1):
            for k, (costs, _) in enumerate(_charged_costs(model, runs[at + i], n)):
                reps[k].append(costs)
            oracle.append(job_refs(model).oracle)
        out.append(
            [
                _Charged(costs, failed, rep, np.array(oracle, dtype=float), len(few))
                for (costs, failed), rep in zip(recorded, reps, strict=True)
            ]
        )
    return out


PAIRED = ("baseline", "max-batch")
"""The references replayed on the same seeds, paths and replicates as every policy (paired ratios)."""


@dataclass(frozen=True)
class _Task:
    """One job's replays: its judged half under each protocol (``jobs[i]`` under ``protocols[i]``)."""

    jobs: tuple[JobTrace, ...]
    policies: tuple[str, ...]
    protocols: tuple[Protocol, ...]
    recurrences: tuple[int, ...]  # (each part's)
    policy_modules: tuple[str, ...] = ()


def _run(task: _Task) -> list[list[tuple[str, str, str, Draws]]]:
    """Per protocol, (gpu, workload, policy, its draws) of each policy of a task (every part in one walk)."""
    from zeus_bench.sim.policies.base import load_policy_module

    for module in task.policy_modules:
        load_policy_module(module)
    classes: dict[Constants, list[type[Policy]]] = {}  # one class per policy and constants (one face)
    for protocol in task.protocols:
        if protocol.constants not in classes:
            classes[protocol.constants] = [protocol.policy(p) for p in task.policies]
    parts = [(j, classes[p.constants], p) for j, p in zip(task.jobs, task.protocols, strict=True)]
    draws = parts_draws(parts, task.recurrences)
    return [
        [(job.gpu, job.workload.id, p, d) for p, d in zip(task.policies, part, strict=True)]
        for job, part in zip(task.jobs, draws, strict=True)
    ]


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
    return run_arena_parts([jobs], policies, [protocol], jobs_n, policy_modules, progress)[0]


def run_arena_parts(
    part_jobs: Sequence[Sequence[ArenaJob | JobTrace]],
    policies: Sequence[str],
    protocols: Sequence[Protocol],
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> list[Runs]:
    """:func:`run_arena` of each part: ``part_jobs[i]`` under ``protocols[i]``.

    The parts hold the same (GPU, workload) jobs in the same order (halves of other splits and
    folds, told one horizon or several): a job's replays under every protocol are one task, an
    executor walk per horizon (:func:`parts_draws`), and ``jobs_n`` processes spread the jobs.

    Raises:
        ConfigError: no seeds, an unknown policy, horizon, noise or path draw, or too many tries.
        ValueError: parts of other jobs, or protocols that differ in eta, beta or noise.
    """
    names = list(dict.fromkeys([COMPARATOR, *policies, *PAIRED]))
    for p in names:
        get_policy(p)
    for protocol in protocols:
        if not protocol.seeds:
            raise ConfigError("no seeds given")
        check_horizon(protocol.horizon)
        check_noise(protocol.noise)
        check_path_draw(protocol.path_draw)  # before the replays, not after them in the statistics
    check_rules(protocols)  # before any replay, not in a worker
    per_part = [as_arena_jobs(jobs) for jobs in part_jobs]
    keys = [[(j.job.gpu, j.job.workload.id) for j in jobs] for jobs in per_part]
    if any(k != keys[0] for k in keys):
        raise ValueError("the arena's parts must hold the same jobs in the same order")
    tasks = [
        _Task(tuple(jobs[i].job for jobs in per_part), tuple(names), tuple(protocols),
              tuple(jobs[i].recurrences for jobs in per_part), tuple(policy_modules))
        for i in range(len(per_part[0]))
    ]  # fmt: skip
    for k, part in enumerate(protocols):  # (each part as if alone: a walk holds one job's parts)
        check_tries(
            sum(len(part.seeds) * t.recurrences[k] * len(names) for t in tasks),
            f"{len(part.seeds)} seed(s) x {len(names)} policies x {len(tasks)} job(s) x their recurrences",
        )
    out = [Runs() for _ in protocols]
    for runs in out:
        runs.policies = tuple(n for n in names if n not in PAIRED or n in policies)
    if jobs_n > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs_n) as pool:
            for done in pool.map(_run, tasks):
                _collect(out, done, progress)
    else:
        for t in tasks:
            _collect(out, _run(t), progress)
    return out


def _collect(
    out: Sequence[Runs], runs: list[list[tuple[str, str, str, Draws]]], progress: Callable[[int], None] | None
) -> None:
    """A task's draws into each part's ``out``; ``progress`` told its (part, job, policy) replays at once.

    (One call per task: a first line's estimate of the time left then rests on a whole task, not on
    the first of its replays.)
    """
    done = 0
    for part, part_runs in zip(out, runs, strict=True):
        for gpu, w, p, draws in part_runs:
            part[(gpu, w, p)] = draws
            done += 1
    if progress is not None and done:
        progress(done)
