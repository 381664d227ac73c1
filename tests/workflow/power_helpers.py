"""Synthetic P100-like and RTX6000-like power traces in the Zeus CSV format (made here, from a model).

Nothing is derived from the published P100/RTX6000 traces (not reachable here): only the GPUs'
published power-limit ranges are used, P100 125-250 W and RTX6000 100-260 W. Each (workload,
batch size) of the train trace gets one row per limit: the time per epoch grows as the limit
drops and the batch shrinks; the average power is below the limit and grows with the batch.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

#: Published power-limit ranges (min, max, step W) of the two GPUs.
LIMITS = {"p100": (125, 250, 25), "rtx6000": (100, 260, 20)}
#: Relative speed of each GPU (an arbitrary, synthetic choice).
SPEED = {"p100": 0.6, "rtx6000": 1.1}


def limits_of(gpu: str) -> list[int]:
    """The GPU's power limits, largest first."""
    lo, hi, step = LIMITS[gpu]
    return list(range(hi, lo - 1, -step))


def write_power_csv(train_csv: Path, gpu: str, out: Path) -> Path:
    """Write ``out/summary_power_<gpu>.csv`` for every (dataset, network, optimizer, batch size) of the train trace."""
    with train_csv.open(newline="") as fh:
        keys = sorted(
            {(r["dataset"], r["network"], r["optimizer"], int(r["batch_size"])) for r in csv.DictReader(fh)}
        )
    rng = np.random.default_rng(len(gpu))
    lo, hi, _ = LIMITS[gpu]
    path = out / f"summary_power_{gpu}.csv"
    out.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "dataset",
                "network",
                "batch_size",
                "optimizer",
                "power_limit",
                "time_per_epoch",
                "average_power",
            ]
        )
        for dataset, network, optimizer, b in keys:
            base_s = 500.0 * (1.0 + 64.0 / b) / SPEED[gpu] * (1.0 + 0.1 * rng.random())
            demand = lo * 0.7 + (hi - lo * 0.7) * b / (b + 64.0)  # the power the batch would draw unlimited
            for p in limits_of(gpu):
                power = min(demand, p * 0.97)
                slow = (demand / power) ** 0.6 if power < demand else 1.0
                w.writerow([dataset, network, b, optimizer, p, f"{base_s * slow:.6f}", f"{power:.6f}"])
    return path
