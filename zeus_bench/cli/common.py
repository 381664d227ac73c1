"""Helpers shared by command modules: argument types and result output."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pandas as pd

from zeus_bench.cost import check_beta, check_eta
from zeus_bench.errors import ConfigError
from zeus_bench.fsutil import atomic_write_text


def eta_arg(text: str) -> float:
    """argparse type: eta in [0, 1]."""
    try:
        return check_eta(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def beta_arg(text: str) -> float:
    """argparse type: beta > 0 (``inf`` turns early stopping off)."""
    try:
        return check_beta(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def int_range_arg(text: str) -> list[int]:
    """argparse type: ``1-10``, ``3`` or ``1,4,7-9`` -> sorted unique ints; empty is refused."""
    out: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part[1:]:
                lo, hi = part.split("-", 1) if not part.startswith("-") else ("-" + part[1:].split("-", 1)[0], part[1:].split("-", 1)[1])
                a, b = int(lo), int(hi)
                if b < a:
                    raise argparse.ArgumentTypeError(f"empty range {part!r}")
                out.update(range(a, b + 1))
            else:
                out.add(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer range: {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return sorted(out)


def add_format_arg(parser: argparse.ArgumentParser, default: str = "table") -> None:
    """Add ``--format table|csv|json`` and ``--out FILE``."""
    parser.add_argument("--format", choices=("table", "csv", "json"), default=default, help="output format (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=None, help="write to this file instead of stdout (atomically)")


def render(df: pd.DataFrame, fmt: str, floatfmt: str = "{:.4g}") -> str:
    """Render a frame as an aligned table, CSV or JSON records."""
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
