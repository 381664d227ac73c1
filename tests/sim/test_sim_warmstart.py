"""Warm start from what a replay on the prior GPU observed, and the per-job / leave-one-job-out table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import bootstrap_ci
from zeus_bench.sim.scenarios.warmstart import Try, observed_tries, prior_from_tries
from zeus_bench.store import read_table
from zeus_bench.studies.warmjobs import WarmCosts, jobs_table, write_jobs_table

# 64 is the grid's cheapest batch size (2 epochs against b0's 5); 8 never converges.
GRID = {8: [np.nan], 16: [6.0], 32: [5.0], 64: [2.0], 128: [4.0]}


def test_prior_holds_only_what_the_tries_showed() -> None:
    job = toy_job(GRID)
    tries = [
        Try(32, 5.0, 1000.0, True),
        Try(16, 6.0, 1200.0, True),
        Try(8, 10.0, 2000.0, False),
        Try(32, 5.0, 1100.0, True),
        Try(1024, 1.0, 1.0, True),  # not a batch size of the target: ignored
    ]
    prior = prior_from_tries(job, tries, "other")
    assert prior.best_batch_size == 32  # the grid's best, 64, was never tried: the prior cannot know it
    assert prior.ruled_out == (8,)
    assert dict(prior.relative_cost) == {16: pytest.approx(1200.0 / 1050.0), 32: 1.0}
    with pytest.raises(ConfigError, match="share no converging batch size"):
        prior_from_tries(job, [Try(8, 10.0, 2000.0, False)], "other")


def test_a_short_prior_replay_knows_less_than_the_grid() -> None:
    prior_job = toy_job(GRID)
    few = observed_tries(prior_job, Cost(0.5), 2.0, seed=1, recurrences=1)
    assert {t.batch_size for t in few} == {32}  # the first recurrence runs b0 only
    assert prior_from_tries(toy_job(GRID), few, "other").best_batch_size == 32
    many = observed_tries(prior_job, Cost(0.5), 2.0, seed=1, recurrences=60)
    assert prior_from_tries(toy_job(GRID), many, "other").best_batch_size == 64  # found by its own tries


def _costs(cold: list[float], warm: list[float], n: int = 20, oracle: float = 100.0) -> WarmCosts:
    """Costs whose first-20 regret per seed is the given percentages (spread evenly)."""
    c = np.array([[oracle * (1 + r / 100.0)] * n for r in cold])
    w = np.array([[oracle * (1 + r / 100.0)] * n for r in warm])
    return WarmCosts(c, w, oracle, n, 0)


def test_jobs_table_cuts_pairs_and_leaves_each_job_out() -> None:
    costs = {
        ("a", "b", "j1"): _costs([10.0, 10.0], [2.0, 4.0]),  # 70 % cut
        ("a", "b", "j2"): _costs([10.0, 10.0], [10.0, 10.0]),  # none
        ("b", "a", "j1"): _costs([20.0, 40.0], [30.0, 30.0]),
    }
    t = jobs_table(costs).set_index(["prior_gpu", "gpu", "workload"])
    j1, j2 = t.loc[("a", "b", "j1")], t.loc[("a", "b", "j2")]
    assert j1["regret_first20_pct_warm_mean"] == pytest.approx(3.0)
    assert j1["cut_pct"] == pytest.approx(70.0) and j2["cut_pct"] == pytest.approx(0.0)
    assert j1["pair_cut_pct"] == pytest.approx(100 * (1 - 6.5 / 10.0))
    assert j1["pair_cut_without_pct"] == pytest.approx(0.0)  # without j1 only j2 is left
    assert j2["pair_cut_without_pct"] == pytest.approx(70.0)
    assert j1["regret_first20_diff_pct_mean"] == pytest.approx(-7.0)
    assert j1["regret_first20_diff_pct_ci_low"] <= -7.0 <= j1["regret_first20_diff_pct_ci_high"]
    assert j2["regret_first20_diff_pct_ci_low"] == j2["regret_first20_diff_pct_ci_high"] == 0.0
    lone = t.loc[("b", "a", "j1")]
    assert lone["cut_pct"] == pytest.approx(0.0) and np.isnan(lone["pair_cut_without_pct"])


def test_bootstrap_interval_covers_the_mean_and_narrows_with_seeds() -> None:
    rng = np.random.default_rng(5)
    small, large = rng.normal(1.0, 1.0, 10), rng.normal(1.0, 1.0, 1000)
    _, lo_s, hi_s = bootstrap_ci(small)
    _, lo_l, hi_l = bootstrap_ci(large)
    assert lo_s < small.mean() < hi_s and lo_l < large.mean() < hi_l
    assert hi_l - lo_l < 0.3 * (hi_s - lo_s)
    assert lo_l < 1.0 < hi_l


def test_the_table_is_written_with_its_schema(tmp_path: Path) -> None:
    table = jobs_table({("a", "b", "j1"): _costs([10.0, 12.0], [2.0, 4.0])})
    back = read_table(write_jobs_table(table, tmp_path / "w.parquet"), "warmstart_jobs")
    assert back["cut_pct"].iloc[0] == pytest.approx(100 * (1 - 3.0 / 11.0))
    assert write_jobs_table(table, tmp_path / "w.csv").read_text().startswith("prior_gpu,gpu,workload,seeds")
    with pytest.raises(ConfigError, match=r"\.parquet or \.csv"):
        write_jobs_table(table, tmp_path / "w.txt")
