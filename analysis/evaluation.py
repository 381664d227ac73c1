"""The report's sections on the paper's evaluation: headline reconciliation, cluster replay, Capriccio.

:mod:`analysis.report` calls :func:`add_arguments` on its parser and :func:`headline`,
:func:`cluster` and :func:`capriccio` with its :class:`~analysis.report.Report`; the numbers come
from :mod:`analysis.headline` and :mod:`analysis.alibaba`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

CAPRICCIO_NEEDS = "needs the dataset and a GPU"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The report's options for these sections."""
    p.add_argument("--alibaba", type=Path, nargs="*", default=[], help="the Alibaba replay's summaries (CSV)")
    p.add_argument("--alibaba-manifest", type=Path, default=None, help="MANIFEST.json of fetch-alibaba")
    p.add_argument(
        "--capriccio", type=Path, nargs="*", default=[], help="train traces of the Capriccio drift experiment"
    )


def _alibaba_summary(report: Any) -> Any:
    from analysis.headline import read_alibaba_summaries

    return read_alibaba_summaries([str(p) for p in report.args.alibaba]) if report.args.alibaba else None


def headline(report: Any) -> None:
    """The headline paragraph: which definition of Zeus's savings reproduces the paper's numbers."""
    from analysis.headline import headline_lines
    from analysis.report.render import _md_table

    findings, table = headline_lines(report.summary, _alibaba_summary(report), report.references)
    if not findings:
        return
    report.add("## Headline: the paper's 15.3-75.8 % and 60.6 %, reconciled", "")
    report.say(
        *findings,
        before=(
            "The paper states Zeus's savings against the maximum batch size at the maximum power limit without "
            "saying over which recurrences, against which exact baseline or on which GPU; each candidate below "
            "is computed from this run's Zeus replays (published-trace GPUs only)."
        ),
    )
    report.add(_md_table(table), "")


def cluster(report: Any) -> None:
    """The cluster-scale replay's section, or its one skipped line."""
    from analysis.alibaba import section_items, skipped_line

    manifest = report.args.alibaba_manifest
    line = skipped_line(manifest)
    if line is not None:
        report.skipped.append(line)
        return
    summary = _alibaba_summary(report)
    if summary is None:
        if manifest is not None:
            report.skipped.append("Cluster-scale replay (Alibaba job groups): no replay on a Zeus GPU.")
        return
    for item in section_items(summary, manifest):
        if isinstance(item, list):
            report.say(*item)
        else:
            report.add(item, "")


def capriccio(report: Any) -> None:
    """The Capriccio drift experiment: its trace's epochs when one exists, else what it needs."""
    traces = [p for p in report.args.capriccio if Path(p).is_file()]
    if not traces:
        report.skipped.append(
            "Capriccio (the paper's drift experiment: Sentiment140 in 38 time-sorted slices, trained slice after "
            f"slice by the online optimizer): {CAPRICCIO_NEEDS} (`zeus-bench capriccio --sentiment140 CSV --out DIR`, "
            "then `snakemake -s workflows/capriccio.smk` on a GPU); no Capriccio train trace yet."
        )
        return
    import pandas as pd

    from analysis.report.render import _md_table

    rows = pd.concat([pd.read_parquet(p) for p in traces], ignore_index=True)
    report.add("## Capriccio: the drift experiment", "")
    from analysis.findings import Finding

    n = int(rows["slice"].nunique())
    report.say(
        Finding(
            "capriccio.slices",
            f"Train trace of the Capriccio slices ({n} slices): the batch size the online optimizer chose on each "
            "slice and the epochs it took to reach the target.",
            {"slices": n},
        )
    )
    cols = [
        c
        for c in ("slice", "batch_size", "power_limit_w", "epochs", "reached", "metric", "energy_j", "time_s")
        if c in rows
    ]
    report.add(_md_table(rows[cols]), "")
