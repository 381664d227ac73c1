"""A job's replays under every (split, fold) in one walk give each part the draws of its own run.

:func:`~zeus_bench.studies.arena_protocol.run_arena_parts` replays each job's halves under all
the arena's protocols together (:func:`~zeus_bench.studies.arena_protocol.parts_draws`); the
reference is :func:`~zeus_bench.studies.arena_protocol.run_arena` of each protocol alone.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies import get_policy
from zeus_bench.studies import arena_protocol as arena_mod
from zeus_bench.studies.arena_protocol import Protocol, judged_jobs, run_arena, run_arena_parts
from zeus_bench.traces.jobs import JobTrace

PATHS = {
    8: [6.0, 9.0, np.nan, 7.0, 5.0],
    16: [4.0, 5.0, 7.0, 4.5],
    32: [5.0, 6.0, 5.5],
    64: [3.0, 4.0, 9.0, np.nan, 3.5],
}


class _Traces:
    """A trace set of one toy job per workload id (what judged_jobs reads)."""

    def __init__(self, jobs: dict[str, JobTrace]) -> None:
        self.jobs = jobs
        self.gpus = ["toygpu"]

    def workload_ids(self, gpu: str) -> list[str]:
        return list(self.jobs)

    def job(self, gpu: str, workload: str) -> JobTrace:
        return self.jobs[workload]


def _protocols() -> list[Protocol]:
    base = Protocol((1, 2, 3), replicates=2, recurrences=12)
    out = []
    for split in (1, 2, 3):
        for fold in (1, 2):
            p = replace(base.for_fold(fold), split=split)
            out.append(p if split == 1 else replace(p, replicates=0))
    return out


def test_every_part_gets_the_draws_of_its_own_run() -> None:
    jobs = {
        "toy": toy_job(PATHS),
        "other": toy_job({b: [t * 1.3 for t in p] for b, p in PATHS.items()}, b0=16),
    }
    traces = {"toygpu": _Traces(jobs)}
    protocols = _protocols()
    part_jobs = [judged_jobs(traces, ["toygpu"], None, p.half, p.split, p.recurrences) for p in protocols]  # type: ignore[arg-type]
    policies = ["zeus-plus", "pl-only", "bo-ei", "max-batch"]
    ticks: list[int] = []
    together = run_arena_parts(part_jobs, policies, protocols, progress=ticks.append)
    assert ticks == [len(protocols) * 6] * len(
        jobs
    )  # a job's every (part, policy) at once: zeus and baseline added
    for jobs_i, protocol, runs in zip(part_jobs, protocols, together, strict=True):
        alone = run_arena(jobs_i, policies, protocol)
        assert runs.keys() == alone.keys() and runs.policies == alone.policies
        for key, draws in alone.items():
            ours = runs[key]
            for field in ("recorded", "failed", "replicates", "oracle"):
                assert getattr(ours, field).tobytes() == getattr(draws, field).tobytes(), (key, field)
            assert ours.replicates.shape == (protocol.replicates, 1)


def test_parts_of_other_jobs_or_other_rules_are_refused() -> None:
    job = arena_mod.ArenaJob(toy_job(PATHS), 10)
    other = arena_mod.ArenaJob(replace(toy_job(PATHS, b0=16), gpu="toygpu2"), 12)
    with pytest.raises(ValueError, match="same jobs in the same order"):  # (other lengths are one run)
        run_arena_parts([[job], [other]], ["zeus"], [Protocol((1,)), Protocol((1,))])
    with pytest.raises(ValueError, match="share eta, beta and noise"):
        run_arena_parts([[job], [job]], ["zeus"], [Protocol((1,)), Protocol((1,), beta=3.0)])
    # other horizons are one run (tests/studies/test_arena_horizons.py), and may share a walk
    told = run_arena_parts([[job], [job]], ["zeus"], [Protocol((1,)), Protocol((1,), horizon="unknown")])
    assert told[0].keys() == told[1].keys()
    with pytest.raises(ValueError, match="share eta, beta and noise"):
        arena_mod.walk_draws(
            [
                (job.job, [get_policy("zeus")], Protocol((1,))),
                (job.job, [get_policy("zeus")], Protocol((1,), beta=3.0)),
            ],
            10,
        )
    with pytest.raises(ConfigError, match="no seeds"):
        run_arena_parts([[job], [job]], ["zeus"], [Protocol((1,)), Protocol(())])
