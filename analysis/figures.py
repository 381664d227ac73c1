"""``python -m analysis.figures KIND --out STEM [inputs]``: draw one figure from results files.

Each KIND reads the files the workflow names, aggregates them with :mod:`analysis.metrics`,
plots with :mod:`analysis.plots` and writes ``STEM.<format>`` for each ``--formats`` entry.

``python -m analysis.figures per-gpu --gpu GPU --out-dir DIR [inputs]`` draws every per-GPU
figure (:data:`PER_GPU`, and ``power-profiles`` with ``--power-profiles``) in one process, reading
each input once and summarising each simulation once; with ``--summary-out`` and
``--eta/beta-summary-out`` it also writes those summaries. The workflow uses it so that pandas and
matplotlib are imported once per GPU rather than once per figure.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis import metrics, plots, tables
from analysis.style import gpu_label

log = logging.getLogger("analysis.figures")


@functools.cache
def _read(path: Path) -> pd.DataFrame:
    return tables.load(path)


def load(path: str | Path) -> pd.DataFrame:
    """Read one results file once per process (the per-gpu command draws several figures from it)."""
    return _read(Path(path)).copy()


def load_all(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Read and concatenate several results files, each read once per process."""
    if not paths:
        raise ValueError("no input files")
    return pd.concat([load(p) for p in paths], ignore_index=True)


#: ``sim_summary`` tables by the simulation files they summarise (:func:`summary`).
_SUMMARIES: dict[tuple[Path, ...], pd.DataFrame] = {}


def _key(paths: str | Path | Sequence[str | Path]) -> tuple[Path, ...]:
    return tuple(Path(p) for p in ((paths,) if isinstance(paths, (str, Path)) else paths))


