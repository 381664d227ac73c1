"""Aggregations behind the figures, checked against hand-computed values of the fake tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fake_results import make_sim

from analysis import metrics
from zeus_bench.sim.metrics import DDOF
from zeus_bench.sim.summarize import summarize


def test_normalised_reshapes_the_summary(sim):
    norm = metrics.normalised(sim, "baseline").set_index(["workload", "policy"])
    z = norm.loc[("cifar100", "zeus")]
    # 5 recurrences of two tries + 15 of one, 60 J each, seed scale 0.99/1.00/1.01; baseline 20 x 100 J expected.
    assert z["energy_ratio_mean"] == pytest.approx(0.75)
    assert z["energy_ratio_std"] == pytest.approx(np.std([0.7425, 0.75, 0.7575], ddof=DDOF))
    assert z["energy_saving_pct"] == pytest.approx(25.0)
    assert z["time_ratio_mean"] == pytest.approx(25 * 12 / (20 * 10))
    assert z["n_seeds"] == 3
    assert norm.loc[("cifar100", "baseline"), "energy_ratio_mean"] == pytest.approx(1.0)
    assert norm.loc[("librispeech", "oracle"), "energy_saving_pct"] == pytest.approx(50.0)
    # The same numbers as the summary table's, whichever of the two it is given.
    pd.testing.assert_frame_equal(
        metrics.normalised(summarize(sim), "baseline"),
        norm.reset_index()[norm.reset_index().columns.intersection(metrics.normalised(sim).columns)][
            metrics.normalised(sim).columns
        ],
    )


def test_normalised_last_recurrences(sim):
    norm = metrics.normalised(sim, "baseline", last=10).set_index(["workload", "policy"])
    assert norm.loc[("cifar100", "zeus"), "energy_ratio_mean"] == pytest.approx(0.6)
    assert norm["cost_ratio_mean"].isna().all()
    with pytest.raises(ValueError, match="not the last 5"):
        metrics.normalised(sim, "baseline", last=5)


def test_normalised_uses_expected_reference(sim):
    sim = sim.assign(expected_energy_j=50.0, expected_time_s=5.0, expected_cost=10.0)
    norm = metrics.normalised(sim, "baseline").set_index(["workload", "policy"])
    # Reference = 20 recurrences x 50 J expected, not the simulated 100 J.
    assert norm.loc[("cifar100", "zeus"), "energy_ratio_mean"] == pytest.approx(1500 / 1000)
    assert norm.loc[("cifar100", "baseline"), "energy_ratio_mean"] == pytest.approx(2.0)


def test_normalised_against_max_batch(sim):
    norm = metrics.normalised(sim, "max-batch").set_index(["workload", "policy"])
    assert norm.loc[("cifar100", "zeus"), "energy_ratio_mean"] == pytest.approx(1500 / 1600)
    assert (norm["reference"] == "max-batch").all()


def test_normalised_without_reference_is_refused(sim):
    with pytest.raises(ValueError, match="reference policy 'max-batch'"):
        metrics.normalised(sim[sim["policy"] != "max-batch"], "max-batch")
    with pytest.raises(ValueError, match="unknown reference"):
        metrics.normalised(sim, "oracle")


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="missing column"):
        metrics.normalised(pd.DataFrame({"gpu": ["v100"]}))


def test_convergence_cost_and_regret(sim):
    conv = metrics.convergence(sim)
    gs = conv[(conv["workload"] == "cifar100") & (conv["policy"] == "grid-search")].set_index("recurrence")
    # Grid search: 0.5 x 70 x scale + 0.5 x 250 x 12 per recurrence; oracle mean 0.5 x 50 + 0.5 x 250 x 11.
    assert gs.loc[1, "oracle_cost"] == pytest.approx(1400.0)
    assert gs.loc[1, "cost_mean"] == pytest.approx(1535.0)
    assert gs.loc[20, "regret_mean"] == pytest.approx(20 * 135.0)
    assert gs.loc[20, "regret_lo"] < gs.loc[20, "regret_mean"] < gs.loc[20, "regret_hi"]
    assert set(conv["policy"]) == {"zeus", "grid-search"}


def test_convergence_uses_expected_oracle_cost(sim):
    sim = sim.assign(expected_cost=np.where(sim["policy"] == "oracle", 1000.0, 0.0))
    conv = metrics.convergence(sim)
    assert (conv["oracle_cost"] == 1000.0).all()


def test_settled(sim):
    s = metrics.settled(sim).set_index("workload")
    assert s.loc["cifar100", "batch_size"] == 64
    assert s.loc["cifar100", "power_limit_w"] == 150.0
    assert s.loc["cifar100", "share"] == pytest.approx(1.0)


def test_settled_counts_only_last_recurrences():
    sim = make_sim(recurrences=12)  # zeus uses bs 64 from recurrence 6: 7 of the last 10 tries
    s = metrics.settled(sim, last=10).set_index("workload")
    assert s.loc["cifar100", "batch_size"] == 64
    assert s.loc["cifar100", "share"] == pytest.approx(7 / 10)


def test_markers(configs, potential, sim):
    marks = metrics.markers(configs, potential[potential["gpu"] == "v100"], metrics.settled(sim))
    m = marks.set_index(["workload", "marker"])
    assert set(marks["marker"]) == {"baseline", "oracle", "zeus"}
    assert m.loc[("cifar100", "baseline"), "power_limit_w"] == 250.0
    assert m.loc[("cifar100", "baseline"), "eta_j"] == 10000.0
    assert m.loc[("cifar100", "oracle"), "batch_size"] == 128
    # Zeus settles at (64, 150 W): 12 s/epoch x 120 W x 5 epochs.
    assert m.loc[("cifar100", "zeus"), "eta_j"] == pytest.approx(12 * 120 * 5)


def test_power_profile(configs):
    b = pd.DataFrame({"gpu": ["v100"], "workload": ["cifar100"], "batch_size": [64]})
    prof = metrics.power_profile(configs, b).set_index("power_limit_w")
    assert list(prof.index) == [150.0, 250.0]
    assert prof.loc[250.0, ["avg_power_w_rel", "epochs_per_hour_rel", "energy_per_epoch_j_rel"]].tolist() == [
        1,
        1,
        1,
    ]
    assert prof.loc[150.0, "avg_power_w_rel"] == pytest.approx(0.6)
    assert prof.loc[150.0, "epochs_per_hour_rel"] == pytest.approx(1 / 1.2)
    assert prof.loc[150.0, "energy_per_epoch_j_rel"] == pytest.approx(0.72)


def test_per_sample(power_h200):
    per = metrics.per_sample(power_h200).set_index("batch_size")
    assert per.loc[64, "energy_per_sample_j"] == pytest.approx((200 + 64) / 640)
    assert per.loc[64, "workload"] == "cifar100/shufflenetv2"
