"""``python -m analysis.report --out results/report.md ...``: its parser and :func:`main`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from analysis.report.document import Report
from analysis.report.sections.evaluation import add_arguments
from zeus_bench.core.entry import int_range_arg
from zeus_bench.core.fsutil import atomic_write_text


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.report``."""
    p = argparse.ArgumentParser(prog="python -m analysis.report", description=__doc__)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--manifest", type=Path, default=None, help="MANIFEST.json of zeus-bench fetch-traces")
    p.add_argument("--configured-gpus", default="all")
    for name in ("potential", "summary", "sim", "configs", "own", "figures"):
        p.add_argument(f"--{name}", type=Path, nargs="*", default=[])
    p.add_argument(
        "--validation",
        type=Path,
        nargs="*",
        default=[],
        help="findings tables of workflows/validate.smk (results/validation/<gpu>/findings.parquet)",
    )
    for name in ("eta", "beta"):
        p.add_argument(
            f"--{name}-sim",
            type=Path,
            nargs="*",
            default=[],
            help=f"the {name} sweep: its runs tables, or their sim_summary tables (one per GPU)",
        )
    add_arguments(p)
    p.add_argument("--policy-study", type=Path, default=None, help="folder of the zeus-plus study's tables")
    p.add_argument("--policy-seeds", type=int_range_arg, default=list(range(1, 11)), help="its seeds")
    p.add_argument("--arena", type=Path, default=None, help="arena folder, horizon known (zeus-bench arena)")
    p.add_argument("--arena-unknown", type=Path, default=None, help="arena folder, horizon unknown")
    p.add_argument(
        "--arena-tuning",
        type=Path,
        nargs=2,
        default=None,
        metavar=("TUNE_HALF_CSV", "JUDGE_HALF_CSV"),
        help="zeus-plus tuning tables of both folds (python -m zeus_bench.studies.tuning)",
    )
    p.add_argument(
        "--arena-coverage",
        type=_coverage_file,
        default=None,
        metavar="FILE.csv",
        help="the coverage study's settings (python -m zeus_bench.studies.coverage): how the intervals were sized",
    )
    p.add_argument(
        "--reference",
        type=Path,
        nargs="*",
        default=[Path("results/reference/original_simulator.csv"), Path("results/reference/paper.csv")],
        help="reference number files (default: results/reference/original_simulator.csv and paper.csv)",
    )
    return p


def _coverage_file(text: str) -> Path:
    """``--arena-coverage``: the coverage study's settings table, valid (an argparse type: one line, exit 2)."""
    import pandas as pd

    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.store import validate

    path = Path(text)
    try:
        validate(pd.read_csv(path), "policy_coverage", text)
    except (OSError, ValueError, ZeusBenchError) as exc:
        raise argparse.ArgumentTypeError(str(exc).splitlines()[0]) from None
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report."""
    args = build_parser().parse_args(argv)
    atomic_write_text(args.out, Report(args).render())
    return 0
