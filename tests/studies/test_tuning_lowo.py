"""Leave one workload out of the tuning (zeus_bench.studies.tuning.leave_one_workload_out).

A hand-made grid of two settings on six jobs (two GPUs x three workloads) where one workload alone
decides the pooled pick: leaving it out flips the pick, leaving out another does not.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from zeus_bench.store import validate
from zeus_bench.studies import tuning
from zeus_bench.studies.tuning import GridScores, leave_one_workload_out, settings_table
from zeus_bench.traces.jobs import TraceSet

WORKLOADS = ("a", "b", "c")


def _job(workload: str) -> SimpleNamespace:
    return SimpleNamespace(job=SimpleNamespace(workload=SimpleNamespace(id=workload)))


def _score(regret: float, cost: float) -> tuple[np.ndarray, np.ndarray]:
    return np.full(4, regret), np.full(4, cost)


def _scores(a_regret: dict[str, float]) -> GridScores:
    """Zeus's regret 10 on every job; setting X: 5 on every job; setting Y: 4 on b and c and
    ``a_regret[gpu]`` on a. Costs: 100 for the baseline, 101 for both settings (safe: ratio 1.01)."""
    flat = [(g, _job(w)) for g in ("v100", "a40") for w in WORKLOADS]
    x = [_score(5.0, 101.0) for _ in flat]
    y = [_score(a_regret[g] if w.job.workload.id == "a" else 4.0, 101.0) for g, w in flat]
    return GridScores(
        flat=flat,  # type: ignore[arg-type]
        combos=[{"margin": 0.2}, {"margin": 0.4}],
        zeus=[_score(10.0, 100.0) for _ in flat],
        base=[_score(0.0, 100.0) for _ in flat],
        mine=[x, y],
    )


def test_settings_table_over_a_subset_of_jobs() -> None:
    sc = _scores({"v100": 40.0, "a40": 40.0})
    every = settings_table(sc)
    # X: ratio 0.5 everywhere; Y: on each GPU mean(40, 4, 4) / 10 = 1.6
    assert every["regret_ratio_mean"].tolist() == pytest.approx([0.5, 1.6])
    assert every["chosen"].tolist() == [True, False]
    without_a = settings_table(sc, [1, 2, 4, 5])
    assert without_a["regret_ratio_mean"].tolist() == pytest.approx([0.5, 0.4])
    assert without_a["chosen"].tolist() == [False, True]
    assert (
        every["v100_p95_max"].tolist() == pytest.approx([1.01, 1.01]) and int(every["jobs_unsafe"].sum()) == 0
    )


def test_leaving_out_the_deciding_workload_flips_the_pick() -> None:
    table = leave_one_workload_out(_scores({"v100": 40.0, "a40": 40.0})).set_index("left_out")
    validate(table.reset_index(), "policy_tuning_lowo", "lowo")
    assert table.loc["a", "margin"] == 0.4 and not table.loc["a", "same_as_pooled"]
    # on a, the pick made without it (Y) has regret 40 against Zeus's 10; the pooled pick (X) 5
    assert table.loc["a", "regret_ratio_lowo"] == pytest.approx(4.0)
    assert table.loc["a", "regret_ratio_pooled"] == pytest.approx(0.5)
    for w in ("b", "c"):
        assert table.loc[w, "margin"] == 0.2 and table.loc[w, "same_as_pooled"]
        assert table.loc[w, "regret_ratio_lowo"] == table.loc[w, "regret_ratio_pooled"] == pytest.approx(0.5)
    assert table["jobs"].tolist() == [2, 2, 2] and table["jobs_unsafe_lowo"].tolist() == [0, 0, 0]


def test_intervals_resample_the_seeds_paired_with_zeus() -> None:
    sc = _scores({"v100": 40.0, "a40": 40.0})
    a_jobs = [t for t in range(len(sc.flat)) if sc.workload(t) == "a"]
    for t in a_jobs:  # Y's regret on a varies over the seeds: 30, 50, 40, 40 (mean 40: ratio 4)
        sc.mine[1][t] = (np.array([30.0, 50.0, 40.0, 40.0]), sc.mine[1][t][1])
    table = leave_one_workload_out(sc).set_index("left_out")
    lo, hi = table.loc["a", ["regret_ratio_lowo_ci_lo", "regret_ratio_lowo_ci_hi"]]
    assert 3.0 <= lo < 4.0 < hi <= 5.0  # within the resampled means' extremes 30 / 10 and 50 / 10
    # every seed alike: an interval of zero width at the ratio
    assert table.loc["a", "regret_ratio_pooled_ci_lo"] == table.loc["a", "regret_ratio_pooled_ci_hi"] == 0.5
    # Zeus varying with the policy on the same seeds (a constant ratio 4 per seed): zero width again
    for t in a_jobs:
        sc.zeus[t] = (np.array([7.5, 12.5, 10.0, 10.0]), sc.zeus[t][1])
    lo, hi = (
        leave_one_workload_out(sc)
        .set_index("left_out")
        .loc["a", ["regret_ratio_lowo_ci_lo", "regret_ratio_lowo_ci_hi"]]
    )
    assert lo == pytest.approx(4.0) and hi == pytest.approx(4.0)


def test_a_pick_that_transfers_everywhere() -> None:
    # Y is best on a too (regret 3): every leave-out picks Y, the pooled pick is Y
    table = leave_one_workload_out(_scores({"v100": 3.0, "a40": 3.0}))
    assert table["same_as_pooled"].all() and (table["margin"] == 0.4).all()


def test_command_writes_both_tables_and_refuses_a_bad_output(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, lowo = tmp_path / "t.csv", tmp_path / "lowo.csv"
    base = ["--traces", f"v100={tiny_traces}", "--seeds", "1", "--horizon", "known", "--constants", "margin"]
    assert tuning.main([*base, "--out", str(out), "--leave-one-workload-out", str(lowo)]) == 0
    table = pd.read_csv(lowo)
    validate(table, "policy_tuning_lowo", str(lowo))
    workloads = TraceSet(tiny_traces).workload_ids("v100")
    assert sorted(table["left_out"]) == sorted(workloads) and (table["jobs"] == 1).all()
    assert set(table["margin"]) <= set(tuning.ZEUS_PLUS_GRID["margin"])
    assert tuning.main([*base, "--out", str(out), "--leave-one-workload-out", str(tmp_path / "x.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--leave-one-workload-out" in err[0]
