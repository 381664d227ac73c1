"""Helpers shared by command modules: argument types and result output."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from zeus_bench.cost import check_beta, check_eta
from zeus_bench.errors import ConfigError
from zeus_bench.fsutil import atomic_write_text

if TYPE_CHECKING:  # pandas is imported by the handlers that render tables, not at start-up
    import pandas as pd


def eta_arg(text: str) -> float:
    """Argparse type: eta in [0, 1]."""
    try:
        return check_eta(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def beta_arg(text: str) -> float:
    """Argparse type: beta > 0 (``inf`` turns early stopping off)."""
    try:
        return check_beta(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def int_range_arg(text: str) -> list[int]:
    """Parse as argparse type: ``1-10``, ``3`` or ``1,4,7-9`` -> sorted unique non-negative ints.

    An empty range (``""``, ``5-3``) is refused.
    """
    out: set[int] = set()
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer range: {text!r}") from None
        if b < a:
            raise argparse.ArgumentTypeError(f"empty range {part!r}")
        out.update(range(a, b + 1))
    if not out:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    return sorted(out)


def add_format_arg(parser: argparse.ArgumentParser, default: str = "table") -> None:
    """Add ``--format table|csv|json`` and ``--out FILE``."""
    parser.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default=default,
        help="output format (default: %(default)s)",
    )
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
