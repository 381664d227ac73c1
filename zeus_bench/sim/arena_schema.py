"""Schemas of the arena's tables, ``arena_jobs`` and ``arena_summary`` (:mod:`zeus_bench.sim.arena`).

Documented column by column in ``results/README.md`` (generated from these schemas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # frames only when an old table is upgraded
    import pandas as pd

from zeus_bench.store import Column, TableSchema, register_schema

_CI = "95 % percentile-bootstrap interval over seeds (2,000 resamples, fixed generator)"


def _stat(name: str, what: str, unit: str = "", example: str = "") -> tuple[Column, ...]:
    """``<name>_mean``, ``_ci_lo`` and ``_ci_hi``: the mean over seeds of ``what`` and its interval."""
    return (
        Column(f"{name}_mean", "float", f"Mean over seeds of {what}", unit, example),
        Column(f"{name}_ci_lo", "float", f"Lower end of the {_CI} of that mean", unit, example),
        Column(f"{name}_ci_hi", "float", f"Upper end of the {_CI} of that mean", unit, example),
    )


_FOLD = Column(
    "fold", "int",
    "Cross-fitting fold: 1 = constants chosen on the tune half, judged on the judge half; 2 = the halves "
    "swapped (constants chosen on the judge half, judged on the tune half)",
    example="1", checks=("positive",),
)  # fmt: skip


def _add_fold(df: pd.DataFrame) -> pd.DataFrame:
    """Version 1 -> 2: the fold column and the safety floor's columns.

    A version-1 table judged the ``judge`` half with the defaults (fold 1); its floor was not
    computed (empty / -1).
    """
    out = df.copy()
    out.insert(out.columns.get_loc("policy") + 1, "fold", (out["half"] != "judge").astype(int) + 1)
    if "workload" in out.columns:
        out["baseline_p95"] = float("nan")
    else:
        out["jobs_baseline_p95_over_safe"] = -1
    return out


def _add_probe_floor(df: pd.DataFrame) -> pd.DataFrame:
    """Version 2 -> 3: the probe floor's columns (not computed then: empty / -1)."""
    out = df.copy()
    if "workload" in out.columns:
        out.insert(out.columns.get_loc("baseline_p95") + 1, "probe_floor_p95", float("nan"))
    else:
        out.insert(out.columns.get_loc("jobs_baseline_p95_over_safe") + 1, "jobs_probe_floor_over_safe", -1)
    return out


_PROTOCOL = (
    Column("half", "str", "Half of the training paths replayed (judge: not used to tune any constant)", example="judge"),
    Column("seeds", "int", "Seeds replayed (the same seeds and paths for every policy)", example="50", checks=("positive",)),
    Column(
        "horizon", "str", "What the policies were told of the number of recurrences: known, unknown or N",
        example="known",
    ),
    Column("noise", "float", "Per-try noise on time and power (relative std; 0: none)", example="0.0",
           checks=("nonnegative", "finite")),
)  # fmt: skip

