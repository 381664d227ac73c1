"""Schemas of the trace analysis's tables: ``potential``, ``configurations`` and ``reference``.

``zeus-bench potential --format csv`` writes ``potential`` (``results/potential/<gpu>.csv``),
``zeus-bench pareto`` writes ``configurations`` (``results/configs/<gpu>/<workload>.parquet``),
and ``benchmarks/golden/run_original.py --reference`` writes ``reference``
(``results/reference/original_simulator.csv``; ``paper.csv`` is typed from the paper and checked
by the tests).
"""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema

#: The two baselines, in words (the same words everywhere the tables are described).
BASELINE = "b0 at the maximum power limit"
MAX_BATCH = "the largest batch size whose runs all reach the target, at the maximum power limit"


def _f(name: str, description: str, unit: str, example: str) -> Column:
    """A finite float column."""
    return Column(name, "float", description, unit, example, checks=("finite",))


def _pos(name: str, description: str, unit: str, example: str) -> Column:
    """A positive, finite float column (energies, times, powers)."""
    return Column(name, "float", description, unit, example, checks=("positive", "finite"))


def _bs(name: str, description: str, example: str) -> Column:
    return Column(name, "int", description, "samples", example, checks=("positive",))


def _saving(name: str, description: str, example: str) -> Column:
    return _f(name, description, "%", example)


POTENTIAL = register_schema(
    TableSchema(
        kind="potential",
        version=1,
        description=(
            "Potential savings, written by `zeus-bench potential --format csv`: one row per workload; the best "
            f"configuration against two baselines: *baseline* = {BASELINE}; *max-batch* = {MAX_BATCH}. "
            "Savings are 100 x (1 - new / baseline): negative means more."
        ),
        columns=(
            Column("gpu", "str", "GPU kind of the power trace", example="v100"),
            Column("workload", "str", "Workload id (registry)", example="imagenet"),
            Column(
                "eta",
                "float",
                "Energy weight of the cost used to pick the least-cost configuration",
                example="0.5",
                checks=("finite", "nonnegative"),
            ),
            _bs("b0", "Default batch size, capped at the GPU's largest traced batch size", "256"),
            _pos("max_power_w", "Maximum power limit x GPUs (MAXPOWER of the cost)", "W", "250"),
            _pos(
                "baseline_eta_j", f"Expected energy to accuracy of the baseline ({BASELINE})", "J", "1.641e7"
            ),
            _pos("baseline_tta_s", "Expected time to accuracy of the baseline", "s", "74520"),
            _bs(
                "min_energy_bs", "Batch size of the least-energy configuration whose runs all converge", "360"
            ),
            _pos("min_energy_pl_w", "Power limit of that configuration", "W", "150"),
            _pos("min_energy_eta_j", "Its expected energy to accuracy", "J", "1.25e7"),
            _pos("min_energy_tta_s", "Its expected time to accuracy", "s", "86940"),
            _saving("min_energy_saving_pct", "Energy saved by it against the baseline", "23.85"),
            _saving(
                "min_energy_time_saving_pct",
                "Time saved by it against the baseline (negative: slower)",
                "-16.67",
            ),
            _bs("min_cost_bs", "Batch size of the least-cost configuration at `eta` (the oracle)", "360"),
            _pos("min_cost_pl_w", "Power limit of the least-cost configuration", "W", "175"),
            _pos("min_cost_eta_j", "Its expected energy to accuracy", "J", "1.323e7"),
            _pos("min_cost_tta_s", "Its expected time to accuracy", "s", "80110"),
            _saving("min_cost_energy_saving_pct", "Energy saved by it against the baseline", "19.37"),
            _saving("min_cost_time_saving_pct", "Time saved by it against the baseline", "-7.505"),
            _bs("maxbatch_bs", f"Batch size of the max-batch baseline ({MAX_BATCH})", "360"),
            _pos("maxbatch_eta_j", "Expected energy to accuracy of the max-batch baseline", "J", "1.592e7"),
            _pos("maxbatch_tta_s", "Expected time to accuracy of the max-batch baseline", "s", "73210"),
            _saving(
                "min_energy_saving_vs_maxbatch_pct",
                "Energy saved by the least-energy configuration against max-batch",
                "21.51",
            ),
            _saving(
                "min_energy_time_saving_vs_maxbatch_pct",
                "Time saved by the least-energy configuration against max-batch",
                "-18.76",
            ),
            _saving(
                "min_cost_energy_saving_vs_maxbatch_pct",
                "Energy saved by the least-cost configuration against max-batch",
                "16.9",
            ),
            _saving(
                "min_cost_time_saving_vs_maxbatch_pct",
                "Time saved by the least-cost configuration against max-batch",
                "-9.432",
            ),
        ),
        key=("gpu", "workload"),
    )
)

