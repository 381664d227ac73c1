"""Findings of the cluster-scale replay (Alibaba job groups): the savings' ranges and the report's table.

Both read the ``sim_summary`` tables of the replay (``zeus-bench summarize``) through
:func:`analysis.metrics.cluster_savings`; the section that prints them is
:func:`analysis.report.sections.evaluation.cluster`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.metrics import CLUSTER_SERIES, cluster_savings
from analysis.report.findings import Finding
from analysis.style import WORKLOAD_ORDER, ordered


def cluster_finding(summary: pd.DataFrame) -> Finding:
    """Per policy and baseline: the range of energy and time savings over (GPU, workload), and jobs worse off."""
    s = cluster_savings(summary)
    seeds = int(s["seeds"].max()) if len(s) else 0
    parts: list[str] = []
    numbers: dict[str, float] = {"seeds": seeds}
    for policy, baseline in CLUSTER_SERIES:
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
    s = cluster_savings(summary)
    rows = []
    for (gpu, workload), d in s.groupby(["gpu", "workload"], sort=False):
        row: dict[str, Any] = {"GPU": gpu.upper(), "workload": workload}
        for policy, baseline in CLUSTER_SERIES:
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
