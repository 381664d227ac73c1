"""Schemas of the simulator's tables: ``runs`` (one row per try) and ``sim_summary``.

Every built-in kind is registered by importing :mod:`zeus_bench.catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.sim.scenarios.terms import term_columns
from zeus_bench.store import Column, TableSchema, register_schema

if TYPE_CHECKING:  # frames only in the upgrades: reading and writing need no pandas
    import pandas as pd


def _runs_v1_to_v2(df: pd.DataFrame) -> pd.DataFrame:
    """Version 1 had a row only for tries that ran: every row gets ``ran`` True."""
    out = df.copy()
    out["ran"] = True
    return out


def _runs_v2_to_v3(df: pd.DataFrame) -> pd.DataFrame:
    """Version 2 had no cost terms: each term's column is missing (no term was given)."""
    out = df.copy()
    for column in term_columns():
        out[column.name] = float("nan")
    return out


RUNS = register_schema(
    TableSchema(
        kind="runs",
        version=3,
        description=(
            "Simulated tries of recurring training jobs: one row per try that ran, and one row "
            "(ran False) per recurrence in which no try ran."
        ),
        columns=(
            Column("gpu", "str", "GPU kind of the power trace replayed", example="v100"),
            Column("workload", "str", "Workload id (registry)", example="imagenet"),
            Column("policy", "str", "Policy name (registry)", example="zeus"),
            Column("seed", "int", "Seed of the replay (paths and policy)", example="1"),
            Column(
                "eta",
                "float",
                "Energy weight of the cost, in [0, 1]",
                example="0.5",
                checks=("finite", "nonnegative"),
            ),
            Column(
                "beta",
                "float",
                "Early-stopping threshold, multiple of the best cost so far (inf: off)",
                example="2.0",
                checks=("positive",),
            ),
            Column(
                "recurrence",
                "int",
                "Recurrence of the job, from 1 (arrival tables: the job's row in its group, by start time)",
                example="3",
                checks=("positive",),
            ),
            Column(
                "attempt",
                "int",
                "Try within the recurrence, from 1; tries whose early-stop budget was zero are not rows but keep their number (on a ran-False row: the tries attempted)",
                example="1",
                checks=("positive",),
            ),
            Column("batch_size", "int", "Batch size of the try", "samples", "192", checks=("positive",)),
            Column(
                "power_limit_w",
                "float",
                "Power limit of the try (after profiling: the limit chosen)",
                "W",
                "200",
                checks=("positive", "finite"),
            ),
            Column(
                "epochs",
                "float",
                "Epochs the try ran (target epoch if reached, else its budget; 0 on a ran-False row)",
                "epochs",
                "23",
                checks=("nonnegative", "finite"),
            ),
            Column(
                "energy_j",
                "float",
                "Energy of the try (arrival tables: scaled by runtime_ratio)",
                "J",
                "1.2e8",
                checks=("nonnegative", "finite"),
            ),
            Column(
                "time_s",
                "float",
                "Time of the try (arrival tables: scaled by runtime_ratio)",
                "s",
                "5.3e5",
                checks=("nonnegative", "finite"),
            ),
            Column(
                "cost",
                "float",
                "Zeus cost of the try (zeus_bench.core.cost.Cost.zeus_cost: eta weighs energy against MAXPOWER x time; with `--carbon-price`, plus the price of co2_g)",
                "J",
                "9.1e7",
                checks=("nonnegative", "finite"),
            ),
            Column("reached", "bool", "Whether the try reached the target metric", example="True"),
            Column(
                "profiled",
                "bool",
                "Whether the try profiled the batch size's power limits (JIT) in its first epoch",
                example="False",
            ),
            Column(
                "ran",
                "bool",
                "True for a try that ran; False on the one row of a recurrence in which no try ran (every early-stop budget was zero: nothing consumed, not reached, configuration of the last try)",
                example="True",
            ),
            Column(
                "window",
                "int",
                "Observation window of the batch-size bandit (0 = unbounded)",
                example="0",
                checks=("nonnegative",),
            ),
            Column("num_gpus", "int", "GPUs per job", example="1", checks=("positive",)),
            Column(
                "max_power_w",
                "float",
                "MAXPOWER of the cost: largest power limit x GPUs",
                "W",
                "250",
                checks=("positive", "finite"),
            ),
            Column(
                "expected_energy_j",
                "float",
                "Expected energy to reach the target at this try's configuration (mean over converging paths; scaled like energy_j); missing if no path converges",
                "J",
                "1.3e8",
                nullable=True,
                checks=("nonnegative",),
            ),
            Column(
                "expected_time_s",
                "float",
                "Expected time to reach the target at this configuration",
                "s",
                "5.5e5",
                nullable=True,
                checks=("nonnegative",),
            ),
            Column(
                "expected_cost",
                "float",
                "Expected cost to reach the target at this configuration",
                "J",
                "9.5e7",
                nullable=True,
                checks=("nonnegative",),
            ),
            Column(
                "group",
                "str",
                "Arrival-table group of the job (missing for a plain recurring job)",
                example="g17",
                nullable=True,
                required=False,
            ),
            # Each cost term's amount per try (zeus_bench.sim.scenarios.terms), e.g. co2_g.
            *term_columns(),
        ),
        key=("gpu", "workload", "policy", "seed", "eta", "beta", "window", "group", "recurrence", "attempt"),
        upgrades={1: _runs_v1_to_v2, 2: _runs_v2_to_v3},
    )
)

