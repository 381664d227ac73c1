"""The map from the Zeus paper's figures and tables (by what they show) to what regenerates them here.

Fixed text: each row names a registered figure (:data:`analysis.figures.FIGURES`; a test checks
that each exists) or a results table, or says why nothing does. The paper's figure numbers are not
repeated here: the rows go by content, which the paper's captions state.
"""

from __future__ import annotations

from typing import Any

#: (what the paper shows, the figure or table here, how it is made or why none)
ROWS: tuple[tuple[str, str, str], ...] = (
    ("Potential energy savings per workload on V100 (least-energy configuration vs the default batch size "
     "at the maximum limit)", "figure `potential`", "zeus-bench potential; `results/potential/<gpu>.csv`"),
    ("Energy-time trade-off of batch size x power limit (Pareto fronts)", "figure `pareto` (per GPU)",
     "zeus-bench pareto --all"),
    ("Power draw, throughput and energy per epoch against the power limit", "figure `power-profiles` (per GPU)",
     "from the traces' configurations"),
    ("GPU generations' power proportionality", "figure `generations`", "the Zeus traces and the project's H200 sweep"),
    ("Zeus against the baselines, energy and time per workload", "figure `policies` (per GPU)",
     "zeus-bench simulate (main runs); `results/summary/<gpu>.csv`"),
    ("Batch size alone, power limit alone and both (ablation)", "figure `ablation` (per GPU)",
     "bs-only, pl-only and zeus in the main runs"),
    ("Convergence and cumulative regret over recurrences", "figures `convergence`, `regret` (per GPU)",
     "the main runs' recurrences"),
    ("Sensitivity to eta and beta", "figures `eta`, `beta` (per GPU)", "the eta and beta sweeps"),
    ("Cluster-scale replay of recurring job groups", "figure `alibaba`",
     "the Alibaba job groups, when the file is present (else the report says it is skipped)"),
    ("Data drift (Capriccio)", "none", "the Capriccio train trace needs a GPU run of 38 slices (see the skipped list)"),
    ("Headline savings 15.3-75.8 % and 60.6 % time (text)", "table `Headline` below",
     "every candidate definition computed from the Zeus replays"),
    ("Multi-GPU jobs and the measured overhead of the JIT profiler on hardware", "none",
     "the published traces are single-GPU epoch summaries; a replay measures no overhead"),
)  # fmt: skip


def paper_map(report: Any) -> None:
    """Append the map as a Markdown table."""
    report.add(
        "## The paper's figures and tables, and what regenerates them",
        "",
        "| the paper shows | here | made by |",
        "|---|---|---|",
        *(f"| {what} | {here} | {how} |" for what, here, how in ROWS),
        "",
    )
