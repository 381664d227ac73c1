"""Cross-GPU warm start: what a job's runs on another GPU teach a policy on this one.

The train trace (epochs to the target per batch size) does not depend on the GPU, so which batch
sizes converge carries over exactly; the cost of an epoch does depend on it. A :class:`Prior`
therefore holds, for the target job, the batch sizes that did not always converge on the prior
GPU (never probed), the prior GPU's cheapest converging batch size among those the target GPU has
(probed first) and the shape of its cost curve (each shared batch size's cost over the best's).
zeus-plus never probes a batch size that cost more than ``(1 + margin)`` x the best on the prior
GPU, the same margin by which it cuts a probe that cannot beat its incumbent. The target's own measurements then decide: the prior
orders and prunes the search, it never replaces an observed cost.

Only policies that declare ``accepts_prior = True`` (``zeus-plus``) use a prior; the others run
cold.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from zeus_bench.errors import ConfigError
from zeus_bench.jobs import JobTrace, TraceSet
from zeus_bench.sim.policies.base import Policy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prior:
    """What another GPU's runs of the same workload say about the target job.

    Attributes:
        gpu: The prior GPU kind.
        best_batch_size: Its least expected-cost converging batch size that the target GPU has.
        ruled_out: Target batch sizes that did not always converge on the prior GPU.
        relative_cost: Per shared converging batch size, its least expected cost on the prior
            GPU over the best's (the shape of the cost curve).
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


def prior_for(job: JobTrace, prior_traces: TraceSet, prior_gpu: str, eta: float) -> Prior:
    """The prior of ``job`` from the same workload on ``prior_gpu``.

    Raises:
        ConfigError: unknown prior GPU, the workload is not in the prior trace, or the two
            traces share no converging batch size.
    """
    check_prior_gpu(prior_traces, prior_gpu)
    w = job.workload.id
    if w not in prior_traces.workload_ids(prior_gpu):
        raise ConfigError(f"prior trace {prior_traces.directory} has no runs of {w!r} on {prior_gpu!r}")
    prior = prior_traces.job(prior_gpu, w)
    target = {int(b) for b in job.batch_sizes}
    cfg = prior.configurations(eta)
    shared = cfg[cfg["batch_size"].isin(target)]
    feasible = shared[shared["feasible"]]
    if feasible.empty:
        raise ConfigError(
            f"prior {prior_gpu!r} and target {job.gpu!r} share no converging batch size for {w!r}"
        )
    per_bs = feasible.groupby("batch_size")["cost"].min()
    best = int(per_bs.idxmin())
    relative = tuple((int(b), float(c / per_bs[best])) for b, c in per_bs.items())
    reach = dict(zip(prior.batch_sizes.tolist(), prior.reach_fraction().tolist(), strict=True))
    ruled_out = tuple(sorted(b for b in target if b in reach and reach[b] < 1.0 and b != job.b0))
    return Prior(prior_gpu, best, ruled_out, relative)


def bind_prior(policy_cls: type[Policy], prior: Prior | None) -> type[Policy]:
    """The policy class with ``prior`` bound (unchanged when None or the policy takes none)."""
    if prior is None or not getattr(policy_cls, "accepts_prior", False):
        return policy_cls
    return type(policy_cls.__name__ + "WarmStarted", (policy_cls,), {"prior": prior})
