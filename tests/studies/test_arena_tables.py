"""The arena's tables on totals whose answer is known: bootstrap intervals, paired verdicts, ratios."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.metrics import bootstrap_ci, ratio_ci
from zeus_bench.sim.replay import JobModel
from zeus_bench.sim.rules import check_horizon
from zeus_bench.studies import arena_protocol as arena_mod
from zeus_bench.studies.arena_protocol import Protocol
from zeus_bench.studies.arena_stats import job_table, summary_table
from zeus_bench.studies.crossfit import split_job
from zeus_bench.studies.recurrences import anytime_floor, probe_floor

# --- intervals on tables whose answer is known ------------------------------------------------


def test_ci_of_a_constant_is_the_constant() -> None:
    assert bootstrap_ci(np.full(7, 1.25)) == (1.25, 1.25, 1.25)
    assert bootstrap_ci(np.array([3.0])) == (3.0, 3.0, 3.0)


def test_paired_difference_of_a_shifted_copy_is_exact() -> None:
    rng = np.random.default_rng(0)
    zeus = rng.normal(5.0, 2.0, 50)
    m, lo, hi = bootstrap_ci((zeus - 1.0) - zeus)  # a policy 1 point better on every seed
    assert m == pytest.approx(-1.0) and lo == pytest.approx(-1.0) and hi == pytest.approx(-1.0)
    # unpaired, the same gap would be buried in the seeds' spread
    _, lo2, hi2 = bootstrap_ci(zeus)
    assert hi2 - lo2 > 1.0


def test_ci_covers_the_normal_interval() -> None:
    x = np.random.default_rng(1).normal(10.0, 3.0, 400)
    m, lo, hi = bootstrap_ci(x)
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    assert m == pytest.approx(x.mean())
    assert lo < m < hi
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.15)


def test_ratio_ci_of_proportional_tables() -> None:
    den = np.random.default_rng(2).uniform(1.0, 3.0, 30)
    assert ratio_ci(0.5 * den, den) == pytest.approx((0.5, 0.5, 0.5))


def _totals(jobs, values):  # type: ignore[no-untyped-def]
    return {(j.gpu, j.workload.id, p): (v, np.zeros_like(v)) for j in jobs for p, v in values.items()}


def test_job_and_summary_tables_on_known_totals() -> None:
    """Totals set by hand: regret, the paired verdicts, the unsafe share, p95 and the rank follow."""
    job = toy_job(targets={8: [np.nan], 16: [4.0], 32: [5.0], 64: [3.0]})
    model = JobModel(job, Cost(0.5))
    refs = arena_mod.job_refs(model)
    n = 16
    seeds = tuple(range(1, 21))
    base = n * refs.baseline
    zeus = np.linspace(1.00, 1.04, 20) * base  # 5 of 20 seeds above 1.02 (1.0211 ... 1.04)
    better = zeus - 0.01 * base  # 1 % of the baseline below Zeus on every seed
    worse = zeus + 0.02 * base
    totals = _totals([job], {"zeus": zeus, "a": better, "b": worse, "c": zeus.copy()})
    df, regrets = job_table([job], totals, Protocol(seeds))
    df = df.set_index("policy")
    assert df.loc["zeus", "unsafe_seed_share"] == pytest.approx(np.mean(np.linspace(1.0, 1.04, 20) > 1.02))
    assert df.loc["zeus", "cost_ratio_vs_baseline_p95"] == pytest.approx(
        np.percentile(np.linspace(1, 1.04, 20), 95)
    )
    assert df.loc["zeus", "regret_pct_mean"] == pytest.approx(100 * (zeus.mean() / (n * refs.oracle) - 1))
    diff = -0.01 * base / (n * refs.oracle) * 100
    for col in (
        "regret_diff_vs_zeus_pct_mean",
        "regret_diff_vs_zeus_pct_ci_lo",
        "regret_diff_vs_zeus_pct_ci_hi",
    ):
        assert df.loc["a", col] == pytest.approx(diff)
    assert list(df["vs_zeus"]) == ["same", "better", "worse", "tie"]
    summary = summary_table(df.reset_index(), regrets).set_index("policy")
    assert summary.loc["a", "rank"] == 1 and summary.loc["b", "rank"] == 4
    assert summary.loc["zeus", "rank"] == summary.loc["c", "rank"] == 2  # ties share the better rank
    assert summary.loc["a", "jobs_better_than_zeus"] == 1 and summary.loc["b", "jobs_worse_than_zeus"] == 1
    assert summary.loc["c", "regret_ratio_vs_zeus"] == pytest.approx(1.0)
    assert summary.loc["zeus", "jobs_p95_over_safe"] == 1


def test_the_cost_ratios_are_paired_with_the_baseline_on_the_same_seed() -> None:
    """A seed's cost over the baseline's on that seed: 1.01 / 1.03 x the baseline flip around 1.02.

    b0 (16) has paths of 2, 6, 3 and 9 epochs: the baseline's own cost over its expected cost has a
    95th percentile above 1.02 (the expected-cost view's floor), its paired ratio is 1 on every seed.
    """
    job = toy_job(targets={8: [5.0, 6.0], 16: [2.0, 6.0, 3.0, 9.0], 32: [5.0, 7.0, 6.0, 8.0]}, b0=16)
    protocol = Protocol(tuple(range(1, 31)))
    model = JobModel(job, Cost(protocol.eta))
    n = 12
    base = arena_mod.replayed_total(model, "baseline", protocol, n)
    mb = arena_mod.replayed_total(model, "max-batch", protocol, n)
    assert base.std() > 0  # the sampled paths differ between seeds
    expected = n * arena_mod.job_refs(model).baseline
    totals = _totals([job], {"zeus": 1.01 * base, "unsafe": 1.03 * base, "baseline": base.copy()})
    totals[(job.gpu, job.workload.id, "mb")] = (mb.copy(), np.zeros_like(mb))
    df, parts = job_table(
        [arena_mod.ArenaJob(job, n)], totals, protocol, ["zeus", "unsafe", "baseline", "mb"]
    )
    df = df.set_index("policy")
    for p, factor in (("zeus", 1.01), ("unsafe", 1.03), ("baseline", 1.0)):
        for col in ("mean", "ci_lo", "ci_hi", "p95", "p95_ci_lo", "p95_ci_hi"):
            assert df.loc[p, f"cost_ratio_vs_baseline_{col}"] == pytest.approx(factor)
        assert df.loc[p, "unsafe_seed_share"] == (1.0 if factor > 1.02 else 0.0)
        assert df.loc[p, "cost_ratio_vs_expected_baseline_mean"] == pytest.approx(
            (factor * base / expected).mean()
        )
    assert df.loc["mb", "cost_ratio_vs_max_batch_mean"] == pytest.approx(1.0)
    floor = float(np.percentile(base / expected, 95))
    assert floor > 1.02 and df["baseline_p95"].tolist() == pytest.approx([floor] * len(df))
    assert df.loc["baseline", "cost_ratio_vs_expected_baseline_p95"] == pytest.approx(floor)
    summary = summary_table(df.reset_index(), parts).set_index("policy")
    assert summary["jobs_p95_over_safe"].to_dict() == {
        "zeus": 0,
        "unsafe": 1,
        "baseline": 0,
        "mb": 1,
    }  # 32 > b0
    assert summary.loc["baseline", "jobs_baseline_p95_over_safe"] == 1


# --- the floors ----------------------------------------------------------------------------


def test_the_safety_floor_is_the_baselines_own_percentile() -> None:
    """baseline_p95 is 1 where b0's paths all need the same epochs: the baseline's expected-cost p95."""
    same = toy_job(targets={8: [5.0, 6.0], 16: [4.0, 4.0, 4.0, 4.0], 32: [5.0, 7.0, 6.0, 8.0]}, b0=16)
    spread = toy_job(targets={8: [5.0, 6.0], 16: [2.0, 6.0, 3.0, 9.0], 32: [5.0, 7.0, 6.0, 8.0]}, b0=16)
    protocol = Protocol(tuple(range(1, 21)))
    for job, flat in ((same, True), (spread, False)):
        judged = [arena_mod.ArenaJob(split_job(job, "judge"), arena_mod.default_recurrences(job))]
        totals = arena_mod.run_arena(judged, ["baseline", "zeus-plus"], protocol)
        df, _ = job_table(judged, totals, protocol)
        floor = set(df["baseline_p95"])
        assert len(floor) == 1  # one number per job, on every policy's row
        base = df[df["policy"] == "baseline"].iloc[0]
        assert base["cost_ratio_vs_expected_baseline_p95"] == pytest.approx(base["baseline_p95"])
        assert base["cost_ratio_vs_baseline_p95"] == pytest.approx(1.0)  # paired: the baseline over itself
        assert bool(base["baseline_p95"] == pytest.approx(1.0)) == flat
        if not flat:
            assert base["baseline_p95"] > 1.02  # b0's judged paths 6 and 9 epochs: luck of the paths


def test_the_probe_floor_is_b0_plus_one_epoch_of_another_batch_size() -> None:
    """probe_floor_p95 = 1 + one epoch over the seed's baseline cost: above 1.02 on few recurrences, below on many."""
    job = toy_job(targets={8: [5.0, 6.0], 16: [4.0, 4.0, 4.0, 4.0], 32: [5.0, 7.0, 6.0, 8.0]}, b0=16)
    model = JobModel(job, Cost(0.5))
    base = arena_mod.job_refs(model).baseline  # 4 epochs of 200 J at the maximum limit (its cheapest)
    for n, floor in ((10, 1.025), (20, 1.0125)):  # one epoch = 1/4 of a recurrence, over n of them
        got = probe_floor(model, np.full(3, n * base))
        assert got == pytest.approx([floor] * 3)
        assert bool(got[0] > 1.02) == (n == 10)
    # Paired: over the seed's own baseline cost (a dearer seed's floor is lower).
    assert probe_floor(model, np.array([10 * base, 20 * base])) == pytest.approx([1.025, 1.0125])
    # Another batch size's epoch 10 x cheaper: the floor falls under 1.02 on 10 recurrences too.
    cheap = dataclasses.replace(job, time_per_epoch_s=job.time_per_epoch_s * np.array([[0.1], [1.0], [1.0]]))
    assert probe_floor(JobModel(cheap, Cost(0.5)), np.array([10 * base]))[0] < 1.02
    # b0 alone: its own floor.
    alone = toy_job(targets={16: [4.0, 4.0]}, b0=16)
    assert probe_floor(JobModel(alone, Cost(0.5)), np.array([10 * base]))[0] == pytest.approx(1.0)
    # In the arena tables: one number per job, the summary counts the jobs above 1.02.
    protocol = Protocol(tuple(range(1, 11)))
    judged = [arena_mod.ArenaJob(split_job(job, "judge"), 10)]
    totals = arena_mod.run_arena(judged, ["zeus-plus"], protocol)
    df, regrets = job_table(judged, totals, protocol)
    assert df["probe_floor_p95"].tolist() == pytest.approx([1.025] * len(df))
    summary = summary_table(df, regrets)
    assert set(summary["jobs_probe_floor_over_safe"]) == {1}


def _floor_job():  # type: ignore[no-untyped-def]
    """b0 = 16 needs 8 epochs; 32 needs 3 or 5 (the oracle, 4 on average); 8 needs 5 or 6."""
    return toy_job(targets={8: [5.0, 6.0], 16: [8.0, 8.0], 32: [3.0, 5.0]}, b0=16)


def test_the_anytime_floor_is_the_wait_for_a_try_the_guarantee_funds() -> None:
    """Worked by hand: t* = ceil(x_min / (1.02 B - c0)); the floor charges b0's excess until then."""
    job = _floor_job()
    # eta 0.5: 200 J an epoch at 200 W (the cheapest limit, so c0 = B = 1600), 225 at 100 W.
    # x_min = 3 epochs of 32 = 600; t* = ceil(600 / 32) = 19: 18 recurrences at 1600 against 800.
    half = JobModel(job, Cost(0.5))
    assert anytime_floor(half, 40, 0.02) == pytest.approx(100 * 18 * 800 / (40 * 800))  # 45 %
    assert anytime_floor(half, 10, 0.02) == pytest.approx(100.0)  # the job ends before t*: b0 throughout
    assert anytime_floor(half, 40, 0.0) == pytest.approx(100.0)  # no allowance, no JIT saving: never
    # A larger allowance funds the try sooner: ceil(600 / 160) = 4, 3 recurrences of 800 over 40 x 800.
    assert anytime_floor(half, 40, 0.1) == pytest.approx(100 * 3 / 40)
    # eta 1 (energy): 150 J an epoch at 100 W. c0 = 1200 < B = 1600, x_min = 450, X = 600:
    # the JIT saving funds the try in recurrence ceil(450 / (1632 - 1200)) = 2.
    assert anytime_floor(JobModel(job, Cost(1.0)), 40, 0.02) == pytest.approx(100 * 1 * 600 / (40 * 600))
    # b0 is the oracle's batch size: no floor.
    assert (
        anytime_floor(JobModel(toy_job(targets={16: [4.0, 4.0], 32: [5.0, 7.0]}, b0=16), Cost(0.5)), 40, 0.02)
        == 0.0
    )


def test_the_anytime_floor_bounds_the_anytime_budget_not_a_known_horizon() -> None:
    """zeus-plus told nothing stays above the floor; told the 40 recurrences it lends and goes below it."""
    # 32's epochs take half the time (100 J of cost at 200 W), 8 of them: 800 against b0's 1600, so
    # x_min = 800 and t* = ceil(800 / 32) = 25: 24 recurrences of 800 too many over 40 x 800.
    job, n = _floor_job(), 40
    job = dataclasses.replace(
        job,
        target_epochs=(job.target_epochs[0], job.target_epochs[1], np.array([8.0, 8.0])),
        time_per_epoch_s=job.time_per_epoch_s * np.array([[1.0], [1.0], [0.5]]),
    )
    assert anytime_floor(JobModel(job, Cost(0.5)), n, 0.02) == pytest.approx(60.0)
    jobs = [arena_mod.ArenaJob(job, n)]
    regret = {}
    for horizon in ("unknown", "known"):
        protocol = Protocol(tuple(range(1, 11)), horizon=check_horizon(horizon))
        df, regrets = job_table(jobs, arena_mod.run_arena(jobs, ["zeus-plus"], protocol), protocol)
        assert df["anytime_floor_regret_pct"].tolist() == pytest.approx([60.0] * len(df))
        regret[horizon] = float(df.set_index("policy").loc["zeus-plus", "regret_pct_mean"])
        summary = summary_table(df, regrets).set_index("policy")
        zeus = float(summary.loc["zeus", "regret_pct_mean"])
        assert summary.loc["zeus-plus", "anytime_floor_ratio_vs_zeus"] == pytest.approx(60.0 / zeus)
        lo, hi = summary.loc[
            "zeus", ["anytime_floor_ratio_vs_zeus_ci_lo", "anytime_floor_ratio_vs_zeus_ci_hi"]
        ]
        assert lo <= 60.0 / zeus <= hi
    assert regret["unknown"] >= 60.0 > regret["known"]
