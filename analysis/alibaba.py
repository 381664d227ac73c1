"""The cluster-scale replay (Alibaba job groups): its figure and its report section.

``python -m analysis.alibaba --summary results/alibaba/<gpu>.csv ... --out STEM`` draws the
paper's cluster figure: per GPU, the energy and the time of Zeus and zeus-plus over every job of
the Alibaba groups, per workload, against b0 and against max-batch at the maximum limit (savings in
percent, from the ``sim_summary`` tables that ``zeus-bench summarize`` wrote). The report section
(:func:`section_items`) gives the same numbers as a table and a computed finding; when the stage
was skipped, :func:`skipped_line` is the one line the report's "What was skipped" prints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from analysis.findings import Finding
from analysis.style import WORKLOAD_ORDER, ordered, series_color

POLICIES = ("zeus", "zeus-plus")
BASELINES = {"b0": "baseline", "max-batch": "max_batch"}
#: (policy, baseline) pairs of the figure and the table, in their order.
SERIES = [(p, b) for p in POLICIES for b in BASELINES]


def load_summaries(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The replay's summaries (CSV), concatenated."""
    if not paths:
        raise ValueError("no Alibaba summary given")
    return pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)


def savings(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (GPU, workload, policy, baseline): energy and time saving over all recurrences (%)."""
    rows = []
    for r in summary[summary["policy"].isin(POLICIES)].itertuples(index=False):
        for label, ref in BASELINES.items():
            rows.append(
                {
                    "gpu": str(r.gpu),
                    "workload": str(r.workload),
                    "policy": str(r.policy),
                    "baseline": label,
                    "energy_pct": float(getattr(r, f"energy_savings_vs_{ref}_cum_pct_mean")),
                    "time_pct": float(getattr(r, f"time_savings_vs_{ref}_cum_pct_mean")),
                    "seeds": int(r.seeds),
                }
            )
    return pd.DataFrame(
        rows, columns=["gpu", "workload", "policy", "baseline", "energy_pct", "time_pct", "seeds"]
    )


def plot_cluster(summary: pd.DataFrame) -> Figure:
    """The cluster figure: energy (top) and time (bottom) savings per workload, one column per GPU."""
    import numpy as np

    s = savings(summary)
    gpus = sorted(s["gpu"].unique())
    fig = Figure(figsize=(3.4 * max(1, len(gpus)), 4.6), layout="constrained")
    axes = fig.subplots(2, max(1, len(gpus)), squeeze=False)
    width = 0.8 / len(SERIES)
    for j, gpu in enumerate(gpus):
        d = s[s["gpu"] == gpu]
        workloads = ordered(d["workload"].unique(), WORKLOAD_ORDER)
        x = np.arange(len(workloads))
        for i, metric in enumerate(("energy_pct", "time_pct")):
            ax = axes[i][j]
            for k, (policy, baseline) in enumerate(SERIES):
                sub = d[(d["policy"] == policy) & (d["baseline"] == baseline)].set_index("workload")
                vals = [float(sub.at[w, metric]) if w in sub.index else np.nan for w in workloads]
                ax.bar(
                    x + (k - (len(SERIES) - 1) / 2) * width,
                    vals,
                    width * 0.95,
                    color=series_color(k),
                    label=f"{policy} vs {baseline}",
                    edgecolor="white",
                    linewidth=0.3,
                )
            ax.axhline(0, color="black", linewidth=0.5)
            ax.set_xticks(x, workloads, rotation=25, ha="right")
            ax.set_ylabel(("Energy" if metric == "energy_pct" else "Time") + " saving (%)")
            if i == 0:
                ax.set_title(f"{gpu.upper()}, Alibaba job groups", fontsize=8)
    axes[0][0].legend(fontsize=6, loc="best")
    fig.suptitle(
        "Cluster-scale replay: savings over every job of the Alibaba groups (all recurrences, max limit baselines)",
        fontsize=9,
    )
    return fig


def cluster_finding(summary: pd.DataFrame) -> Finding:
    """Per policy and baseline: the range of energy and time savings over (GPU, workload), and jobs worse off."""
    s = savings(summary)
    seeds = int(s["seeds"].max()) if len(s) else 0
    parts: list[str] = []
    numbers: dict[str, float] = {"seeds": seeds}
    for policy, baseline in SERIES:
        d = s[(s["policy"] == policy) & (s["baseline"] == baseline)]
        if d.empty:
            continue
        lo, hi = d.loc[d["energy_pct"].idxmin()], d.loc[d["energy_pct"].idxmax()]
        worse = int((d["energy_pct"] < 0).sum())
        key = f"{policy}.{baseline}"
        numbers.update(
            {
                f"{key}.energy_min": float(lo["energy_pct"]),
                f"{key}.energy_max": float(hi["energy_pct"]),
                f"{key}.time_max": float(d["time_pct"].max()),
                f"{key}.worse": worse,
                f"{key}.jobs": len(d),
            }
        )
        text = (
            f"{policy} against {baseline} saves {lo['energy_pct']:.1f} % ({lo['workload']}, {lo['gpu'].upper()}) to "
            f"{hi['energy_pct']:.1f} % ({hi['workload']}, {hi['gpu'].upper()}) energy and up to "
            f"{d['time_pct'].max():.1f} % time"
        )
        text += (
            f", more energy than {baseline} on {worse} of {len(d)}"
            if worse
            else f", less energy on all {len(d)}"
        )
        parts.append(text)
    if not parts:
        return Finding("alibaba.savings", "The Alibaba replay has no Zeus or zeus-plus rows.", {})
    return Finding(
        "alibaba.savings",
        f"Over every job of the Alibaba groups ({seeds} seed{'s' if seeds != 1 else ''}, means over seeds; "
        f"each (GPU, workload) a job): {'; '.join(parts)}.",
        numbers,
    )


def savings_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The report's table: per GPU and workload, each policy against each baseline, energy / time saving."""
    s = savings(summary)
    rows = []
    for (gpu, workload), d in s.groupby(["gpu", "workload"], sort=False):
        row: dict[str, Any] = {"GPU": gpu.upper(), "workload": workload}
        for policy, baseline in SERIES:
            m = d[(d["policy"] == policy) & (d["baseline"] == baseline)]
            row[f"{policy} vs {baseline}: energy / time"] = (
                f"{m['energy_pct'].iloc[0]:.1f} / {m['time_pct'].iloc[0]:.1f} %" if len(m) else "n/a"
            )
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = {w: i for i, w in enumerate(ordered(table["workload"].unique(), WORKLOAD_ORDER))}
    return table.assign(_w=table["workload"].map(order)).sort_values(["GPU", "_w"]).drop(columns="_w")


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


def section_items(summary: pd.DataFrame, manifest_path: str | Path | None) -> list[Any]:
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
    from analysis.report.render import _md_table

    items.append(_md_table(savings_table(summary)))
    return items


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.alibaba``."""
    p = argparse.ArgumentParser(prog="python -m analysis.alibaba", description=__doc__)
    p.add_argument("--summary", type=Path, nargs="+", required=True, help="results/alibaba/<gpu>.csv")
    p.add_argument("--out", required=True, help="output stem (STEM.<format>)")
    p.add_argument("--formats", default="png,pdf")
    p.add_argument("--dpi", type=int, default=200)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Draw the cluster figure; exit status 2 on bad input."""
    from analysis import plots

    args = build_parser().parse_args(argv)
    try:
        fig = plot_cluster(load_summaries(args.summary))
        for path in plots.save(fig, args.out, [f for f in args.formats.split(",") if f], args.dpi):
            print(f"wrote {path}")
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"analysis.alibaba: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(main())
