"""A tiny synthetic trace folder in the store's format, so command-line tests never need the Zeus traces.

Three registered workloads on one GPU kind (``v100``, limits 150 and 250 W):

* ``squad`` (b0 32): batch sizes 16, 32, 64; two paths each; 64's first path never converges;
* ``sentiment140`` (b0 128): batch sizes 64, 128;
* ``cifar100`` (b0 1024): batch sizes 512, 1024, which need at least 5 epochs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import zeus_bench.traces  # noqa: F401  (registers the train and power kinds)
from zeus_bench.store import write_table

IDENT = {
    "squad": ("squad", "bert_base_uncased", "adamw", 84.0),
    "sentiment140": ("sentiment140", "bert_base_uncased", "adamw", 0.84),
    "cifar100": ("cifar100", "shufflenetv2", "adadelta", 0.6),
}
# Target epochs of the two training paths of each batch size (nan: never).
TARGETS = {
    "squad": {16: (3, 4), 32: (2, 3), 64: (np.nan, 5)},
    "sentiment140": {64: (2, 3), 128: (3, 3)},
    "cifar100": {512: (5, 6), 1024: (6, 7)},
}
LIMITS = (150.0, 250.0)


def write_tiny_traces(folder: Path) -> Path:
    """Write ``train.parquet`` and ``power-v100.parquet`` into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    train, power = [], []
    for workload, paths in TARGETS.items():
        dataset, network, optimizer, target = IDENT[workload]
        for b, epochs in paths.items():
            for run, e in enumerate(epochs):
                train.append(
                    {
                        "dataset": dataset, "network": network, "optimizer": optimizer, "batch_size": b,
                        "learning_rate": 1e-4, "run": run, "target_metric": target,
                        "target_epoch": None if np.isnan(e) else int(e),
                    }
                )  # fmt: skip
            for pl in LIMITS:
                power.append(
                    {
                        "gpu": "v100", "dataset": dataset, "network": network, "optimizer": optimizer,
                        "batch_size": b, "power_limit_w": pl,
                        "time_per_epoch_s": 100.0 * 64 / b * (1.3 if pl == 150.0 else 1.0),
                        "avg_power_w": 0.8 * pl + b / 100,
                    }
                )  # fmt: skip
    write_table(pd.DataFrame(train), folder / "train.parquet", "train")
    write_table(pd.DataFrame(power), folder / "power-v100.parquet", "power")
    return folder


def two_gpu_traces(folder: Path) -> Path:
    """Tiny traces in ``folder`` with a copy of the V100 power trace as an A40's."""
    write_tiny_traces(folder)
    power = pd.read_parquet(folder / "power-v100.parquet").assign(gpu="a40")
    write_table(power, folder / "power-a40.parquet", "power")
    return folder
