"""``summarize`` and :mod:`zeus_bench.sim.metrics` on hand-made runs tables with known totals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from zeus_bench.sim import metrics
from zeus_bench.sim.schema import SUMMARY
from zeus_bench.sim.summarize import summarize

ETA, MAXPOWER = 0.5, 250.0
# Expected energy (J) and time (s) of each reference policy's configuration.
EXPECTED = {"baseline": (100.0, 10.0), "max-batch": (80.0, 8.0), "oracle": (50.0, 11.0)}


def cost(e: float, t: float) -> float:
    return ETA * e + (1 - ETA) * MAXPOWER * t


def row(policy: str, seed: int, rec: int, attempt: int, e: float, t: float, reached: bool, **kw) -> dict:
    exp_e, exp_t = EXPECTED.get(policy, (e, t))
    return {
        "gpu": "v100", "workload": "squad", "policy": policy, "seed": seed, "eta": ETA, "beta": 2.0,
        "recurrence": rec, "attempt": attempt, "batch_size": kw.get("bs", 32), "power_limit_w": 250.0,
        "epochs": 5.0, "energy_j": e, "time_s": t, "cost": cost(e, t), "reached": reached, "profiled": False,
        "window": 0, "num_gpus": 1, "max_power_w": MAXPOWER, "expected_energy_j": exp_e,
        "expected_time_s": exp_t, "expected_cost": cost(exp_e, exp_t),
    }  # fmt: skip


def runs(recurrences: int = 12, seeds: tuple[int, ...] = (1, 2), zeus_energy: float = 60.0) -> pd.DataFrame:
    """References at their expected figures; zeus 60 J x (1 + 0.1 (seed - 1)), 12 s per recurrence."""
    rows = []
    for s in seeds:
        for r in range(1, recurrences + 1):
            for p, (e, t) in EXPECTED.items():
                rows.append(row(p, s, r, 1, e, t, True))
            rows.append(row("zeus", s, r, 1, zeus_energy * (1 + 0.1 * (s - 1)), 12.0, True, bs=64))
    return pd.DataFrame(rows)


def zeus(summary: pd.DataFrame) -> pd.Series:
    return summary.set_index("policy").loc["zeus"]


def test_savings_ratios_and_regret_without_failures() -> None:
    s = summarize(runs())
    assert list(s.columns) == SUMMARY.names
    z = zeus(s)
    # Seed 1: 60 J vs 100 J -> 40 %; seed 2: 66 J -> 34 %; population std 3.
    assert z["energy_savings_vs_baseline_cum_pct_mean"] == pytest.approx(37.0)
    assert z["energy_savings_vs_baseline_cum_pct_std"] == pytest.approx(3.0)
    assert z["energy_savings_vs_max_batch_cum_pct_mean"] == pytest.approx(100 * (1 - 63 / 80))
    assert z["time_savings_vs_baseline_last10_pct_mean"] == pytest.approx(-20.0)
    base_cost, orc_cost = cost(100, 10), cost(50, 11)
    ratios = [cost(60, 12) / base_cost, cost(66, 12) / base_cost]
    assert z["cost_ratio_vs_baseline_cum_mean"] == pytest.approx(np.mean(ratios))
    assert z["cost_ratio_vs_baseline_cum_std"] == pytest.approx(np.std(ratios, ddof=metrics.DDOF))
    assert z["cost_ratio_vs_max_batch_cum_mean"] == pytest.approx(
        np.mean([cost(60, 12), cost(66, 12)]) / cost(80, 8)
    )
    pct = [100 * (cost(60, 12) / orc_cost - 1), 100 * (cost(66, 12) / orc_cost - 1)]
    assert z["regret_vs_oracle_cum_pct_mean"] == pytest.approx(np.mean(pct))
    assert z["regret_vs_oracle_cost_j_mean"] == pytest.approx(
        12 * (np.mean([cost(60, 12), cost(66, 12)]) - orc_cost)
    )
    assert z["failed_recurrences_mean"] == 0.0
    assert zeus(s)["recurrences"] == 12
    b = s.set_index("policy").loc["baseline"]
    assert b["energy_savings_vs_baseline_cum_pct_mean"] == pytest.approx(0.0)
    assert b["cost_ratio_vs_baseline_cum_mean"] == pytest.approx(1.0)


def _fail_recurrence(df: pd.DataFrame, rec: int, how: str) -> pd.DataFrame:
    """Make zeus's recurrence ``rec`` (every seed) fail: two failed tries, no row, or a ran=False row."""
    z = (df["policy"] == "zeus") & (df["recurrence"] == rec)
    keep = df[~z]
    if how == "tries":
        extra = [row("zeus", s, rec, a, 30.0, 5.0, False) for s in (1, 2) for a in (1, 2)]
    elif how == "missing":
        extra = []
    else:
        extra = [
            {
                **row("zeus", s, rec, 1, 0.0, 0.0, False),
                "epochs": 0.0,
                "ran": False,
                "expected_energy_j": np.nan,
            }
            for s in (1, 2)
        ]
    out = pd.concat([keep, pd.DataFrame(extra)], ignore_index=True)
    if how == "ran":
        out["ran"] = out["ran"].astype("boolean").fillna(True).astype(bool)
    return out


