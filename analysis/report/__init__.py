"""``python -m analysis.report --out results/report.md ...``: the report of the main workflow.

Two layers. **Finding functions** (``potential_ranges``, ``zeus_vs_baseline``, ``eta_effect``...)
are pure: they take small tables (summary rows, potential rows, ...) and return an
:class:`analysis.report.findings.Finding` whose sentence is built from the numbers it carries, so that
no sentence states a direction the data contradict (each is tested on tables where it flips).
The **renderer** (:class:`Report`) reads the results files, lays out the figures, the findings
and the tables. Savings, cost ratios and regret come from the ``sim_summary`` table (or
:mod:`zeus_bench.sim.metrics`), never recomputed here; reference numbers from
``results/reference/*.csv``.

* :mod:`~analysis.report.inputs` -- the results files, read once; :func:`read_references`.
* :mod:`~analysis.report.findings` -- :class:`~analysis.report.findings.Finding` and the finding
  functions, one module per subject (traces, simulation, headline, study, arena, cluster, claims);
  :class:`~analysis.report.findings.Table` lays out findings of one template as a table.
* :mod:`~analysis.report.text` -- how numbers, names and Markdown tables are written; the wording thresholds.
* :mod:`~analysis.report.render` -- figure links, row order, :class:`~analysis.report.render.Page`.
* :mod:`~analysis.report.sections` -- the sections (traces, policies, measured: one mixin each;
  the study's, the arena's and the evaluation's).
* :mod:`~analysis.report.document` -- :class:`Report`: every section in order.
* :mod:`~analysis.report.cli` -- the parser and :func:`main` (``__main__`` runs it).
"""

from analysis.report.cli import build_parser, main
from analysis.report.document import Report
from analysis.report.findings.simulation import (
    ablation_both,
    beta_effect,
    eta_effect,
    failed_recurrences,
    grid_vs_zeus_regret,
    little_to_gain,
    regret_shape,
    zeus_vs_baseline,
)
from analysis.report.findings.traces import (
    dominated,
    gpu_caveats,
    maxbatch_gap,
    own_batch_finding,
    paper_comparable,
    potential_ranges,
    power_profile_finding,
    reference_agreement,
    settings,
    summary_column,
)
from analysis.report.inputs import REFERENCE_COLUMNS, Inputs, read_references
from analysis.report.render import STATIC_NUMBERS, Page, figure_link
from analysis.report.text import (
    LITTLE_PCT,
    MOVE_PT,
    NEAR_PT,
    ORIGINAL_LABEL,
    PAPER_LABEL,
    md_table,
    pct,
    portable,
)

__all__ = [
    "LITTLE_PCT",
    "MOVE_PT",
    "NEAR_PT",
    "ORIGINAL_LABEL",
    "PAPER_LABEL",
    "REFERENCE_COLUMNS",
    "STATIC_NUMBERS",
    "Inputs",
    "Page",
    "Report",
    "ablation_both",
    "beta_effect",
    "build_parser",
    "dominated",
    "eta_effect",
    "failed_recurrences",
    "figure_link",
    "gpu_caveats",
    "grid_vs_zeus_regret",
    "little_to_gain",
    "main",
    "maxbatch_gap",
    "md_table",
    "own_batch_finding",
    "paper_comparable",
    "pct",
    "portable",
    "potential_ranges",
    "power_profile_finding",
    "read_references",
    "reference_agreement",
    "regret_shape",
    "settings",
    "summary_column",
    "zeus_vs_baseline",
]
