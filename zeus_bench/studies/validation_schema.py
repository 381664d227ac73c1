"""Schemas of the validation tables (``workflows/validate.smk``, issue 35).

A recurring job is measured on a GPU twice over: its traces (``train``, ``power``) through the
sweep, and an online run of the job under :mod:`zeus_bench.online`; the simulator replays the
traces and :mod:`zeus_bench.studies.validation` compares the two. Kinds:

- ``validation_online``: the measured online run, one row per try;
- ``validation_noise``: run-to-run spread of time per epoch and power from repeated sweep points;
- ``validation_recurrences``: per recurrence, the measured cumulative figures against the
  simulated distribution over seeds;
- ``validation_findings``: the computed findings, one row each.

Every one of them covers the batch-size side only, at the GPU's current power limit (observe
mode): the limit of a lent GPU is never changed.
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema

#: Said wherever a validation result is shown.
SCOPE = "batch-size side only, at the GPU's current power limit (observe mode)"


def _pos(name: str, description: str, unit: str, example: str, nullable: bool = False) -> Column:
    """A positive, finite float column."""
    return Column(name, "float", description, unit, example, nullable=nullable, checks=("positive", "finite"))


def _nonneg(name: str, description: str, unit: str, example: str, nullable: bool = False) -> Column:
    """A finite float column >= 0."""
    return Column(
        name, "float", description, unit, example, nullable=nullable, checks=("nonnegative", "finite")
    )


_GPU = Column("gpu", "str", "GPU kind of the measurement", example="h200")
_WORKLOAD = Column("workload", "str", "Workload id (registry)", example="teacher-student")
_RECURRENCE = Column("recurrence", "int", "Recurrence of the job, from 1", example="7", checks=("positive",))

VALIDATION_ONLINE = register_schema(
    TableSchema(
        kind="validation_online",
        version=1,
        description=(
            "The measured online run (`workflows/scripts/validate_online.py`): the job trained N times under "
            "`zeus_bench.online` (batch-size optimizer, early stopping, the JIT profiler in observe mode), one "
            "row per try; a recurrence runs tries until one reaches the target, as the simulator's does. "
            f"Energy is the GPU's NVML counter; {SCOPE}."
        ),
        columns=(
            _GPU,
            _WORKLOAD,
            _RECURRENCE,
            Column("attempt", "int", "Try within the recurrence, from 1", example="1", checks=("positive",)),
            Column(
                "batch_size", "int", "Batch size the optimizer chose", "samples", "512", checks=("positive",)
            ),
            _pos("power_limit_w", "Power limit in force (read, never set)", "W", "700"),
            Column("epochs", "int", "Epochs trained", "epochs", "9", checks=("positive",)),
            Column("reached", "bool", "Whether the try reached the target metric", example="True"),
            Column(
                "early_stopped",
                "bool",
                "Whether it was stopped early (beta x the best cost)",
                example="False",
            ),
            Column(
                "metric",
                "float",
                "Validation metric after its last epoch",
                example="0.931",
                checks=("finite",),
            ),
            _nonneg("energy_j", "Measured GPU energy of the try (profiling included)", "J", "1520.3"),
            _pos("time_s", "Measured wall time of the try (profiling included)", "s", "8.41"),
            _nonneg(
                "cost",
                "Zeus cost of the try, zeus_bench.core.cost.zeus_cost of its energy and time",
                "J",
                "3704",
            ),
            _pos("max_power_w", "MAXPOWER of the cost: the GPU's maximum power limit", "W", "700"),
            Column("seed", "int", "Seed of the try's initial weights and data order", example="1017"),
        ),
        key=("gpu", "workload", "recurrence", "attempt"),
    )
)

VALIDATION_NOISE = register_schema(
    TableSchema(
        kind="validation_noise",
        version=1,
        description=(
            "Run-to-run noise of the power trace: each repeated batch size measured several times by "
            "separate `zeus-bench sweep` processes (a fresh model each), at the current limit; the relative "
            "standard deviations (sample, ddof 1) of time per epoch and average power. The pooled level "
            "(root mean square over batch sizes and both quantities) is the `--noise` given to the simulator."
        ),
        columns=(
            _GPU,
            _WORKLOAD,
            Column("batch_size", "int", "Batch size repeated", "samples", "512", checks=("positive",)),
            Column("repeats", "int", "Measurements of this batch size", example="3", checks=("positive",)),
            _pos("time_per_epoch_mean_s", "Mean time per epoch over the repeats", "s", "0.41"),
            _nonneg("time_per_epoch_rel_std", "Relative standard deviation of time per epoch", "", "0.004"),
            _pos("avg_power_mean_w", "Mean average power over the repeats", "W", "215.3"),
            _nonneg("avg_power_rel_std", "Relative standard deviation of average power", "", "0.006"),
            _nonneg(
                "noise_level",
                "The pooled level used as `--noise` (same on every row; clipped to the simulator's 0.1)",
                "",
                "0.005",
            ),
        ),
        key=("gpu", "workload", "batch_size"),
    )
)

_BAND = "over the simulated seeds"
VALIDATION_RECURRENCES = register_schema(
    TableSchema(
        kind="validation_recurrences",
        version=1,
        description=(
            "Per recurrence, the measured online run's cumulative energy, time and cost against the "
            f"distribution {_BAND} of `zeus-bench simulate` on the measured traces (policy zeus, same eta, "
            "beta and N), without and with `--noise` at the measured run-to-run level, and the batch-size "
            f"choice against the simulated choices; {SCOPE}."
        ),
        columns=(
            _GPU,
            _WORKLOAD,
            _RECURRENCE,
            Column("measured_batch_size", "int", "Batch size of the measured first try", "samples", "512"),
            _nonneg(
                "measured_cum_energy_j", "Measured cumulative energy up to this recurrence", "J", "41200"
            ),
            _pos("measured_cum_time_s", "Measured cumulative time", "s", "221.5"),
            _nonneg("measured_cum_cost", "Measured cumulative cost", "J", "98100"),
            _nonneg(
                "sim_cum_cost_p2_5",
                f"2.5th percentile of the simulated cumulative cost {_BAND}",
                "J",
                "80000",
            ),
            _nonneg("sim_cum_cost_p50", f"Median of the simulated cumulative cost {_BAND}", "J", "95000"),
            _nonneg(
                "sim_cum_cost_p97_5",
                f"97.5th percentile of the simulated cumulative cost {_BAND}",
                "J",
                "120000",
            ),
            _nonneg("sim_cum_energy_p50", f"Median simulated cumulative energy {_BAND}", "J", "40000"),
            _nonneg("sim_cum_time_p50", f"Median simulated cumulative time {_BAND}", "s", "210"),
            _nonneg(
                "noise_cum_cost_p2_5",
                "2.5th percentile of the simulated cumulative cost with `--noise`",
                "J",
                "79000",
            ),
            _nonneg("noise_cum_cost_p97_5", "97.5th percentile with `--noise`", "J", "121000"),
            Column(
                "percentile",
                "float",
                "Percentile of the measured cumulative cost in the simulated distribution (mid-rank, 0-100)",
                "%",
                "62.5",
                checks=("finite", "nonnegative"),
            ),
            Column(
                "choice_share",
                "float",
                "Share of simulated seeds whose first try at this recurrence chose the measured batch size",
                "",
                "0.35",
                checks=("finite", "nonnegative"),
            ),
        ),
        key=("gpu", "workload", "recurrence"),
    )
)

VALIDATION_FINDINGS = register_schema(
    TableSchema(
        kind="validation_findings",
        version=1,
        description=(
            "The validation's computed findings (`zeus-bench validate compare`), one row each: the name, its "
            f"value, and the sentence the report prints; {SCOPE}."
        ),
        columns=(
            _GPU,
            _WORKLOAD,
            Column("finding", "str", "Finding id", example="percentile_at_N"),
            Column(
                "value", "float", "Its value (1/0 for a yes/no finding)", example="62.5", checks=("finite",)
            ),
            Column("text", "str", "The sentence the report prints", example="At recurrence 30 ..."),
        ),
        key=("gpu", "workload", "finding"),
    )
)
