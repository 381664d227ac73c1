"""The arena's report section and figure: sentences follow the tables, and flip where the data flips."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.plots.arena import plot_arena
from analysis.report.findings import arena as af
from analysis.report.findings.arena_horizon import unknown_regret
from analysis.report.sections import arena as arena_section
from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.replay import JobModel
from zeus_bench.store import write_table
from zeus_bench.studies.arena_protocol import ArenaJob, Protocol, replayed_total
from zeus_bench.studies.arena_stats import job_table, summary_table
from zeus_bench.studies.recurrences import references as job_refs
from zeus_bench.traces.jobs import JobTrace

SEEDS = tuple(range(1, 21))


def _job(gpu: str, name: str) -> JobTrace:
    import dataclasses

    job = toy_job(targets={8: [np.nan], 16: [4.0], 32: [5.0], 64: [3.0]})
    return dataclasses.replace(job, gpu=gpu, workload=dataclasses.replace(job.workload, id=name))


def _tables(plus_factor: float, plus_spread: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two GPUs x two jobs: Zeus 10-12 % above the oracle, zeus-plus ``plus_factor`` x Zeus's excess, ucb1 50 %."""
    jobs = [_job(g, w) for g in ("ga", "gb") for w in ("j1", "j2")]
    totals = {}
    for job in jobs:
        refs = job_refs(JobModel(job, Cost(0.5)))
        n = 16
        oracle = n * refs.oracle
        zeus = oracle * (1.10 + np.linspace(0, 0.02, len(SEEDS)))
        plus = (
            oracle
            + plus_factor * (zeus - oracle)
            + plus_spread * n * refs.baseline * np.linspace(0, 1, len(SEEDS))
        )
        other = oracle * 1.5 * np.ones(len(SEEDS))
        for p, v in (("zeus", zeus), ("zeus-plus", plus), ("ucb1", other)):
            totals[(job.gpu, job.workload.id, p)] = (v, np.zeros(len(SEEDS)))
    df, regrets = job_table(jobs, totals, Protocol(SEEDS))
    return df, summary_table(df, regrets)


def test_regret_goal_met_and_missed() -> None:
    jobs, summary = _tables(0.4)
    f = af.regret(summary, jobs)
    assert [x.numbers["ratio"] for x in f] == pytest.approx([0.4, 0.4])
    assert all("meets the 0.6 x goal with 95 % confidence" in x.sentence for x in f)
    assert all("significantly worse on 0 (none)" in x.sentence for x in f)
    jobs, summary = _tables(1.2)
    f = af.regret(summary, jobs)
    assert all("misses the 0.6 x goal" in x.sentence for x in f)
    assert all("significantly worse on 2 (j1, j2)" in x.sentence for x in f)
    assert all(x.numbers["jobs_ratio_met"] == 0 for x in f)


def test_rank_sentence_flips() -> None:
    jobs, summary = _tables(0.4)
    assert all("has the least mean regret" in x.sentence for x in af.rank(summary, jobs))
    jobs, summary = _tables(8.0)  # zeus-plus's regret now ~88 %: Zeus (~11 %) wins, ucb1 (50 %) too
    r = af.rank(summary, jobs)
    for x, g in zip(r, ("ga", "gb"), strict=True):
        assert x.sentence.startswith(f"On {g} (horizon known), zeus has less mean regret than zeus-plus")
        assert x.numbers["rank"] == 3


def test_safety_every_job_and_the_bound() -> None:
    jobs, _ = _tables(0.0)
    f = af.safety(jobs)
    assert all("meets the safety goal on all 2 jobs" in x.sentence for x in f)
    assert all(
        "over 20 seeds of its cumulative cost over the baseline's on the same seed" in x.sentence for x in f
    )
    jobs, _ = _tables(0.0, plus_spread=0.5)  # later seeds far above the baseline
    f = af.safety(jobs)
    assert all("misses the safety goal on 2 of 2 jobs" in x.sentence for x in f)
    assert all("The bound on" in x.sentence for x in f)
    assert f[0].numbers["worst_allowance_recurrences"] == pytest.approx(0.02 * 16)
    lo, hi = f[0].numbers["p95_max_ci_lo"], f[0].numbers["p95_max_ci_hi"]
    assert lo <= f[0].numbers["p95_max"] <= hi and f"[{lo:.3f}, {hi:.3f}]" in f[0].sentence
    # The probe floor: b0 (1.0) + one epoch (200 J) over 16 recurrences of a 1000 J baseline.
    assert jobs["probe_floor_p95"].tolist() == pytest.approx([1.0125] * len(jobs))
    assert all("On j1, j2 the probe floor is within 1.02 (1.012, 1.012)" in x.sentence for x in f)
    assert all(x.numbers["jobs_over_within_probe_floor"] == 2 for x in f)
    jobs.loc[jobs["workload"] == "j1", "probe_floor_p95"] = 1.03  # one epoch dearer than the allowance
    f = af.safety(jobs)
    assert all(
        "On j1 b0 plus one epoch of the cheapest other batch size is already above" in x.sentence for x in f
    )
    assert all("On j2 the probe floor is within" in x.sentence for x in f)
    assert [x.numbers["jobs_over_with_probe_floor_over"] for x in f] == [1, 1]


