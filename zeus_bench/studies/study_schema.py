"""Schemas of the zeus-plus study's tables (``results/policy/*.csv``, ``zeus_bench.studies.study``, ``.tuning``).

The study (``zeus-bench study``) writes one CSV per kind ``policy_<name>``:
``comparison.csv`` is ``policy_comparison``, ``curves.csv`` ``policy_curves`` and so on, so its
writer validates each table with ``validate(df, f"policy_{name}")``. The tuning tables
(``python -m zeus_bench.studies.tuning``) have five columns per GPU, named ``<gpu>_...``: they are
validated GPU by GPU with :func:`validate_tuning`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import Column, TableSchema, register_schema, validate

if TYPE_CHECKING:  # frames only when a table is validated
    import pandas as pd

#: The placeholder for a GPU kind in the tuning table's per-GPU column names.
GPU = "<gpu>"
#: The per-GPU metrics of a tuning row (each a column ``<gpu>_<metric>``).
TUNING_PER_GPU = ("regret_pct", "zeus_regret_pct", "regret_ratio", "p95_max", "jobs_unsafe", "diff_max")


def _id(name: str, description: str, example: str) -> Column:
    return Column(name, "str", description, example=example)


def _count(name: str, description: str, example: str, zero_ok: bool = False) -> Column:
    return Column(
        name, "int", description, example=example, checks=("nonnegative",) if zero_ok else ("positive",)
    )


def _ratio(name: str, description: str, example: str, unit: str = "", nullable: bool = False) -> Column:
    return Column(name, "float", description, unit, example, nullable=nullable)


_STD = "Its standard deviation over seeds (population)"

COMPARISON = register_schema(
    TableSchema(
        kind="policy_comparison",
        version=2,
        description=(
            "`comparison.csv`: Zeus against zeus-plus, one row per (gpu, workload, policy). The cost ratios are "
            "paired: over the baseline's and max-batch's cumulative costs replayed on the same seed and paths (as "
            "the arena's); the oracle's is its expected cost (mean over converging training paths), as in "
            "`sim_summary`. Version 1: every reference an expected cost."
        ),
        columns=(
            _id("gpu", "GPU kind", "v100"),
            _id("workload", "Workload id", "imagenet"),
            _id("policy", "Policy (zeus, zeus-plus)", "zeus-plus"),
            _count("seeds", "Seeds replayed", "10"),
            _count("recurrences", "Recurrences per seed", "108"),
            _ratio(
                "cost_ratio_vs_baseline_cum_mean",
                "Cumulative cost over the baseline's (b0 at the maximum limit) replayed on the same seed and paths "
                "(paired), mean over seeds; missing when no training path of b0 reaches the target",
                "0.987",
                nullable=True,
            ),
            _ratio("cost_ratio_vs_baseline_cum_std", _STD, "0.004", nullable=True),
            _ratio(
                "cost_ratio_vs_max_batch_cum_mean",
                "The same against max-batch at the maximum limit (paired)",
                "1.011",
            ),
            _ratio("cost_ratio_vs_max_batch_cum_std", _STD, "0.004"),
            _ratio(
                "regret_vs_oracle_cum_pct_mean",
                "100 x (cumulative cost / the oracle's expected cumulative cost - 1), mean over seeds",
                "4.01",
                "%",
            ),
            _ratio("regret_vs_oracle_cum_pct_std", _STD, "0.5", "%"),
            Column(
                "failed_recurrences_mean",
                "float",
                "Recurrences that never reached the target, mean over seeds",
                "recurrences",
                "0",
                checks=("nonnegative",),
            ),
        ),
        key=("gpu", "workload", "policy"),
    )
)

CURVES = register_schema(
    TableSchema(
        kind="policy_curves",
        version=1,
        description=(
            "`curves.csv` (git-ignored; the policy figures): one row per (gpu, workload, policy, recurrence)."
        ),
        columns=(
            _id("gpu", "GPU kind", "v100"),
            _id("workload", "Workload id", "imagenet"),
            _id("policy", "Policy (zeus, zeus-plus)", "zeus"),
            _count("recurrence", "Recurrence, from 1", "12"),
            _ratio(
                "regret_pct_mean",
                "Cumulative regret so far: 100 x (cost so far / the oracle's expected cost so far - 1), "
                "mean over seeds",
                "8.3",
                "%",
            ),
            _ratio("regret_pct_p10", "Its 10th percentile over seeds", "5.1", "%"),
            _ratio("regret_pct_p90", "Its 90th percentile over seeds", "11.7", "%"),
        ),
        key=("gpu", "workload", "policy", "recurrence"),
    )
)

_DRIFT_ID = (
    _id("gpu", "GPU kind", "v100"),
    _id("workload", "Workload id", "cifar100"),
    _id(
        "scenario",
        "step (the optimum's epochs change at once), morph (the same over 20 recurrences) or tilt (the whole "
        "convergence curve tilts over 20 recurrences, the neutral gradual drift: zeus_bench/sim/scenarios/drift.py)",
        "step",
    ),
    Column(
        "epoch_factor",
        "float",
        "Factor on the oracle batch size's epochs to the target after the change (tilt: per doubling of "
        "batch size)",
        example="1.5",
        checks=("positive", "finite"),
    ),
    _id("policy", "zeus, zeus-window10 (Zeus with a 10-observation window), zeus-plus or sw-ts", "zeus-plus"),
)

DRIFT_STUDY = register_schema(
    TableSchema(
        kind="policy_drift",
        version=1,
        description="`drift.csv`: drift recovery, one row per (gpu, workload, scenario, epoch factor, policy).",
        columns=(
            *_DRIFT_ID,
            _count("change_at", "Recurrence at which the change starts", "70"),
            _count("recurrences", "Recurrences replayed", "140"),
            Column(
                "recovery_recurrences",
                "int",
                "Recurrences after the change (after the end of a morph) until the mean cost over seeds, "
                "averaged over 5 recurrences, is within 5 % of the drifted oracle's; empty: not within the "
                "horizon",
                "recurrences",
                "14",
                nullable=True,
                checks=("nonnegative",),
            ),
            _ratio(
                "cost_after_change_vs_oracle", "Mean cost after the change over the drifted oracle's", "1.058"
            ),
        ),
        key=("gpu", "workload", "scenario", "epoch_factor", "policy"),
    )
)

DRIFT_CURVES = register_schema(
    TableSchema(
        kind="policy_drift_curves",
        version=1,
        description=(
            "`drift_curves.csv` (git-ignored; the drift figure): one row per (gpu, workload, scenario, epoch "
            "factor, policy, recurrence since the change)."
        ),
        columns=(
            *_DRIFT_ID,
            Column(
                "since_change",
                "int",
                "Recurrences from the change (negative: before it)",
                "recurrences",
                "-3",
            ),
            _ratio("cost_vs_oracle_mean", "Mean cost over seeds over the drifted oracle's", "1.12"),
        ),
        key=("gpu", "workload", "scenario", "epoch_factor", "policy", "since_change"),
    )
)

WARMSTART = register_schema(
    TableSchema(
        kind="policy_warmstart",
        version=1,
        description=(
            "`warmstart.csv`: zeus-plus cold and warm-started, one row per (prior GPU, GPU, workload); the "
            "prior comes from the tries a cold zeus-plus replay on the prior GPU observed (one per seed)."
        ),
        columns=(
            _id("prior_gpu", "GPU whose traces the warm start learned from", "v100"),
            _id("gpu", "GPU replayed", "a40"),
            _id("workload", "Workload id", "imagenet"),
            _count("recurrences", "Recurrences replayed", "108"),
            _ratio(
                "regret_first20_pct_cold",
                "zeus-plus's regret over the first 20 recurrences, cold start",
                "15.79",
                "%",
            ),
            _ratio(
                "cost_last20_vs_oracle_cold",
                "Its mean cost over the last 20 recurrences over the oracle's, cold",
                "0.998",
            ),
            _ratio("regret_first20_pct_warm", "The same regret with the prior", "5.98", "%"),
            _ratio("cost_last20_vs_oracle_warm", "The same steady-state cost with the prior", "0.998"),
        ),
        key=("prior_gpu", "gpu", "workload"),
    )
)

_SETTING = "A constant of zeus-plus (class attribute) in this setting; present when the grid varies it"
TUNING = register_schema(
    TableSchema(
        kind="policy_tuning",
        version=2,
        description=(
            "`tuning-known.csv`, `tuning-known-fold2.csv`, `tuning-unknown.csv`, `tuning-unknown-safety.csv`, "
            "`tuning-unknown-safety-fold2.csv`: one row per setting of "
            "zeus-plus's constants, written by `python -m zeus_bench.studies.tuning` on the *tune* half of the "
            "training paths (cross-fitting, docs/policies.md; fold2: the halves swapped), horizon known "
            "(margin, up_first) or unknown (horizon, margin, up_first; `tuning-unknown-safety.csv`: `--grid unknown-horizon`, "
            "horizon 0 = the anytime budget, then with loan 1 and lookahead 4, 14, 20, 50 x safety 0, 0.01, 0.02; no longer a pick: an unknown horizon now runs the anytime budget with no loan or lookahead, a rule; `tuning-known-evidence.csv`, "
            "`tuning-known-evidence-fold2.csv`: `--grid epoch-evidence`, margin x up_first x epoch_evidence, "
            "horizon known, seeds 1-50; the other tables seeds 1-10); fold2 tables keep fold 2's other constants (zeus_bench.studies.tuning.fold_base); the arena "
            "reports the other half. Version 2: the 95th percentiles are of the paired cost ratio (over the baseline's "
            "cost on the same seed; version 1: over its expected cost). "
            f"Columns named `{GPU}_...` appear once per GPU tuned on (`v100_regret_pct`, ...)."
        ),
        columns=(
            Column(
                "horizon",
                "int",
                f"{_SETTING}: the recurrences the job is assumed to have, which set its funds (0: anytime)",
                "recurrences",
                "20",
                nullable=True,
                required=False,
                checks=("nonnegative",),
            ),
            Column(
                "margin",
                "float",
                f"{_SETTING}: a probe is stopped at (1 + margin) x the incumbent's mean cost",
                example="0.2",
                nullable=True,
                required=False,
                checks=("positive", "finite"),
            ),
            Column(
                "up_first",
                "bool",
                f"{_SETTING}: probe the larger coarse neighbour before the smaller one",
                example="True",
                nullable=True,
                required=False,
            ),
            Column(
                "epoch_evidence",
                "bool",
                f"{_SETTING}: a batch size dearer than the incumbent only by its paths' epochs bounds no search",
                example="True",
                nullable=True,
                required=False,
            ),
            Column(
                "safety",
                "float",
                f"{_SETTING}: the share of the baseline's cost the safe allowance keeps back (unknown horizon)",
                example="0.02",
                nullable=True,
                required=False,
                checks=("nonnegative", "finite"),
            ),
            _ratio(
                f"{GPU}_regret_pct",
                "Mean regret over the GPU's jobs on the tune half, mean over seeds",
                "2.9",
                "%",
            ),
            _ratio(f"{GPU}_zeus_regret_pct", "Zeus's, on the same seeds and paths", "3.2", "%"),
            _ratio(f"{GPU}_regret_ratio", "Their ratio", "0.92"),
            _ratio(
                f"{GPU}_p95_max",
                "Largest over the jobs of the 95th percentile over seeds of the paired cost ratio: the cumulative "
                "cost over the baseline's on the same seed and paths (version 1: over its expected cost)",
                "1.004",
            ),
            _count(f"{GPU}_jobs_unsafe", "Jobs whose paired 95th percentile exceeds 1.02", "0", zero_ok=True),
            Column(
                f"{GPU}_diff_max",
                "float",
                "Largest over the GPU's jobs of the mean regret less Zeus's (tables before it: absent)",
                "%",
                "1.3",
                nullable=True,
                required=False,
            ),
            _ratio("regret_ratio_mean", "Mean over GPUs of the regret ratio", "0.78"),
            _ratio("p95_max", "Largest 95th percentile over every job", "1.039"),
            _count("jobs_unsafe", "Jobs above 1.02 over every GPU", "2", zero_ok=True),
            Column(
                "diff_max",
                "float",
                "Largest over every job of the mean regret less Zeus's (the worst job against Zeus)",
                "%",
                "1.3",
                nullable=True,
                required=False,
            ),
            Column(
                "chosen",
                "bool",
                "The pick (zeus_bench.studies.tuning.choose): True on exactly one row",
                example="True",
            ),
        ),
        key=("horizon", "margin", "up_first", "epoch_evidence", "safety"),
    )
)

#: The setting columns of a tuning table (a grid varies some of them).
SETTING_COLUMNS = tuple(c for c in TUNING.columns if c.name in TUNING.key)

TUNING_LOWO = register_schema(
    TableSchema(
        kind="policy_tuning_lowo",
        version=2,
        description=(
            "`tuning-known-lowo.csv`: leave one workload out for zeus-plus's tuned constants (`python -m "
            "zeus_bench.studies.tuning --leave-one-workload-out`), one row per workload: the setting the rule of "
            "`choose` picks from the *other* workloads' jobs alone (every GPU, the same tune half and seeds as "
            "the tuning table written beside it), and how that pick does on the left-out workload's jobs against "
            "the pick of every workload. A pick that transfers is one the left-out workload did not need to see."
        ),
        columns=(
            Column("left_out", "str", "The workload left out of the pick", example="imagenet"),
            *SETTING_COLUMNS,
            Column(
                "same_as_pooled",
                "bool",
                "Whether the pick without the workload is the pick of every workload",
                example="True",
            ),
            _count("jobs", "The left-out workload's jobs (one per GPU tuned on)", "3"),
            _ratio(
                "regret_ratio_lowo",
                "On the left-out workload's jobs: mean over GPUs of the regret ratio to Zeus under the pick made without it",
                "0.52",
            ),
            _ratio(
                "regret_ratio_lowo_ci_lo",
                "Lower end of its 95 % interval: the seeds resampled, paired with Zeus's (the tune half's recorded "
                "paths replayed, not redrawn: the seed level alone)",
                "0.41",
                nullable=True,
            ),
            _ratio("regret_ratio_lowo_ci_hi", "Upper end of that interval", "0.63", nullable=True),
            _ratio("regret_ratio_pooled", "The same under the pick of every workload", "0.50"),
            _ratio(
                "regret_ratio_pooled_ci_lo", "Lower end of its interval (as above)", "0.40", nullable=True
            ),
            _ratio("regret_ratio_pooled_ci_hi", "Upper end of that interval", "0.61", nullable=True),
            _ratio(
                "p95_max_lowo",
                "Largest over the left-out workload's jobs of the paired 95th percentile under the pick made without it",
                "1.004",
            ),
            _count(
                "jobs_unsafe_lowo",
                "The left-out workload's jobs above 1.02 under the pick made without it",
                "0",
                zero_ok=True,
            ),
        ),
        key=("left_out",),
    )
)


def validate_tuning(df: pd.DataFrame, where: str = "tuning table") -> None:
    """Check a tuning table against ``policy_tuning``, once per GPU of its ``<gpu>_...`` columns.

    Raises:
        TraceFormatError: no per-GPU columns, a column missing or unknown, a bad value, or not
            exactly one row chosen (one line naming ``where`` and the column).
    """
    suffix = "_zeus_regret_pct"
    gpus = [str(c)[: -len(suffix)] for c in df.columns if str(c).endswith(suffix)]
    if not gpus:
        raise TraceFormatError(f"{where}: no {GPU}{suffix} column for a policy_tuning table")
    per_gpu = {f"{g}_{m}" for g in gpus for m in TUNING_PER_GPU}
    shared = [c for c in df.columns if c not in per_gpu]
    for g in gpus:
        names = {f"{g}_{m}": f"{GPU}_{m}" for m in TUNING_PER_GPU}
        view = df[shared + [c for c in df.columns if c in names]].rename(columns=names)
        try:
            checked = validate(view, "policy_tuning", where)
        except TraceFormatError as exc:
            raise TraceFormatError(str(exc).replace(f"{GPU}_", f"{g}_")) from None
    if int(checked["chosen"].sum()) != 1:
        raise TraceFormatError(f"{where}: column 'chosen' must be True on exactly one row")
