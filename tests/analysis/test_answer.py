"""The report's first screen: each answer computed, and flipping where the tables flip."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest

from analysis.report.findings.answer import (
    best_policy,
    paper_lines,
    power_limit_only,
    recommendation,
    scope,
    validation_lines,
    zeus_savings,
)
from analysis.report.sections.answer import answer_first
from tests.studies.test_arena import two_gpu_traces
from zeus_bench.cli.main import main


def _summary(ratio_hi: float, unsafe: int, pooled: bool = True) -> pd.DataFrame:
    rows = []
    for gpu in ("v100", "h200"):
        for policy, rank, ratio in (("zeus", 2, 1.0), ("zeus-plus", 1, 0.5)):
            rows.append(
                {
                    "gpu": gpu, "policy": policy, "fold": 0 if pooled else 1, "splits": 5, "jobs": 6, "rank": rank,
                    "regret_pct_mean": 10 * ratio, "regret_pct_ci_lo": 8 * ratio, "regret_pct_ci_hi": 12 * ratio,
                    "regret_ratio_vs_zeus": ratio, "regret_ratio_vs_zeus_ci_lo": ratio * 0.8,
                    "regret_ratio_vs_zeus_ci_hi": 1.0 if policy == "zeus" else ratio_hi,
                    "prob_better_than_zeus_mean": 0.5 if policy == "zeus" else 0.8,
                    "jobs_p95_over_safe": 0 if policy == "zeus" else unsafe,
                    "cost_ratio_vs_baseline_mean": 0.7, "cost_ratio_vs_baseline_ci_lo": 0.65,
                    "cost_ratio_vs_baseline_ci_hi": 0.75, "cost_ratio_vs_max_batch_mean": 0.9,
                    "cost_ratio_vs_max_batch_ci_lo": 0.85, "cost_ratio_vs_max_batch_ci_hi": 0.95,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_zeus_savings_per_gpu_with_intervals_and_labels() -> None:
    f = zeus_savings(_summary(0.9, 0), {"h200": "projected"})
    assert [x.key for x in f] == ["answer.savings.v100", "answer.savings.h200"]
    assert f[0].numbers["b0_pct"] == pytest.approx(30.0) and f[0].numbers["max_batch_pct"] == pytest.approx(
        10.0
    )
    assert "30.0 [25.0, 35.0] % against b0" in f[0].sentence and "(simulated)" in f[0].sentence
    assert "(projected)" in f[1].sentence


def test_best_policy_beats_zeus_only_when_the_interval_says_so() -> None:
    beats = best_policy(_summary(0.9, 0), "unknown", {})
    assert all("beats Zeus" in x.sentence and "horizon unknown" in x.sentence for x in beats)
    assert all("meets the safety goal" in x.sentence for x in beats)
    tie = best_policy(_summary(1.1, 2), "unknown", {})
    assert all("no policy beats Zeus with 95 % confidence" in x.sentence for x in tie)
    assert all("misses on 2 of 6 jobs" in x.sentence for x in tie) and tie[0].numbers["beats"] == 0.0
    assert set(scope(_summary(0.9, 0, pooled=False))["fold"]) == {1}  # no pooled rows: fold 1


def test_a_policy_is_recommended_over_zeus_only_if_it_passes_on_every_gpu() -> None:
    """Recommended: beats Zeus with 95 % confidence and meets the safety goal on each GPU; one GPU
    where it misses the safety goal (or where the interval reaches 1) and there is none."""
    ok = recommendation(_summary(0.9, 0), "unknown", {"h200": "projected"})
    assert ok.numbers == {"recommended": 1.0, "gpus": 2.0, "held_out_kept": 2.0}
    assert "horizon unknown: **zeus-plus**" in ok.sentence and "h200 (projected)" in ok.sentence
    assert "left out in 2 of 2" in ok.sentence
    one_unsafe = _summary(0.9, 0)
    one_unsafe.loc[
        (one_unsafe["gpu"] == "h200") & (one_unsafe["policy"] == "zeus-plus"), "jobs_p95_over_safe"
    ] = 3
    none = recommendation(one_unsafe, "unknown", {})
    assert none.numbers["recommended"] == 0.0 and none.numbers["held_out_kept"] == 0.0
    assert none.numbers["nearest_gpus_passed"] == 1.0
    assert "**none**" in none.sentence and "Keep Zeus" in none.sentence
    assert "nearest: zeus-plus (on h200 it misses the safety goal on 3 of 6 jobs)" in none.sentence
    tie = recommendation(_summary(1.1, 0), "known", {})
    assert "horizon known: **none**" in tie.sentence
    assert "on v100 it does not beat Zeus with 95 % confidence" in tie.sentence
    assert tie.numbers["nearest_gpus_passed"] == 0.0


def test_paper_lines_reproduce_or_differ() -> None:
    refs = pd.DataFrame(
        {
            "gpu": ["all", "v100", "v100"], "metric": ["energy_savings_max", "least_energy_savings_min",
                                                        "power_limit_only_energy_savings_max"],
            "value_pct": [75.8, 23.8, 31.5], "baseline": ["max-batch", "b0", "b0"], "source": ["paper"] * 3,
        }
    )  # fmt: skip
    cands = pd.DataFrame(
        {"replay": ["single-job recurrences"] * 2, "scope": ["V100"] * 2, "baseline": ["b0", "max-batch"],
         "recurrences": ["last10", "cum"], "energy_min_pct": [15.0, 1.0], "energy_max_pct": [74.1, 71.6],
         "time_max_pct": [60.0, 40.0]}
    )  # fmt: skip
    pot = pd.DataFrame(
        {"gpu": ["v100", "v100"], "workload": ["a", "b"], "b0": [32, 64], "baseline_eta_j": [100.0, 200.0],
         "min_energy_saving_pct": [23.84, 74.7]}
    )  # fmt: skip
    configs = pd.DataFrame(
        {"gpu": ["v100"] * 4, "workload": ["a", "a", "b", "b"], "batch_size": [32, 32, 64, 128],
         "eta_j": [97.0, 100.0, 137.0, 50.0]}
    )  # fmt: skip
    assert power_limit_only(pot, configs).round(2).tolist() == [3.0, 31.5]
    f = {x.key: x for x in paper_lines(refs, cands, pot, configs)}
    assert "differs by -1.7 points" in f["answer.paper.energy_savings_max"].sentence
    assert "against b0, V100" in f["answer.paper.energy_savings_max"].sentence
    assert "reproduces" in f["answer.paper.least_energy_savings_min"].sentence
    assert "reproduces" in f["answer.paper.power_limit_only_energy_savings_max"].sentence
    configs.loc[2, "eta_j"] = 150.0  # b0 of job b at 0.75 of its baseline: the limit alone saves 25 %
    assert "differs" in paper_lines(refs, cands, pot, configs)[2].sentence


class _Report:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.parts: list[str] = []
        self.findings: list = []
        self.references = pd.DataFrame(columns=["gpu", "metric", "value_pct", "baseline", "source"])
        self.summary = None
        self.potential_rows = None
        self.configs = None

    def add(self, *lines: str) -> None:
        self.parts.extend(lines)


def test_the_first_screen_fits_in_40_lines(tmp_path: Path) -> None:
    traces = two_gpu_traces(tmp_path / "traces")
    folders = {}
    for h in ("known", "unknown"):
        folders[h] = tmp_path / h
        argv = f"arena --traces {traces} --gpu v100,a40 --policies zeus,zeus-plus --seeds 1-2 --horizon {h}"
        assert main([*argv.split(), "--fold", "both", "--out", str(folders[h])]) == 0
    rep = _Report(argparse.Namespace(arena=folders["known"], arena_unknown=folders["unknown"]))
    answer_first(rep)
    text = "\n".join(rep.parts)
    assert 0 < len(rep.parts) <= 40 - 2  # the title line and its blank come first
    assert text.index("horizon unknown") < text.index("horizon known")  # the realistic case first
    assert all(len(line) <= 400 for line in rep.parts)
    # savings, best unknown (+ the recommendation), best known: one line per GPU
    assert len(rep.findings) == 2 + 2 + 1 + 2
    assert [f.key for f in rep.findings].index("answer.recommend.unknown") == 4


def test_the_profile_and_recurrence_figures_draw(tmp_path: Path) -> None:
    from analysis.figures import FIGURES
    from analysis.figures.studies import arena_profile, arena_recurrences

    traces = two_gpu_traces(tmp_path / "traces")
    base = f"arena --traces {traces} --gpu v100 --policies zeus,zeus-plus,pl-only --seeds 1-2".split()
    assert main([*base, "--horizon", "unknown", "--replicates", "2", "--out", str(tmp_path / "u")]) == 0
    files = []
    for n in (10, 20):
        out = tmp_path / f"n{n}"
        assert main([*base, "--recurrences", str(n), "--out", str(out)]) == 0
        files += sorted(out.glob("*.parquet"))
    fig = arena_profile(argparse.Namespace(arena_unknown=sorted((tmp_path / "u").glob("*.parquet"))))
    ax = fig.axes[0]
    assert len(ax.get_lines()) >= 3 and "v100" in ax.get_title()  # a curve per policy (and the 1.02 line)
    fig = arena_recurrences(argparse.Namespace(recurrences=files))
    xs = {tuple(line.get_xdata()) for a in fig.axes for line in a.get_lines() if len(line.get_xdata()) == 2}
    assert (10, 20) in xs
    assert {"policy-profile", "policy-recurrences"} <= set(FIGURES)


def test_long_prose_lines_are_broken_between_sentences() -> None:
    from analysis.report.text import wrap_long_lines

    sentence = "Zeus saves " + "a lot " * 30 + "of energy."
    para = " ".join([sentence] * 5)
    table = "| " + " | ".join(["x" * 50] * 10) + " |"
    out = wrap_long_lines("\n".join([para, "- " + para, table])).split("\n")
    assert all(len(line) <= 400 for line in out if not line.startswith("|"))
    assert " ".join(line.strip() for line in out[: len(out) // 2]).startswith(sentence)
    assert any(line.startswith("  Zeus saves") for line in out)  # a bullet's continuation stays in it
    assert out[-1] == table  # tables are left whole
    assert wrap_long_lines(para, limit=len(para)) == para


def test_the_paper_map_names_registered_figures_only() -> None:
    import re

    from analysis.figures import FIGURES
    from analysis.report.sections.paper_map import ROWS

    named = {n for _, here, _ in ROWS for n in re.findall(r"`([\w-]+)`", here) if here.startswith("figure")}
    assert named and named <= set(FIGURES)
    assert all(how for _, here, how in ROWS if here == "none")  # each 'none' says why


def _validation(
    diff: float, inside: float, covers: float, repeats: bool, early: float | None
) -> pd.DataFrame:
    values = {"recurrences": 30.0, "percentile_at_N": 100.0 if diff > 0 else 0.0, "in_band_at_N": inside,
              "diff_from_median_pct": diff, "noise_covers_at_N": covers}  # fmt: skip
    if repeats:
        values |= {"repeat_runs": 2.0, "measured_runs_spread_pct": 5.3}
    if early is not None:
        values |= {"early_stop_share_of_gap": early, "time_power_share_of_gap": 0.45}
    return pd.DataFrame(
        {
            "gpu": "h200",
            "workload": "teacher-student",
            "finding": list(values),
            "value": list(values.values()),
            "text": "",
        }
    )


def test_validation_line_flips_with_the_findings():
    path = "results/validation/h200/findings.parquet"
    (above,) = validation_lines({path: _validation(26.4, 0.0, 0.0, True, 0.29)})
    assert above.key == "answer.validation.h200"
    s = above.sentence
    assert "26.4 % above the simulated median" in s and "outside the simulated 95 % band" in s
    assert (
        "does not cover" in s
        and "3 measured runs spread by 5.3 %" in s
        and "early stop (one epoch after the replay's) about 29 %" in s
    )
    assert "on the same tries, make 45 % of the gap" in s
    assert "N = 30" in s and "`results/validation/h200/report.md`" in s
    (below,) = validation_lines({path: _validation(-3.0, 1.0, 1.0, False, None)})
    s = below.sentence
    assert "3.0 % below" in s and "inside the simulated 95 % band" in s and "the band covers it" in s
    assert "measured runs" not in s and "early stop" not in s