@pytest.mark.parametrize(("factor", "meets"), [(1.015, True), (1.025, False)])
def test_safety_flips_around_1_02_of_the_baseline_on_the_same_seed(factor: float, meets: bool) -> None:
    """b0's paths differ (2-9 epochs): against its expected cost the baseline alone is above 1.02;
    zeus-plus at 1.015 x the baseline's cost on every seed meets the goal, at 1.025 x it misses."""
    import dataclasses

    base_job = toy_job(targets={8: [5.0, 6.0], 16: [2.0, 6.0, 3.0, 9.0], 32: [5.0, 7.0, 6.0, 8.0]}, b0=16)
    job = dataclasses.replace(base_job, gpu="ga", workload=dataclasses.replace(base_job.workload, id="j1"))
    protocol = Protocol(SEEDS)
    n = 12
    base = replayed_total(JobModel(job, Cost(protocol.eta)), "baseline", protocol, n)
    totals = {
        ("ga", "j1", p): (v, np.zeros(len(SEEDS)))
        for p, v in (("zeus", 1.1 * base), (af.PLUS, factor * base))
    }
    jobs, _ = job_table([ArenaJob(job, n)], totals, protocol)
    (f,) = af.safety(jobs)
    assert f.numbers["p95_max"] == pytest.approx(factor)
    assert f.numbers["floor_max"] > 1.02  # the expected-cost reading: the baseline itself above the goal
    assert ("meets the safety goal on all 1 jobs" in f.sentence) == meets
    assert ("misses the safety goal on 1 of 1 jobs (j1)" in f.sentence) == (not meets)
    assert f"the baseline itself reaches {f.numbers['floor_max']:.3f}" in f.sentence


def test_section_and_figure_from_written_tables(tmp_path: Path) -> None:
    jobs, summary = _tables(0.4)
    for folder in ("known", "unknown"):
        write_table(jobs, tmp_path / folder / "arena_jobs.parquet", "arena_jobs")
        write_table(summary, tmp_path / folder / "arena_summary.parquet", "arena_summary")
    text = arena_section.render_section(tmp_path / "known", tmp_path / "unknown")
    assert "| ga (simulated) | 1 | zeus-plus | 1 |" in text and "horizon unknown" in text.lower()
    fig = plot_arena(summary, jobs)
    assert len([a for a in fig.axes if a.get_visible()]) == 2


def test_section_states_the_folds_agreement_and_the_coverage_studys_pick(tmp_path: Path) -> None:
    jobs, summary = _tables(0.4)
    both = pd.concat([summary, summary.assign(fold=2, half="tune")], ignore_index=True)
    for folder in ("known", "unknown"):
        write_table(jobs, tmp_path / folder / "arena_jobs.parquet", "arena_jobs")
        write_table(both, tmp_path / folder / "arena_summary.parquet", "arena_summary")
    coverage = Path(__file__).resolve().parents[2] / "results" / "policy" / "coverage.csv"
    text = arena_section.render_section(tmp_path / "known", tmp_path / "unknown", None, coverage)
    chosen = pd.read_csv(coverage).query("chosen").iloc[0]
    assert "disjoint on 0 of " in text and "with the horizon unknown" in text
    assert f"({chosen['replicates']} replicate traces, path draw '{chosen['path_draw']}')" in text
    assert "Coverage check" in text and "chosen by the coverage study" in text
    assert "chosen by the coverage study" not in arena_section.render_section(tmp_path / "known", None)
    bad = tmp_path / "coverage.csv"
    pd.read_csv(coverage).drop(columns="chosen").to_csv(bad, index=False)
    with pytest.raises(Exception, match="chosen"):
        arena_section.render_section(tmp_path / "known", tmp_path / "unknown", None, bad)