def test_failed_recurrence_is_charged_its_tries_plus_the_baseline() -> None:
    s = zeus(summarize(_fail_recurrence(runs(), 3, "tries")))
    assert s["failed_recurrences_mean"] == 1.0
    # Seed 1: 11 x 60 + (2 x 30 + 100) J against 12 x 100 J.
    seed1 = 100 * (1 - (11 * 60 + 60 + 100) / 1200)
    seed2 = 100 * (1 - (11 * 66 + 60 + 100) / 1200)
    assert s["energy_savings_vs_baseline_cum_pct_mean"] == pytest.approx((seed1 + seed2) / 2)
    assert s["time_savings_vs_baseline_cum_pct_mean"] == pytest.approx(100 * (1 - (11 * 12 + 10 + 10) / 120))
    charge = [
        11 * cost(60, 12) + 2 * cost(30, 5) + cost(100, 10),
        11 * cost(66, 12) + 2 * cost(30, 5) + cost(100, 10),
    ]
    assert s["regret_vs_oracle_cost_j_mean"] == pytest.approx(np.mean(charge) - 12 * cost(50, 11))
    assert s["cost_ratio_vs_baseline_cum_mean"] == pytest.approx(np.mean(charge) / (12 * cost(100, 10)))
    assert s["energy_j_mean"] == pytest.approx(np.mean([11 * 60 + 160, 11 * 66 + 160]))


def test_no_try_ran_row_and_missing_recurrence_count_the_same() -> None:
    ran = summarize(_fail_recurrence(runs(), 12, "ran"))
    missing = summarize(_fail_recurrence(runs(), 12, "missing"))
    pd.testing.assert_frame_equal(ran, missing)
    z = zeus(ran)
    assert z["recurrences"] == 12 and z["failed_recurrences_mean"] == 1.0
    # Nothing spent in recurrence 12: charged the baseline's 100 J; the last 10 include it.
    assert z["energy_savings_vs_baseline_last10_pct_mean"] == pytest.approx(
        np.mean([100 * (1 - (9 * 60 + 100) / 1000), 100 * (1 - (9 * 66 + 100) / 1000)])
    )
    # The recurrence the policy failed also counts for its settling: it settles after it.
    assert z["settle_recurrence_mean"] == 13.0


def test_ran_column_all_true_changes_nothing() -> None:
    df = runs()
    pd.testing.assert_frame_equal(summarize(df), summarize(df.assign(ran=True)))


def test_no_failure_charge_without_baseline_is_missing_not_zero() -> None:
    df = _fail_recurrence(runs(), 3, "tries")
    s = summarize(df[df["policy"] != "baseline"])
    z = zeus(s)
    assert np.isnan(z["energy_savings_vs_baseline_cum_pct_mean"])
    assert np.isnan(z["regret_vs_oracle_cost_j_mean"])  # the failed recurrence's charge is unknown
    assert z["failed_recurrences_mean"] == 1.0


def test_pure_functions() -> None:
    assert metrics.savings_pct(60.0, 100.0) == pytest.approx(40.0)
    assert metrics.cost_ratio(60.0, 120.0) == pytest.approx(0.5)
    assert metrics.regret_pct(110.0, 100.0) == pytest.approx(10.0)
    assert metrics.regret_j(110.0, 100.0) == pytest.approx(10.0)
    got = metrics.charged(np.array([5.0, 5.0]), np.array([False, True]), np.array([100.0, 100.0]))
    assert got.tolist() == [5.0, 105.0]
    assert metrics.std(pd.Series([1.0, 3.0])) == pytest.approx(1.0)
    assert metrics.std(pd.Series([2.0])) == 0.0


