"""Cross-GPU warm start: what a job's runs on another GPU teach a policy on this one.

The prior comes only from what a deployment on the prior GPU **observed**: the tries of a
replay of cold ``zeus-plus`` on that GPU's trace (:func:`observed_tries`: each try's batch size,
epochs, cost and whether it reached the target), never the prior GPU's full power or train grid.
A :class:`Prior` holds, for the target job, the batch sizes the prior replay tried and never saw
reach the target (never probed here), the prior replay's cheapest batch size among those that
reached and that the target GPU has (probed first; cheapest by the mean cost of its tries that
reached), and the shape of its cost curve over the batch sizes it saw reach (each one's mean
cost over the best's). zeus-plus never probes a batch size that cost more than
``(1 + margin)`` x the best on the prior GPU, the same margin by which it cuts a probe that
cannot beat its incumbent. The target's own measurements then decide: the prior orders and
prunes the search, it never replaces an observed cost. Batch sizes the prior replay never ran
carry no information and are searched as cold.

The prior replay's seed is the target replay's plus :data:`PRIOR_SEED_OFFSET` (a fresh stream:
with the same seed the two replays would draw the same training paths of the shared train trace
in the same order, information no deployment on another GPU has); ``zeus-bench simulate
--prior-traces`` uses one prior per job, from seed :data:`PRIOR_SEED`.

Only policies that declare ``accepts_prior = True`` (``zeus-plus``) use a prior; the others run
cold.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from zeus_bench.core.cost import DEFAULT_BETA, Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies.base import Policy
from zeus_bench.traces.jobs import JobTrace, TraceSet

log = logging.getLogger(__name__)

PRIOR_SEED = 1_000_003  # seed of the prior replay of ``zeus-bench simulate --prior-traces``
PRIOR_SEED_OFFSET = 1_000_003  # the study's prior replay of seed s uses seed s + this


@dataclass(frozen=True)
class Prior:
    """What another GPU's runs of the same workload say about the target job.

    Attributes:
        gpu: The prior GPU kind.
        best_batch_size: The prior replay's batch size of least mean cost among its tries that
            reached the target, among those the target GPU has.
        ruled_out: Target batch sizes (not b0) the prior replay tried and never saw reach.
        relative_cost: Per target batch size that reached in the prior replay, its mean cost
            there over the best's (the shape of the cost curve).
    """

    gpu: str
    best_batch_size: int
    ruled_out: tuple[int, ...]
    relative_cost: tuple[tuple[int, float], ...] = ()

    def far_from_best(self, factor: float) -> tuple[int, ...]:
        """Batch sizes that cost more than ``factor`` x the best on the prior GPU."""
        return tuple(b for b, r in self.relative_cost if r > factor and b != self.best_batch_size)


def check_prior_gpu(prior_traces: TraceSet, prior_gpu: str) -> None:
    """Refuse a prior GPU without a power trace in the prior folder (one line, exit 2)."""
    if prior_gpu not in prior_traces.gpus:
        known = ", ".join(prior_traces.gpus) or "none"
        raise ConfigError(
            f"--prior-gpu {prior_gpu!r}: no power trace in {prior_traces.directory}; traces exist for: {known}"
        )


class NoSharedBatchSize(ConfigError):
    """The prior replay saw no batch size of the target reach the target."""


class Try(NamedTuple):
    """One try a replay on the prior GPU observed."""

    batch_size: int
    epochs: float
    cost: float
    reached: bool


def observed_tries(
    prior_job: JobTrace,
    cost: Cost,
    beta: float,
    seed: int,
    recurrences: int | None = None,
    policy: str = "zeus-plus",
) -> list[Try]:
    """The tries a cold replay of ``policy`` on ``prior_job`` made (default: its default recurrences)."""
    from zeus_bench.sim.policies import get_policy
    from zeus_bench.sim.replay import JobModel, default_recurrences, replay

    n = default_recurrences(prior_job) if recurrences is None else int(recurrences)
    return _observed(replay(JobModel(prior_job, cost), get_policy(policy), seed, beta, n))


def _observed(rows: Sequence[Sequence[Any]]) -> list[Try]:
    """The tries a deployment observes among a replay's rows (those that ran)."""
    return [Try(int(r[2]), float(r[4]), float(r[7]), bool(r[8])) for r in rows if r[10]]


def prior_from_tries(job: JobTrace, tries: Sequence[Try], prior_gpu: str) -> Prior:
    """The prior of ``job`` from the tries a replay on ``prior_gpu`` observed.

    Raises:
        ConfigError: no batch size of the target reached the target in those tries.
    """
    target = {int(b) for b in job.batch_sizes}
    costs: dict[int, list[float]] = {}
    tried: set[int] = set()
    for t in tries:
        tried.add(t.batch_size)
        if t.reached:
            costs.setdefault(t.batch_size, []).append(t.cost)
    shared = {b: sum(c) / len(c) for b, c in costs.items() if b in target}
    if not shared:
        raise NoSharedBatchSize(
            f"prior {prior_gpu!r} and target {job.gpu!r} share no converging batch size for "
            f"{job.workload.id!r} among the tries the prior replay observed"
        )
    best = min(shared, key=lambda b: (shared[b], b))
    relative = tuple((b, shared[b] / shared[best]) for b in sorted(shared))
    ruled_out = tuple(sorted(b for b in tried & target if b not in costs and b != job.b0))
    return Prior(prior_gpu, best, ruled_out, relative)


