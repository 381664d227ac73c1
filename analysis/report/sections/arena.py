"""The report's arena section: the arena folders read, the findings in order, two tables and the figure.

Reads two arena folders (``zeus-bench arena``): the default protocol (``--horizon known``) and the
same with ``--horizon unknown``; the findings are those of :mod:`analysis.report.findings.arena`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import zeus_bench.catalog  # noqa: F401  (registers the arena's kinds)
from analysis.report.findings import Finding, Table
from analysis.report.findings.arena import (
    PLUS,
    SAFE,
    ci_text,
    fold_agreement_check,
    folds,
    max_batch,
    pl_only,
    rank,
    regret,
    safety,
    setup,
)
from analysis.report.findings.arena_horizon import unknown_regret
from analysis.report.findings.claims import anytime_floor, horizon_price, pairing
from analysis.report.render import items_markdown
from zeus_bench.store import read_table, validate


def read(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An arena folder's (jobs, summary) tables."""
    return (
        read_table(folder / "arena_jobs.parquet", "arena_jobs"),
        read_table(folder / "arena_summary.parquet", "arena_summary"),
    )


def gpu_cell(gpu: str, labels: dict[str, str] | None) -> str:
    """The GPU as a table shows it: ``h200 (projected)`` for a GPU the project measured, else ``v100 (simulated)``."""
    return f"{gpu} ({(labels or {}).get(gpu, 'simulated')})"


def labels_of(folder: Path) -> dict[str, str]:
    """Each GPU's label from an arena folder's provenance (``zeus-bench arena`` writes it)."""
    from zeus_bench.store import read_metadata

    return dict(read_metadata(folder / "arena_summary.parquet").get("labels", {}))


