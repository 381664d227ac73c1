"""Warm start and drift rules, pinned before they move (design §6.2: sim/scenarios/).

Each test here was seen failing against a single-point bug: the prior's relative cost inverted
(best over each instead of each over best, so nothing is ever far from the best), the drifted
oracle counting a configuration feasible when only some of its paths reach the target.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import PolicyContext
from zeus_bench.sim.scenarios.drift import Drift, drift_of, oracle_cost_by_recurrence
from zeus_bench.sim.scenarios.warmstart import (
    NoSharedBatchSize,
    Prior,
    Try,
    bind_prior,
    observed_tries,
    prior_for,
    prior_from_tries,
    priors_for,
)
from zeus_bench.traces.jobs import JobTrace, TraceSet


def test_prior_relative_cost_is_each_size_over_the_best() -> None:
    # Observed tries on the prior GPU: 32 reached twice (mean 11 J), 64 once (5 J, the best),
    # 128 once (20 J), 256 never; 512 is not a batch size of the target.
    job = toy_job({32: [2.0], 64: [2.0], 128: [2.0], 256: [2.0]}, b0=64)
    tries = [
        Try(32, 2.0, 10.0, True), Try(32, 2.0, 12.0, True), Try(64, 2.0, 5.0, True),
        Try(128, 2.0, 20.0, True), Try(256, 9.0, 30.0, False), Try(512, 1.0, 1.0, True),
    ]  # fmt: skip
    prior = prior_from_tries(job, tries, "v100")
    assert prior.best_batch_size == 64
    assert dict(prior.relative_cost) == pytest.approx({32: 2.2, 64: 1.0, 128: 4.0}, rel=1e-12)
    assert prior.far_from_best(1.1) == (32, 128) and prior.far_from_best(3.0) == (128,)
    assert prior.ruled_out == (256,)


def test_prior_from_a_real_replay_is_its_tries_mean_cost_over_the_best(zeus_traces: Path) -> None:
    ts = TraceSet(zeus_traces)
    job = ts.job("a40", "cifar100")
    prior = prior_for(job, ts, "v100", Cost(0.5), seed=11)
    tries = observed_tries(ts.job("v100", "cifar100"), Cost(0.5), 2.0, 11)
    means = {
        b: float(np.mean([t.cost for t in tries if t.batch_size == b and t.reached]))
        for b in {t.batch_size for t in tries if t.reached} & set(job.batch_sizes.tolist())
    }
    best = min(means.values())
    assert dict(prior.relative_cost) == pytest.approx({b: c / best for b, c in means.items()}, rel=1e-12)
    assert all(r >= 1.0 for _, r in prior.relative_cost)


def test_far_from_best_prunes_only_what_costs_more_than_the_factor() -> None:
    prior = Prior("x", 64, (4096,), ((32, 1.05), (64, 1.0), (128, 1.5), (256, 3.0)))
    assert prior.far_from_best(1.1) == (128, 256)
    assert prior.far_from_best(2.0) == (256,)
    assert prior.far_from_best(5.0) == ()


def test_warm_started_zeus_plus_never_probes_far_from_best(zeus_traces: Path) -> None:
    ts = TraceSet(zeus_traces)
    job = ts.job("a40", "cifar100")
    prior = prior_for(job, ts, "v100", Cost(0.5))
    cls = bind_prior(get_policy("zeus-plus"), prior)
    assert bind_prior(get_policy("zeus"), prior) is get_policy("zeus")  # takes no prior
    policy = cls(PolicyContext(job, Cost(0.5), 2.0, 0, np.random.default_rng(1), 50))
    pruned = set(policy.climber.ruled_out)
    assert set(prior.far_from_best(1.0 + policy.margin)) - {job.b0} <= pruned
    assert set(prior.ruled_out) <= pruned


def _drift_rows(workload: str, b: int, factor: float) -> pd.DataFrame:
    """Drift rows as validate_drift returns them (the toy workload is not in the registry)."""
    return pd.DataFrame(
        {
            "workload": [workload] * 2,
            "batch_size": [b, b],
            "recurrence": [4, 5],
            "epoch_factor": [1.0, factor],
        }
    )


def test_drifted_oracle_needs_every_path_to_reach_the_target() -> None:
    # Every size's epoch costs 150 J at its best limit (eta = 1). 64 reaches in 2 or 9.5 epochs
    # (mean 5.75: 862.5 J), the cheapest; 16 in 7 (1050 J). From recurrence 5 on, 64's epochs
    # grow by 6 %: its long path needs 10.07 > 10 epochs, so 64 is no longer feasible (though its
    # mean, 6.1 epochs, would still be the cheapest) and the oracle is 16's.
    job = toy_job({8: [np.nan], 16: [7.0], 32: [8.0], 64: [2.0, 9.5]}, max_epochs=10)
    drift = Drift(_drift_rows("toy", 64, 1.06), job)
    oracle = oracle_cost_by_recurrence(job, Cost(1.0), drift, 6)
    np.testing.assert_allclose(oracle, [862.5] * 4 + [1050.0] * 2)
    # a drift that keeps every path within max_epochs keeps 64, at its new mean
    small = oracle_cost_by_recurrence(job, Cost(1.0), Drift(_drift_rows("toy", 64, 1.04), job), 6)
    np.testing.assert_allclose(small, [862.5] * 4 + [862.5 * 1.04] * 2)
    assert np.all(oracle_cost_by_recurrence(job, Cost(1.0), None, 3) == 862.5)


@pytest.mark.parametrize("factor", [1.0, 1.37, 0.91])
def test_drifted_oracle_is_each_recurrences_least_mean_cost(factor: float) -> None:
    # The definition, a recurrence and a batch size at a time (a mean over each one's own paths),
    # against the table computed for every recurrence at once: the same floats. Twelve paths a
    # batch size, whose sum depends on its order (a pairwise sum differs from one left to right
    # in about a fifth of such means), on 30 random jobs.
    rng = np.random.default_rng(3)
    cost = Cost(0.5)
    for _ in range(30):
        job = toy_job({b: (1.0 + rng.random(12) * 1e3).tolist() for b in (16, 32, 64)}, max_epochs=2000)
        drift = Drift(_drift_rows("toy", 64, factor), job)
        costs = cost.epoch_cost(job.time_per_epoch_s, job.avg_power_w, job.max_power_w)
        best = np.nanmin(np.where(np.isnan(costs), np.inf, costs), axis=1)
        want = []
        for r in range(1, 8):
            least = np.inf
            for i, p in enumerate(job.target_epochs):
                t = p * drift(r, i)
                if not (np.isnan(t).any() or (t > job.max_epochs).any()):
                    least = min(least, float(t.mean()) * best[i])
            want.append(least)
        assert oracle_cost_by_recurrence(job, cost, drift, 7).tolist() == want


@pytest.mark.parametrize("workload", ["movielens-1m", "imagenet", "cifar100"])
def test_prior_rules_out_what_the_prior_replay_tried_and_never_saw_reach(
    zeus_traces: Path, workload: str
) -> None:
    ts = TraceSet(zeus_traces)
    job = ts.job("a40", workload)
    prior = prior_for(job, ts, "v100", Cost(0.5), seed=5)
    tries = observed_tries(ts.job("v100", workload), Cost(0.5), 2.0, 5)
    reached = {t.batch_size for t in tries if t.reached}
    expected = {
        t.batch_size
        for t in tries
        if t.batch_size in set(job.batch_sizes.tolist())
        and t.batch_size not in reached
        and t.batch_size != job.b0
    }
    assert set(prior.ruled_out) == expected and list(prior.ruled_out) == sorted(expected)


def test_prior_never_rules_out_b0_even_where_it_did_not_reach() -> None:
    job = toy_job({32: [2.0], 64: [2.0], 128: [2.0]}, b0=64)
    tries = [Try(64, 9.0, 30.0, False), Try(32, 2.0, 10.0, True), Try(128, 9.0, 30.0, False)]
    prior = prior_from_tries(job, tries, "v100")
    assert prior.ruled_out == (128,) and prior.best_batch_size == 32


def test_drift_table_size_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import zeus_bench.sim.scenarios.drift as drift

    monkeypatch.setattr(drift, "MAX_ROWS", 3)
    rows = pd.DataFrame(
        {
            "workload": ["imagenet"] * 4,
            "batch_size": [256] * 4,
            "recurrence": [1, 2, 3, 4],
            "epoch_factor": 1.0,
        }
    )
    assert len(drift.validate_drift(rows.iloc[:3])) == 3  # at the bound: accepted
    with pytest.raises(TraceFormatError, match="drift table: 4 rows, more than the 3 allowed"):
        drift.validate_drift(rows)


def test_drift_rows_naming_foreign_batch_sizes_name_the_smallest(zeus_traces: Path) -> None:
    job = TraceSet(zeus_traces).job("v100", "imagenet")
    rows = pd.DataFrame(
        {
            "workload": ["imagenet"] * 3,
            "batch_size": [8192, 256, 4096],
            "recurrence": [3, 3, 3],
            "epoch_factor": 1.5,
        }
    )
    with pytest.raises(
        ConfigError, match=r"t\.csv: batch size 4096 of 'imagenet' is not in the 'v100' trace"
    ):
        drift_of(rows, job, "t.csv")
    assert drift_of(rows[rows["workload"] == "none"], job) is None


def test_observed_tries_are_every_try_that_ran(zeus_traces: Path) -> None:
    from zeus_bench.sim.replay import RUN_FIELDS, JobModel, default_recurrences, replay

    job = TraceSet(zeus_traces).job("v100", "cifar100")
    n = default_recurrences(job)
    rows = [
        dict(zip(RUN_FIELDS, r, strict=True))
        for r in replay(JobModel(job, Cost(0.5)), get_policy("zeus-plus"), 3, 2.0, n)
    ]
    ran = [r for r in rows if r["ran"]]
    assert any(not r["profiled"] for r in ran)  # tries after a size's first: the filter is "ran"
    expected = [Try(r["batch_size"], r["epochs"], r["cost"], r["reached"]) for r in ran]
    assert observed_tries(job, Cost(0.5), 2.0, 3) == expected


def _same_priors(got: list[object], want: list[object]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, NoSharedBatchSize):
            assert isinstance(g, NoSharedBatchSize) and str(g) == str(w)
        else:
            assert g == w


def _priors_one_at_a_time(job: JobTrace, ts: TraceSet, seeds: list[int]) -> list[object]:
    out: list[object] = []
    for s in seeds:
        try:
            out.append(prior_for(job, ts, "v100", Cost(0.5), 2.0, s))
        except NoSharedBatchSize as exc:
            out.append(exc)
    return out


@pytest.mark.parametrize("workload", ["cifar100", "squad", "librispeech"])
def test_priors_of_every_seed_in_one_walk_are_each_seeds_own(zeus_traces: Path, workload: str) -> None:
    ts = TraceSet(zeus_traces)
    job = ts.job("a40", workload)
    seeds = list(range(101, 109))
    got = priors_for(job, ts, "v100", Cost(0.5), 2.0, seeds)
    assert len({p.best_batch_size for p in got if isinstance(p, Prior)} | {0}) >= 2  # real priors
    _same_priors(got, _priors_one_at_a_time(job, ts, seeds))


def test_a_seed_without_a_shared_batch_size_gets_its_exception(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = TraceSet(zeus_traces)
    real = ts.job("a40", "cifar100")
    job = dataclasses.replace(real, batch_sizes=np.array([3, 5]), b0=3)  # none the V100 ran
    got = priors_for(job, ts, "v100", Cost(0.5), 2.0, [1, 2])
    assert all(isinstance(p, NoSharedBatchSize) for p in got)
    _same_priors(got, _priors_one_at_a_time(job, ts, [1, 2]))

    # A walk stopped by some seed's first recurrence: the seeds told apart one replay at a time.
    from zeus_bench.sim import replay

    whole = replay.replay_many

    def stopped(model: object, cls: object, seeds: list[int], *a: object, **k: object) -> object:
        if len(seeds) > 1:  # the walk of every seed; one seed's replay (prior_for's) runs
            raise ConfigError("b0 did not reach the target in the first recurrence")
        return whole(model, cls, seeds, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "replay_many", stopped)
    got = priors_for(real, ts, "v100", Cost(0.5), 2.0, [4, 5])
    assert all(isinstance(p, Prior) for p in got)
    _same_priors(got, _priors_one_at_a_time(real, ts, [4, 5]))


def test_targets_of_one_prior_job_share_its_replay(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replays cache: the prior GPU's job replayed once for two targets, each target's priors its own."""
    from zeus_bench.sim import replay

    ts = TraceSet(zeus_traces)
    whole, walks = replay.replay_many, []

    def counted(model: object, cls: object, seeds: list[int], *a: object, **k: object) -> object:
        walks.append(list(seeds))
        return whole(model, cls, seeds, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "replay_many", counted)
    a40 = ts.job("a40", "cifar100")
    largest = max(a40.batch_sizes)
    assert largest != a40.b0
    other = dataclasses.replace(a40, batch_sizes=np.array([b for b in a40.batch_sizes if b != largest]))
    seeds, cache = [101, 102, 103], {}  # type: ignore[var-annotated]
    shared = [priors_for(job, ts, "v100", Cost(0.5), 2.0, seeds, cache) for job in (a40, other)]
    assert walks == [seeds] and len(cache) == 1  # one replay for both targets
    alone = [priors_for(job, ts, "v100", Cost(0.5), 2.0, seeds) for job in (a40, other)]
    assert len(walks) == 3
    for got, expected in zip(shared, alone, strict=True):
        _same_priors(got, expected)
    priors_for(a40, ts, "v100", Cost(0.5), 1.5, seeds, cache)  # another beta: another replay
    assert len(walks) == 4 and len(cache) == 2