ARENA_JOBS = register_schema(
    TableSchema(
        kind="arena_jobs",
        version=3,
        description=(
            "The policy arena per (gpu, workload, policy): cumulative cost over the references' "
            "expected costs, regret against the oracle and the paired difference against Zeus, "
            "each a mean over seeds with its 95 % bootstrap interval, on the judged half of the "
            "training paths of each cross-fitting fold (column fold), with the safety goal's floor."
        ),
        key=("gpu", "workload", "policy", "fold"),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("workload", "str", "Workload id", example="imagenet"),
            Column("policy", "str", "Policy name (registry)", example="zeus-plus"),
            _FOLD,
            _PROTOCOL[0],
            _PROTOCOL[1],
            Column("recurrences", "int", "Recurrences per seed (2 x |B| x |P|)", example="70", checks=("positive",)),
            _PROTOCOL[2],
            _PROTOCOL[3],
            *_stat("cost_ratio_vs_baseline", "the cumulative cost over the baseline's (b0 at the maximum limit)",
                   example="0.98"),
            *_stat("cost_ratio_vs_max_batch", "the cumulative cost over max-batch's (at the maximum limit)",
                   example="0.97"),
            Column("cost_ratio_vs_baseline_p95", "float",
                   "95th percentile over seeds of the cumulative cost over the baseline's", example="1.01"),
            Column("unsafe_seed_share", "float",
                   "Share of seeds whose cumulative cost exceeds 1.02 x the baseline's", example="0.04",
                   checks=("nonnegative",)),
            Column("baseline_p95", "float",
                   "The floor of the safety goal: the same 95th percentile for the baseline policy itself "
                   "(b0 at the maximum limit) replayed on the same seeds and paths; above 1.02, a policy that "
                   "stays at b0 misses the goal on this job (empty in version-1 tables)",
                   example="1.00", nullable=True),
            Column("probe_floor_p95", "float",
                   "The floor of the safety goal for a policy that tries another batch size and drops it: the "
                   "same 95th percentile for b0 at its cheapest limit on the same seeds and paths plus one epoch "
                   "of the cheapest other batch size; above 1.02, one probe that does not find a better batch size "
                   "breaks the goal on this job (empty in tables before version 3)",
                   example="1.01", nullable=True),
            *_stat("regret_pct", "the regret: 100 x (cumulative cost / the oracle's - 1)", "%", "3.1"),
            *_stat("regret_diff_vs_zeus_pct",
                   "the paired difference of regret against Zeus (same seed, same training paths; negative: "
                   "better than Zeus)", "% points", "-1.2"),
            Column("vs_zeus", "str",
                   "better / worse: the interval of the paired difference lies below / above 0; tie: it "
                   "contains 0; same: Zeus itself", example="better"),
            Column("failed_recurrences_mean", "float", "Mean over seeds of the recurrences no try completed",
                   example="0.0", checks=("nonnegative",)),
        ),
        upgrades={1: _add_fold, 2: _add_probe_floor},
    )
)  # fmt: skip

ARENA_SUMMARY = register_schema(
    TableSchema(
        kind="arena_summary",
        version=3,
        description=(
            "The policy arena per (gpu, policy): mean regret over the GPU's jobs with its 95 % "
            "bootstrap interval over seeds, its ratio to Zeus's, the worst job, the jobs where "
            "the policy is significantly better or worse than Zeus, safety, and a rank."
        ),
        key=("gpu", "policy", "fold"),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("policy", "str", "Policy name (registry)", example="zeus-plus"),
            _FOLD,
            Column("jobs", "int", "Jobs (workloads) of the GPU", example="6", checks=("positive",)),
            _PROTOCOL[1],
            _PROTOCOL[0],
            _PROTOCOL[2],
            _PROTOCOL[3],
            *_stat("regret_pct", "the regret averaged over the GPU's jobs", "%", "3.0"),
            Column("regret_ratio_vs_zeus", "float", "Mean regret over Zeus's (ratio of the means over seeds and jobs)",
                   example="0.55"),
            Column("regret_ratio_vs_zeus_ci_lo", "float", f"Lower end of the paired {_CI} of that ratio",
                   example="0.45", nullable=True),
            Column("regret_ratio_vs_zeus_ci_hi", "float", f"Upper end of the paired {_CI} of that ratio",
                   example="0.65", nullable=True),
            Column("worst_workload", "str", "The job of largest mean regret", example="cifar100"),
            Column("worst_regret_pct_mean", "float", "Its mean regret", "%", "4.7"),
            Column("jobs_better_than_zeus", "int", "Jobs whose paired difference against Zeus is significantly below 0",
                   example="4", checks=("nonnegative",)),
            Column("jobs_worse_than_zeus", "int", "Jobs whose paired difference against Zeus is significantly above 0",
                   example="0", checks=("nonnegative",)),
            Column("cost_ratio_vs_baseline_p95_max", "float",
                   "Largest over the jobs of the 95th percentile over seeds of the cost over the baseline's",
                   example="1.01"),
            Column("jobs_p95_over_safe", "int", "Jobs whose 95th percentile exceeds 1.02", example="0",
                   checks=("nonnegative",)),
            Column("jobs_baseline_p95_over_safe", "int",
                   "Jobs whose floor (baseline_p95 of arena_jobs) exceeds 1.02: the goal's bound (-1 in version-1 tables)",
                   example="0"),
            Column("jobs_probe_floor_over_safe", "int",
                   "Jobs whose probe floor (probe_floor_p95 of arena_jobs) exceeds 1.02 (-1 in tables before version 3)",
                   example="0"),
            Column("rank", "int", "Rank on the GPU and fold by mean regret (1: least; ties share the better rank)",
                   example="1", checks=("positive",)),
        ),
        upgrades={1: _add_fold, 2: _add_probe_floor},
    )
)  # fmt: skip
