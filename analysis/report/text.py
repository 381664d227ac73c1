"""How the report writes numbers and names: percentages, GPU names, portable paths; the wording thresholds."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

import pandas as pd

ORIGINAL_LABEL = "original simulator (Zeus v0.3.0 code)"
PAPER_LABEL = "paper"
#: Said once in every section of policy results that do not come from the arena (sections 3-7).
SIMULATED_NOTE = (
    "Simulated: the traces replayed (H200 projected). Zeus, grid search and the baselines are told no horizon "
    "(the number of recurrences): none of them uses it."
)
NEAR_PT = 1.0  # "within 1 point"
MOVE_PT = 0.5  # a change smaller than this is "no change"
LITTLE_PCT = 5.0  # "little to gain": the oracle saves less than this


# -- formatting ------------------------------------------------------------------------------
def pct(v: float | None) -> str:
    """A percentage as the report prints it: ``12.3 %`` (``n/a`` when missing)."""
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f} %"


def gpu_name(g: Any) -> str:
    """A GPU kind as the report names it (upper case: ``V100``)."""
    return str(g).upper()


def job_names(jobs: Iterable[tuple[Any, Any]]) -> str:
    """``(gpu, workload)`` pairs as ``workload (GPU), ...``."""
    return ", ".join(f"{w} ({gpu_name(g)})" for g, w in jobs)


def pct_pair(a: str, b: str) -> str:
    """``a / b %`` of two formatted numbers, ``n/a`` when both are."""
    return "n/a" if a == b == "n/a" else f"{a} / {b} %"


def beta_text(v: float) -> str:
    """The early-stop threshold beta as the report writes it (``off`` when infinite)."""
    return "off" if math.isinf(v) else f"{v:g}"


def md_table(df: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table: its columns as the header, each value as ``str`` prints it."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def portable(text: str) -> str:
    """``text`` without absolute file-system paths (each becomes ``…/<its last part>``).

    The report must be byte-identical wherever the project is checked out; URLs and the
    documentation placeholder ``/path/to/...`` are kept.
    """

    def short(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).startswith("/path/to/") else f"…/{m.group(1)}"

    return re.sub(r"(?<![\w:/.])/(?:[^\s'\"`/,;)]+/)*([^\s'\"`/,;)]+)", short, text)


#: The longest line the report writes (a longer paragraph is broken between sentences).
MAX_LINE = 400


def _pieces(sentence: str, limit: int) -> list[str]:
    """A sentence longer than ``limit`` cut after its semicolons, then its commas (each piece kept whole)."""
    if len(sentence) <= limit:
        return [sentence]
    for sep in ("; ", ", "):
        parts = sentence.split(sep)
        if len(parts) > 1:
            out: list[str] = []
            for k, part in enumerate(parts):
                text = part + (sep.rstrip() if k < len(parts) - 1 else "")
                if out and len(out[-1]) + 1 + len(text) <= limit:
                    out[-1] += " " + text
                else:
                    out.append(text)
            return [q for p in out for q in (_pieces(p, limit) if sep == "; " else [p])]
    return [sentence]


def wrap_long_lines(text: str, limit: int = MAX_LINE) -> str:
    """Break every prose line longer than ``limit`` between sentences (Markdown: the same paragraph).

    A bullet's continuation lines are indented by two spaces (the same bullet). Table rows,
    headings and figure links are left as they are; a single sentence longer than ``limit`` stays
    whole on its own line.
    """
    out = []
    for line in text.split("\n"):
        if len(line) <= limit or line.startswith(("|", "#", "![")):
            out.append(line)
            continue
        indent = "  " if line.startswith("- ") else ""
        sentences = [
            piece
            for sentence in re.split(r"(?<=[.;:])\s+(?=[A-Z(*`\[])", line)
            for piece in _pieces(sentence, limit - len(indent))
        ]
        current = ""
        for sentence in sentences:
            if current and len(current) + 1 + len(sentence) > limit:
                out.append(current)
                current = indent + sentence
            else:
                current = f"{current} {sentence}" if current else sentence
        out.append(current)
    return "\n".join(out)
