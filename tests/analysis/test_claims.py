"""The four restated claims (analysis/report/findings/claims.py) flip both ways on small synthetic tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.report.findings import Finding, Table, claims


def _jobs(paired_p95: float, alone_p95: float) -> pd.DataFrame:
    """One GPU, a policy on two jobs and the baseline: the ratio's 95th percentile with and without pairing."""
    rows = []
    for w in ("j1", "j2"):
        for p, pp, ap in (("zeus", paired_p95, alone_p95), ("baseline", 1.0, 1.05)):
            rows.append(
                {
                    "gpu": "ga",
                    "workload": w,
                    "policy": p,
                    "cost_ratio_vs_baseline_mean": 1.0 if p == "baseline" else 0.9,
                    "cost_ratio_vs_baseline_p95": pp if p == "baseline" else 0.9 * pp,
                    "cost_ratio_vs_expected_baseline_mean": 1.0 if p == "baseline" else 0.9,
                    "cost_ratio_vs_expected_baseline_p95": ap if p == "baseline" else 0.9 * ap,
                }
            )
    return pd.DataFrame(rows)


def test_pairing_narrows_or_widens_with_the_data() -> None:
    f = claims.pairing(_jobs(paired_p95=1.01, alone_p95=1.04))  # pairing cancels most of the spread
    assert f.numbers["pairs"] == 2 and f.numbers["narrower"] == 2 and f.numbers["wider"] == 0
    assert "cancels the path luck" in f.sentence and "does not cancel" not in f.sentence
    f = claims.pairing(_jobs(paired_p95=1.06, alone_p95=1.03))  # the policy left b0: dividing widens
    assert f.numbers["wider"] == 2 and f.numbers["wider_ga"] == 2 and f.numbers["narrower"] == 0
    assert f.numbers["worst_paired_pct"] == pytest.approx(6.0) and f.numbers[
        "worst_alone_pct"
    ] == pytest.approx(3.0)
    assert "does not in general cancel path luck" in f.sentence
    assert "6.00 % against 3.00 %" in f.sentence
    f = claims.pairing(_jobs(paired_p95=1.03, alone_p95=1.03))
    assert f.numbers["same"] == 2


def _summary(bo_regret: float, bo_unsafe: int, floor: float = 4.0) -> pd.DataFrame:
    rows = []
    for fold in (1, 2):
        for p, reg, unsafe in (
            ("zeus", 5.0, 1),
            ("zeus-plus", 20.0, 0),
            ("bo-ei", bo_regret, bo_unsafe),
            ("oracle", 0.0, 0),
        ):
            rows.append(
                {
                    "gpu": "ga",
                    "fold": fold,
                    "policy": p,
                    "regret_pct_mean": reg,
                    "jobs_p95_over_safe": unsafe,
                    "anytime_floor_regret_pct": floor,
                }
            )
    return pd.DataFrame(rows)


def test_anytime_floor_names_safe_policies_below_it_or_says_it_binds() -> None:
    f = claims.anytime_floor(_summary(bo_regret=3.0, bo_unsafe=0))
    assert f.numbers["below"] == 2 and f.numbers["cells"] == 2
    assert "bo-ei on ga fold 1 (3.00 % < 4.00 %); bo-ei on ga fold 2" in f.sentence
    assert "not the arena's safety goal" in f.sentence and "horizon unknown" in f.sentence
    f = claims.anytime_floor(_summary(bo_regret=3.0, bo_unsafe=2))  # below the floor, but unsafe: not counted
    assert (
        f.numbers["below"] == 0
        and "no policy that meets that goal has less regret than the floor" in f.sentence
    )
    f = claims.anytime_floor(_summary(bo_regret=6.0, bo_unsafe=0))  # safe, but above the floor
    assert f.numbers["below"] == 0


def _plus(regret: float, floor: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "gpu": "ga",
                "fold": 1,
                "policy": "zeus-plus",
                "regret_pct_mean": regret,
                "anytime_floor_regret_pct": floor,
            }
        ]
    )


def test_horizon_price_splits_the_guarantee_from_the_search() -> None:
    (f,) = claims.horizon_price(_plus(30.0, floor=5.0), _plus(3.0, floor=math.nan))
    assert f.numbers["price"] == pytest.approx(27.0)
    assert f.numbers["budget"] == pytest.approx(2.0) and f.numbers["search"] == pytest.approx(25.0)
    assert (
        "mostly its search's" in f.sentence and "horizon unknown" in f.sentence and "simulated" in f.sentence
    )
    assert f.row["the search's"] == "25.00"
    (f,) = claims.horizon_price(
        _plus(12.0, floor=10.0), _plus(3.0, floor=math.nan)
    )  # the floor explains most
    assert f.numbers["budget"] == pytest.approx(7.0) and f.numbers["search"] == pytest.approx(2.0)
    assert "mostly the guarantee's" in f.sentence
    (f,) = claims.horizon_price(
        _plus(6.0, floor=2.0), _plus(3.0, floor=math.nan)
    )  # known already above the floor
    assert f.numbers["budget"] == 0.0 and f.numbers["search"] == pytest.approx(3.0)
    assert claims.horizon_price(_plus(6.0, floor=math.nan), _plus(3.0, floor=math.nan)) == []


def _warm(cut: float, without: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "prior_gpu": "v100",
                "gpu": "h200",
                "workload": w,
                "pair_cut_pct": cut,
                "pair_cut_without_pct": v,
            }
            for w, v in without.items()
        ]
    )


def test_warm_start_goal_with_and_without_each_job() -> None:
    (f,) = claims.warm_start_goal(
        _warm(31.0, {"a": 35.0, "movielens-1m": 0.5, "c": 33.0}), {"h200": "projected"}
    )
    assert f.numbers["rests_on"] == 1
    assert (
        "meets the goal only with movielens-1m (0.5 % without it)" in f.sentence
        and "(projected)" in f.sentence
    )
    (f,) = claims.warm_start_goal(_warm(40.0, {"a": 35.0, "b": 38.0}))
    assert f.numbers["rests_on"] == 0 and "with any one job left out (least 35.0 %)" in f.sentence
    assert "(simulated)" in f.sentence
    (f,) = claims.warm_start_goal(_warm(20.0, {"a": 35.0, "b": 10.0}))
    assert "misses the goal" in f.sentence


def test_table_of_findings() -> None:
    rows = [Finding(f"k{i}", "s", {}, row={"GPU": g, "x": str(i)}) for i, g in enumerate(("a40", "v100"))]
    text = Table("Caption (horizon unknown; simulated).", rows, {"v100": "projected"}).markdown()
    assert text.splitlines() == [
        "Caption (horizon unknown; simulated).",
        "",
        "| GPU | x |",
        "|---|---|",
        "| a40 (simulated) | 0 |",
        "| v100 (projected) | 1 |",
    ]
    assert Table("c", []).markdown() == ""
    other = [Finding("o", "s", {}, row={"GPU": "v100", "y": "7"})]
    joined = Table.joined("c", rows, other).markdown().splitlines()
    assert joined[2:] == [
        "| GPU | x | y |",
        "|---|---|---|",
        "| a40 (simulated) | 0 |  |",
        "| v100 (simulated) | 1 | 7 |",
    ]
