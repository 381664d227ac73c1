"""``python -m analysis.figures KIND --out STEM [inputs]``: draw one figure from results files.

Each KIND (a figure of the registry :data:`analysis.figures.FIGURES`) reads the files the
workflow names, aggregates them with :mod:`analysis.metrics`, plots with :mod:`analysis.plots`
and writes ``STEM.<format>`` for each ``--formats`` entry; its options are its registered inputs.

``python -m analysis.figures per-gpu --gpu GPU --out-dir DIR [inputs]`` draws every per-GPU
figure of the registry (those for several power limits with ``--power-profiles``) in one process,
reading each input once and summarising each simulation once; with ``--summary-out`` and
``--eta/beta-summary-out`` it also writes those summaries. The workflow uses it so that pandas and
matplotlib are imported once per GPU rather than once per figure.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from analysis.figures import FIGURES, FigureSpec, figure, per_gpu_figures

log = logging.getLogger("analysis.figures")


def _per_gpu(args: argparse.Namespace) -> list[str]:
    """Write the summaries asked for, then draw every per-GPU figure; return the files written."""
    from analysis import plots
    from analysis.figures.inputs import write_summary_csv, write_summary_table

    written: list[str] = []
    if args.summary_out:
        written.append(write_summary_csv(args.sim, args.summary_out))
    for sims, out in ((args.eta_sim, args.eta_summary_out), (args.beta_sim, args.beta_summary_out)):
        if out:
            written.append(write_summary_table(sims, out))
    for spec in per_gpu_figures(several_limits=args.power_profiles):
        one = argparse.Namespace(
            gpu=args.gpu, configs=args.configs, potential=args.potential, sim=getattr(args, spec.sim)
        )
        fig = spec.drawer()(one)
        written += plots.save(fig, str(args.out_dir / f"{spec.stem}-{args.gpu}"), args.format_list, args.dpi)
    return written


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--formats", default="png,pdf", help="comma-separated formats (default png,pdf)")
    p.add_argument("--dpi", type=int, default=200)


def _add_inputs(p: argparse.ArgumentParser, spec: FigureSpec) -> None:
    """The options of one figure's registered inputs."""
    for entry in spec.inputs:
        required = not entry.endswith("?")
        name = entry.rstrip("?")
        if name == "gpu":
            p.add_argument("--gpu", required=True)
        elif name == "sim":
            p.add_argument("--sim", type=Path, required=required, help="simulation Parquet")
        elif name == "sims":
            p.add_argument("--sim", type=Path, nargs="+", required=required, help="simulation Parquet files")
        else:
            p.add_argument(f"--{name}", type=Path, nargs="+", required=required)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.figures``: ``per-gpu`` and one subcommand per registered figure."""
    parser = argparse.ArgumentParser(prog="python -m analysis.figures", description=__doc__)
    sub = parser.add_subparsers(dest="kind", required=True)
    names = ", ".join(s.name for s in per_gpu_figures())
    many = sub.add_parser("per-gpu", help=f"every per-GPU figure: {names}")
    many.add_argument("--gpu", required=True)
    many.add_argument("--out-dir", type=Path, required=True, help="folder of <kind>-<gpu>.<format>")
    many.add_argument("--configs", type=Path, nargs="+", required=True)
    many.add_argument("--potential", type=Path, nargs="+", required=True)
    many.add_argument("--sim", type=Path, required=True, help="main simulation Parquet")
    many.add_argument("--eta-sim", type=Path, nargs="+", required=True, help="eta sweep Parquet files")
    many.add_argument("--beta-sim", type=Path, nargs="+", required=True, help="beta sweep Parquet files")
    many.add_argument(
        "--summary-out", type=Path, help="also write the --sim summary here (CSV, as zeus-bench summarize)"
    )
    many.add_argument("--eta-summary-out", type=Path, help="also write the eta sweep's sim_summary (Parquet)")
    many.add_argument(
        "--beta-summary-out", type=Path, help="also write the beta sweep's sim_summary (Parquet)"
    )
    many.add_argument(
        "--power-profiles",
        action="store_true",
        help="also draw the figures for several power limits (power-profiles-<gpu>)",
    )
    _common_args(many)
    for spec in FIGURES.values():
        p = sub.add_parser(spec.name)
        p.add_argument("--out", required=True, help="output path without extension")
        _common_args(p)
        _add_inputs(p, spec)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Draw one figure (or the per-GPU set); exit status 2 on bad input."""
    from analysis import plots
    from zeus_bench.core.errors import ZeusBenchError

    args = build_parser().parse_args(argv)
    args.format_list = [f for f in args.formats.split(",") if f]
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    try:
        if args.kind == "per-gpu":
            written = _per_gpu(args)
        else:
            written = plots.save(figure(args.kind).drawer()(args), args.out, args.format_list, args.dpi)
    except (ZeusBenchError, ValueError, FileNotFoundError) as exc:
        print(f"analysis.figures {args.kind}: error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        log.info("wrote %s", path)
    return 0
