"""The ``carbon_intensity`` kind: the grid's carbon intensity over time, for ``zeus-bench simulate --carbon-intensity``.

The per-column rules live here; the rule across rows (times strictly ascending) stays in
:mod:`zeus_bench.sim.scenarios.carbon`.
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema

CARBON_INTENSITY = register_schema(
    TableSchema(
        kind="carbon_intensity",
        version=1,
        description=(
            "A carbon-intensity series (`.csv` or `.parquet`, e.g. exported from a grid operator or "
            "Electricity Maps, times turned into seconds): one row per point, times strictly ascending. "
            "Each row's intensity holds from its time until the next row's; the last row's holds at its "
            "time only, so the series must reach the last recurrence's time. Read by `zeus-bench simulate "
            "--carbon-intensity`, which places each recurrence in time (`--recurrence-period-s`, or the "
            "arrival table's start times) and writes each try's emissions (`co2_g` of the runs table)."
        ),
        columns=(
            Column(
                "time_s",
                "float",
                "Time the intensity starts to hold, from any origin (the series' first row is the first recurrence's time)",
                "s",
                "3600.0",
                checks=("finite",),
            ),
            Column(
                "intensity_g_per_kwh",
                "float",
                "Carbon intensity of the electricity drawn from then on (grams of CO2-eq per kWh)",
                "gCO2/kWh",
                "412.0",
                checks=("finite", "nonnegative"),
            ),
        ),
        key=("time_s",),
    )
)