def test_second_fold_from_the_tuning_tables() -> None:
    def table(chosen: int, ratios: list[float]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "margin": [0.2, 0.4],
                "up_first": [True, True],
                "ga_regret_ratio": ratios,
                "chosen": [i == chosen for i in (0, 1)],
            }
        )

    tune = table(0, [0.5, 0.9])
    f = af.folds(tune, table(1, [0.45, 0.4]))  # the judge half picks 0.4, which is 0.9 x on the tune half
    assert (
        f[0].numbers["ratio"] == pytest.approx(0.9)
        and "misses" in f[0].sentence
        and "(not the" in f[0].sentence
    )
    f = af.folds(tune, table(0, [0.4, 0.45]))  # the same pick: 0.5 x on the tune half
    assert (
        f[0].numbers["ratio"] == pytest.approx(0.5)
        and "meets" in f[0].sentence
        and "the same as" in f[0].sentence
    )


def test_unknown_horizon_regret_and_rank_flip_with_the_tables() -> None:
    _, known = _tables(0.4)
    _, unknown = _tables(0.8)  # untold, zeus-plus explores less: twice its excess, still ahead of Zeus
    f = unknown_regret(unknown, known)
    assert [x.numbers["ratio"] for x in f] == pytest.approx([0.8, 0.8])
    assert [x.numbers["known_ratio"] for x in f] == pytest.approx([0.4, 0.4])
    assert all("rank 1 of 3 learning policies (the least of them)" in x.sentence for x in f)
    assert all("costs it" in x.sentence and "points of regret" in x.sentence for x in f)
    assert all(x.numbers["regret"] - x.numbers["known_regret"] > 0 for x in f)
    _, far = _tables(6.0)  # about 66 % regret: behind Zeus (~11 %) and ucb1 (50 %)
    f = unknown_regret(far, known)
    assert all("rank 3 of 3" in x.sentence and "the least is zeus's" in x.sentence for x in f)
    f = unknown_regret(known, known)
    assert all("costs it no regret here" in x.sentence for x in f)


def test_unknown_horizon_regret_says_what_the_anytime_floor_leaves_of_the_goal() -> None:
    """The toy jobs' floor: 64 (600 J) costs 30 recurrences of 2 % of a 1000 J baseline, more than the 16 run."""
    _, known = _tables(0.4)
    _, unknown = _tables(6.0)
    assert unknown["anytime_floor_regret_pct"].tolist() == pytest.approx([100 * 400 / 600] * len(unknown))
    f = unknown_regret(unknown, known)
    assert all(
        "the 0.6 x goal is out of reach of every policy that keeps this guarantee" in x.sentence for x in f
    )
    assert all(x.numbers["floor_ratio_lo"] > 0.6 for x in f)
    assert [x.numbers["over_floor"] for x in f] == pytest.approx(
        [x.numbers["regret"] / (40000 / 600) for x in f]
    )
    low = unknown.assign(  # a floor far below Zeus's regret: the guarantee leaves room
        anytime_floor_regret_pct=1.0, anytime_floor_ratio_vs_zeus=0.1,
        anytime_floor_ratio_vs_zeus_ci_lo=0.09, anytime_floor_ratio_vs_zeus_ci_hi=0.11,
    )  # fmt: skip
    f = unknown_regret(low, known)
    assert all("the guarantee itself leaves room for the 0.6 x goal" in x.sentence for x in f)
    assert all("zeus-plus is at" in x.sentence and "x the floor" in x.sentence for x in f)
    edge = low.assign(anytime_floor_ratio_vs_zeus=0.6, anytime_floor_ratio_vs_zeus_ci_hi=0.7)
    f = unknown_regret(edge, known)
    assert all("within the interval of the floor" in x.sentence for x in f)
    old = unknown.assign(anytime_floor_regret_pct=math.nan)  # a version-4 table: no floor, no sentence
    assert all("floor" not in x.sentence and "floor" not in x.numbers for x in unknown_regret(old, known))


