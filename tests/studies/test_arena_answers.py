"""The arena's answers: two-stage intervals, probability of beating Zeus, splits, horizons, stdout."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.sim_toy import toy_job
from tests.studies.test_arena import two_gpu_traces, write_as_version
from zeus_bench.cli.arena import ANSWER, answer
from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import bootstrap_ci, percentile_ci, percentile_cis
from zeus_bench.sim.replay import JobModel
from zeus_bench.sim.rules import check_horizon, horizon_recurrences
from zeus_bench.sim.two_stage import two_stage_resamples
from zeus_bench.store import METADATA_KEY, read_table
from zeus_bench.studies import arena_protocol as arena_mod
from zeus_bench.studies.arena_protocol import Draws, Protocol
from zeus_bench.studies.arena_stats import job_table, summary_table
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, path_halves, replicate_job, split_job

# --- the two-stage bootstrap ---------------------------------------------------------------


def test_without_replicates_the_two_stage_interval_is_the_seed_bootstrap() -> None:
    x = np.random.default_rng(3).normal(5.0, 1.0, 12)
    means = two_stage_resamples(x[None, :], None)[0].mean(axis=1)
    assert percentile_ci(means) == pytest.approx(bootstrap_ci(x)[1:])
    same = np.full((1, 6, 1), 4.0)  # replicates that agree add nothing
    assert two_stage_resamples(x[None, :], same)[0].mean(axis=1) == pytest.approx(means)


def test_percentile_cis_are_each_rows_percentile_ci_bit_for_bit() -> None:
    """Rows of draws as the arena's rows hold them (four quantities, thousands of draws), ties, a constant row."""
    rng = np.random.default_rng(11)
    rows = np.concatenate(
        [
            rng.normal(1.0, 0.05, (4, 2000)),
            np.round(rng.normal(0.0, 3.0, (2, 4001)), 1)[:, :2000],  # many ties
            np.full((1, 2000), 0.98),
            rng.lognormal(0.0, 2.0, (1, 2000)),
        ]
    )
    cis = percentile_cis(rows)
    assert cis.shape == (len(rows), 2)
    for row, (lo, hi) in zip(rows, cis.tolist(), strict=True):
        assert (lo, hi) == percentile_ci(row)  # the same floats, not only close
    assert percentile_cis(rows, 0.5).tolist()[0] == list(percentile_ci(rows[0], 0.5))


def test_the_path_level_widens_the_interval_by_the_replicates_spread() -> None:
    """Seeds that agree (no seed noise): the interval is the replicates' deviations, nothing else."""
    rec = np.full((1, 10), 2.0)
    reps = np.array([1.0, 2.0, 3.0, 2.0])[None, :, None]  # deviations -1, 0, +1, 0
    draws = two_stage_resamples(rec, reps)[0].mean(axis=1)
    assert set(np.round(draws, 12)) == {1.0, 2.0, 3.0}
    assert percentile_ci(draws) == pytest.approx((1.0, 3.0))
    assert np.mean(draws == 2.0) == pytest.approx(0.5, abs=0.05)  # half the replicates deviate by 0


def test_paired_quantities_share_the_replicate_and_the_seeds() -> None:
    """A policy at 0.6 x Zeus on every replay: the ratio of the draws' means is 0.6 on every draw."""
    rng = np.random.default_rng(4)
    zeus = rng.uniform(1.0, 3.0, 10)
    zreps = rng.uniform(1.0, 3.0, (5, 2))
    draws = two_stage_resamples(np.stack([0.6 * zeus, zeus]), np.stack([0.6 * zreps, zreps])).mean(axis=2)
    assert draws[0] / draws[1] == pytest.approx(np.full(draws.shape[1], 0.6))