_TO_TARGET = "missing when no path reaches the target"
CONFIGURATIONS = register_schema(
    TableSchema(
        kind="configurations",
        version=1,
        description=(
            "Configurations, written by `zeus-bench pareto` (`--all`: every measured (batch size, power limit) "
            "of a job; without it: the Pareto frontier's, by time): each with its expected energy and time to "
            "accuracy; read by the Pareto figure and notebook."
        ),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("workload", "str", "Workload id", example="librispeech"),
            _bs("batch_size", "Batch size", "48"),
            _pos("power_limit_w", "Power limit", "W", "150"),
            _pos("time_per_epoch_s", "Time of one epoch (mean over the trace's rows)", "s", "4860.3"),
            _pos("avg_power_w", "Average power while training", "W", "134.7"),
            _pos("energy_per_epoch_j", "Energy of one epoch: time per epoch x average power", "J", "654700"),
            Column(
                "reach_fraction",
                "float",
                "Fraction of the training paths that reach the target within max epochs",
                example="1.0",
                checks=("nonnegative", "finite"),
            ),
            Column(
                "mean_epochs",
                "float",
                f"Mean epochs to the target over the paths that reach it ({_TO_TARGET})",
                "epochs",
                "9.4",
                nullable=True,
                checks=("positive",),
            ),
            Column(
                "feasible",
                "bool",
                "True when every path reaches the target within max epochs",
                example="True",
            ),
            Column(
                "eta_j",
                "float",
                f"Expected energy to accuracy: mean epochs x energy per epoch ({_TO_TARGET})",
                "J",
                "5.85e6",
                nullable=True,
                checks=("positive",),
            ),
            Column(
                "tta_s",
                "float",
                f"Expected time to accuracy: mean epochs x time per epoch ({_TO_TARGET})",
                "s",
                "45780",
                nullable=True,
                checks=("positive",),
            ),
            Column(
                "cost",
                "float",
                "Expected cost at the run's eta (eta weighs ETA against MAXPOWER x TTA) "
                f"(zeus_bench.core.cost; {_TO_TARGET})",
                "J",
                "8.65e6",
                nullable=True,
                checks=("positive",),
            ),
            Column(
                "on_frontier",
                "bool",
                "True when no feasible configuration is better in both ETA and TTA",
                example="False",
            ),
        ),
        key=("gpu", "workload", "batch_size", "power_limit_w"),
    )
)

REFERENCE = register_schema(
    TableSchema(
        kind="reference",
        version=1,
        description=(
            "Reference numbers that zeus-bench is compared with, each with its source "
            "(results/reference/README.md says where each comes from)."
        ),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("workload", "str", "Workload id, or the workloads a range covers", example="cifar100"),
            Column(
                "eta", "float", "Energy weight of the cost", example="0.5", checks=("finite", "nonnegative")
            ),
            Column("beta", "float", "Early-stopping threshold", example="2.0", checks=("positive",)),
            Column("seeds", "str", "Seeds behind the number (`1-10`), or `not stated`", example="1-10"),
            Column("baseline", "str", f"`b0` ({BASELINE}) or `max-batch` ({MAX_BATCH})", example="b0"),
            Column(
                "metric",
                "str",
                "What the number is (`energy_savings_cum`, ...)",
                example="energy_savings_cum",
            ),
            _saving("value_pct", "The saving: 100 x (1 - new / baseline)", "65.37"),
            Column(
                "source",
                "str",
                "The label printed with the number: `paper` or `original simulator (Zeus v0.3.0 code)`",
                example="paper",
            ),
            Column(
                "statement",
                "str",
                "Where the paper states it, in words (paper.csv only)",
                example="introduction: ...",
                nullable=True,
                required=False,
            ),
        ),
        key=("gpu", "workload", "eta", "beta", "baseline", "metric", "source"),
    )
)
