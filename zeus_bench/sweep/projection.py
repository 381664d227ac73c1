"""Projection of energy and time to accuracy onto a GPU that has a power trace but no train trace.

The Zeus paper observes that the number of epochs a job needs to reach its target depends on the
batch size (and the training path), not on the GPU. So a train trace recorded on one GPU joined
with a power trace measured on another projects, per batch size, the expected time to accuracy
``TTA = mean epochs x time per epoch`` and energy to accuracy ``ETA = TTA x average power`` on the
other GPU. The join, the expected values and the savings are those of
:mod:`zeus_bench.traces.jobs` and :mod:`zeus_bench.traces.potential`; this module only selects the rows and
labels the result.

When the power trace holds one limit per batch size (an observe-mode sweep), the power-limit
dimension is absent: every saving is from batch-size tuning alone. The output says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from zeus_bench.core.cost import DEFAULT_COST, Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.store import read_table
from zeus_bench.traces.jobs import JobTrace, build_job
from zeus_bench.traces.potential import potential_row
from zeus_bench.traces.workloads import load_workloads

NOTE = (
    "Projection: epochs to target from the train trace (recorded on other GPUs), time per epoch and "
    "average power from the power trace of the target GPU; epochs to target depend on the batch size, "
    "not on the GPU (Zeus, NSDI'23).\n"
)
ABSENT = (
    "The power-limit dimension is ABSENT: the power trace holds one limit ({limits}) per batch size, so "
    "the savings below are those of batch-size tuning alone. b0 = default batch size; maxbatch = largest "
    "batch size in both traces whose runs all reach the target.\n"
)

SUMMARY_COLUMNS = {
    "gpu": "gpu",
    "workload": "workload",
    "b0": "b0",
    "baseline_eta_j": "b0_eta_j",
    "baseline_tta_s": "b0_tta_s",
    "min_energy_bs": "least_energy_bs",
    "min_energy_eta_j": "least_energy_eta_j",
    "min_energy_tta_s": "least_energy_tta_s",
    "min_cost_bs": "least_cost_bs",
    "min_cost_eta_j": "least_cost_eta_j",
    "min_cost_tta_s": "least_cost_tta_s",
    "min_energy_saving_pct": "least_energy_saving_vs_b0_pct",
    "min_cost_energy_saving_pct": "least_cost_energy_saving_vs_b0_pct",
    "min_cost_time_saving_pct": "least_cost_time_saving_vs_b0_pct",
    "maxbatch_bs": "maxbatch_bs",
    "maxbatch_eta_j": "maxbatch_eta_j",
    "maxbatch_tta_s": "maxbatch_tta_s",
    "min_energy_saving_vs_maxbatch_pct": "least_energy_saving_vs_maxbatch_pct",
    "min_cost_energy_saving_vs_maxbatch_pct": "least_cost_energy_saving_vs_maxbatch_pct",
    "min_cost_time_saving_vs_maxbatch_pct": "least_cost_time_saving_vs_maxbatch_pct",
}


def projected_jobs(
    train_path: str | Path, power_path: str | Path, gpu: str | None, workloads_file: str | Path | None = None
) -> list[JobTrace]:
    """One :class:`JobTrace` per registered workload present in both traces.

    Raises:
        ConfigError: the power trace holds several GPU kinds and ``gpu`` is not given, ``gpu`` is not
            in it, or no workload is in both traces.
    """
    train = read_table(train_path, "train")
    power = read_table(power_path, "power")
    kinds = sorted(power["gpu"].unique())
    if gpu is None:
        if len(kinds) != 1:
            raise ConfigError(f"{power_path} holds GPU kinds {', '.join(kinds)}; choose one with --gpu")
        gpu = kinds[0]
    elif gpu not in kinds:
        raise ConfigError(f"GPU {gpu!r} is not in {power_path} (it holds {', '.join(kinds)})")
    power = power[power["gpu"] == gpu].reset_index(drop=True)
    joined = train.merge(power, on=["dataset", "network", "optimizer", "batch_size"], how="inner")
    present = set(zip(joined["dataset"], joined["network"], joined["optimizer"], strict=True))
    specs = [
        w for w in load_workloads(workloads_file).values() if (w.dataset, w.network, w.optimizer) in present
    ]
    if not specs:
        raise ConfigError(f"no workload has batch sizes in both {train_path} and {power_path}")
    return [build_job(joined, power, spec, gpu) for spec in specs]


def _limits_note(jobs: list[JobTrace]) -> str:
    per_bs = max(int(np.max(np.sum(~np.isnan(j.time_per_epoch_s), axis=1))) for j in jobs)
    if per_bs > 1:
        return f"Power limits per batch size: up to {per_bs}; savings include power-limit tuning.\n"
    limits = sorted({float(p) for j in jobs for p in j.power_limits})
    return ABSENT.format(limits=", ".join(f"{p:g} W" for p in limits))


def project(
    train_path: str | Path,
    power_path: str | Path,
    gpu: str | None = None,
    cost: Cost = DEFAULT_COST,
    workloads_file: str | Path | None = None,
) -> pd.DataFrame:
    """Per workload: projected ETA/TTA of b0, least-energy and least-cost batch sizes, maxbatch.

    The savings of the least-energy and least-cost batch sizes are against b0 and maxbatch (percent).

    ``df.attrs["power_limit_note"]`` says whether the power-limit dimension is present.
    """
    jobs = projected_jobs(train_path, power_path, gpu, workloads_file)
    rows = [potential_row(j, cost) for j in jobs]
    df = pd.DataFrame(rows)[list(SUMMARY_COLUMNS)].rename(columns=SUMMARY_COLUMNS)
    df.insert(2, "power_limit_w", [float(j.power_limits.max()) for j in jobs])
    df.insert(3, "eta", cost.eta)
    df.attrs["power_limit_note"] = _limits_note(jobs)
    return df


def project_per_batch_size(
    train_path: str | Path,
    power_path: str | Path,
    gpu: str | None = None,
    cost: Cost = DEFAULT_COST,
    workloads_file: str | Path | None = None,
) -> pd.DataFrame:
    """One row per (workload, batch size, limit): projected mean epochs, TTA, ETA and cost."""
    jobs = projected_jobs(train_path, power_path, gpu, workloads_file)
    parts = []
    for j in jobs:
        c = j.configurations(cost)
        c.insert(0, "workload", j.workload.id)
        c.insert(0, "gpu", j.gpu)
        c["is_b0"] = c["batch_size"] == j.b0
        parts.append(c)
    df = pd.concat(parts, ignore_index=True)
    df.attrs["power_limit_note"] = _limits_note(jobs)
    return df
