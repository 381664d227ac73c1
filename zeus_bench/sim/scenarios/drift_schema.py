"""The ``drift`` kind: a user's drift table for ``zeus-bench simulate --drift`` (:mod:`zeus_bench.sim.scenarios.drift`).

The per-column rules live here; the cross-row ones (a bound on the rows, workloads that exist,
batch sizes the job has) stay in :mod:`zeus_bench.sim.scenarios.drift`.
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema

DRIFT = register_schema(
    TableSchema(
        kind="drift",
        version=1,
        description=(
            "A drift table (`.csv` or `.parquet`, written by hand or by `python -m zeus_bench.sim.scenarios.drift`): how a "
            "recurring job's epochs to the target change over its recurrences, one row per point. Per (workload, "
            "batch size) the factor is interpolated linearly between the listed recurrences and held before the "
            "first and after the last; batch sizes not listed keep factor 1."
        ),
        columns=(
            Column("workload", "str", "Workload id (built-in or of `--workloads-file`)", example="imagenet"),
            Column(
                "batch_size",
                "int",
                "Batch size whose training paths drift (one of the job's trace)",
                "samples",
                "256",
                checks=("positive",),
            ),
            Column(
                "recurrence",
                "int",
                "Recurrence, from 1, at which the factor holds",
                example="70",
                checks=("positive",),
            ),
            Column(
                "epoch_factor",
                "float",
                "Multiplier of every path's target epoch at that recurrence",
                example="1.5",
                checks=("positive", "finite"),
            ),
        ),
        key=("workload", "batch_size", "recurrence"),
    )
)
