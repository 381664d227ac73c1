"""Fixtures: hand-made result tables with known values, shaped like the package's command outputs."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from fake_results import make_sim


@pytest.fixture
def sim() -> pd.DataFrame:
    return make_sim()


@pytest.fixture
def configs() -> pd.DataFrame:
    """Configurations of two jobs: batch sizes 64, 128 x limits 150, 250 W."""
    rows = []
    for w in ("cifar100", "librispeech"):
        for b, pl in itertools.product((64, 128), (150.0, 250.0)):
            tpe = 10.0 * (64 / b) * (1.2 if pl == 150.0 else 1.0)
            pw = 0.8 * pl
            epochs = 5.0
            rows.append(
                {
                    "gpu": "v100",
                    "workload": w,
                    "batch_size": b,
                    "power_limit_w": pl,
                    "time_per_epoch_s": tpe,
                    "avg_power_w": pw,
                    "energy_per_epoch_j": tpe * pw,
                    "reach_fraction": 1.0,
                    "mean_epochs": epochs,
                    "feasible": not (b == 64 and pl == 250.0),
                    "eta_j": tpe * pw * epochs,
                    "tta_s": tpe * epochs,
                    "cost": 0.0,
                    "on_frontier": False,
                }
            )
    df = pd.DataFrame(rows)
    df["on_frontier"] = df["batch_size"] == 128
    return df


@pytest.fixture
def potential() -> pd.DataFrame:
    rows = []
    for gpu, w, s1, s2 in (
        ("v100", "cifar100", 40.0, 10.0),
        ("v100", "librispeech", 30.0, -5.0),
        ("a40", "cifar100", 50.0, 20.0),
        ("a40", "librispeech", 35.0, 0.0),
    ):
        rows.append(
            {
                "gpu": gpu,
                "workload": w,
                "eta": 0.5,
                "b0": 128,
                "max_power_w": 250.0,
                "baseline_eta_j": 10000.0,
                "baseline_tta_s": 50.0,
                "min_energy_bs": 128,
                "min_energy_pl_w": 150.0,
                "min_energy_eta_j": 7200.0,
                "min_energy_tta_s": 60.0,
                "min_energy_saving_pct": s1,
                "min_energy_time_saving_pct": -20.0,
                "min_cost_bs": 128,
                "min_cost_pl_w": 250.0,
                "min_cost_eta_j": 10000.0,
                "min_cost_tta_s": 50.0,
                "min_cost_energy_saving_pct": 0.0,
                "min_cost_time_saving_pct": 0.0,
                "maxbatch_bs": 128,
                "maxbatch_eta_j": 10000.0,
                "maxbatch_tta_s": 50.0,
                "min_energy_saving_vs_maxbatch_pct": s2,
                "min_energy_time_saving_vs_maxbatch_pct": 0.0,
                "min_cost_energy_saving_vs_maxbatch_pct": 0.0,
                "min_cost_time_saving_vs_maxbatch_pct": 0.0,
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture
def power_h200() -> pd.DataFrame:
    rows = []
    for b in (32, 64, 128, 256):
        rows.append(
            {
                "gpu": "h200",
                "dataset": "cifar100",
                "network": "shufflenetv2",
                "optimizer": "adadelta",
                "batch_size": b,
                "power_limit_w": 700.0,
                "time_per_epoch_s": 5000.0 / b,
                "avg_power_w": 200.0 + b,
                "num_gpus": 1,
                "samples_per_s": 10.0 * b,
                "measured_s": 20.0,
                "observe_mode": True,
            }
        )
    return pd.DataFrame(rows)
