"""Draw functions of the measured GPUs' figures (the own sweeps, drawn as measured-gpus; generations; validation)."""

from __future__ import annotations

import argparse

from matplotlib.figure import Figure

from analysis import plots
from analysis.figures.inputs import load_all


def sweeps(args: argparse.Namespace) -> Figure:
    """The own measured sweeps: energy per sample and throughput against batch size (file ``measured-gpus``)."""
    power = load_all(args.power)
    gpus = ", ".join(str(g).upper() for g in sorted(power["gpu"].unique()))
    limits = ", ".join(f"{v:g} W" for v in sorted(power["power_limit_w"].unique()))
    return plots.plot_sweep(
        power,
        title=f"{gpus} measured by zeus-bench sweep: batch size only, at {limits} (observe mode); synthetic data",
    )


def generations(args: argparse.Namespace) -> Figure:
    """The Zeus GPUs at their maximum limit beside the own sweeps, per workload."""
    return plots.plot_generations(plots.generation_table(load_all(args.zeus), load_all(args.power)))


def validation(args: argparse.Namespace) -> Figure:
    """The measured online run's cumulative cost against the simulated band (issue 35)."""
    from zeus_bench.studies.validation_schema import SCOPE

    rec = load_all(args.validation)
    gpus = ", ".join(str(g).upper() for g in sorted(rec["gpu"].unique()))
    jobs = ", ".join(sorted(rec["workload"].unique()))
    return plots.plot_validation(
        rec, title=f"{jobs} on {gpus}: measured online run vs simulated replay; {SCOPE}"
    )
