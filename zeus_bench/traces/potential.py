"""Potential savings: the best configuration of each workload against both baselines.

Two baselines, always labelled:

* ``baseline`` -- the workload's default batch size b0 at the maximum power limit (the
  comparison of the paper's code);
* ``maxbatch`` -- the largest batch size whose runs all reach the target within max epochs, at
  the maximum power limit (the comparison stated in the paper's summary).

A saving is ``100 * (1 - new / baseline)``; negative when worse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.traces.jobs import JobTrace

POTENTIAL_COLUMNS = [
    "gpu",
    "workload",
    "eta",
    "b0",
    "max_power_w",
    "baseline_eta_j",
    "baseline_tta_s",
    "min_energy_bs",
    "min_energy_pl_w",
    "min_energy_eta_j",
    "min_energy_tta_s",
    "min_energy_saving_pct",
    "min_energy_time_saving_pct",
    "min_cost_bs",
    "min_cost_pl_w",
    "min_cost_eta_j",
    "min_cost_tta_s",
    "min_cost_energy_saving_pct",
    "min_cost_time_saving_pct",
    "maxbatch_bs",
    "maxbatch_eta_j",
    "maxbatch_tta_s",
    "min_energy_saving_vs_maxbatch_pct",
    "min_energy_time_saving_vs_maxbatch_pct",
    "min_cost_energy_saving_vs_maxbatch_pct",
    "min_cost_time_saving_vs_maxbatch_pct",
]


def saving_pct(new: float, base: float) -> float:
    """Percent saved by ``new`` against ``base``: ``100 * (1 - new / base)``."""
    return float(100.0 * (1.0 - new / base))


@dataclass(frozen=True)
class Reference:
    """A (batch size, power limit) configuration with its expected ETA (J) and TTA (s)."""

    batch_size: int
    power_limit_w: float
    eta_j: float
    tta_s: float


def at_max_power(job: JobTrace, configs: pd.DataFrame, batch_size: int) -> Reference:
    """Expected ETA and TTA of ``batch_size`` at its maximum power limit."""
    rows = configs[configs["batch_size"] == batch_size]
    if rows.empty or rows["mean_epochs"].isna().all():
        raise ConfigError(f"{job.workload.id} on {job.gpu}: batch size {batch_size} never reaches the target")
    row = rows.loc[rows["power_limit_w"].idxmax()]
    return Reference(batch_size, float(row["power_limit_w"]), float(row["eta_j"]), float(row["tta_s"]))


def potential_row(job: JobTrace, cost: Cost) -> dict[str, object]:
    """One row of the potential-savings table for one job."""
    configs = job.configurations(cost)
    feasible = configs[configs["feasible"]]
    if feasible.empty:
        raise ConfigError(f"{job.workload.id} on {job.gpu}: no configuration reaches the target in every run")
    base = at_max_power(job, configs, job.b0)
    maxb = at_max_power(job, configs, job.max_batch())
    e = feasible.loc[feasible["eta_j"].idxmin()]
    bs, pl = job.least_cost_configuration(cost)
    c = feasible[(feasible["batch_size"] == bs) & (feasible["power_limit_w"] == pl)].iloc[0]
    return {
        "gpu": job.gpu,
        "workload": job.workload.id,
        "eta": cost.eta,
        "b0": job.b0,
        "max_power_w": job.max_power_w,
        "baseline_eta_j": base.eta_j,
        "baseline_tta_s": base.tta_s,
        "min_energy_bs": int(e["batch_size"]),
        "min_energy_pl_w": float(e["power_limit_w"]),
        "min_energy_eta_j": float(e["eta_j"]),
        "min_energy_tta_s": float(e["tta_s"]),
        "min_energy_saving_pct": saving_pct(e["eta_j"], base.eta_j),
        "min_energy_time_saving_pct": saving_pct(e["tta_s"], base.tta_s),
        "min_cost_bs": int(c["batch_size"]),
        "min_cost_pl_w": float(c["power_limit_w"]),
        "min_cost_eta_j": float(c["eta_j"]),
        "min_cost_tta_s": float(c["tta_s"]),
        "min_cost_energy_saving_pct": saving_pct(c["eta_j"], base.eta_j),
        "min_cost_time_saving_pct": saving_pct(c["tta_s"], base.tta_s),
        "maxbatch_bs": maxb.batch_size,
        "maxbatch_eta_j": maxb.eta_j,
        "maxbatch_tta_s": maxb.tta_s,
        "min_energy_saving_vs_maxbatch_pct": saving_pct(e["eta_j"], maxb.eta_j),
        "min_energy_time_saving_vs_maxbatch_pct": saving_pct(e["tta_s"], maxb.tta_s),
        "min_cost_energy_saving_vs_maxbatch_pct": saving_pct(c["eta_j"], maxb.eta_j),
        "min_cost_time_saving_vs_maxbatch_pct": saving_pct(c["tta_s"], maxb.tta_s),
    }


def potential_table(jobs: list[JobTrace], cost: Cost) -> pd.DataFrame:
    """Potential-savings table, one row per job, columns :data:`POTENTIAL_COLUMNS`."""
    rows = [potential_row(j, cost) for j in jobs]
    df = pd.DataFrame(rows, columns=POTENTIAL_COLUMNS)
    return df.astype(
        {"b0": np.int64, "min_energy_bs": np.int64, "min_cost_bs": np.int64, "maxbatch_bs": np.int64}
    )
