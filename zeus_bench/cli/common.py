"""Helpers shared by command modules: argument specs and result output.

The argument types, bounds and the exit helper live in :mod:`zeus_bench.core.entry` (imported
by the lower floors too) and are re-exported here for the command modules.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from zeus_bench.core.entry import (
    MAX_RECURRENCES,
    MAX_SEEDS,
    add_int_option,
    beta_arg,
    bounded_int_arg,
    check_out,
    eta_arg,
    exit_command,
    int_range_arg,
    require_extra,
)
from zeus_bench.core.fsutil import atomic_write_text

if TYPE_CHECKING:  # pandas is imported by the handlers that render tables, not at start-up
    import pandas as pd


#: Output suffixes of each --format.
FORMAT_SUFFIXES: dict[str, tuple[str, ...]] = {"csv": (".csv",), "json": (".json",), "table": (".txt", ".md")}


#: More GPU indices than any host has: a larger index is a typo.
MAX_GPUS = 1024


def gpu_indices_arg(text: str) -> list[int]:
    """Parse ``--gpus I,J``: GPU indices in [0, MAX_GPUS) (an argparse type; ASCII digits only)."""
    from zeus_bench.core.entry import parse_int

    try:
        values = [parse_int(v.strip()) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1, got {text!r}") from None
    if not values or any(not 0 <= v < MAX_GPUS for v in values):
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1, got {text!r}")
    return values


def add_workloads_arg(parser: argparse.ArgumentParser) -> None:
    """Add ``--workloads all|W,W,...`` (default all), with ``--workload`` as an exact alias."""
    parser.add_argument(
        "--workloads",
        "--workload",
        dest="workloads",
        default="all",
        help="'all' (default) or comma-separated workload ids",
    )


def add_seeds_arg(parser: argparse.ArgumentParser, last: int, help: str) -> None:
    """Add ``--seeds`` (a range like 1-10 or 1,4,7-9; default 1..``last``)."""
    parser.add_argument("--seeds", type=int_range_arg, default=list(range(1, last + 1)), help=help)


def add_policy_module_arg(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--policy-module MODULE`` (repeatable; default none): modules that register extra policies."""
    parser.add_argument("--policy-module", action="append", default=[], metavar="MODULE", help=help)


def add_format_arg(parser: argparse.ArgumentParser, default: str = "table", out: bool = True) -> None:
    """Add ``--format table|csv|json`` and ``--out FILE`` (``out`` False: a command whose --out is its own)."""
    parser.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default=default,
        help="output format (default: %(default)s)",
    )
    if not out:
        return
    parser.add_argument(
        "--out", type=Path, default=None, help="write to this file instead of stdout (atomically)"
    )


def render(df: pd.DataFrame, fmt: str, floatfmt: str = "{:.4g}") -> str:
    """Render a frame as an aligned table, CSV or JSON records."""
    import pandas as pd

    if fmt == "csv":
        buf = io.StringIO()
        df.to_csv(buf, index=False, lineterminator="\n")
        return buf.getvalue()
    if fmt == "json":
        return json.dumps(json.loads(df.to_json(orient="records")), indent=2) + "\n"
    shown = df.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: "" if pd.isna(v) else floatfmt.format(v))
    return shown.to_string(index=False) + "\n"


def emit(text: str, out: Path | None) -> None:
    """Write text to ``out`` atomically, or to stdout."""
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)


__all__ = [
    "FORMAT_SUFFIXES",
    "MAX_RECURRENCES",
    "MAX_SEEDS",
    "add_format_arg",
    "add_int_option",
    "add_policy_module_arg",
    "add_seeds_arg",
    "add_workloads_arg",
    "beta_arg",
    "bounded_int_arg",
    "check_out",
    "emit",
    "eta_arg",
    "exit_command",
    "gpu_indices_arg",
    "int_range_arg",
    "render",
    "require_extra",
]
