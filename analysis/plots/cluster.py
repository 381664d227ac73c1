"""The cluster-scale replay's figure (Alibaba job groups): energy and time savings per workload.

Per GPU, the energy and the time of Zeus and zeus-plus over every job of the Alibaba groups, per
workload, against b0 and against max-batch at the maximum limit (savings in percent, from the
``sim_summary`` tables that ``zeus-bench summarize`` wrote). No file I/O.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from analysis.metrics import CLUSTER_SERIES, cluster_savings
from analysis.style import WORKLOAD_ORDER, ordered, series_color


def plot_cluster(summary: pd.DataFrame) -> Figure:
    """The cluster figure: energy (top) and time (bottom) savings per workload, one column per GPU."""
    import numpy as np

    s = cluster_savings(summary)
    gpus = sorted(s["gpu"].unique())
    fig = Figure(figsize=(3.4 * max(1, len(gpus)), 4.6), layout="constrained")
    axes = fig.subplots(2, max(1, len(gpus)), squeeze=False)
    width = 0.8 / len(CLUSTER_SERIES)
    for j, gpu in enumerate(gpus):
        d = s[s["gpu"] == gpu]
        workloads = ordered(d["workload"].unique(), WORKLOAD_ORDER)
        x = np.arange(len(workloads))
        for i, metric in enumerate(("energy_pct", "time_pct")):
            ax = axes[i][j]
            for k, (policy, baseline) in enumerate(CLUSTER_SERIES):
                sub = d[(d["policy"] == policy) & (d["baseline"] == baseline)].set_index("workload")
                vals = [float(sub.at[w, metric]) if w in sub.index else np.nan for w in workloads]
                ax.bar(
                    x + (k - (len(CLUSTER_SERIES) - 1) / 2) * width,
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
