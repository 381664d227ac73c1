"""The zeus-plus section's findings follow the data, and state only their own numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from analysis.report.findings import Finding
from analysis.report.findings import study as pf
from analysis.report.sections import study as study_section

NUMBER = re.compile(r"(?<![\w.'])[-+]?\d+(?:\.\d+)?(?![\dA-Za-wyz_])")


def _forms(v: float) -> set[str]:
    out = {f"{v:.1f}", f"{v:+.1f}", f"{v:g}", f"{v:.2f}", f"{v:.3f}", f"{v:.0f}"}
    if float(v).is_integer():
        out.add(str(int(v)))
    return out


def _own_numbers_only(f: Finding) -> None:
    allowed: set[str] = set()
    for v in f.numbers.values():
        allowed |= _forms(float(v))
    stray = [t for t in NUMBER.findall(f.sentence) if t not in allowed]
    assert not stray, (f.key, stray, f.sentence)


def comparison(plus_ratio: float, plus_regret: float) -> pd.DataFrame:
    rows = []
    for w, zr, zg in (("imagenet", 1.01, 6.0), ("squad", 0.95, 2.0)):
        for p, ratio, reg in (
            ("zeus", zr, zg),
            ("zeus-plus", plus_ratio if w == "imagenet" else 0.9, plus_regret),
        ):
            rows.append(
                {
                    "gpu": "v100",
                    "workload": w,
                    "policy": p,
                    "cost_ratio_vs_baseline_cum_mean": ratio,
                    "cost_ratio_vs_baseline_cum_std": 0.01,
                    "cost_ratio_vs_max_batch_cum_mean": ratio * 1.1,
                    "cost_ratio_vs_max_batch_cum_std": 0.01,
                    "regret_vs_oracle_cum_pct_mean": reg,
                    "regret_vs_oracle_cum_pct_std": 0.5,
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("ratio", "verdict"),
    [(1.0, "meets the safety goal on all 2 jobs"), (1.05, "misses the safety goal on 1 of 2 jobs")],
)
def test_safety_follows_the_data(ratio: float, verdict: str) -> None:
    (f,) = pf.safety(comparison(ratio, 1.0))
    assert verdict in f.sentence
    _own_numbers_only(f)


@pytest.mark.parametrize(("regret", "verdict"), [(2.0, "it meets"), (3.0, "it misses")])
def test_regret_goal_follows_the_data(regret: float, verdict: str) -> None:
    (f,) = pf.regret(comparison(1.0, regret))  # Zeus's mean is 4 %: 2 % is 0.5 x, 3 % 0.75 x
    assert verdict in f.sentence and f.numbers["ratio"] == pytest.approx(regret / 4.0)
    _own_numbers_only(f)
    for g in pf.max_batch(comparison(1.0, regret)):
        _own_numbers_only(g)


def test_drift_and_warm_start_findings() -> None:
    drift = pd.DataFrame(
        {
            "gpu": "v100",
            "workload": ["a", "a", "b", "b"],
            "scenario": "step",
            "epoch_factor": 2.0,
            "policy": ["zeus-plus", "zeus-window10"] * 2,
            "recovery_recurrences": [3.0, 9.0, float("nan"), 4.0],
        }
    )
    (f,) = pf.drift(drift)
    assert "sooner than windowed Zeus on 1 of 2 jobs, later on 1" in f.sentence
    assert f.numbers["plus_never"] == 1
    _own_numbers_only(f)
    warm = pd.DataFrame(
        {
            "prior_gpu": "v100",
            "gpu": "a40",
            "workload": ["a", "b"],
            "regret_first20_pct_cold": [20.0, 10.0],
            "regret_first20_pct_warm": [10.0, 5.0],
            "cost_last20_vs_oracle_cold": [1.0, 1.0],
            "cost_last20_vs_oracle_warm": [1.0, 1.02],
        }
    )
    (w,) = pf.warm_start(warm)
    assert w.numbers["cut_pct"] == pytest.approx(50.0) and "it meets" in w.sentence
    _own_numbers_only(w)


def test_section_renders_from_the_study_tables(tmp_path: Path) -> None:
    comparison(1.0, 2.0).to_csv(tmp_path / "comparison.csv", index=False)
    pd.DataFrame(
        {
            "gpu": "v100",
            "workload": "a",
            "scenario": "step",
            "epoch_factor": 1.5,
            "policy": ["zeus-plus", "zeus-window10"],
            "recovery_recurrences": [2.0, 5.0],
        }
    ).to_csv(tmp_path / "drift.csv", index=False)
    pd.DataFrame(
        {
            "prior_gpu": ["v100"],
            "gpu": ["a40"],
            "workload": ["a"],
            "regret_first20_pct_cold": [20.0],
            "regret_first20_pct_warm": [12.0],
            "cost_last20_vs_oracle_cold": [1.0],
            "cost_last20_vs_oracle_warm": [1.0],
        }
    ).to_csv(tmp_path / "warmstart.csv", index=False)
    text = study_section.render_section(tmp_path, [1, 2, 3])
    assert text.startswith("## zeus-plus")
    assert "| v100 (simulated) | imagenet | 1.010 | 1.000 |" in text
    assert "seeds 1-3" in text and "| v100 -> a40 | 12.0 / 20.0 | 40 % (meets) | +0.0 % |" in text
    assert "| v100 (simulated) | on all 2 jobs |" in text  # the per-GPU findings as a table, not sentences
    assert "| step (epochs of the optimum x1.5) | 1 / 0 of 1 | 2 / 5 | 0 / 0 |" in text


def test_warm_start_per_job_names_hurt_jobs_and_the_range_leaving_one_out() -> None:
    from analysis.report.findings.study import warm_start_per_job

    rows = []
    for w, diff, lo, hi, without in (
        ("a", -5.0, -7.0, -3.0, 10.0),  # significantly better
        ("b", 0.4, 0.2, 0.6, 45.0),  # significantly worse
        ("c", -1.0, -3.0, 1.0, 40.0),  # neither
    ):
        rows.append(
            {
                "prior_gpu": "v100",
                "gpu": "h200",
                "workload": w,
                "seeds": 10,
                "regret_first20_diff_pct_mean": diff,
                "regret_first20_diff_pct_ci_low": lo,
                "regret_first20_diff_pct_ci_high": hi,
                "pair_cut_pct": 37.0,
                "pair_cut_without_pct": without,
            }
        )
    (f,) = warm_start_per_job(pd.DataFrame(rows))
    assert f.numbers["better"] == 1 and f.numbers["worse"] == 1
    assert "worse on b" in f.sentence
    assert "from 10.0 % (without a) to 45.0 % (without b)" in f.sentence
