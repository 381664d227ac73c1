"""The figure registry: every figure of ``make reproduce`` that ``python -m analysis.figures`` draws.

One :class:`FigureSpec` per figure, by name in :data:`FIGURES`: what it reads (``inputs``),
whether it is drawn once per GPU (``per_gpu``) or once, and the function that draws it
(``draw``, a ``"module:function"`` path taking the parsed arguments and returning a Figure).
The command line of ``python -m analysis.figures`` and the workflow's figure rules
(``workflows/rules/figures.smk``: one rule per figure drawn once, the per-GPU job's outputs, the
``localrules`` they need and the target list) are generated from it, so a new figure is one
draw function and one entry here, plus one line in the report (the recipe is in
``analysis/README.md``).

This module imports nothing heavy (the workflow reads it at parse time); the draw functions
live in :mod:`analysis.figures.traces`, :mod:`~analysis.figures.policies`,
:mod:`~analysis.figures.sweeps` and :mod:`~analysis.figures.studies` (arena, study, cluster), the cached inputs in :mod:`~analysis.figures.inputs` and the
command line in :mod:`~analysis.figures.cli`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: What each input name of a figure means. On the command line it is ``--<name>`` (``sim`` and
#: ``sims`` both ``--sim``); in the workflow, the files that input function of figures.smk gives.
INPUTS: dict[str, str] = {
    "gpu": "the GPU kind drawn (per-GPU figures)",
    "potential": "results/potential/<gpu>.csv of every GPU (zeus-bench potential)",
    "configs": "results/configs/<gpu>/<workload>.parquet (zeus-bench pareto --all)",
    "sim": "the main simulation's runs table, results/sim/<gpu>/main.parquet",
    "sims": "the runs tables of one sweep (eta or beta), results/sim/<gpu>/<knob>-<value>.parquet",
    "power": "the project's own measured power traces, results/traces/<gpu>/power-<gpu>.parquet",
    "zeus": "the Zeus power traces, data/traces/zeus/power-<gpu>.parquet",
    "arena": "the arena's tables, horizon known: results/policy/arena/known/arena_{jobs,summary,profile}.parquet",
    "arena_unknown": "the arena's tables, horizon unknown: results/policy/arena/unknown/arena_*.parquet",
    "recurrences": "the arena's --recurrences N runs: results/policy/arena/recurrences/<horizon>-n<N>/arena_*.parquet",
    "study": "the zeus-plus study's tables, results/policy/<table>.csv (zeus-bench study)",
    "cluster": "the cluster replay's summaries, results/alibaba/<gpu>.csv (Alibaba job groups)",
    "validation": "the validation's per-recurrence comparison, results/validation/<gpu>/recurrences.parquet",
}


@dataclass(frozen=True)
class FigureSpec:
    """One figure: how it is named, what it reads, and which function draws it.

    Attributes:
        name: Registry key, the ``python -m analysis.figures`` kind and the workflow rule's
            suffix (``figure_<name>``; per-GPU figures are drawn by the per-GPU job instead).
        draw: ``"module:function"`` of the draw function: ``(argparse.Namespace) -> Figure``.
        inputs: Input names (keys of :data:`INPUTS`); a trailing ``?`` marks an optional one.
        per_gpu: Drawn once per evaluated GPU, as ``<file>-<gpu>.<format>``, by the per-GPU job.
        several_limits: Per-GPU only for GPUs whose trace holds several power limits.
        sim: The per-GPU job's option that feeds ``--sim`` (``sim``, ``eta_sim`` or ``beta_sim``).
        file: File stem, when it is not ``name`` (a published file name kept).
        category: Category of the PNG in ``snakemake --report`` (figures drawn once; per-GPU
            figures go by GPU: "Traces" for the Zeus GPUs, "Measured GPUs" for the own ones).
        caption: Caption file ``workflows/report/<caption>.rst``, when it is not ``file``.
    """

    name: str
    draw: str
    inputs: tuple[str, ...]
    per_gpu: bool = False
    several_limits: bool = False
    sim: str = "sim"
    file: str = ""
    category: str = "Traces"
    caption: str = ""

    @property
    def stem(self) -> str:
        """File stem of the figure (per GPU: ``<stem>-<gpu>``)."""
        return self.file or self.name

    @property
    def caption_name(self) -> str:
        """Name of its caption file under ``workflows/report/`` (without ``.rst``)."""
        return self.caption or self.stem

    @property
    def input_names(self) -> tuple[str, ...]:
        """Its inputs without the optional marks."""
        return tuple(i.rstrip("?") for i in self.inputs)

    def drawer(self) -> Callable[[Any], Any]:
        """The draw function (imported on first use: the registry itself stays light)."""
        module, _, function = self.draw.partition(":")
        return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


def _register(*specs: FigureSpec) -> dict[str, FigureSpec]:
    figures: dict[str, FigureSpec] = {}
    for spec in specs:
        if spec.name in figures:
            raise ValueError(f"figure {spec.name!r} registered twice")
        unknown = set(spec.input_names) - set(INPUTS)
        if unknown:
            raise ValueError(f"figure {spec.name!r}: unknown input(s) {', '.join(sorted(unknown))}")
        figures[spec.name] = spec
    return figures


_PER_GPU = ("gpu", "configs", "potential", "sim")

#: Every figure, in the order the workflow lists them (per-GPU figures in this order per GPU).
FIGURES: dict[str, FigureSpec] = _register(
    FigureSpec("potential", "analysis.figures.traces:potential", ("potential",)),
    FigureSpec(
        "pareto", "analysis.figures.traces:pareto", ("gpu", "configs", "potential", "sim?"), per_gpu=True
    ),
    FigureSpec("policies", "analysis.figures.policies:policies", ("sim",), per_gpu=True),
    FigureSpec("ablation", "analysis.figures.policies:ablation", ("sim",), per_gpu=True),
    FigureSpec("convergence", "analysis.figures.policies:convergence", ("sim",), per_gpu=True),
    FigureSpec("regret", "analysis.figures.policies:regret", ("sim",), per_gpu=True),
    FigureSpec("eta", "analysis.figures.policies:eta", ("sims",), per_gpu=True, sim="eta_sim"),
    FigureSpec("beta", "analysis.figures.policies:beta", ("sims",), per_gpu=True, sim="beta_sim"),
    FigureSpec(
        "power-profiles",
        "analysis.figures.traces:power_profiles",
        ("gpu", "configs", "potential"),
        per_gpu=True,
        several_limits=True,
    ),
    FigureSpec("measured-gpus", "analysis.figures.sweeps:sweeps", ("power",), category="Measured GPUs"),
    FigureSpec(
        "generations", "analysis.figures.sweeps:generations", ("zeus", "power"), category="Measured GPUs"
    ),
    # The zeus-plus study's three figures share one caption (workflows/report/policy.rst).
    FigureSpec(
        "policy-regret",
        "analysis.figures.studies:study_regret",
        ("study",),
        category="Policies",
        caption="policy",
    ),
    FigureSpec(
        "policy-cost",
        "analysis.figures.studies:study_cost",
        ("study",),
        category="Policies",
        caption="policy",
    ),
    FigureSpec(
        "policy-drift",
        "analysis.figures.studies:study_drift",
        ("study",),
        category="Policies",
        caption="policy",
    ),
    FigureSpec("policy-arena", "analysis.figures.studies:arena", ("arena",), category="Policies"),
    FigureSpec(
        "policy-profile", "analysis.figures.studies:arena_profile", ("arena_unknown",), category="Policies"
    ),
    FigureSpec(
        "policy-recurrences",
        "analysis.figures.studies:arena_recurrences",
        ("recurrences",),
        category="Policies",
    ),
    FigureSpec("alibaba", "analysis.figures.studies:cluster", ("cluster",), category="Cluster"),
    FigureSpec("validation", "analysis.figures.sweeps:validation", ("validation",), category="Measured GPUs"),
)


def per_gpu_figures(several_limits: bool = True) -> list[FigureSpec]:
    """The per-GPU figures of a GPU (without the several-limits ones when ``several_limits`` is false)."""
    return [s for s in FIGURES.values() if s.per_gpu and (several_limits or not s.several_limits)]


def single_figures() -> list[FigureSpec]:
    """The figures drawn once (each one workflow rule, ``figure_<name>``)."""
    return [s for s in FIGURES.values() if not s.per_gpu]


def figure(name: str) -> FigureSpec:
    """The figure registered as ``name``.

    Raises:
        KeyError: no such figure (the message lists the registered names).
    """
    if name in FIGURES:
        return FIGURES[name]
    raise KeyError(f"unknown figure {name!r}; registered: {', '.join(FIGURES)}")


__all__ = ["FIGURES", "INPUTS", "FigureSpec", "figure", "per_gpu_figures", "single_figures"]
