"""The validation's comparison (zeus_bench.studies.validation): noise, per-recurrence table, findings.

Every finding is checked on small hand-made tables on both sides of its flip.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.store import validate
from zeus_bench.studies.validation import (
    MAX_NOISE,
    findings,
    findings_table,
    mid_rank_percentile,
    noise_level,
    noise_table,
    recurrence_table,
    render_report,
    repeat_findings,
    trace_cost_findings,
)
from zeus_bench.studies.validation_schema import SCOPE


def _sim(costs: np.ndarray, choices: np.ndarray | None = None, policy: str = "zeus") -> pd.DataFrame:
    """A runs table: costs[seed, recurrence] (one try each), first-try batch size choices[seed, r]."""
    seeds, n = costs.shape
    rows = []
    for s in range(seeds):
        for r in range(n):
            rows.append(
                {
                    "gpu": "h200", "workload": "teacher-student", "policy": policy, "seed": s + 1, "eta": 0.5,
                    "beta": 2.0, "recurrence": r + 1, "attempt": 1,
                    "batch_size": int(choices[s, r]) if choices is not None else 256,
                    "cost": float(costs[s, r]), "energy_j": float(costs[s, r]) / 2, "time_s": 1.0, "ran": True,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def _measured(costs: list[float], batch_sizes: list[int] | None = None) -> pd.DataFrame:
    n = len(costs)
    return pd.DataFrame(
        {
            "gpu": "h200", "workload": "teacher-student", "recurrence": range(1, n + 1), "attempt": 1,
            "batch_size": batch_sizes or [256] * n, "power_limit_w": 700.0, "epochs": 5, "reached": True,
            "early_stopped": False, "metric": 0.93, "energy_j": [c / 2 for c in costs], "time_s": 1.0,
            "cost": costs, "max_power_w": 700.0, "seed": range(n),
        }
    )  # fmt: skip


def _rec(measured_cost: float, noise_spread: float = 0.0, n: int = 30, seeds: int = 100) -> pd.DataFrame:
    """Simulated per-recurrence cost 100 +- 1 % (seed-spread), measured cost per recurrence constant."""
    rng = np.random.default_rng(0)
    sim = 100.0 * (1 + 0.01 * rng.standard_normal((seeds, n)))
    noisy = sim * (1 + noise_spread * rng.standard_normal((seeds, n)))
    return recurrence_table(_measured([measured_cost] * n), _sim(sim), _sim(noisy), "h200", "teacher-student")


def by_name(found):
    return {f.finding: f for f in found}


def test_mid_rank_percentile_counts_ties_half():
    assert mid_rank_percentile(np.array([1.0, 2.0, 3.0, 4.0]), 2.5) == 50.0
    assert mid_rank_percentile(np.array([1.0, 2.0, 2.0, 4.0]), 2.0) == 50.0
    assert mid_rank_percentile(np.array([1.0, 2.0]), 0.0) == 0.0
    assert mid_rank_percentile(np.array([1.0, 2.0]), 9.0) == 100.0


def test_noise_table_relative_spreads_and_pooled_level():
    power = pd.DataFrame(
        {"batch_size": [64, 64, 64, 256, 256, 512], "time_per_epoch_s": [1.0, 1.1, 0.9, 2.0, 2.0, 3.0],
         "avg_power_w": [100.0, 100.0, 100.0, 200.0, 220.0, 300.0]}
    )  # fmt: skip
    t = noise_table(power, "h200", "teacher-student")
    assert list(t["batch_size"]) == [64, 256]  # 512 measured once: no spread
    assert t["time_per_epoch_rel_std"].iloc[0] == pytest.approx(0.1)
    assert t["avg_power_rel_std"].iloc[0] == 0.0
    assert t["avg_power_rel_std"].iloc[1] == pytest.approx(np.std([200, 220], ddof=1) / 210)
    spreads = np.array([0.1, 0.0, 0.0, np.std([200, 220], ddof=1) / 210])
    assert t["noise_level"].iloc[0] == pytest.approx(np.sqrt(np.mean(spreads**2)))
    validate(t, "validation_noise", where="test")


def test_noise_level_is_clipped_to_the_simulators_bound():
    t = pd.DataFrame({"time_per_epoch_rel_std": [0.5], "avg_power_rel_std": [0.5]})
    assert noise_level(t) == MAX_NOISE


def test_noise_table_needs_a_repeated_point():
    power = pd.DataFrame({"batch_size": [64, 256], "time_per_epoch_s": [1.0, 2.0], "avg_power_w": [1.0, 2.0]})
    with pytest.raises(ConfigError, match="measured twice"):
        noise_table(power, "h200", "teacher-student")


def test_recurrence_table_cumulates_tries_and_choices():
    costs = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0]])
    choices = np.array([[64, 128, 256], [64, 256, 256], [128, 128, 128]])
    sim = _sim(costs, choices)
    extra = sim.iloc[[0]].assign(
        attempt=2, batch_size=2048, cost=10.0
    )  # a second try of seed 1, recurrence 1
    sim = pd.concat([sim, extra], ignore_index=True)
    measured = _measured([2.0, 1.0, 3.0], [64, 512, 128])
    measured = pd.concat([measured, measured.iloc[[1]].assign(attempt=2, batch_size=2048, cost=0.5)])
    rec = recurrence_table(measured, sim, sim, "h200", "teacher-student")
    validate(rec, "validation_recurrences", where="test")
    # Measured cumulative: 2, 2 + 1 + 0.5, 6.5; its batch size is the first try's.
    assert list(rec["measured_cum_cost"]) == [2.0, 3.5, 6.5]
    assert list(rec["measured_batch_size"]) == [64, 512, 128]
    # Simulated seeds cumulate 11/2/4, 13/4/8, 16/6/12 (seed 1's second try counted).
    assert rec["sim_cum_cost_p50"].tolist() == [4.0, 8.0, 12.0]
    # Measured 2 ties seed 2 (mid-rank: 1/6); 3.5 is below all; 6.5 above seed 2 only.
    assert rec["percentile"].tolist() == pytest.approx([100 / 6, 0.0, 100 / 3])
    # Choices: r1 64 by 2 of 3 seeds; r2 512 by none; r3 128 by one.
    assert rec["choice_share"].tolist() == pytest.approx([2 / 3, 0.0, 1 / 3])


def test_recurrence_table_refuses_gaps_and_short_simulations():
    sim = _sim(np.ones((2, 3)))
    with pytest.raises(ConfigError, match="without gaps"):
        recurrence_table(_measured([1.0, 1.0]).assign(recurrence=[1, 3]), sim, sim, "h200", "x")
    with pytest.raises(ConfigError, match="3 recurrences, the measurement 4"):
        recurrence_table(_measured([1.0] * 4), sim, sim, "h200", "x")
    mixed = pd.concat([sim, _sim(np.ones((2, 3)), policy="oracle")])
    with pytest.raises(ConfigError, match="several values of 'policy'"):
        recurrence_table(_measured([1.0] * 3), mixed, sim, "h200", "x")


def test_in_band_and_median_difference_flip_with_the_measurement():
    inside = by_name(findings(_rec(100.0), 0.01))
    assert inside["in_band_at_N"].value == 1.0
    assert abs(inside["diff_from_median_pct"].value) < 0.5
    assert "inside" in inside["in_band_at_N"].text and SCOPE in inside["in_band_at_N"].text
    above = by_name(findings(_rec(110.0), 0.01))
    assert above["in_band_at_N"].value == 0.0
    assert above["diff_from_median_pct"].value == pytest.approx(10.0, abs=0.5)
    assert "above" in above["diff_from_median_pct"].text
    below = by_name(findings(_rec(90.0), 0.01))
    assert below["diff_from_median_pct"].value == pytest.approx(-10.0, abs=0.5)
    assert "below" in below["diff_from_median_pct"].text


def test_percentiles_at_10_20_and_n():
    low = by_name(findings(_rec(95.0), 0.0))
    high = by_name(findings(_rec(105.0), 0.0))
    for name in ("percentile_at_10", "percentile_at_20", "percentile_at_N"):
        assert low[name].value == 0.0
        assert high[name].value == 100.0
    short = by_name(findings(_rec(100.0, n=15), 0.0))
    assert "percentile_at_20" not in short and "percentile_at_10" in short and "percentile_at_N" in short


def test_noise_widens_the_band_only_when_it_is_wide_enough():
    # 3 % above: outside the noiseless band (cumulative spread about 0.2 %), inside the band of a
    # 20 % per-recurrence noise (cumulative about 4 %).
    widened = by_name(findings(_rec(103.0, noise_spread=0.2), 0.2))
    assert widened["in_band_at_N"].value == 0.0
    assert widened["noise_covers_at_N"].value == 1.0
    assert widened["noise_widens_to_cover"].value == 1.0
    narrow = by_name(findings(_rec(103.0, noise_spread=0.001), 0.001))
    assert narrow["noise_covers_at_N"].value == 0.0
    assert narrow["noise_widens_to_cover"].value == 0.0
    assert "not run-to-run noise" in narrow["noise_widens_to_cover"].text
    already = by_name(findings(_rec(100.0, noise_spread=0.05), 0.05))
    assert already["noise_widens_to_cover"].value == 0.0
    assert "already covers" in already["noise_widens_to_cover"].text


def test_choice_share_finding_flips_with_the_choices():
    n = 12
    sim = np.full((5, n), 100.0)
    choices = np.full((5, n), 256)
    same = recurrence_table(
        _measured([100.0] * n, [256] * n), _sim(sim, choices), _sim(sim, choices), "h200", "x"
    )
    assert by_name(findings(same, 0.0))["choice_among_share"].value == 1.0
    half = [256] * 6 + [2048] * 6
    other = recurrence_table(
        _measured([100.0] * n, half), _sim(sim, choices), _sim(sim, choices), "h200", "x"
    )
    assert by_name(findings(other, 0.0))["choice_among_share"].value == 0.5


def test_findings_table_and_report_carry_the_scope():
    rec = _rec(100.0)
    found = findings(rec, 0.01)
    table = findings_table(found, "h200", "teacher-student")
    validate(table, "validation_findings", where="test")
    noise = pd.DataFrame(
        {"gpu": ["h200"], "workload": ["teacher-student"], "batch_size": [64], "repeats": [2],
         "time_per_epoch_mean_s": [1.0], "time_per_epoch_rel_std": [0.01], "avg_power_mean_w": [200.0],
         "avg_power_rel_std": [0.01], "noise_level": [0.01]}
    )  # fmt: skip
    text = render_report(found, rec, noise, _measured([100.0] * 30))
    assert SCOPE in text
    assert "percentile" in text and "validation.png" in text


def _gap_case(early: list[float], late: list[float], stopped: dict[int, tuple[float, int]]):
    """Simulated cost 100 per recurrence (every seed alike); measured per-recurrence costs
    ``early + late``; ``stopped``: recurrence -> (cost, epochs) of an early-stopped first try."""
    costs = early + late
    n = len(costs)
    sim = _sim(np.full((5, n), 100.0))
    rows = _measured(costs)
    extra = []
    for r, (cost, epochs) in stopped.items():
        extra.append({**rows.iloc[r - 1].to_dict(), "attempt": 1, "cost": cost, "epochs": epochs,
                      "early_stopped": True, "reached": False})  # fmt: skip
        rows.loc[r - 1, "attempt"] = 2
    measured = pd.concat([rows, pd.DataFrame(extra)], ignore_index=True)
    rec = recurrence_table(measured, sim, sim, "h200", "teacher-student")
    return by_name(findings(rec, 0.0, measured=measured)), measured, sim


def test_gap_share_flips_between_early_and_late_recurrences():
    # measured 100 everywhere but 50 J more at recurrence 2 (early) or at recurrence 25 (late)
    early, _, _ = _gap_case([100.0, 150.0] + [100.0] * 8, [100.0] * 20, {})
    assert early["gap_share_at_10"].value == pytest.approx(1.0)
    assert "first recurrences" in early["gap_share_at_10"].text
    late, _, _ = _gap_case([100.0] * 10, [100.0] * 14 + [150.0] + [100.0] * 5, {})
    assert late["gap_share_at_10"].value == pytest.approx(0.0)
    assert "later" in late["gap_share_at_10"].text


def test_early_stop_last_epochs_and_their_share_of_the_gap():
    # recurrence 3's first try stopped early after 4 epochs costing 80 J: its last epoch 20 J;
    # the gap at N is those 80 J (the second try costs the simulated 100)
    found, _, _ = _gap_case([100.0] * 10, [100.0] * 20, {3: (80.0, 4)})
    assert found["early_stop_last_epoch_j"].value == pytest.approx(20.0)
    assert found["early_stop_share_of_gap"].value == pytest.approx(0.25)
    assert "1 early-stopped" in found["early_stop_last_epoch_j"].text
    none, _, _ = _gap_case([100.0] * 10, [110.0] * 20, {})
    assert none["early_stop_last_epoch_j"].value == 0.0
    assert none["early_stop_share_of_gap"].value == 0.0


def test_no_gap_finding_without_a_gap_or_a_measured_table():
    found, _, _ = _gap_case([100.0] * 10, [100.0] * 20, {})
    assert "gap_share_at_10" not in found and "early_stop_share_of_gap" not in found
    plain = by_name(findings(_rec(110.0), 0.0))
    assert "early_stop_last_epoch_j" not in plain


def test_repeats_percentiles_and_measured_spread():
    rng = np.random.default_rng(1)
    sim = _sim(100.0 * (1 + 0.01 * rng.standard_normal((200, 30))))
    primary = _measured([100.0] * 30)
    low, high = _measured([95.0] * 30), _measured([105.0] * 30)
    found = by_name(repeat_findings([low, high], primary, sim))
    assert found["repeat_runs"].value == 2.0
    assert found["repeat_percentile_at_N_min"].value == 0.0
    assert found["repeat_percentile_at_N_max"].value == 100.0
    # totals 3000, 2850, 3150: (3150 - 2850) / 3000
    assert found["measured_runs_spread_pct"].value == pytest.approx(10.0)
    same = by_name(repeat_findings([_measured([100.0] * 30)], primary, sim))
    assert same["measured_runs_spread_pct"].value == 0.0
    assert 25.0 < same["repeat_percentile_at_N_min"].value < 75.0
    with pytest.raises(ConfigError, match="repeat 1 has 29 recurrences"):
        repeat_findings([_measured([100.0] * 29)], primary, sim)


def _power(time_per_epoch: float, power_w: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "batch_size": [256],
            "power_limit_w": [700.0],
            "time_per_epoch_s": [time_per_epoch],
            "avg_power_w": [power_w],
        }
    )


def test_trace_costed_tries_and_their_share_of_the_gap():
    # 30 tries at batch size 256, 5 epochs; the trace: 0.1 s/epoch at 200 W -> per try 0.5 s, 100 J,
    # cost 0.5 x 100 + 0.5 x 700 x 0.5 = 225 J
    measured = _measured([300.0] * 30)
    found = by_name(trace_cost_findings(measured, _power(0.1, 200.0), 0.5, gap_n=3000.0))
    assert found["trace_costed_j"].value == pytest.approx(30 * 225.0)
    # measured 9000 J, trace-costed 6750 J: 2250 of a 3000 J gap
    assert found["time_power_share_of_gap"].value == pytest.approx(0.75)
    assert (
        "75 % of the gap" in found["time_power_share_of_gap"].text
        and "rest (25 %)" in found["time_power_share_of_gap"].text
    )
    # a trace as dear as the run: nothing beyond it
    same = by_name(trace_cost_findings(_measured([225.0] * 30), _power(0.1, 200.0), 0.5, gap_n=3000.0))
    assert same["time_power_share_of_gap"].value == pytest.approx(0.0)
    with pytest.raises(ConfigError, match="no row at batch size 512, 700 W"):
        trace_cost_findings(_measured([225.0] * 3, [512] * 3), _power(0.1, 200.0), 0.5, gap_n=1.0)