def test_job_rows_carry_the_path_level_and_the_probability_of_beating_zeus() -> None:
    job = toy_job(targets={8: [np.nan], 16: [4.0], 32: [5.0], 64: [3.0]})
    refs = arena_mod.job_refs(JobModel(job, Cost(0.5)))
    n, seeds = 16, tuple(range(1, 5))
    base = n * refs.baseline
    zeus = Draws(np.full(4, 1.1 * base), np.zeros(4), np.full((3, 1), 1.1 * base), np.full(3, refs.oracle))
    # cheaper than Zeus on 3 of 4 seeds, a tie on the 4th; on the replicates: dearer, a tie, cheaper
    a_rec = np.array([1.0, 1.0, 1.0, 1.1]) * base
    a = Draws(a_rec, np.zeros(4), np.array([[1.2], [1.1], [1.0]]) * base, np.full(3, refs.oracle))
    flat = Draws(np.full(4, base), np.zeros(4), np.full((3, 1), base), np.full(3, refs.oracle))
    totals = {(job.gpu, job.workload.id, p): d for p, d in (("zeus", zeus), ("a", a), ("baseline", flat))}
    totals[(job.gpu, job.workload.id, "max-batch")] = flat
    protocol = Protocol(seeds, replicates=3)
    df, parts = job_table([arena_mod.ArenaJob(job, n)], totals, protocol, ["zeus", "a"])
    df = df.set_index("policy")
    assert df.loc["a", "prob_better_than_zeus"] == pytest.approx((3 + 0.5 + 0 + 0.5 + 1) / 7)
    assert df.loc["zeus", "prob_better_than_zeus"] == pytest.approx(0.5)
    # the replicates' costs 1.2, 1.1, 1.0 x the baseline deviate by +-0.1: the interval spans them
    assert df.loc["a", "cost_ratio_vs_baseline_mean"] == pytest.approx(1.025)
    lo, hi = df.loc["a", "cost_ratio_vs_baseline_ci_lo"], df.loc["a", "cost_ratio_vs_baseline_ci_hi"]
    assert lo == pytest.approx(0.9) and hi == pytest.approx(1.15)  # seeds 1.0-1.1, paths -0.1 ... +0.1
    assert df.loc["zeus", "cost_ratio_vs_baseline_ci_lo"] == pytest.approx(1.1)  # nothing varies
    summary = summary_table(df.reset_index(), parts).set_index("policy")
    assert summary.loc["a", "prob_better_than_zeus_mean"] == pytest.approx(
        df.loc["a", "prob_better_than_zeus"]
    )
    assert summary.loc["zeus", "regret_ratio_vs_zeus"] == 1.0
    for end in ("mean", "ci_lo", "ci_hi"):  # one job: the GPU's mean ratio is the job's
        col = f"cost_ratio_vs_baseline_{end}"
        assert summary.loc["a", col] == pytest.approx(df.loc["a", col])


def test_fold_agreement_counts_disjoint_intervals_without_zeus_and_tuned_policies() -> None:
    from zeus_bench.studies.arena_profile import fold_agreement

    rows = []
    for fold, (a_lo, a_hi) in ((1, (0.4, 0.5)), (2, (0.45, 0.6))):
        for p, lo, hi in (
            ("zeus", 1.0, 1.0),
            ("zeus-plus", 0.1, 0.2),
            ("a", a_lo, a_hi),
            ("b", fold, fold + 0.5),
        ):
            rows.append(
                {"gpu": "g", "policy": p, "fold": fold, "splits": 1, "regret_ratio_vs_zeus_ci_lo": lo,
                 "regret_ratio_vs_zeus_ci_hi": hi + (fold == 2 and p == "zeus-plus")}
            )  # fmt: skip
    rows.append({**rows[-1], "fold": 0, "splits": 5})  # pooled rows are not a fold
    agree = fold_agreement(pd.DataFrame(rows))
    assert agree.pairs == (("g", "a"), ("g", "b")) and agree.disjoint == (("g", "b"),) and agree.share == 0.5
    rows[3]["regret_ratio_vs_zeus_ci_hi"] = 2.5  # b's fold-1 interval now reaches fold 2's
    assert fold_agreement(pd.DataFrame(rows)).disjoint == ()


def test_the_path_level_is_rescaled_for_few_paths() -> None:
    """sqrt(n / (n - 1)) of the median paths per batch size: a bootstrap over n values is (n-1)/n too narrow."""
    from zeus_bench.studies.arena_stats import path_scale, scaled

    two = toy_job(targets={8: [4.0, 5.0], 16: [4.0, 6.0], 32: [5.0, 7.0, 8.0]})
    five = toy_job(targets={8: [4.0] * 5, 16: [4.0, 5.0, 6.0, 7.0, 8.0]})
    assert path_scale(two) == pytest.approx(math.sqrt(2.0)) and path_scale(five) == pytest.approx(
        math.sqrt(1.25)
    )
    assert path_scale(toy_job(targets={16: [4.0]})) == 1.0
    rep = np.array([[1.0], [3.0]])
    assert scaled(rep, 2.0).ravel().tolist() == [0.0, 4.0]  # deviations -1, +1 doubled around the mean 2
    assert scaled(rep[:1], 2.0).tolist() == [[1.0]]  # one replicate: no deviation to scale


