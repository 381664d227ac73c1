"""``python -m analysis.figures KIND --out STEM [inputs]``: draw one figure from results files.

Each KIND reads the files the workflow names, aggregates them with :mod:`analysis.metrics`,
plots with :mod:`analysis.plots` and writes ``STEM.<format>`` for each ``--formats`` entry.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis import metrics, plots
from analysis.tables import load, load_all

log = logging.getLogger("analysis.figures")


def _potential(args: argparse.Namespace) -> Figure:
    return plots.plot_potential(load_all(args.potential))


def _pareto(args: argparse.Namespace) -> Figure:
    configs = load_all(args.configs)
    potential = load_all(args.potential)
    zeus_at = metrics.settled(load(args.sim)) if args.sim else None
    return plots.plot_pareto(configs, metrics.markers(configs, potential, zeus_at), args.gpu)


def _policies(args: argparse.Namespace) -> Figure:
    sim = load(args.sim)
    pols = [p for p in ("zeus", "grid-search", "max-batch", "baseline", "oracle") if p in set(sim["policy"])]
    return plots.plot_policies(
        metrics.normalised(sim, "max-batch"), metrics.normalised(sim, "baseline"), pols
    )


def _ablation(args: argparse.Namespace) -> Figure:
    return plots.plot_ablation(metrics.normalised(load(args.sim), "baseline"))


def _convergence(args: argparse.Namespace) -> Figure:
    return plots.plot_convergence(metrics.convergence(load(args.sim)))


def _regret(args: argparse.Namespace) -> Figure:
    return plots.plot_regret(metrics.convergence(load(args.sim)))


def _zeus_only(paths: Sequence[Path]) -> pd.DataFrame:
    norm = metrics.normalised(load_all(paths), "baseline")
    return norm[norm["policy"] == "zeus"]


def _eta(args: argparse.Namespace) -> Figure:
    return plots.plot_eta(_zeus_only(args.sim))


def _beta(args: argparse.Namespace) -> Figure:
    return plots.plot_beta(_zeus_only(args.sim))


def _power_profiles(args: argparse.Namespace) -> Figure:
    potential = load_all(args.potential).rename(columns={"b0": "batch_size"})
    return plots.plot_power_profiles(metrics.power_profile(load_all(args.configs), potential), args.gpu)


def _generations(args: argparse.Namespace) -> Figure:
    from analysis.generations import generation_table, plot_generations

    return plot_generations(generation_table(load_all(args.zeus), load_all(args.power)))


def _h200(args: argparse.Namespace) -> Figure:
    from analysis.h200 import plot_sweep  # the sweep's own figure (written with the sweep)

    return plot_sweep(
        load_all(args.power), title="H200 measurements at the current power limit (observe mode)"
    )


KINDS: dict[str, tuple[Callable[[argparse.Namespace], Figure], tuple[str, ...]]] = {
    "potential": (_potential, ("potential",)),
    "pareto": (_pareto, ("gpu", "configs", "potential", "sim?")),
    "policies": (_policies, ("sim",)),
    "ablation": (_ablation, ("sim",)),
    "convergence": (_convergence, ("sim",)),
    "regret": (_regret, ("sim",)),
    "eta": (_eta, ("sims",)),
    "beta": (_beta, ("sims",)),
    "power-profiles": (_power_profiles, ("gpu", "configs", "potential")),
    "h200": (_h200, ("power",)),
    "generations": (_generations, ("zeus", "power")),
}


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.figures``."""
    parser = argparse.ArgumentParser(prog="python -m analysis.figures", description=__doc__)
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind, (_, inputs) in KINDS.items():
        p = sub.add_parser(kind)
        p.add_argument("--out", required=True, help="output path without extension")
        p.add_argument("--formats", default="png,pdf", help="comma-separated formats (default png,pdf)")
        p.add_argument("--dpi", type=int, default=200)
        for spec in inputs:
            required = not spec.endswith("?")
            name = spec.rstrip("?")
            if name == "gpu":
                p.add_argument("--gpu", required=True)
            elif name in ("sim",):
                p.add_argument("--sim", type=Path, required=required, help="simulation Parquet")
            elif name == "sims":
                p.add_argument("--sim", type=Path, nargs="+", required=True, help="simulation Parquet files")
            else:
                p.add_argument(f"--{name}", type=Path, nargs="+", required=required)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Draw one figure; exit status 2 on bad input."""
    from zeus_bench.errors import ZeusBenchError

    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    try:
        fig = KINDS[args.kind][0](args)
    except (ZeusBenchError, ValueError, FileNotFoundError) as exc:
        print(f"analysis.figures {args.kind}: error: {exc}", file=sys.stderr)
        return 2
    for path in plots.save(fig, args.out, [f for f in args.formats.split(",") if f], args.dpi):
        log.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