def summary_table(summary: pd.DataFrame, labels: dict[str, str] | None = None) -> str:
    """Markdown: per GPU and policy, regret with interval, ratio to Zeus, verdict counts, safety, rank."""
    head = (
        "| GPU | fold | policy | rank | regret % [95 % CI] | / Zeus [95 % CI] | better / worse than Zeus (jobs) | "
        "worst job (regret %) | largest p95 cost / baseline's (same seed) |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in summary.sort_values(["gpu", "fold", "rank"], kind="stable").itertuples():
        lines.append(
            f"| {gpu_cell(r.gpu, labels)} | {r.fold} | {r.policy} | {r.rank} | {ci_text(r.regret_pct_mean, r.regret_pct_ci_lo, r.regret_pct_ci_hi)} | "
            f"{ci_text(r.regret_ratio_vs_zeus, r.regret_ratio_vs_zeus_ci_lo, r.regret_ratio_vs_zeus_ci_hi)} | "
            f"{r.jobs_better_than_zeus} / {r.jobs_worse_than_zeus} | {r.worst_workload} ({r.worst_regret_pct_mean:.1f}) | "
            f"{r.cost_ratio_vs_baseline_p95_max:.3f} |"
        )
    return "\n".join(lines)


def plus_job_table(
    jobs: pd.DataFrame, jobs_unknown: pd.DataFrame | None, labels: dict[str, str] | None = None
) -> str:
    """Markdown: zeus-plus per job, with intervals; the 95th percentile also with the horizon unknown."""
    head = (
        "| GPU | fold | job | cost / baseline [95 % CI] | p95 | p95, horizon unknown | regret % [95 % CI] | "
        "- Zeus's regret, points [95 % CI] | vs Zeus |"
    )
    lines = [head, "|" + "---|" * 9]
    unk = None
    if jobs_unknown is not None:
        unk = jobs_unknown[jobs_unknown["policy"] == PLUS].set_index(["gpu", "workload", "fold"])
    for r in jobs[jobs["policy"] == PLUS].sort_values(["fold"], kind="stable").itertuples():
        key = (r.gpu, r.workload, r.fold)
        p95u = (
            "" if unk is None or key not in unk.index else f"{unk.loc[key, 'cost_ratio_vs_baseline_p95']:.3f}"
        )
        lines.append(
            f"| {gpu_cell(r.gpu, labels)} | {r.fold} | {r.workload} | "
            f"{ci_text(r.cost_ratio_vs_baseline_mean, r.cost_ratio_vs_baseline_ci_lo, r.cost_ratio_vs_baseline_ci_hi, '{:.3f}')} | "
            f"{r.cost_ratio_vs_baseline_p95:.3f} | {p95u} | {ci_text(r.regret_pct_mean, r.regret_pct_ci_lo, r.regret_pct_ci_hi)} | "
            f"{ci_text(r.regret_diff_vs_zeus_pct_mean, r.regret_diff_vs_zeus_pct_ci_lo, r.regret_diff_vs_zeus_pct_ci_hi)} | {r.vs_zeus} |"
        )
    return "\n".join(lines)


def section_items(
    arena: Path,
    arena_unknown: Path | None,
    tuning: tuple[Path, Path] | None = None,
    coverage: Path | None = None,
) -> list[str | list[Finding] | Table]:
    """The section in order: fixed lines (headings, tables, figure), paragraphs and tables of findings.

    ``coverage``: the coverage study's settings table (``results/policy/coverage.csv``; None: not stated).

    Raises:
        TraceFormatError: ``coverage`` is not a valid ``policy_coverage`` table (a missing file: OSError).
    """
    jobs, summary = read(arena)
    labels = labels_of(arena)
    unknown, unknown_summary = (None, None) if arena_unknown is None else read(arena_unknown)
    settings = None
    if coverage is not None:  # named: it must be there (the report's command line checks it first)
        settings = pd.read_csv(coverage)
        validate(settings, "policy_coverage", str(coverage))
    agreement = fold_agreement_check(summary, unknown_summary, settings)
    scopes = "scope: pooled = every split's two folds, fold 1 = the judge half, fold 2 = the tune half"
    items: list[str | list[Finding] | Table] = [
        "## The policy arena: is a policy better than Zeus, by how much, how sure?",
        [setup(summary)] + ([agreement] if agreement.sentence else []),
        "The zeus-plus section above is this arena's fold 1 (the same replays of the judged half: zeus-bench "
        "study checks every mean); here with its intervals, the other policies and the second fold.",
        Table.joined(
            f"zeus-plus against Zeus, **horizon known** (simulated; H200 rows projected; {scopes}):",
            regret(summary, jobs),
            rank(summary, jobs),
            key=("GPU", "scope"),
            labels=labels,
        ),
    ]
    if summary["fold"].nunique() < 2 and tuning is not None and all(p.is_file() for p in tuning):
        items.append(folds(pd.read_csv(tuning[0]), pd.read_csv(tuning[1])))
    items.append(
        Table(
            "zeus-plus against max-batch, horizon known, fold 1 (simulated; H200 rows projected):",
            max_batch(jobs[jobs["fold"] == 1]),
            labels,
        )
    )
    pl = pl_only(jobs[jobs["fold"] == 1])
    if pl.sentence:
        items.append([pl])
    if unknown is not None and unknown_summary is not None:
        items += [
            Table(
                "The safety goal, **horizon unknown** (simulated; H200 rows projected): the 95th percentile over seeds of "
                f"zeus-plus's cumulative cost over the baseline's on the same seed, <= {SAFE} on every job ({scopes}):",
                safety(unknown),
                labels,
            ),
            [pairing(unknown[unknown["fold"] == 1])],
            Table(
                f"zeus-plus, **horizon unknown** (simulated; H200 rows projected; {scopes}); the anytime floor is the "
                f"least regret of a policy within {SAFE} x the baseline after every recurrence, knowing every expected cost:",
                unknown_regret(unknown_summary, summary),
                labels,
            ),
            [anytime_floor(unknown_summary)],
            Table(
                "What not being told the horizon costs zeus-plus (simulated; H200 rows projected): the guarantee "
                "forces at most the floor less its regret with the horizon known; the rest is its search's:",
                horizon_price(unknown_summary, summary),
                labels,
            ),
        ]
    items += [
        "Every policy, horizon known (simulated; H200 rows projected):",
        summary_table(summary, labels),
        "zeus-plus per job, horizon known (p95 also horizon unknown; simulated, H200 rows projected; cost / baseline: "
        "its cumulative cost over the baseline's on the same seed; p95: the 95th percentile of that over seeds):",
        plus_job_table(jobs, unknown, labels),
        "![arena](figures/policy-arena.png)",
    ]
    return items


def render_section(
    arena: Path,
    arena_unknown: Path | None,
    tuning: tuple[Path, Path] | None = None,
    coverage: Path | None = None,
) -> str:
    """The section as Markdown (findings as bullet points)."""
    return items_markdown(section_items(arena, arena_unknown, tuning, coverage))
