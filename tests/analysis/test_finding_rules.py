"""The headline's attribution of jobs and the warm-start finding's signs (issue 36: a rule told from its slip).

Three jobs whose least and largest energy savings and largest time saving are each another job's,
so that a number attributed to the wrong job shows; a warm start that helps in the first 20
recurrences but costs more in the steady state (signs opposite), and a cut at exactly the goal.
"""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.report.findings import headline
from analysis.report.findings import study as study_findings


def _summary() -> pd.DataFrame:
    # against max-batch, last 10: energy a 30 %, b 70 %, c 50 %; time a 25 %, b 20 %, c 40 %.
    rows = []
    for workload, energy, time in (("a", 30.0, 25.0), ("b", 70.0, 20.0), ("c", 50.0, 40.0)):
        row = {"gpu": "v100", "workload": workload, "policy": "zeus"}
        for ref in ("baseline", "max_batch"):
            for recs in ("cum", "last10"):
                real = (ref, recs) == ("max_batch", "last10")
                row[f"energy_savings_vs_{ref}_{recs}_pct_mean"] = energy if real else 1.0
                row[f"time_savings_vs_{ref}_{recs}_pct_mean"] = time if real else 1.0
        rows.append(row)
    rows.append({**rows[1], "policy": "zeus-plus", "energy_savings_vs_max_batch_last10_pct_mean": 99.0})
    return pd.DataFrame(rows)


def test_each_number_of_the_headline_names_its_own_job() -> None:
    cands = headline.candidates(_summary(), targets={"energy_savings_min": 30.0, "energy_savings_max": 75.0,
                                                      "time_savings_max": 39.0})  # fmt: skip
    (r,) = cands[(cands["baseline"] == "max-batch") & (cands["recurrences"] == "last10")].itertuples()
    assert (r.energy_min_pct, r.energy_min_job) == (30.0, "a (V100)")
    assert (r.energy_max_pct, r.energy_max_job) == (70.0, "b (V100)")  # zeus-plus's 99 % is not Zeus's
    assert (r.time_max_pct, r.time_max_job) == (40.0, "c (V100)")
    assert r.jobs == 3
    assert r.deviation_pt == pytest.approx(5.0)  # the farthest of |30-30|, |70-75|, |40-39|: below, not above


def _warm(
    cold: list[float], warm: list[float], steady_cold: list[float], steady_warm: list[float]
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prior_gpu": "v100",
            "gpu": "a40",
            "workload": [f"w{i}" for i in range(len(cold))],
            "regret_first20_pct_cold": cold,
            "regret_first20_pct_warm": warm,
            "cost_last20_vs_oracle_cold": steady_cold,
            "cost_last20_vs_oracle_warm": steady_warm,
        }
    )


def test_the_warm_starts_cut_and_steady_change_have_their_own_signs() -> None:
    # Cold regret 20 and 40 (mean 30), warm 6 and 12 (mean 9): a 70 % cut. Steady state: warm
    # 1.1 x cold (mean 1.1 against 1.0): +10 %, a cost, not a cut.
    (f,) = study_findings.warm_start(_warm([20.0, 40.0], [6.0, 12.0], [1.0, 1.0], [1.0, 1.2]))
    assert f.numbers["cold"] == 30.0 and f.numbers["warm"] == 9.0
    assert f.numbers["cut_pct"] == pytest.approx(70.0)
    assert f.numbers["steady_pct"] == pytest.approx(10.0)
    assert "a 70 % cut (it meets the 30 % goal); steady-state cost +10.0 %" in f.sentence
    # A warm start that hurts: warm regret above cold is a negative cut, and it misses the goal.
    (g,) = study_findings.warm_start(_warm([10.0], [15.0], [1.0], [0.9]))
    assert g.numbers["cut_pct"] == pytest.approx(-50.0) and g.numbers["steady_pct"] == pytest.approx(-10.0)
    assert "(it misses the" in g.sentence


@pytest.mark.parametrize(("warm", "verdict"), [(1.0, "meets"), (1.0 + 2**-20, "misses")])
def test_a_cut_of_exactly_the_goal_meets_it(
    warm: float, verdict: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A goal of 50 % (exact in binary): cold 2, warm 1 cut exactly 50 %.
    monkeypatch.setattr(study_findings, "WARM_CUT", 50.0)
    (f,) = study_findings.warm_start(_warm([2.0], [warm], [1.0], [1.0]))
    assert bool(f.numbers["cut_pct"] == 50.0) == (verdict == "meets")
    assert f"(it {verdict} the 50 % goal)" in f.sentence


def test_jobs_helped_or_hurt_need_the_whole_interval_on_one_side() -> None:
    table = pd.DataFrame(
        {
            "prior_gpu": "v100",
            "gpu": "a40",
            "workload": ["helped", "touches", "hurt", "spans"],
            "regret_first20_diff_pct_ci_low": [-5.0, -3.0, 0.5, -1.0],
            "regret_first20_diff_pct_ci_high": [-1.0, 0.0, 4.0, 1.0],
            "pair_cut_pct": 40.0,
            "pair_cut_without_pct": [35.0, 41.0, 50.0, 39.0],
            "seeds": 20,
        }
    )
    (f,) = study_findings.warm_start_per_job(table)
    assert f.numbers["better"] == 1.0 and f.numbers["worse"] == 1.0
    assert "(worse on hurt)" in f.sentence
    assert "from 35.0 % (without helped) to 50.0 % (without hurt)" in f.sentence