def test_unknown_horizon_winner_safety_and_the_safe_rank_flip() -> None:
    """Where another policy has less regret the finding says whether it kept the safety goal, and
    ranks zeus-plus among the policies that did (on every job)."""
    _, known = _tables(0.4)
    _, far = _tables(6.0)  # Zeus (~11 %) least, within 1.02; zeus-plus 66 %, its p95 above 1.02
    f = unknown_regret(far, known)
    assert all("zeus is within 1.02 x the baseline on every job too" in x.sentence for x in f)
    assert all("zeus-plus is not within 1.02 on every job here" in x.sentence for x in f)
    assert all(math.isnan(x.numbers["safe_rank"]) and x.numbers["safe_policies"] == 2 for x in f)
    unsafe_zeus = far.copy()
    is_zeus, is_plus = unsafe_zeus["policy"] == "zeus", unsafe_zeus["policy"] == "zeus-plus"
    unsafe_zeus.loc[is_zeus, ["jobs_p95_over_safe", "cost_ratio_vs_baseline_p95_max"]] = [2, 1.05]
    unsafe_zeus.loc[is_plus, "jobs_p95_over_safe"] = 0
    f = unknown_regret(unsafe_zeus, known)
    assert all(
        "zeus exceeds 1.02 x the baseline (95th percentile, same seed) on 2 job(s), up to 1.050" in x.sentence
        for x in f
    )
    assert all(
        "Among the 2 learning policies within 1.02 on every job, zeus-plus ranks 2 (the least is ucb1's, 50.00 %)"
        in x.sentence
        for x in f
    )
    unsafe_zeus.loc[unsafe_zeus["policy"] == "ucb1", "jobs_p95_over_safe"] = 1
    f = unknown_regret(unsafe_zeus, known)
    assert all(
        "Among the 1 learning policies within 1.02 on every job, zeus-plus ranks 1 (the least of them)"
        in x.sentence
        for x in f
    )
    assert [x.numbers["safe_rank"] for x in f] == [1.0, 1.0]


def _fold_rows(gap: float) -> pd.DataFrame:
    """Split 1's two folds of 10 pairs: one pair's intervals ``gap`` apart (disjoint when positive)."""
    rows = []
    for i in range(10):
        for fold in (1, 2):
            lo = 1.0 + (gap + 0.2 if i == 0 and fold == 2 else 0.0)
            rows.append({"gpu": "v100", "policy": f"p{i}", "fold": fold, "splits": 1,
                         "regret_ratio_vs_zeus_ci_lo": lo, "regret_ratio_vs_zeus_ci_hi": lo + 0.2})  # fmt: skip
    return pd.DataFrame(rows)


def test_fold_agreement_finding_counts_and_flips_with_the_data() -> None:
    from analysis.report.findings.arena import fold_agreement_check

    apart = fold_agreement_check(_fold_rows(0.1), _fold_rows(-0.1))
    assert apart.numbers["disjoint_known"] == 1 and apart.numbers["pairs_known"] == 10
    assert apart.numbers["disjoint_unknown"] == 0
    assert "1 of 10 with the horizon known (v100 p0)" in apart.sentence
    assert "(goal: at most 10%: met)" in apart.sentence
    two = _fold_rows(0.1)
    two.loc[
        (two["policy"] == "p1") & (two["fold"] == 2),
        ["regret_ratio_vs_zeus_ci_lo", "regret_ratio_vs_zeus_ci_hi"],
    ] = (5.0, 6.0)
    missed = fold_agreement_check(two, None)
    assert (
        missed.numbers["disjoint_known"] == 2
        and "not met" in missed.sentence
        and "unknown" not in missed.sentence
    )
    one_fold = _fold_rows(0.1)
    assert fold_agreement_check(one_fold[one_fold["fold"] == 1], None).sentence == ""


def test_fold_agreement_finding_names_the_coverage_studys_pick() -> None:
    from analysis.report.findings.arena import fold_agreement_check

    settings = pd.DataFrame(
        [{"replicates": 4, "path_draw": "pick", "worlds": 6, "coverage_mean": 0.8, "coverage_min": 0.7, "chosen": False,
          "rule_met": True},
         {"replicates": 16, "path_draw": "t", "worlds": 6, "coverage_mean": 0.95, "coverage_min": 0.91, "chosen": True,
          "rule_met": True}]
    )  # fmt: skip
    f = fold_agreement_check(_fold_rows(-0.1), None, settings)
    assert (
        "(16 replicate traces, path draw 't')" in f.sentence
        and "91% of the time in the worst of 6 worlds, 95% on average" in f.sentence
    )
    assert f.numbers["replicates"] == 16 and f.numbers["coverage_min"] == 0.91
    settings["rule_met"] = False
    assert (
        "no setting reached the study's 90 % in every world"
        in fold_agreement_check(_fold_rows(-0.1), None, settings).sentence
    )


def test_report_refuses_a_missing_or_malformed_coverage_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from analysis.report.cli import main

    bad = tmp_path / "coverage.csv"
    bad.write_text("replicates,path_draw\n4,t\n")
    for path, said in ((tmp_path / "missing.csv", "missing.csv"), (bad, "missing column(s) worlds")):
        with pytest.raises(SystemExit) as exit_:
            main(["--out", str(tmp_path / "r.md"), "--arena-coverage", str(path)])
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith("python -m analysis.report: error: argument --arena-coverage:") and said in err
    assert not (tmp_path / "r.md").exists()