def test_convergence_curves_use_the_charged_costs() -> None:
    conv = metrics.convergence(_fail_recurrence(runs(), 3, "tries"), policies=("zeus",))
    z = conv.set_index("recurrence")
    assert z.loc[1, "oracle_cost"] == pytest.approx(cost(50, 11))
    assert z.loc[3, "cost_mean"] == pytest.approx(2 * cost(30, 5) + cost(100, 10))
    per_rec = np.mean([cost(60, 12), cost(66, 12)]) - cost(50, 11)
    assert z.loc[12, "regret_mean"] == pytest.approx(
        11 * per_rec + 2 * cost(30, 5) + cost(100, 10) - cost(50, 11)
    )
    assert z.loc[12, "regret_lo"] < z.loc[12, "regret_hi"]
    with pytest.raises(ValueError, match="oracle"):
        metrics.convergence(runs()[lambda d: d["policy"] != "oracle"])


def test_beta_off_stays_inf() -> None:
    s = summarize(runs().assign(beta=np.inf))
    assert (s["beta"] == np.inf).all()


def _keyed_sums(df: pd.DataFrame) -> pd.DataFrame:
    """Each recurrence's summed energy, time and cost as pandas' groupby of the keys sums them."""
    keys = [k for k in metrics.REC_KEYS if k != "group"]
    g = df.sort_values([*keys, "attempt"], kind="stable").groupby(keys, sort=True)
    return g[["energy_j", "time_s", "cost"]].sum().reset_index(drop=True)


def test_recurrence_sums_are_those_of_a_groupby_of_the_keys_whatever_the_rows_order() -> None:
    # Eight tries per recurrence whose sums depend on how they are summed: pandas sums a column by
    # NumPy's pairwise reduction, or compensated where it has a missing value (time_s here).
    rng = np.random.default_rng(5)
    df = runs(recurrences=6).loc[lambda d: d.index.repeat(8)].reset_index(drop=True)
    df["attempt"] = df.groupby([*metrics.RUN, "seed", "recurrence"]).cumcount() + 1
    for col in ("energy_j", "time_s", "cost"):
        df[col] = rng.choice([-1.0, 1.0], len(df)) * 10.0 ** rng.uniform(-3, 16, len(df))
    df.loc[7, "time_s"] = np.nan
    want = _keyed_sums(df)
    for shuffled in (df, df.sample(frac=1.0, random_state=3)):
        rec = metrics.recurrence_table(shuffled)
        got = rec[["spent_energy_j", "spent_time_s", "spent_cost"]].set_axis(
            ["energy_j", "time_s", "cost"], axis=1
        )
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert rec["tries"].eq(8).all()
        assert list(rec["recurrence"][:6]) == [1, 2, 3, 4, 5, 6]  # the keys' order, whatever the input's


def test_recurrence_table_fills_a_policys_missing_recurrences_from_its_settings_others() -> None:
    # zeus lacks recurrences 5-6 of seed 2 (one of its runs); the others have all six.
    df = runs(recurrences=6)
    df = df[~((df["policy"] == "zeus") & (df["seed"] == 2) & (df["recurrence"] >= 5))]
    rec = metrics.recurrence_table(df).set_index(["policy", "seed", "recurrence"])
    assert len(rec) == 4 * 2 * 6
    gap = rec.loc[("zeus", 2, 5)]
    assert (gap["tries"], gap["reached"], gap["failed"], gap["spent_energy_j"]) == (0, False, True, 0.0)
    assert np.isnan(gap["batch_size"]) and np.isnan(gap["expected_energy_j"])
    assert gap["energy_j"] == EXPECTED["baseline"][0]  # charged the baseline's expected figure
    assert rec.loc[("zeus", 1, 5), "batch_size"] == 64.0  # (the column is float: a gap has none)
    assert rec.loc[("oracle", 2, 5), "baseline_energy_j"] == EXPECTED["baseline"][0]
    assert rec["last10"].all()  # six recurrences: every one is among the last ten


def test_recurrence_table_of_no_rows_has_the_columns() -> None:
    rec = metrics.recurrence_table(runs().iloc[:0])
    assert rec.empty and {"spent_cost", "failed", "last10", "oracle_cost", "cost"} <= set(rec.columns)
