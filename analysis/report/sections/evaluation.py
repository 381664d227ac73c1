"""The report's sections on the paper's evaluation: headline reconciliation, cluster replay, Capriccio.

:mod:`analysis.report` calls :func:`add_arguments` on its parser and :func:`headline`,
:func:`cluster` and :func:`capriccio` with its :class:`~analysis.report.Report`; the numbers come
from :mod:`analysis.report.findings.headline` and :mod:`analysis.report.findings.cluster`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.findings.cluster import cluster_finding, savings_table
from analysis.report.findings.headline import headline_lines, read_alibaba_summaries
from analysis.report.text import md_table

CAPRICCIO_NEEDS = "needs the dataset and a GPU"


def skipped_line(manifest_path: str | Path | None) -> str | None:
    """The report's one line when the stage was skipped (the file absent), else None."""
    if manifest_path is None:
        return None
    path = Path(manifest_path)
    if not path.is_file():
        return "Cluster-scale replay (Alibaba job groups): no manifest of alibaba_groups.csv.xz."
    manifest = json.loads(path.read_text())
    if manifest.get("status") == "ok":
        return None
    return (
        "Cluster-scale replay (Alibaba job groups), its figure and its report section: "
        f"{manifest.get('reason', 'alibaba_groups.csv.xz not obtained')}."
    )


def cluster_items(summary: pd.DataFrame, manifest_path: str | Path | None) -> list[Any]:
    """The report section: heading, figure, the finding (a list) and the table (strings)."""
    items: list[Any] = [
        "## Cluster-scale replay: the Alibaba job groups",
        "![Alibaba replay](figures/alibaba.png)",
    ]
    if manifest_path is not None and Path(manifest_path).is_file():
        m = json.loads(Path(manifest_path).read_text())
        items.append(
            f"`{m['file']}`: git blob SHA-1 `{m['git_blob_sha1']}` verified, sha256 `{m.get('sha256', 'n/a')}`. "
            "Each group is replayed as an arrival table (`zeus-bench simulate --arrivals`): a job starting while "
            "others of its group run uses the best configuration known then; energy and time of each job are "
            "scaled by its `runtime_ratio`, as the paper's simulator does."
        )
    items.append([cluster_finding(summary)])
    items.append(md_table(savings_table(summary)))
    return items


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The report's options for these sections."""
    p.add_argument("--alibaba", type=Path, nargs="*", default=[], help="the Alibaba replay's summaries (CSV)")
    p.add_argument("--alibaba-manifest", type=Path, default=None, help="MANIFEST.json of fetch-alibaba")
    p.add_argument(
        "--capriccio", type=Path, nargs="*", default=[], help="train traces of the Capriccio drift experiment"
    )


def _alibaba_summary(report: Any) -> Any:
    return read_alibaba_summaries([str(p) for p in report.args.alibaba]) if report.args.alibaba else None


def headline(report: Any) -> None:
    """The headline paragraph: which definition of Zeus's savings reproduces the paper's numbers."""
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
    report.add(md_table(table), "")


def cluster(report: Any) -> None:
    """The cluster-scale replay's section, or its one skipped line."""
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
    report.add_items(cluster_items(summary, manifest))


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
    rows = pd.concat([pd.read_parquet(p) for p in traces], ignore_index=True)
    report.add("## Capriccio: the drift experiment", "")
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
    report.add(md_table(rows[cols]), "")
