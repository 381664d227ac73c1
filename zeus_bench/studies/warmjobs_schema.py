"""Schema of the warm-start study's per-job table, ``warmstart_jobs`` (written by :mod:`zeus_bench.studies.warmjobs`)."""

from __future__ import annotations

from zeus_bench.store import Column, TableSchema, register_schema


def _pct(name: str, description: str, example: str, nullable: bool = False) -> Column:
    return Column(name, "float", description, "%", example, nullable=nullable)


WARMSTART_JOBS = register_schema(
    TableSchema(
        kind="warmstart_jobs",
        version=1,
        description=(
            "zeus-plus cold and warm-started per (prior GPU, GPU, workload): the prior comes only from the "
            "tries a cold zeus-plus replay on the prior GPU observed (seed s + 1000003 for target seed s); "
            "per job the paired warm - cold regret with a 95 % bootstrap interval over seeds, and each "
            "pair's cut with and without the job."
        ),
        columns=(
            Column("prior_gpu", "str", "GPU whose replay the prior was built from", example="v100"),
            Column("gpu", "str", "GPU replayed", example="a40"),
            Column("workload", "str", "Workload id", example="imagenet"),
            Column(
                "seeds",
                "int",
                "Seeds (paired: the same seed cold and warm)",
                example="50",
                checks=("positive",),
            ),
            Column("recurrences", "int", "Recurrences replayed", example="108", checks=("positive",)),
            Column(
                "seeds_without_prior",
                "int",
                "Seeds whose prior replay saw no shared batch size reach the target (those run cold)",
                example="0",
                checks=("nonnegative",),
            ),
            _pct(
                "regret_first20_pct_cold_mean",
                "Mean over seeds of the regret over the first 20 recurrences, cold",
                "15.8",
            ),
            _pct("regret_first20_pct_warm_mean", "The same with the prior", "6.0"),
            _pct(
                "regret_first20_diff_pct_mean",
                "Mean over seeds of warm minus cold first-20 regret (same seed)",
                "-9.8",
            ),
            _pct(
                "regret_first20_diff_pct_ci_low",
                "Low end of its 95 % percentile-bootstrap interval over seeds",
                "-12.1",
            ),
            _pct("regret_first20_diff_pct_ci_high", "High end of that interval", "-7.5"),
            _pct(
                "regret_cum_pct_cold_mean",
                "Mean over seeds of the cumulative regret over every recurrence, cold",
                "3.1",
            ),
            _pct("regret_cum_pct_warm_mean", "The same with the prior", "2.4"),
            Column(
                "cost_last20_vs_oracle_cold_mean",
                "float",
                "Mean cost over the last 20 recurrences over the oracle's, cold",
                example="0.998",
            ),
            Column("cost_last20_vs_oracle_warm_mean", "float", "The same with the prior", example="0.998"),
            _pct(
                "cut_pct",
                "This job's cut of the first-20 regret: 100 x (1 - warm / cold) of the means",
                "62.1",
                nullable=True,
            ),
            _pct(
                "pair_cut_pct",
                "The pair's cut over all its jobs: 100 x (1 - mean over jobs of warm / mean of cold)",
                "44.9",
                nullable=True,
            ),
            _pct(
                "pair_cut_without_pct", "The pair's cut computed leaving this job out", "38.0", nullable=True
            ),
        ),
        key=("prior_gpu", "gpu", "workload"),
    )
)
