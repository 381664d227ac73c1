"""The report's zeus-plus section: the study's tables read, its findings in order, its table and figures.

The findings are those of :mod:`analysis.report.findings.study`; the tables are those of
``zeus-bench study`` (``results/policy/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.findings.study import (
    drift,
    max_batch,
    regret,
    safety,
    setup,
    warm_start,
    warm_start_per_job,
)
from analysis.report.render import items_markdown


def job_table(comparison: pd.DataFrame) -> str:
    """Markdown table: per GPU and job, cost over the baseline's and max-batch's, regret, both policies."""
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
        lines.append(f"| {gpu} | {w} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_items(study: Path, seeds: Sequence[int]) -> list[str | list[Finding]]:
    """The section in order: fixed lines (headings, the table, figures) and paragraphs of findings."""
    comparison = pd.read_csv(study / "comparison.csv")
    return [
        "## zeus-plus: safe exploration, drift, cross-GPU warm start",
        [setup(comparison, seeds)],
        safety(comparison),
        regret(comparison),
        max_batch(comparison),
        job_table(comparison),
        "![cost vs baseline](figures/policy-cost.png)",
        "![regret](figures/policy-regret.png)",
        "### Drift",
        drift(pd.read_csv(study / "drift.csv")),
        "![drift](figures/policy-drift.png)",
        "### Cross-GPU warm start",
        warm_start(pd.read_csv(study / "warmstart.csv")),
        *(
            [warm_start_per_job(pd.read_csv(study / "warmstart_jobs.csv"))]
            if (study / "warmstart_jobs.csv").exists()
            else []
        ),
    ]


def render_section(study: Path, seeds: Sequence[int]) -> str:
    """The section as Markdown (findings as bullet points)."""
    return items_markdown(section_items(study, seeds))
