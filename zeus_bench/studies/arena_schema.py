"""Schemas of the arena's tables, ``arena_jobs`` and ``arena_summary`` (:mod:`zeus_bench.studies.arena`).

Documented column by column in ``results/README.md`` (generated from these schemas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zeus_bench.store import Column, TableSchema, register_schema

if TYPE_CHECKING:
    import pandas as pd

_NAN = float("nan")

_CI = (
    "95 % two-stage percentile-bootstrap interval (training paths by replicate traces, then seeds; "
    "zeus_bench.sim.two_stage.two_stage_resamples; seeds alone in tables before version 6 or with 0 replicates; "
    "pooled rows (fold 0) keep every split's draws around its own estimate)"
)


def _stat(name: str, what: str, unit: str = "", example: str = "") -> tuple[Column, ...]:
    """``<name>_mean``, ``_ci_lo`` and ``_ci_hi``: the mean over seeds of ``what`` and its interval."""
    return (
        Column(
            f"{name}_mean",
            "float",
            f"Mean over the seeds replayed on the recorded paths of {what}",
            unit,
            example,
        ),
        Column(f"{name}_ci_lo", "float", f"Lower end of the {_CI} of that mean", unit, example),
        Column(f"{name}_ci_hi", "float", f"Upper end of the {_CI} of that mean", unit, example),
    )


_FOLD = Column(
    "fold", "int",
    "Cross-fitting fold of the first (even/odd) split: 1 = constants chosen on the tune half, judged on the "
    "judge half; 2 = the halves swapped (constants chosen on the judge half, judged on the tune half); "
    "0 = both folds of every split pooled (splits > 1 or both folds)",
    example="1", checks=("nonnegative",),
)  # fmt: skip

_SPLITS = Column(
    "splits", "int",
    "Splits of the paths pooled in the row: 1 (the first split's fold), or K (fold 0: zeus-bench arena --splits K; "
    "split 2..K shuffle each batch size's paths with a seeded generator)",
    example="1", checks=("positive",),
)  # fmt: skip

_REPLICATES = Column(
    "replicates", "int",
    "Replicate traces per split and fold (each batch size's judged paths redrawn with replacement; the path "
    "level of the intervals); 0: the intervals resample seeds alone (tables before version 6)",
    example="10", checks=("nonnegative",),
)  # fmt: skip


#: Why a table before version 4 is refused: its ratios divide by the baseline's *expected* cost and
#: its per-seed costs are not stored, so the paired ratios cannot be recovered from it.
_REFUSAL = (
    "its safety ratios divide by the baseline's expected cost and the paired (same-seed) ratios of version 4 "
    "cannot be recovered; run zeus-bench arena again"
)


_PROTOCOL = (
    Column("half", "str", "Half of the training paths replayed (judge: not used to tune any constant; both: fold 0)",
           example="judge"),
    Column("seeds", "int", "Seeds replayed (the same seeds and paths for every policy)", example="50", checks=("positive",)),
    Column(
        "horizon", "str",
        "What the policies were told of the number of recurrences: known, unknown, N, or a misspecified factor of "
        "the truth (0.5x, 2x)",
        example="known",
    ),
    Column("noise", "float", "Per-try noise on time and power (relative std; 0: none)", example="0.0",
           checks=("nonnegative", "finite")),
)  # fmt: skip

_ANYTIME_FLOOR = Column(
    "anytime_floor_regret_pct", "float",
    "The regret floor of the anytime guarantee (zeus-plus's budget when the horizon is unknown): the least "
    "expected regret of a policy that keeps its cumulative cost within 1.02 x the baseline's after every "
    "recurrence, should its try fail, even knowing every expected cost (b0 at its cheapest limit until the "
    "funds allow a try as cheap as the cheapest path of another batch size, the oracle after it; "
    "zeus_bench.studies.recurrences.anytime_floor); a policy that bets on recurrences yet to run is not bound by "
    "it; missing in tables of version 4",
    "%", "3.4", nullable=True,
)  # fmt: skip


def _floor_missing(df: pd.DataFrame) -> pd.DataFrame:
    """Version 4 -> 5: the anytime floor did not exist (missing)."""
    return df.assign(anytime_floor_regret_pct=_NAN)


def _jobs_v6(df: pd.DataFrame) -> pd.DataFrame:
    """Version 5 -> 6: one split, no replicate trace, path counts and the probability missing."""
    import pandas as pd

    return df.assign(splits=1, replicates=0, paths=pd.NA, paths_min=pd.NA, prob_better_than_zeus=_NAN)


def _summary_v6(df: pd.DataFrame) -> pd.DataFrame:
    """Version 5 -> 6 of arena_summary: one split, no replicate trace, the probability missing."""
    return df.assign(
        splits=1, replicates=0, prob_better_than_zeus_mean=_NAN,
        **{f"{q}_{end}": _NAN for q in ("cost_ratio_vs_baseline", "cost_ratio_vs_max_batch")
           for end in ("mean", "ci_lo", "ci_hi")},
    )  # fmt: skip


def _floor_ratios_missing(df: pd.DataFrame) -> pd.DataFrame:
    """Version 4 -> 5 of arena_summary: the anytime floor and its ratios did not exist (missing)."""
    return df.assign(
        anytime_floor_regret_pct=_NAN, anytime_floor_ratio_vs_zeus=_NAN,
        anytime_floor_ratio_vs_zeus_ci_lo=_NAN, anytime_floor_ratio_vs_zeus_ci_hi=_NAN,
    )  # fmt: skip


ARENA_JOBS = register_schema(
    TableSchema(
        kind="arena_jobs",
        version=6,
        oldest=4,
        upgrades={4: _floor_missing, 5: _jobs_v6},
        refusal=_REFUSAL,
        description=(
            "The policy arena per (gpu, workload, policy): cumulative cost over the baseline's and "
            "max-batch's on the same seed (paired), regret against the oracle and the paired difference against Zeus, "
            "each a mean over seeds with its 95 % two-stage bootstrap interval (training paths, then seeds), on the "
            "judged half of the training paths of each cross-fitting fold of the first split (column fold) and "
            "over every split pooled (fold 0), with the probability of beating Zeus and the safety goal's floor. "
            "Every number is simulated (replays of recorded traces); H200 rows are projected."
        ),
        key=("gpu", "workload", "policy", "fold", "splits"),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("workload", "str", "Workload id", example="imagenet"),
            Column("policy", "str", "Policy name (registry)", example="zeus-plus"),
            _FOLD,
            _SPLITS,
            _PROTOCOL[0],
            _PROTOCOL[1],
            _REPLICATES,
            Column("paths", "int", "Training paths of the judged half, all batch sizes (missing before version 6)",
                   example="27", checks=("positive",), nullable=True),
            Column("paths_min", "int",
                   "Fewest judged paths of a batch size (1-5: a bootstrap over so few paths underestimates their "
                   "spread; missing before version 6)", example="1", checks=("positive",), nullable=True),
            Column("recurrences", "int", "Recurrences per seed (2 x |B| x |P|)", example="70", checks=("positive",)),
            _PROTOCOL[2],
            _PROTOCOL[3],
            *_stat("cost_ratio_vs_baseline",
                   "the paired cost ratio: the cumulative cost on the seed over the baseline's (b0 at the maximum "
                   "limit) replayed on the same seed and paths, failed recurrences charged by the same rule",
                   example="0.98"),
            *_stat("cost_ratio_vs_max_batch",
                   "the paired cost ratio against max-batch (at the maximum limit) replayed on the same seed and paths",
                   example="0.97"),
            Column("cost_ratio_vs_baseline_p95", "float",
                   "95th percentile over seeds of the paired cost ratio against the baseline (the safety goal's "
                   "statistic)", example="1.01"),
            Column("cost_ratio_vs_baseline_p95_ci_lo", "float",
                   f"Lower end of the {_CI} of that 95th percentile", example="1.00"),
            Column("cost_ratio_vs_baseline_p95_ci_hi", "float",
                   f"Upper end of the {_CI} of that 95th percentile", example="1.02"),
            Column("unsafe_seed_share", "float",
                   "Share of seeds whose cumulative cost exceeds 1.02 x the baseline's on the same seed",
                   example="0.04", checks=("nonnegative",)),
            Column("cost_ratio_vs_expected_baseline_mean", "float",
                   "Mean over seeds of the cumulative cost over n x the baseline's expected recurrence cost (the "
                   "ratio of versions 1-3: it also charges the luck of the sampled paths, which the baseline draws "
                   "too)", example="0.99"),
            Column("cost_ratio_vs_expected_baseline_p95", "float",
                   "95th percentile over seeds of that expected-cost ratio", example="1.02"),
            Column("baseline_p95", "float",
                   "The expected-cost view's floor: the 95th percentile over seeds of the baseline's own cumulative "
                   "cost (replayed on the same seeds and paths) over n x its expected recurrence cost: the luck of "
                   "the paths alone (the baseline's paired ratio is 1 on every seed)", example="1.00"),
            Column("probe_floor_p95", "float",
                   "The paired goal's floor for a policy that tries another batch size and drops it: the 95th "
                   "percentile over seeds of (b0 at its cheapest limit on the seed's paths plus one epoch of the "
                   "cheapest other batch size) over the baseline's cost on the seed; above 1.02, one probe that "
                   "does not find a better batch size breaks the goal on this job", example="1.01"),
            _ANYTIME_FLOOR,
            *_stat("regret_pct", "the regret: 100 x (cumulative cost / the oracle's - 1)", "%", "3.1"),
            *_stat("regret_diff_vs_zeus_pct",
                   "the paired difference of regret against Zeus (same seed, same training paths; negative: "
                   "better than Zeus)", "% points", "-1.2"),
            Column("prob_better_than_zeus", "float",
                   "Probability that the cumulative cost is below Zeus's on the same replay (ties count half): share "
                   "of the replays, recorded seeds and replicate traces (missing before version 6)",
                   example="0.62", checks=("nonnegative",), nullable=True),
            Column("vs_zeus", "str",
                   "better / worse: the interval of the paired difference lies below / above 0; tie: it "
                   "contains 0; same: Zeus itself", example="better"),
            Column("failed_recurrences_mean", "float", "Mean over seeds of the recurrences no try completed",
                   example="0.0", checks=("nonnegative",)),
        ),
    )
)  # fmt: skip

ARENA_SUMMARY = register_schema(
    TableSchema(
        kind="arena_summary",
        version=6,
        oldest=4,
        upgrades={4: _floor_ratios_missing, 5: _summary_v6},
        refusal=_REFUSAL,
        description=(
            "The policy arena per (gpu, policy): mean regret over the GPU's jobs with its 95 % "
            "bootstrap interval over seeds, its ratio to Zeus's, the worst job, the jobs where "
            "the policy is significantly better or worse than Zeus, the mean probability of beating Zeus, safety, "
            "and a rank; intervals two-stage (training paths, then seeds). Every number is simulated; H200 rows "
            "are projected."
        ),
        key=("gpu", "policy", "fold", "splits"),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("policy", "str", "Policy name (registry)", example="zeus-plus"),
            _FOLD,
            _SPLITS,
            Column("jobs", "int", "Jobs (workloads) of the GPU", example="6", checks=("positive",)),
            _PROTOCOL[1],
            _REPLICATES,
            _PROTOCOL[0],
            _PROTOCOL[2],
            _PROTOCOL[3],
            *_stat("regret_pct", "the regret averaged over the GPU's jobs", "%", "3.0"),
            *(Column(f"{q}_{end}", "float", f"{what} of the mean over the GPU's jobs of {q} (arena_jobs: the paired "
                     f"cost ratio; 1 - it is the saving); missing before version 6", example="0.8", nullable=True)
              for q in ("cost_ratio_vs_baseline", "cost_ratio_vs_max_batch")
              for end, what in (("mean", "Estimate"), ("ci_lo", f"Lower end of the {_CI}"),
                                ("ci_hi", f"Upper end of the {_CI}"))),
            Column("regret_ratio_vs_zeus", "float", "Mean regret over Zeus's (ratio of the means over seeds and jobs)",
                   example="0.55"),
            Column("regret_ratio_vs_zeus_ci_lo", "float", f"Lower end of the paired {_CI} of that ratio",
                   example="0.45", nullable=True),
            Column("regret_ratio_vs_zeus_ci_hi", "float", f"Upper end of the paired {_CI} of that ratio",
                   example="0.65", nullable=True),
            Column("prob_better_than_zeus_mean", "float",
                   "Mean over the GPU's jobs of prob_better_than_zeus (missing before version 6)", example="0.58",
                   checks=("nonnegative",), nullable=True),
            Column("worst_workload", "str", "The job of largest mean regret", example="cifar100"),
            Column("worst_regret_pct_mean", "float", "Its mean regret", "%", "4.7"),
            Column("jobs_better_than_zeus", "int", "Jobs whose paired difference against Zeus is significantly below 0",
                   example="4", checks=("nonnegative",)),
            Column("jobs_worse_than_zeus", "int", "Jobs whose paired difference against Zeus is significantly above 0",
                   example="0", checks=("nonnegative",)),
            Column("cost_ratio_vs_baseline_p95_max", "float",
                   "Largest over the jobs of the 95th percentile over seeds of the paired cost ratio against the "
                   "baseline (same seed)", example="1.01"),
            Column("jobs_p95_over_safe", "int", "Jobs whose paired 95th percentile exceeds 1.02", example="0",
                   checks=("nonnegative",)),
            Column("cost_ratio_vs_expected_baseline_p95_max", "float",
                   "Largest over the jobs of cost_ratio_vs_expected_baseline_p95 (the expected-cost view)",
                   example="1.02"),
            Column("jobs_baseline_p95_over_safe", "int",
                   "Jobs whose baseline_p95 (the expected-cost view's floor) exceeds 1.02", example="0",
                   checks=("nonnegative",)),
            Column("jobs_probe_floor_over_safe", "int",
                   "Jobs whose probe floor (probe_floor_p95 of arena_jobs, paired) exceeds 1.02", example="0",
                   checks=("nonnegative",)),
            Column("anytime_floor_regret_pct", "float",
                   "Mean over the GPU's jobs of their anytime floor (anytime_floor_regret_pct of arena_jobs; missing "
                   "in tables of version 4)", "%", "3.4", nullable=True),
            Column("anytime_floor_ratio_vs_zeus", "float",
                   "That mean over Zeus's mean regret: below it no policy that keeps the anytime guarantee can go in "
                   "expectation, whatever it knows (missing in tables of version 4)", example="0.67", nullable=True),
            Column("anytime_floor_ratio_vs_zeus_ci_lo", "float", f"Lower end of the {_CI} of that ratio (Zeus's "
                   "regret resampled)", example="0.62", nullable=True),
            Column("anytime_floor_ratio_vs_zeus_ci_hi", "float", f"Upper end of the {_CI} of that ratio",
                   example="0.72", nullable=True),
            Column("rank", "int", "Rank on the GPU and scope (fold, splits) by mean regret (1: least; ties share the "
                   "better rank)",
                   example="1", checks=("positive",)),
        ),
    )
)  # fmt: skip


ARENA_PROFILE = register_schema(
    TableSchema(
        kind="arena_profile",
        version=1,
        description=(
            "The arena's performance profile per (gpu, policy, scope, tau): the share of jobs x replays (recorded "
            "seeds and replicate traces; each job weighs the same) whose paired cost ratio to the baseline is at "
            "most tau. Simulated; H200 rows projected."
        ),
        key=("gpu", "policy", "fold", "splits", "tau"),
        columns=(
            Column("gpu", "str", "GPU kind", example="v100"),
            Column("policy", "str", "Policy name (registry)", example="zeus-plus"),
            _FOLD,
            _SPLITS,
            Column("tau", "float", "Threshold on the paired cost ratio to the baseline", example="1.02",
                   checks=("positive", "finite")),
            Column("share", "float", "Share of jobs x replays whose ratio is at most tau", example="0.93",
                   checks=("nonnegative", "finite")),
        ),
    )
)  # fmt: skip
