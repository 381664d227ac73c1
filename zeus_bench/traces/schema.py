"""Schemas of the two trace kinds.

* ``train``: one row per (dataset, network, optimizer, learning rate, batch size, run, target
  metric) with the epoch at which that run first reached the target (missing: never).
* ``power``: one row per (gpu, dataset, network, optimizer, batch size, power limit) with the
  time per epoch and the average power drawn while training at that configuration.

Both are documented column by column in ``results/README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeus_bench.store import Column, TableSchema, register_schema

if TYPE_CHECKING:  # frames only in the upgrades: reading and writing need no pandas
    import pandas as pd

_IDENTITY = (
    Column("dataset", "str", "Dataset of the workload (trace name, lower case)", example="imagenet"),
    Column("network", "str", "Model trained on it", example="resnet50"),
    Column("optimizer", "str", "Optimizer used for training (lower case)", example="adadelta"),
)

_BATCH_SIZE = Column(
    "batch_size", "int", "Global batch size (samples per iteration)", "samples", "256", checks=("positive",)
)

TRAIN = register_schema(
    TableSchema(
        kind="train",
        version=1,
        description="Epochs each training run needed to reach a target validation metric.",
        columns=(
            *_IDENTITY,
            _BATCH_SIZE,
            Column(
                "learning_rate",
                "float",
                "Learning rate of the run",
                "",
                "2.6e-05",
                checks=("positive", "finite"),
            ),
            Column(
                "run",
                "int",
                "Repetition index (seed) of the same configuration: a training path",
                "",
                "4",
                checks=("nonnegative",),
            ),
            Column(
                "target_metric",
                "float",
                "Target validation metric (accuracy, F1, WER, ... as the workload defines)",
                "",
                "0.65",
                checks=("finite",),
            ),
            Column(
                "target_epoch",
                "int",
                "First epoch at which the run reached the target; missing = never within the traced epochs",
                "epochs",
                "9",
                nullable=True,
                checks=("positive",),
            ),
        ),
        key=("dataset", "network", "optimizer", "batch_size", "learning_rate", "run", "target_metric"),
    )
)


def _power_v1_to_v2(df: pd.DataFrame) -> pd.DataFrame:
    """Version 1 had no confidence columns: a measured row (``measured_s``) was one window."""
    import pandas as pd

    out = df.copy()
    if "measured_s" in out.columns:
        measured = out["measured_s"].notna()
        out["num_windows"] = pd.array([1 if m else None for m in measured], dtype="Int64")
    else:
        out["num_windows"] = pd.array([None] * len(out), dtype="Int64")
    for name in ("time_per_epoch_ci_s", "avg_power_ci_w", "energy_per_sample_ci_rel"):
        out[name] = float("nan")
    out["ci_met"] = pd.array([None] * len(out), dtype="boolean")
    return out


POWER = register_schema(
    TableSchema(
        kind="power",
        version=2,
        description="Time per epoch and average power per (GPU, workload, batch size, power limit).",
        columns=(
            Column(
                "gpu",
                "str",
                "GPU kind the measurement was taken on (from the file name for Zeus traces)",
                example="v100",
            ),
            *_IDENTITY,
            _BATCH_SIZE,
            Column(
                "power_limit_w",
                "float",
                "Power limit of each GPU during the measurement",
                "W",
                "225",
                checks=("positive", "finite"),
            ),
            Column(
                "time_per_epoch_s",
                "float",
                "Wall time of one training epoch",
                "s",
                "11198.95",
                checks=("positive", "finite"),
            ),
            Column(
                "avg_power_w",
                "float",
                "Average power drawn during training, summed over the GPUs used",
                "W",
                "116.63",
                checks=("positive", "finite"),
            ),
            Column(
                "num_gpus",
                "int",
                "Number of GPUs the job used (missing: 1)",
                "",
                "1",
                nullable=True,
                required=False,
                checks=("positive",),
            ),
            Column(
                "samples_per_s",
                "float",
                "Measured training throughput (sweeps only)",
                "samples/s",
                "2510.3",
                nullable=True,
                required=False,
                checks=("positive", "finite"),
            ),
            Column(
                "measured_s",
                "float",
                "Wall time over which time and power were measured (sweeps only)",
                "s",
                "20.4",
                nullable=True,
                required=False,
                checks=("positive", "finite"),
            ),
            Column(
                "observe_mode",
                "bool",
                "True when the sweep ran at the GPU's current limit without setting it (sweeps only)",
                "",
                "True",
                nullable=True,
                required=False,
            ),
            Column(
                "num_windows",
                "int",
                "Energy windows the point was measured in (sweeps only; version-1 sweeps: 1)",
                "",
                "4",
                nullable=True,
                required=False,
                checks=("positive",),
            ),
            Column(
                "time_per_epoch_ci_s",
                "float",
                "Half-width of the 95 % confidence interval of time_per_epoch_s over the windows "
                "(sweeps of 2 or more windows)",
                "s",
                "1.9",
                nullable=True,
                required=False,
                checks=("nonnegative", "finite"),
            ),
            Column(
                "avg_power_ci_w",
                "float",
                "Half-width of the 95 % confidence interval of avg_power_w over the windows "
                "(sweeps of 2 or more windows)",
                "W",
                "1.2",
                nullable=True,
                required=False,
                checks=("nonnegative", "finite"),
            ),
            Column(
                "energy_per_sample_ci_rel",
                "float",
                "Relative half-width of the 95 % confidence interval of energy per sample "
                "(0.01 = 1 %; sweeps of 2 or more windows)",
                "",
                "0.004",
                nullable=True,
                required=False,
                checks=("nonnegative", "finite"),
            ),
            Column(
                "ci_met",
                "bool",
                "Whether energy per sample reached the sweep's confidence target before its time cap "
                "(false: flagged)",
                "",
                "True",
                nullable=True,
                required=False,
            ),
            Column(
                "avg_power_uncertainty_w",
                "float",
                "Uncertainty (+-) of avg_power_w from the energy counter's update period: one update's "
                "energy at each window's power, root-sum-square over the windows, over measured_s (sweeps only)",
                "W",
                "2.9",
                nullable=True,
                required=False,
                checks=("nonnegative", "finite"),
            ),
        ),
        key=("gpu", "dataset", "network", "optimizer", "batch_size", "power_limit_w"),
        upgrades={1: _power_v1_to_v2},
    )
)