def prior_for(
    job: JobTrace,
    prior_traces: TraceSet,
    prior_gpu: str,
    cost: Cost,
    beta: float = DEFAULT_BETA,
    seed: int = PRIOR_SEED,
) -> Prior:
    """The prior of ``job`` from a cold zeus-plus replay of the same workload on ``prior_gpu``.

    Args:
        job: The target job.
        prior_traces: Trace folder of the prior GPU.
        prior_gpu: The prior GPU kind.
        cost: The cost of the prior replay.
        beta: Early-stopping threshold of the prior replay.
        seed: Seed of the prior replay.

    Raises:
        ConfigError: unknown prior GPU, the workload is not in the prior trace, or no batch size
            of the target reached the target in the prior replay.
    """
    return _seed_prior(job, _prior_job(job, prior_traces, prior_gpu), prior_gpu, cost, beta, seed)


def _prior_job(job: JobTrace, prior_traces: TraceSet, prior_gpu: str) -> JobTrace:
    """The workload of ``job`` on the prior GPU (:class:`ConfigError`: unknown GPU, or no runs of it there)."""
    check_prior_gpu(prior_traces, prior_gpu)
    w = job.workload.id
    if w not in prior_traces.workload_ids(prior_gpu):
        raise ConfigError(f"prior trace {prior_traces.directory} has no runs of {w!r} on {prior_gpu!r}")
    return prior_traces.job(prior_gpu, w)


def _seed_prior(
    job: JobTrace, prior_job: JobTrace, prior_gpu: str, cost: Cost, beta: float, seed: int
) -> Prior:
    """:func:`prior_for` of one seed on the prior GPU's job (:class:`NoSharedBatchSize`: none)."""
    try:
        tries = observed_tries(prior_job, cost, beta, seed)
    except ConfigError as exc:  # e.g. its b0 never converges there: the replay observes nothing
        raise NoSharedBatchSize(
            f"prior {prior_gpu!r} and target {job.gpu!r} share no converging batch size for "
            f"{job.workload.id!r}: the prior replay observed nothing ({exc})"
        ) from None
    log.debug("prior of %s on %s from %d tries on %s", job.workload.id, job.gpu, len(tries), prior_gpu)
    return prior_from_tries(job, tries, prior_gpu)


#: The prior replays :func:`priors_for` made, by (prior GPU, workload, cost, beta, seeds): each seed's
#: observed tries, or None where a seed's first recurrence stopped the walk (then each seed alone).
PriorReplays = dict[tuple[str, str, Cost, float, tuple[int, ...]], list[list[Try]] | None]


def priors_for(
    job: JobTrace,
    prior_traces: TraceSet,
    prior_gpu: str,
    cost: Cost,
    beta: float,
    seeds: Sequence[int],
    replays: PriorReplays | None = None,
) -> list[Prior | NoSharedBatchSize]:
    """:func:`prior_for` of each seed, the prior replays of every seed in one walk; a seed without one: its exception.

    A walk that stops at some seed's first recurrence (the prior GPU's b0 did not reach the
    target on a path) tells the seeds apart one replay at a time, as :func:`prior_for` does.
    ``replays``: the prior replays already made (:data:`PriorReplays`; several targets of one
    prior GPU's job share its replay, which depends on the prior job, the cost, beta and the
    seeds alone), and where this call's is kept.

    Raises:
        ConfigError: unknown prior GPU, or the workload is not in the prior trace.
    """
    prior_job = _prior_job(job, prior_traces, prior_gpu)
    key = (prior_gpu, prior_job.workload.id, cost, float(beta), tuple(int(s) for s in seeds))
    if replays is None or key not in replays:
        observed = _prior_replays(prior_job, cost, beta, seeds)
        if replays is not None:
            replays[key] = observed
    else:
        observed = replays[key]
    out: list[Prior | NoSharedBatchSize] = []
    if observed is None:
        for seed in seeds:
            try:
                out.append(_seed_prior(job, prior_job, prior_gpu, cost, beta, seed))
            except NoSharedBatchSize as exc:
                out.append(exc)
        return out
    for tries in observed:
        try:
            out.append(prior_from_tries(job, tries, prior_gpu))
        except NoSharedBatchSize as exc:
            out.append(exc)
    return out


def _prior_replays(
    prior_job: JobTrace, cost: Cost, beta: float, seeds: Sequence[int]
) -> list[list[Try]] | None:
    """Each seed's tries observed by a cold zeus-plus on the prior job, in one walk (None: a seed's first recurrence failed)."""
    from zeus_bench.sim.policies import get_policy
    from zeus_bench.sim.replay import JobModel, default_recurrences, replay_many

    try:
        tries = replay_many(
            JobModel(prior_job, cost),
            get_policy("zeus-plus"),
            list(seeds),
            beta,
            default_recurrences(prior_job),
        )
    except ConfigError:
        return None
    return [_observed(rows) for rows in tries]


def bind_prior(policy_cls: type[Policy], prior: Prior | None) -> type[Policy]:
    """The policy class with ``prior`` bound (unchanged when None or the policy takes none)."""
    if prior is None or not getattr(policy_cls, "accepts_prior", False):
        return policy_cls
    return type(policy_cls.__name__ + "WarmStarted", (policy_cls,), {"prior": prior})
