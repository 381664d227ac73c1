"""The fused ``zeus`` loop (zeus_bench.sim.fastzeus) gives the generic Runner loop's rows exactly."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sim_toy import toy_job

from zeus_bench.errors import ConfigError
from zeus_bench.sim.fastzeus import replay_zeus, supported
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import JobModel, default_recurrences, replay

ZEUS = get_policy("zeus")
# A subclass is not ``Zeus`` itself, so replay() runs it through the generic Runner loop.
GENERIC = type("ZeusGeneric", (ZEUS,), {})


def _same(model: JobModel, seed: int, beta: float, recurrences: int) -> list[tuple[object, ...]]:
    fast = replay_zeus(model, seed, beta, recurrences)
    generic = replay(model, GENERIC, seed, beta, recurrences)
    assert fast is not None
    assert len(fast) == len(generic)
    for a, b in zip(fast, generic, strict=True):
        # repr tells NaN == NaN, -0.0 from 0.0, 1 from 1.0 and True: the same values, bit for bit
        assert [repr(x) for x in a] == [repr(x) for x in b]
    return fast


# Paths chosen so that pruning keeps several arms and Thompson Sampling runs for long.
NOISY = {8: [6.0, 9.0, np.nan], 16: [4.0, 5.0, 7.0], 32: [5.0, 6.0], 64: [3.0, 4.0, 9.0, np.nan]}


@pytest.mark.parametrize("beta", [1.1, 1.5, 2.0, 5.0, math.inf])
@pytest.mark.parametrize("seed", [1, 2, 3, 17])
def test_toy_jobs_same_rows(seed: int, beta: float) -> None:
    for targets in (None, NOISY):
        model = JobModel(toy_job(targets), 0.5)
        rows = _same(model, seed, beta, 60)
        assert {r[0] for r in rows} == set(range(1, 61))  # every recurrence has a row


def test_zero_budget_tries_same_rows() -> None:
    """Batch size 64 costs 20x per epoch: at beta 1 its tries get a zero budget (no row)."""
    job = toy_job({8: [1.0, 3.0], 16: [4.0, 9.0], 32: [5.0], 64: [3.0, 8.0]})
    tpe = np.array(job.time_per_epoch_s, dtype=float)
    tpe[3] *= 20.0
    model = JobModel(replace(job, time_per_epoch_s=tpe), 0.5)
    skipped = 0
    for seed in range(1, 9):
        rows = _same(model, seed, 1.0, 40)
        attempts: dict[int, list[int]] = {}
        for r in rows:
            attempts.setdefault(int(r[0]), []).append(int(r[1]))
        # a try without a row (zero budget) leaves a gap in the attempt numbers of its recurrence
        skipped += sum(a[-1] - len(a) for a in attempts.values())
    assert skipped > 0


def test_first_recurrence_failure_is_the_same_error() -> None:
    """b0 (32) reaches on one path of two: the seeds that sample the other fail alike."""
    model = JobModel(toy_job({8: [4.0], 16: [4.0], 32: [np.nan, 5.0], 64: [3.0]}), 0.5)
    failed = 0
    for seed in range(1, 13):
        try:
            replay_zeus(model, seed, 2.0, 5)
        except ConfigError as fast:
            failed += 1
            assert "did not reach the target in the first recurrence" in str(fast)
            with pytest.raises(ConfigError) as generic:
                replay(model, GENERIC, seed, 2.0, 5)
            assert str(generic.value) == str(fast)
        else:
            _same(model, seed, 2.0, 5)
    assert 0 < failed < 12


def test_unmeasured_jit_limit_is_left_to_the_generic_loop() -> None:
    job = toy_job()
    nan_at_jit = np.array(job.time_per_epoch_s, dtype=float)
    nan_at_jit[0, 0] = np.nan  # batch size 8 at 100 W, the JIT profile's choice, unmeasured
    jit_t = np.tile([1.5, 1.0], (len(job.batch_sizes), 1))
    model = JobModel(replace(job, time_per_epoch_s=nan_at_jit, jit_time_per_epoch_s=jit_t), 1.0)
    assert model.jit_limit_w[0] == 100.0
    assert not supported(model)
    assert replay_zeus(model, 1, 2.0, 5) is None


def test_published_traces_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    for gpu in ("v100", "a40"):
        for workload in ts.workload_ids(gpu):
            job = ts.job(gpu, workload)
            model = JobModel(job, 0.5)
            for seed in (1, 7):
                for beta in (1.25, 2.0):
                    _same(model, seed, beta, default_recurrences(job))
