"""Table kinds written by the GPU layer.

* ``power_timeline``: one row per (GPU, sample) of instant power taken by
  :class:`zeus_bench.device.monitor.EnergyMonitor`'s background sampler.
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema

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