# --- splits and replicate traces --------------------------------------------------------------


def test_random_splits_partition_and_are_seeded() -> None:
    assert [h.tolist() for h in path_halves(5).values()] == [[0, 2, 4], [1, 3]]  # split 1: even/odd
    moved = False
    for n in range(2, 11):
        for split in (2, 3):
            h = path_halves(n, split, (7, 1))
            assert sorted([*h["tune"], *h["judge"]]) == list(range(n))
            assert len(h["tune"]) == (n + 1) // 2  # the sizes of split 1
            assert [x.tolist() for x in h.values()] == [
                x.tolist() for x in path_halves(n, split, (7, 1)).values()
            ]
            moved |= h["judge"].tolist() != path_halves(n)["judge"].tolist()
    assert moved
    with pytest.raises(ConfigError, match="split"):
        path_halves(4, 0)


def test_a_random_split_halves_each_batch_size_of_a_job() -> None:
    job = toy_job(targets={8: [1.1, 1.2, 1.3, 1.4], 16: [4.01, 4.02, 4.03], 32: [5.01, 5.02, 5.03, 5.04]})
    for split in (1, 2, 5):
        tune, judge = split_job(job, "tune", split), split_job(job, "judge", split)
        for t, j, whole in zip(tune.target_epochs, judge.target_epochs, job.target_epochs, strict=True):
            assert sorted([*t, *j]) == sorted(whole)


def test_replicate_traces_redraw_each_batch_sizes_paths() -> None:
    job = toy_job(targets={8: [np.nan, 9.5], 16: [4.01, 4.02, 4.03], 32: [5.01, 5.02, 5.03, 5.04]}, b0=16)
    seen = []
    for r in range(20):
        rep = replicate_job(job, 1, 1, r)
        assert rep.target_epochs[1].tolist() == replicate_job(job, 1, 1, r).target_epochs[1].tolist()
        for drawn, whole in zip(rep.target_epochs, job.target_epochs, strict=True):
            assert len(drawn) == len(whole)
            assert set(drawn[~np.isnan(drawn)]) <= set(whole[~np.isnan(whole)])
        seen.append(tuple(rep.target_epochs[2]))
    assert len(set(seen)) > 5  # replicates differ
    assert any(len(set(s)) < 4 for s in seen)  # drawn with replacement
    # b0 never left without a converging path
    bad = toy_job(targets={8: [4.0], 16: [np.nan, np.nan, 4.0]}, b0=16)
    assert all((~np.isnan(replicate_job(bad, 1, 1, r).target_epochs[1])).any() for r in range(30))


# --- misspecified horizons -------------------------------------------------------------------


def test_misspecified_horizons() -> None:
    assert check_horizon("0.5x") == "0.5x" and check_horizon("2x") == "2x" and check_horizon("2.0x") == "2x"
    assert horizon_recurrences("0.5x", 15) == 8 and horizon_recurrences("2x", 15) == 30
    assert horizon_recurrences("0.01x", 15) == 1
    for bad in ("x", "0x", "-1x", "twox", "nanx", "infx"):
        with pytest.raises(ConfigError, match="--horizon"):
            check_horizon(bad)


# --- the frozen design -----------------------------------------------------------------------


def test_zeus_plus_design_is_frozen() -> None:
    """docs/policies.md, 'Design log': a change of these must add a row there, saying what it was scored on."""
    from zeus_bench.sim.policies import get_policy

    names = ("margin", "safety", "horizon", "anytime", "up_first", "loan", "lookahead", "prune", "noise_z")
    frozen = {
        "zeus-plus": (0.2, 0.02, 0, False, True, None, None, True, 3.0, True),
        "zeus-plus-safe": (0.2, 0.02, 0, True, True, 1.0, 4.0, True, 3.0, False),
    }
    for name, values in frozen.items():
        cls = get_policy(name)
        assert tuple(getattr(cls, k) for k in (*names, "epoch_evidence")) == values, name
    assert FOLD_CONSTANTS == {
        1: {},
        2: {"zeus-plus": {"margin": 0.4, "up_first": True, "epoch_evidence": True}},
    }


