"""Table kinds written by the GPU layer.

* ``power_timeline``: one row per (GPU, sample) of instant power taken by
  :class:`zeus_bench.device.monitor.EnergyMonitor`'s background sampler.
* ``energy_measurement``: one row per (run, GPU) of a command measured by ``zeus-bench measure``.
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema
from zeus_bench.store.schema import Check

POWER_TIMELINE = register_schema(
    TableSchema(
        kind="power_timeline",
        version=1,
        description="Instant GPU power sampled in the background during a measurement.",
        columns=(
            Column("gpu_index", "int", "NVML index of the GPU sampled", "", "0", checks=("nonnegative",)),
            Column("gpu_uuid", "str", "UUID of the GPU sampled", "", "GPU-5e1c..."),
            Column(
                "time_s",
                "float",
                "Time of the sample since the monitor started",
                "s",
                "12.3",
                checks=("finite",),
            ),
            Column(
                "unix_time_s", "float", "Unix time of the sample", "s", "1764500000.1", checks=("finite",)
            ),
            Column(
                "power_w",
                "float",
                "Instant power drawn by the GPU",
                "W",
                "512.4",
                checks=("nonnegative", "finite"),
            ),
        ),
        key=("gpu_index", "time_s"),
    )
)

_NONNEG: tuple[Check, ...] = ("nonnegative", "finite")

ENERGY_MEASUREMENT = register_schema(
    TableSchema(
        kind="energy_measurement",
        version=1,
        description="A command's GPU energy, time and average power, one row per run and GPU "
        "(`zeus-bench measure --out FILE.parquet`; `.csv` for the same columns as text).",
        columns=(
            Column("run", "int", "Run of the command, from 1 (`--repeat`)", "", "1", checks=("positive",)),
            Column("gpu_index", "int", "NVML index of the GPU measured", "", "0", checks=("nonnegative",)),
            Column("gpu_name", "str", "Name of the GPU", "", "NVIDIA H200"),
            Column("gpu_uuid", "str", "UUID of the GPU", "", "GPU-5e1c..."),
            Column("backend", "str", "GPU backend measured (`nvml` or `fake`)", "", "nvml"),
            Column("command", "str", "The command run, shell-quoted", "", "python train.py --epochs 1"),
            Column(
                "exit_status", "int", "The command's exit status (negative: killed by that signal)", "", "0"
            ),
            Column(
                "time_s",
                "float",
                "Wall time of the run (the same for every GPU of a run)",
                "s",
                "61.2",
                checks=_NONNEG,
            ),
            Column(
                "energy_j",
                "float",
                "Energy the GPU used during the run (hardware counter, or "
                "integrated sampled power where the GPU has none)",
                "J",
                "30512.4",
                checks=_NONNEG,
            ),
            Column(
                "energy_uncertainty_j",
                "float",
                "Uncertainty of energy_j, +-: one counter update period times the run's power",
                "J",
                "52.1",
                checks=_NONNEG,
            ),
            Column("avg_power_w", "float", "energy_j / time_s", "W", "498.6", checks=_NONNEG),
            Column(
                "counter_update_period_s",
                "float",
                "The energy counter's measured update period",
                "s",
                "0.1",
                checks=_NONNEG,
            ),
            Column(
                "energy_from",
                "str",
                "`edges` (counter read at the run's start and end) or "
                "`counter updates` (interpolated between updates)",
                "",
                "edges",
            ),
            Column(
                "high_uncertainty",
                "bool",
                "Whether the run's relative energy uncertainty exceeds 5 %",
                "",
                "False",
            ),
        ),
        key=("run", "gpu_index"),
    )
)