_SUMMARY_METRICS: list[Column] = []
for _metric, _unit in (("energy", "energy_j"), ("time", "time_s")):
    for _ref in ("baseline", "max_batch"):
        for _scope, _words in (("cum", "over all recurrences"), ("last10", "over the last 10 recurrences")):
            for _stat in ("mean", "std"):
                _SUMMARY_METRICS.append(
                    Column(
                        f"{_metric}_savings_vs_{_ref}_{_scope}_pct_{_stat}",
                        "float",
                        f"{_stat.capitalize()} over seeds of the {_metric} savings against `{_ref.replace('_', '-')}` {_words}: "
                        f"100 x (1 - policy total / reference total), the reference's expected {_unit} per recurrence",
                        "%",
                        "62.5",
                        nullable=True,
                    )
                )

_RATIOS: list[Column] = []
for _name, _words, _example in (
    (
        "cost_ratio_vs_baseline_cum",
        "cumulative cost relative to `baseline`: policy cost / the baseline's expected cost, summed over the same recurrences",
        "0.71",
    ),
    (
        "cost_ratio_vs_max_batch_cum",
        "cumulative cost relative to `max-batch`: policy cost / the max-batch baseline's expected cost, summed over the same recurrences",
        "0.93",
    ),
    (
        "regret_vs_oracle_cum_pct",
        "cumulative regret in percent of the oracle's expected cumulative cost: 100 x (policy cost / oracle cost - 1)",
        "12.4",
    ),
):
    for _stat in ("mean", "std"):
        _RATIOS.append(
            Column(
                f"{_name}_{_stat}",
                "float",
                f"{_stat.capitalize()} over seeds of the {_words}",
                "%" if _name.endswith("_pct") else "",
                _example,
                nullable=True,
            )
        )


def _refuse_v1(df: pd.DataFrame) -> pd.DataFrame:
    """Version 1 dropped recurrences in which no try ran: it cannot be upgraded, only recomputed."""
    raise TraceFormatError(
        "sim_summary schema_version 1 left out recurrences in which no try ran; "
        "run `zeus-bench summarize` again on its runs table"
    )


SUMMARY = register_schema(
    TableSchema(
        kind="sim_summary",
        version=2,
        description="Savings, cost ratios, regret, failed recurrences and convergence of each policy, per (gpu, workload, policy, eta, beta, window). Every recurrence counts: a failed one (no try reached the target) is charged what its tries spent plus the baseline's expected energy, time and cost of that recurrence. Standard deviations are over seeds, population (ddof 0).",
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("workload", "str", "Workload id", example="imagenet"),
            Column("policy", "str", "Policy name", example="zeus"),
            Column("eta", "float", "Energy weight of the cost", example="0.5"),
            Column("beta", "float", "Early-stopping threshold", example="2.0"),
            Column("window", "int", "Bandit observation window (0 = unbounded)", example="0"),
            Column("seeds", "int", "Number of seeds summarised", example="10", checks=("positive",)),
            Column(
                "recurrences",
                "int",
                "Recurrences per seed (summed over groups for arrival tables)",
                example="70",
                checks=("positive",),
            ),
            Column(
                "energy_j_mean",
                "float",
                "Mean over seeds of the policy's total energy (failed recurrences charged as described above)",
                "J",
                "1.1e10",
                nullable=True,
            ),
            Column(
                "time_s_mean",
                "float",
                "Mean over seeds of the policy's total time (failed recurrences charged likewise)",
                "s",
                "4.2e7",
                nullable=True,
            ),
            *_SUMMARY_METRICS,
            Column(
                "regret_vs_oracle_cost_j_mean",
                "float",
                "Mean over seeds of the cumulative regret: policy cost minus the oracle's expected cost, summed over recurrences",
                "J",
                "2.3e9",
                nullable=True,
            ),
            Column(
                "regret_vs_oracle_cost_j_std",
                "float",
                "Std over seeds of the cumulative regret against `oracle`",
                "J",
                "4.1e8",
                nullable=True,
            ),
            Column(
                "settle_recurrence_mean",
                "float",
                "Mean over seeds of the first recurrence from which every try uses the final (batch size, limit)",
                "",
                "23.4",
            ),
            Column("settle_recurrence_std", "float", "Std over seeds of that recurrence", "", "5.2"),
            *_RATIOS,
            Column(
                "failed_recurrences_mean",
                "float",
                "Mean over seeds of the recurrences that never reached the target (every try failed, or none "
                "ran); each is charged what its tries spent plus the baseline's expected energy, time and cost",
                "recurrences",
                "0.0",
                checks=("nonnegative",),
            ),
        ),
        key=("gpu", "workload", "policy", "eta", "beta", "window"),
        upgrades={1: _refuse_v1},
    )
)