# --- the command ------------------------------------------------------------------------------


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


def test_splits_replicates_and_the_answer_on_stdout(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "arena"
    policies = "zeus,zeus-plus,pl-only"
    argv = f"arena --traces {tiny} --gpu v100 --policies {policies} --seeds 1-3".split()
    more = ["--replicates", "3", "--splits", "2", "--fold", "both", "--horizon", "unknown"]
    assert main([*argv, *more, "--out", str(out)]) == 0
    table = capsys.readouterr().out
    jobs = read_table(out / "arena_jobs.parquet", "arena_jobs")
    summary = read_table(out / "arena_summary.parquet", "arena_summary")
    profile = read_table(out / "arena_profile.parquet", "arena_profile")
    assert sorted(set(zip(jobs["fold"], jobs["splits"], strict=True))) == [(0, 2), (1, 1), (2, 1)]
    assert set(jobs["replicates"]) == {3} and (jobs["paths_min"] >= 1).all()
    assert jobs["prob_better_than_zeus"].between(0, 1).all()
    pooled = jobs[jobs["fold"] == 0].set_index(["workload", "policy"])
    assert (pooled["half"] == "both").all()
    for stat in ("regret_pct", "cost_ratio_vs_baseline"):
        assert (pooled[f"{stat}_ci_lo"] <= pooled[f"{stat}_mean"] + 1e-9).all()
        assert (pooled[f"{stat}_mean"] <= pooled[f"{stat}_ci_hi"] + 1e-9).all()
    meta = json.loads(pq.read_schema(out / "arena_jobs.parquet").metadata[METADATA_KEY])
    assert meta["interval_method"].startswith("two-stage") and meta["splits"] == 2
    # the profile: a share in [0, 1], non-decreasing in tau
    for _, g in profile.groupby(["policy", "fold", "splits"]):
        assert np.all(np.diff(g.sort_values("tau")["share"].to_numpy()) >= -1e-12)
    # stdout: the pooled rows ranked, every line within 100 columns, the horizon and label stated
    lines = table.strip().splitlines()
    assert lines[0].split() == list(ANSWER) and len(lines) == 1 + 3
    assert max(len(line) for line in lines) <= 100
    assert all(line.split()[-2:] == ["unknown", "simulated"] for line in lines[1:])
    ranked = summary[summary["fold"] == 0].sort_values(["rank", "policy"])["policy"].tolist()
    assert [line.split()[2] for line in lines[1:]] == ranked
    assert main([*argv, "--format", "csv", "--out", str(out), "--force"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(csv.columns) == list(ANSWER) and len(csv) == 3 and set(csv["gpu"]) == {"v100 f1"}
    assert main([*argv, "--format", "json", "--out", str(out), "--force"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3


def test_answer_of_version_5_tables(tiny: Path, tmp_path: Path) -> None:
    """A version-5 table reads (one split, no replicate, the new columns missing) and still answers."""
    out = tmp_path / "arena"
    argv = f"arena --traces v100={tiny} --gpu v100 --policies zeus,pl-only --seeds 1-2 --out {out}".split()
    assert main(argv) == 0
    new = {
        "arena_jobs": ["splits", "replicates", "paths", "paths_min", "prob_better_than_zeus"],
        "arena_summary": ["splits", "replicates", "prob_better_than_zeus_mean"],
    }
    for kind, columns in new.items():
        path = out / f"{kind}.parquet"
        rows = write_as_version(path, 5, columns)
        df = read_table(path, kind)
        assert len(df) == rows and (df["splits"] == 1).all() and (df["replicates"] == 0).all()
        assert df[columns[-1]].isna().all()
    shown = answer(read_table(out / "arena_summary.parquet", "arena_summary"))
    assert shown["p_better"].isna().all() and set(shown["policy"]) == {"zeus", "pl-only"}
    assert shown["rank"].is_monotonic_increasing


def test_bad_splits_and_replicate_seeds_exit_2(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100", "--seeds", "1-2", "--out", str(tmp_path / "x")]
    for extra, message in (
        (["--splits", "0"], "--splits"),
        (["--replicate-seeds", "3"], "--replicate-seeds"),
        (["--horizon", "0x"], "--horizon"),
        (["--recurrences", "0"], "--recurrences"),
    ):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1
        assert not (tmp_path / "x").exists()
