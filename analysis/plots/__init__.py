"""Plot functions: each takes the DataFrame :mod:`analysis.metrics` builds and returns a Figure.

No file I/O and no aggregation here; the caller saves the figure (:func:`save`). Every axis
names its quantity and unit, policies keep their colours (:mod:`analysis.style`), and the sizes
are those a two-column paper prints (:data:`analysis.style.FULL_W` wide).

* :mod:`analysis.plots.traces` -- potential savings, the Pareto front, power-limit profiles.
* :mod:`analysis.plots.policies` -- policy savings, ablation, convergence, regret, eta and beta.
* :mod:`analysis.plots.sweeps` -- the project's own measured sweeps, and across GPU generations.
* :mod:`analysis.plots.validation` -- a measured run against the simulated band (issue 35).
* :mod:`analysis.plots.files` -- :func:`save` (every format, reproducible bytes, lean PDF fonts).
* :mod:`analysis.plots.common` -- what they share (grids, log axes, titles, grouped bars).
"""

from analysis.plots.common import MARKER_STYLE
from analysis.plots.files import PDF_FONT_DROP_TABLES, lean_pdf_fonts, save
from analysis.plots.policies import (
    plot_ablation,
    plot_beta,
    plot_convergence,
    plot_eta,
    plot_policies,
    plot_regret,
)
from analysis.plots.sweeps import generation_table, markdown_table, plot_generations, plot_sweep
from analysis.plots.traces import plot_pareto, plot_potential, plot_power_profiles
from analysis.plots.validation import plot_validation

__all__ = [
    "MARKER_STYLE",
    "PDF_FONT_DROP_TABLES",
    "generation_table",
    "lean_pdf_fonts",
    "markdown_table",
    "plot_ablation",
    "plot_beta",
    "plot_convergence",
    "plot_eta",
    "plot_generations",
    "plot_pareto",
    "plot_policies",
    "plot_potential",
    "plot_power_profiles",
    "plot_regret",
    "plot_sweep",
    "plot_validation",
    "save",
]