def summary(paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """The ``sim_summary`` of one or several simulation files, computed once per process by zeus-bench."""
    key = _key(paths)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = metrics.summary_of(load_all(key))
    return _SUMMARIES[key].copy()


def write_summary_csv(sim: Path, out: Path) -> str:
    """Write the summary of the runs table ``sim`` to ``out`` (CSV), as ``zeus-bench summarize`` does.

    It runs that command's code in this process, and keeps the file's table as ``sim``'s summary.

    Raises:
        ZeusBenchError: the command failed (it logged why).
    """
    from zeus_bench.cli.main import main as zeus_bench
    from zeus_bench.errors import ZeusBenchError

    with contextlib.redirect_stdout(io.StringIO()):  # the table it prints: the file has it all
        status = zeus_bench(["summarize", str(sim), "--format", "csv", "--out", str(out)])
    if status:
        raise ZeusBenchError(f"zeus-bench summarize {sim} --out {out} failed (exit status {status})")
    _SUMMARIES[_key(sim)] = tables.load(out)
    return str(out)


def write_summary_table(sims: Sequence[Path], out: Path) -> str:
    """Write the ``sim_summary`` table (Parquet) of several simulation files (a sweep) to ``out``."""
    from zeus_bench.store import write_table

    write_table(
        summary(sims),
        out,
        "sim_summary",
        provenance={"command": "analysis.figures per-gpu", "runs": [str(p) for p in sims]},
    )
    return str(out)


def _potential(args: argparse.Namespace) -> Figure:
    return plots.plot_potential(load_all(args.potential))


def _pareto(args: argparse.Namespace) -> Figure:
    configs = load_all(args.configs)
    potential = load_all(args.potential)
    zeus_at = metrics.settled(load(args.sim)) if args.sim else None
    return plots.plot_pareto(configs, metrics.markers(configs, potential, zeus_at), args.gpu)


def _label(sim: pd.DataFrame) -> str:
    """The GPU(s) of a simulation for a title, with their notes (one power limit, measured by a sweep)."""
    return ", ".join(gpu_label(g, d["power_limit_w"].unique()) for g, d in sim.groupby("gpu"))


def _policies(args: argparse.Namespace) -> Figure:
    sim = load(args.sim)
    present = set(sim["policy"].unique())
    pols = [p for p in ("zeus", "grid-search", "max-batch", "baseline", "oracle") if p in present]
    s = summary(args.sim)
    return plots.plot_policies(
        metrics.normalised(s, "max-batch"), metrics.normalised(s, "baseline"), pols, _label(sim)
    )


def _ablation(args: argparse.Namespace) -> Figure:
    sim = load(args.sim)
    one_limit = bool(sim["power_limit_w"].nunique() == 1)
    norm = metrics.normalised(summary(args.sim), "baseline")
    return plots.plot_ablation(norm, label=_label(sim), one_limit=one_limit)


@functools.cache
def _converged(path: Path) -> pd.DataFrame:
    return metrics.convergence(load(path))


def convergence(path: str | Path) -> pd.DataFrame:
    """The :func:`analysis.metrics.convergence` rows of one simulation file, once per process."""
    return _converged(Path(path)).copy()


def _convergence(args: argparse.Namespace) -> Figure:
    return plots.plot_convergence(convergence(args.sim), _label(load(args.sim)))


def _regret(args: argparse.Namespace) -> Figure:
    return plots.plot_regret(convergence(args.sim), _label(load(args.sim)))


def _zeus_only(paths: Sequence[Path]) -> tuple[pd.DataFrame, str]:
    norm = metrics.normalised(summary(paths), "baseline")
    return norm[norm["policy"] == "zeus"], _label(load_all(paths))


def _eta(args: argparse.Namespace) -> Figure:
    return plots.plot_eta(*_zeus_only(args.sim))


def _beta(args: argparse.Namespace) -> Figure:
    return plots.plot_beta(*_zeus_only(args.sim))


def _power_profiles(args: argparse.Namespace) -> Figure:
    potential = load_all(args.potential).rename(columns={"b0": "batch_size"})
    return plots.plot_power_profiles(metrics.power_profile(load_all(args.configs), potential), args.gpu)


def _generations(args: argparse.Namespace) -> Figure:
    from analysis.generations import generation_table, plot_generations

    return plot_generations(generation_table(load_all(args.zeus), load_all(args.power)))


def _h200(args: argparse.Namespace) -> Figure:
    from analysis.h200 import plot_sweep  # the sweep's own figure (written with the sweep)

    power = load_all(args.power)
    gpus = ", ".join(str(g).upper() for g in sorted(power["gpu"].unique()))
    limits = ", ".join(f"{v:g} W" for v in sorted(power["power_limit_w"].unique()))
    return plot_sweep(
        power,
        title=f"{gpus} measured by zeus-bench sweep: batch size only, at {limits} (observe mode); synthetic data",
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


#: Figures drawn by ``per-gpu``, each written as ``<kind>-<gpu>.<format>``, and the per-gpu option
#: that feeds each kind's ``--sim``.
PER_GPU: dict[str, str] = {
    "pareto": "sim",
    "policies": "sim",
    "ablation": "sim",
    "convergence": "sim",
    "regret": "sim",
    "eta": "eta_sim",
    "beta": "beta_sim",
}


def _per_gpu(args: argparse.Namespace) -> list[str]:
    """Write the summaries asked for, then draw every per-GPU figure; return the files written.

    The figures are :data:`PER_GPU`, and ``power-profiles`` with ``--power-profiles``.
    """
    written: list[str] = []
    if args.summary_out:
        written.append(write_summary_csv(args.sim, args.summary_out))
    for sims, out in ((args.eta_sim, args.eta_summary_out), (args.beta_sim, args.beta_summary_out)):
        if out:
            written.append(write_summary_table(sims, out))
    kinds = [*PER_GPU, *(["power-profiles"] if args.power_profiles else [])]
    for kind in kinds:
        one = argparse.Namespace(
            gpu=args.gpu,
            configs=args.configs,
            potential=args.potential,
            sim=getattr(args, PER_GPU.get(kind, "sim")),
        )
        fig = KINDS[kind][0](one)
        written += plots.save(fig, str(args.out_dir / f"{kind}-{args.gpu}"), args.format_list, args.dpi)
    return written


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--formats", default="png,pdf", help="comma-separated formats (default png,pdf)")
    p.add_argument("--dpi", type=int, default=200)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.figures``."""
    parser = argparse.ArgumentParser(prog="python -m analysis.figures", description=__doc__)
    sub = parser.add_subparsers(dest="kind", required=True)
    many = sub.add_parser("per-gpu", help=f"every per-GPU figure: {', '.join(PER_GPU)}")
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
        "--power-profiles", action="store_true", help="also draw power-profiles-<gpu> (several power limits)"
    )
    _common_args(many)
    for kind, (_, inputs) in KINDS.items():
        p = sub.add_parser(kind)
        p.add_argument("--out", required=True, help="output path without extension")
        _common_args(p)
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
    args.format_list = [f for f in args.formats.split(",") if f]
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    log.setLevel(logging.INFO)
    try:
        if args.kind == "per-gpu":
            written = _per_gpu(args)
        else:
            written = plots.save(KINDS[args.kind][0](args), args.out, args.format_list, args.dpi)
    except (ZeusBenchError, ValueError, FileNotFoundError) as exc:
        print(f"analysis.figures {args.kind}: error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        log.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    from zeus_bench.cli.common import exit_command

    exit_command(main())
