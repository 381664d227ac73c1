"""Markdown of the report: tables, figure links, row order, and :class:`Page` (lines and findings)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

import pandas as pd

from analysis.report.findings import Finding, Table
from analysis.report.findings.traces import gpu_caveats
from analysis.report.inputs import Inputs
from analysis.style import WORKLOAD_ORDER, ordered

STATIC_NUMBERS = (0.0, 1.0, 10.0)
"""Numbers the renderer's fixed descriptions use by definition (eta 0 and 1, the oracle line at 1, the last 10)."""


def figure_link(name: str, figures: set[str], alt: str) -> str:
    """The Markdown link of figure ``name`` when it is among ``figures`` (drawn), else a note that it was not."""
    png = f"figures/{name}.png"
    return (
        f"![{alt}]({png})"
        if any(f.endswith(f"/{name}.png") for f in figures)
        else f"*(figure {name} not drawn)*"
    )


def by_workload(df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by GPU, then workload in the paper's order."""
    order = ordered(df["workload"].unique(), WORKLOAD_ORDER)
    return (
        df.assign(_w=df["workload"].map({w: i for i, w in enumerate(order)}))
        .sort_values(["gpu", "_w"])
        .drop(columns="_w")
    )


#: A section as a list: fixed lines (str), paragraphs of findings (lists) and tables of findings (:class:`Table`).
Items = list[Any]


def items_markdown(items: Items) -> str:
    """A section's items as Markdown on their own: lines as they are, findings as bullet points."""
    out: list[str] = []
    for x in items:
        if isinstance(x, Table):
            out += [x.markdown(), ""] if x.markdown() else []
        else:
            out += [*(f"- {f.sentence}" for f in x), ""] if isinstance(x, list) else [x, ""]
    return "\n".join(out).strip() + "\n"


class Page(Inputs):
    """The report being built: its inputs, its lines, the findings stated and what was skipped."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Keep the inputs."""
        super().__init__(args)
        self.figures = {str(f) for f in args.figures}
        self.parts: list[str] = []
        self.skipped: list[str] = []
        self.findings: list[Finding] = []

    def add(self, *lines: str) -> None:
        """Append lines (fixed text: no number but :data:`STATIC_NUMBERS`)."""
        self.parts.extend(lines)

    def say(self, *findings: Finding, before: str = "", after: str = "") -> None:
        """Append one paragraph: fixed text ``before``, the findings' sentences, fixed text ``after``."""
        self.findings.extend(findings)
        text = " ".join(x for x in (before, *(f.sentence for f in findings), after) if x)
        if text:
            self.add(text, "")

    def add_items(self, items: Items) -> None:
        """Append a section's items: each line as a paragraph, each list of findings as one :meth:`say`, each table."""
        for item in items:
            if isinstance(item, Table):
                self.findings.extend(item.findings)
                if item.markdown():
                    self.add(item.markdown(), "")
            elif isinstance(item, list):
                self.say(*item)
            else:
                self.add(item, "")

    def caveats(self, gpus: Iterable[Any]) -> None:
        """The notes of the given GPUs that need one (one power limit, measured by a sweep)."""
        wanted = {str(g) for g in gpus}
        self.say(gpu_caveats({g: lim for g, lim in self.limits.items() if g in wanted}))
