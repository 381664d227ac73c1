"""The coverage study: synthetic worlds, the intervals' settings, the rule that picks one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.two_stage import PATH_DRAWS, path_shifts, two_stage_resamples
from zeus_bench.studies import coverage
from zeus_bench.traces.jobs import JobTrace, TraceSet


def _whole(tiny: Path) -> JobTrace:
    return TraceSet(tiny).job("v100", "squad")


def test_population_keeps_the_failed_share_and_the_median(tiny: Path) -> None:
    job = _whole(tiny)  # squad: 16 -> (3, 4), 32 -> (2, 3), 64 -> (nan, 5)
    pop = coverage.population(job, 0.1, 4000, np.random.default_rng(1))
    assert [len(t) for t in pop.target_epochs] == [4000, 4000, 4000]
    failed = [float(np.isnan(t).mean()) for t in pop.target_epochs]
    assert failed[0] == 0.0 and failed[1] == 0.0
    assert abs(failed[2] - 0.5) < 0.03  # one of the two recorded paths of 64 never reached the target
    # whole epochs around the recorded median (3.5 rounds to 4 or 3 by the draw; 2.5 -> 2 or 3; 5)
    assert np.median(pop.target_epochs[2][~np.isnan(pop.target_epochs[2])]) == 5.0
    assert set(np.unique(pop.target_epochs[0])) <= {2.0, 3.0, 4.0, 5.0}
    assert (pop.target_epochs[1] >= 1).all()
    wide = coverage.population(job, 0.2, 4000, np.random.default_rng(1))
    assert np.std(np.log(wide.target_epochs[2][~np.isnan(wide.target_epochs[2])])) > np.std(
        np.log(pop.target_epochs[2][~np.isnan(pop.target_epochs[2])])
    )


def test_a_batch_size_that_never_reached_never_does(tiny: Path) -> None:
    job = _whole(tiny)
    never = job.target_epochs[2].copy()
    never[:] = np.nan
    job = dataclasses.replace(job, target_epochs=(job.target_epochs[0], job.target_epochs[1], never))
    pop = coverage.population(job, 0.1, 100, np.random.default_rng(2))
    assert np.isnan(pop.target_epochs[2]).all()


def test_recorded_draws_without_replacement(tiny: Path) -> None:
    pop = coverage.population(_whole(tiny), 0.1, 8, np.random.default_rng(3))
    marked = dataclasses.replace(pop, target_epochs=tuple(np.arange(8.0) + 10 * i for i in range(3)))
    drawn = coverage.recorded(marked, [2, 8, 5], np.random.default_rng(4))
    assert [len(t) for t in drawn.target_epochs] == [2, 8, 5]
    for i, t in enumerate(drawn.target_epochs):
        assert len(set(t.tolist())) == len(t)
        assert set(t.tolist()) <= set((np.arange(8.0) + 10 * i).tolist())


def test_path_shifts_pick_is_the_replicates_deviations() -> None:
    dev = np.array([[-1.0, 0.0, 1.0], [2.0, 0.0, -2.0]])
    shifts = path_shifts(dev, 500, 7, "pick")
    assert shifts.shape == (2, 500)
    assert set(shifts[0].tolist()) == {-1.0, 0.0, 1.0}
    assert np.array_equal(shifts[1], -2.0 * shifts[0])  # the same replicate for both quantities


def test_path_shifts_normal_has_the_replicates_covariance_and_t_is_wider() -> None:
    dev = np.array([[-1.5, -0.5, 0.5, 1.5], [1.0, 0.0, 0.0, -1.0]])
    cov = dev @ dev.T / 3.0
    normal = path_shifts(dev, 200_000, 11, "normal")
    assert np.allclose(np.cov(normal), cov, atol=0.03)
    t = path_shifts(dev, 200_000, 11, "t")
    # Student-t with 3 degrees of freedom: variance 3 / (3 - 2) = 3 times the normal's
    assert 2.4 < np.var(t[0]) / np.var(normal[0]) < 3.6
    assert np.quantile(np.abs(t[0]), 0.95) > 1.5 * np.quantile(np.abs(normal[0]), 0.95)
    with pytest.raises(ConfigError, match="unknown path draw 'gauss'; known: pick, normal, t"):
        path_shifts(dev, 10, 1, "gauss")


def test_two_stage_resamples_default_draw_is_pick() -> None:
    rec = np.arange(12.0).reshape(2, 6)
    reps = np.random.default_rng(5).normal(size=(2, 4, 1))
    assert np.array_equal(two_stage_resamples(rec, reps), two_stage_resamples(rec, reps, path_draw="pick"))
    assert not np.array_equal(two_stage_resamples(rec, reps), two_stage_resamples(rec, reps, path_draw="t"))
    assert PATH_DRAWS == ("pick", "normal", "t")


def _rows(covered: dict[tuple[int, str], list[bool]]) -> pd.DataFrame:
    rows = []
    for (r, d), flags in covered.items():
        for k, c in enumerate(flags):
            for fold, lo in ((1, 0.0), (2, 5.0 if k == 0 else 0.5)):
                rows.append(
                    {
                        "gpu": "v100",
                        "sigma": 0.1,
                        "pair": k,
                        "fold": fold,
                        "policy": "pl-only",
                        "replicates": r,
                        "path_draw": d,
                        "ci_lo": lo,
                        "ci_hi": lo + 1.0,
                        "truth": 0.5 if c else 9.0,
                        "truth_halfwidth": 0.01,
                        "covered": c,
                    }
                )
    return pd.DataFrame(rows)


def test_world_table_counts_coverage_and_disjoint_folds() -> None:
    w = coverage.world_table(_rows({(4, "pick"): [True, False, True, True]}))
    row = w.iloc[0]
    assert row["intervals"] == 8
    assert row["coverage"] == 0.75
    # pair 0's folds are [0, 1] and [5, 6]: disjoint; the others overlap
    assert row["disjoint_share"] == 0.25
    assert row["median_width"] == 1.0


def _settings(cov: dict[tuple[int, str], float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "gpu": "v100",
                "sigma": 0.1,
                "replicates": r,
                "path_draw": d,
                "intervals": 10,
                "coverage": c,
                "median_width": 1.0,
                "truth_halfwidth_median": 0.0,
                "disjoint_share": 0.0,
            }
            for (r, d), c in cov.items()
        ]
    )


def test_the_rule_picks_the_fewest_replicates_that_cover() -> None:
    base = {(0, "pick"): 0.4, (4, "pick"): 0.75, (4, "normal"): 0.8, (4, "t"): 0.91, (16, "pick"): 0.93}
    s = coverage.setting_table(_settings(base))
    assert s.loc[s["chosen"], ["replicates", "path_draw"]].values.tolist() == [[4, "t"]]
    assert s["rule_met"].all()
    s = coverage.setting_table(_settings({**base, (4, "t"): 0.89}))
    assert s.loc[s["chosen"], ["replicates", "path_draw"]].values.tolist() == [[16, "pick"]]
    low = {k: min(v, 0.85) for k, v in base.items()} | {(4, "normal"): 0.86}
    s = coverage.setting_table(_settings(low))
    assert s.loc[s["chosen"], ["replicates", "path_draw"]].values.tolist() == [[4, "normal"]]
    assert not s["rule_met"].any()


def test_run_study_on_tiny_traces(tiny: Path) -> None:
    rows = coverage.run_study({"v100": tiny}, ["v100"], [0.1], 1)
    assert set(rows["fold"]) == {1, 2}
    assert "zeus" not in set(rows["policy"])
    assert set(rows["policy"]) == set(coverage._policies()) - {"zeus"}
    assert set(zip(rows["replicates"], rows["path_draw"], strict=True)) == set(coverage.SETTINGS)
    assert (rows["ci_lo"] <= rows["ci_hi"]).all()
    assert rows["covered"].equals((rows["ci_lo"] <= rows["truth"]) & (rows["truth"] <= rows["ci_hi"]))
    seeds_only = rows[rows["replicates"] == 0]
    sixteen = rows[(rows["replicates"] == 16) & (rows["path_draw"] == "pick")]
    # every setting reads the same replays: one estimate per (pair, fold, policy)
    assert np.allclose(seeds_only["estimate"].to_numpy(), sixteen["estimate"].to_numpy())


def test_command_refuses_an_unknown_gpu_in_one_line(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "--traces",
        str(tiny),
        "--gpu",
        "h100",
        "--out",
        str(tmp_path / "c.csv"),
        "--worlds",
        str(tmp_path / "w.csv"),
    ]
    assert coverage.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "h100" in err[0] and err[0].startswith("coverage: error:")
    assert not (tmp_path / "c.csv").exists()
    argv = [
        "--traces",
        str(tiny),
        "--gpu",
        "v100",
        "--out",
        str(tmp_path / "c.txt"),
        "--worlds",
        str(tmp_path / "w.csv"),
    ]
    assert coverage.main(argv) == 2


def test_command_writes_both_tables_validated(tiny: Path, tmp_path: Path) -> None:
    from zeus_bench.store import validate

    out, worlds = tmp_path / "coverage.csv", tmp_path / "coverage-worlds.csv"
    argv = [
        "--traces",
        str(tiny),
        "--gpu",
        "v100",
        "--pairs",
        "1",
        "--out",
        str(out),
        "--worlds",
        str(worlds),
    ]
    assert coverage.main(argv) == 0
    settings = pd.read_csv(out)
    validate(settings, "policy_coverage", str(out))
    validate(pd.read_csv(worlds), "policy_coverage_worlds", str(worlds))
    assert len(settings) == len(coverage.SETTINGS) and settings["chosen"].sum() == 1
    assert set(pd.read_csv(worlds)["sigma"]) == set(coverage.SIGMAS)


def test_the_arena_tables_follow_the_protocols_path_draw() -> None:
    """The same replays: estimates equal, the ``t`` draw's intervals wider than ``pick``'s, ``pick`` the default."""
    from tests.helpers.sim_toy import toy_job
    from zeus_bench.studies.arena_protocol import ArenaJob, Protocol, run_arena
    from zeus_bench.studies.arena_stats import job_table, summary_table

    job = toy_job(
        targets={
            8: [np.nan, 9.0, 7.0, 8.0],
            16: [4.0, 6.0, 3.0, 5.0],
            32: [5.0, 4.0, 7.0, 6.0],
            64: [3.0, 5.0, 2.0, 6.0],
        }
    )
    jobs = [ArenaJob(job, 24)]
    tables = {}
    for draw in ("pick", "t", None):
        protocol = (
            Protocol(seeds=(1, 2, 3, 4), replicates=4)
            if draw is None
            else Protocol(seeds=(1, 2, 3, 4), replicates=4, path_draw=draw)
        )
        df, parts = job_table(jobs, run_arena(jobs, ["pl-only", "bs-only"], protocol), protocol)
        tables[draw] = (df.set_index("policy"), summary_table(df, parts).set_index("policy"))
    pick, t = tables["pick"][0], tables["t"][0]
    assert pick.equals(tables[None][0])
    assert np.array_equal(pick["regret_pct_mean"], t["regret_pct_mean"])
    width = lambda d: d["regret_pct_ci_hi"] - d["regret_pct_ci_lo"]  # noqa: E731
    assert (width(t) > width(pick)).all()
    ps, ts = tables["pick"][1], tables["t"][1]
    assert (
        (
            ts["regret_ratio_vs_zeus_ci_hi"] - ts["regret_ratio_vs_zeus_ci_lo"]
            > ps["regret_ratio_vs_zeus_ci_hi"] - ps["regret_ratio_vs_zeus_ci_lo"]
        )
        .loc[["pl-only", "bs-only"]]
        .all()
    )


def test_the_default_batch_sizes_paths_always_converge(tiny: Path) -> None:
    job = _whole(tiny)  # squad, b0 32: recorded paths (2, 3); max epochs 6
    i0 = job.bs_index(job.b0)
    wide = coverage.population(job, 3.0, 2000, np.random.default_rng(9))  # most draws beyond the maximum
    b0 = wide.target_epochs[i0]
    assert np.isfinite(b0).all() and (b0 <= job.max_epochs).all() and (b0 >= 1).all()
    others = np.concatenate([t for i, t in enumerate(wide.target_epochs) if i != i0])
    assert (others[np.isfinite(others)] > job.max_epochs).any()  # elsewhere a path beyond it never reaches


def test_the_arena_refuses_an_unknown_path_draw_before_replaying() -> None:
    from tests.helpers.sim_toy import toy_job
    from zeus_bench.studies.arena_protocol import ArenaJob, Protocol, run_arena

    replayed = []
    with pytest.raises(ConfigError, match="unknown path draw 'gauss'"):
        run_arena(
            [ArenaJob(toy_job(), 4)],
            ["pl-only"],
            Protocol(seeds=(1,), path_draw="gauss"),
            progress=replayed.append,
        )
    assert replayed == []  # refused before any replay
