"""The report's first screen (at most 40 lines): the three questions answered, each line labelled.

Built from the arena's tables (horizon unknown first: the realistic case, then known), the Zeus
replays' headline candidates, the reference numbers and the validations against a measured run
(``--validation``: ``results/validation/<gpu>/findings.parquet``; :mod:`analysis.report.findings.answer`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zeus_bench.catalog  # noqa: F401  (registers the arena's kinds)
from analysis.report.findings import Finding
from analysis.report.findings.answer import (
    best_policy,
    paper_lines,
    recommendation,
    validation_lines,
    zeus_savings,
)
from analysis.report.findings.headline import candidates, paper_targets
from zeus_bench.store import read_metadata, read_table


def _summary(folder: Path | None) -> tuple[Any, dict[str, str]]:
    """An arena folder's ``arena_summary`` and its GPUs' labels (None, {} when absent)."""
    if folder is None or not (folder / "arena_summary.parquet").is_file():
        return None, {}
    path = folder / "arena_summary.parquet"
    return read_table(path, "arena_summary"), dict(read_metadata(path).get("labels", {}))


def answer_items(report: Any) -> list[tuple[str, list[Finding]]]:
    """``(heading, findings)`` blocks of the first screen, in order (empty blocks left out)."""
    args = report.args
    known, labels = _summary(getattr(args, "arena", None))
    unknown, labels_u = _summary(getattr(args, "arena_unknown", None))
    labels = {**labels_u, **labels}
    blocks: list[tuple[str, list[Finding]]] = []
    if known is not None:
        blocks.append(
            (
                "**How much does Zeus save?** (cost; arena, every split pooled; simulated)",
                zeus_savings(known, labels),
            )
        )
    if unknown is not None:
        blocks.append(
            (
                "**Which policy is best, horizon unknown** (the realistic case)?",
                [*best_policy(unknown, "unknown", labels), recommendation(unknown, "unknown", labels)],
            )
        )
    if known is not None:
        blocks.append(
            (
                "**Which policy is best, horizon known** (told the true number of recurrences)?",
                best_policy(known, "known", labels),
            )
        )
    refs = report.references
    summary = report.summary
    cands = None if summary is None else candidates(summary, None, paper_targets(refs))
    lines = paper_lines(refs, cands, report.potential_rows, report.configs)
    if lines:
        blocks.append(
            ("**Which of the paper's stated numbers reproduce?** (nearest computed definition)", lines)
        )
    validation = {
        str(p): read_table(p, "validation_findings") for p in getattr(args, "validation", None) or []
    }
    if validation:
        blocks.append(
            (
                "**Does the simulator predict a measured run?** (policy zeus replayed on traces measured on "
                "the GPU, against the online optimizer's run there)",
                validation_lines(validation),
            )
        )
    return blocks


def answer_first(report: Any) -> None:
    """Append the first screen: one heading, then each block's findings as bullet points."""
    blocks = answer_items(report)
    if not blocks:
        return
    report.add("## The answer first (policy results simulated; H200 rows projected)", "")
    for heading, findings in blocks:
        report.findings.extend(findings)
        report.add(heading, *(f"- {f.sentence}" for f in findings), "")
