"""The report's zeus-plus section: the study's tables read, its findings in order, its table and figures.

The findings are those of :mod:`analysis.report.findings.study`; the tables are those of
``zeus-bench study`` (``results/policy/``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from analysis.report.findings import Finding, Table
from analysis.report.findings.claims import warm_start_goal
from analysis.report.findings.study import (
    FIRST,
    WARM_CUT,
    drift,
    max_batch,
    regret,
    safety,
    setup,
    warm_start,
    warm_start_per_job,
)
from analysis.report.render import items_markdown


def job_table(comparison: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """Markdown table: per GPU and job, cost over the baseline's and max-batch's, regret, both policies.

    ``labels``: each GPU's label; a GPU without one is ``simulated``.
    """
    head = "| GPU | job | Zeus cost/baseline | zeus-plus cost/baseline | Zeus cost/max-batch | zeus-plus cost/max-batch | Zeus regret % | zeus-plus regret % |"
    lines = [head, "|" + "---|" * 8]
    for (gpu, w), g in comparison.groupby(["gpu", "workload"], sort=False):
        r = g.set_index("policy")
        cells = [
            f"{r.loc[p, c]:.3f}"
            for c in ("cost_ratio_vs_baseline_cum_mean", "cost_ratio_vs_max_batch_cum_mean")
            for p in ("zeus", "zeus-plus")
        ]
        cells += [f"{r.loc[p, 'regret_vs_oracle_cum_pct_mean']:.2f}" for p in ("zeus", "zeus-plus")]
        lines.append(
            f"| {gpu} ({(labels or {}).get(str(gpu), 'simulated')}) | {w} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def section_items(
    study: Path, seeds: Sequence[int], labels: Mapping[str, str] | None = None
) -> list[str | list[Finding] | Table]:
    """The section in order: fixed lines (headings, the table, figures), paragraphs and tables of findings.

    ``labels``: each GPU's label (``projected`` for a GPU the project measured), as the arena writes them.
    """
    comparison = pd.read_csv(study / "comparison.csv")
    drifts = pd.read_csv(study / "drift.csv")
    warm: list[Finding] = warm_start(pd.read_csv(study / "warmstart.csv"))
    warm_jobs: list[Finding] = []
    goal: list[Finding] = []
    if (study / "warmstart_jobs.csv").exists():
        per_job = pd.read_csv(study / "warmstart_jobs.csv")
        warm_jobs, goal = warm_start_per_job(per_job), warm_start_goal(per_job, labels)
    return [
        "## zeus-plus: safe exploration, drift, cross-GPU warm start",
        [setup(comparison, seeds)],
        Table.joined(
            "zeus-plus against Zeus per GPU, horizon known (the arena's fold 1; simulated, H200 rows projected):",
            safety(comparison),
            regret(comparison),
            max_batch(comparison),
            labels=labels,
        ),
        job_table(comparison, labels),
        "![cost vs baseline](figures/policy-cost.png)",
        "![regret](figures/policy-regret.png)",
        "### Drift",
        Table(
            "Back within 5 % of the new oracle after the change, zeus-plus against windowed Zeus, horizon known "
            f"(simulated; every job of {', '.join(sorted(set(drifts['gpu'])))}):",
            drift(drifts),
        ),
        "![drift](figures/policy-drift.png)",
        "### Cross-GPU warm start",
        Table.joined(
            "zeus-plus warm-started from another GPU's posterior against cold, horizon known (simulated; a target "
            f"H200 projected); the {WARM_CUT:.0f} % goal is on the cut of the first-{FIRST} regret, also with each job "
            "left out:",
            warm,
            warm_jobs,
            goal,
            key=("prior -> target",),
        ),
    ]


def render_section(study: Path, seeds: Sequence[int]) -> str:
    """The section as Markdown (findings as bullet points)."""
    return items_markdown(section_items(study, seeds))
