"""Aggregations of result tables into the numbers each figure and the report show (pure functions).

Input frames have the columns the ``zeus-bench`` commands write:

* simulation rows (``zeus-bench simulate``): one row per try, with ``gpu, workload, policy, seed,
  eta, beta, recurrence, attempt, batch_size, power_limit_w, epochs, energy_j, time_s, cost,
  reached, profiled``;
* configurations (``zeus-bench pareto --all``): one row per (batch size, power limit) with
  expected ``eta_j``, ``tta_s``, ``cost``, ``feasible``, ``on_frontier``;
* potential savings (``zeus-bench potential --format csv``).

Savings, cost ratios and regret are not computed here: they come from the ``sim_summary`` table
and :mod:`zeus_bench.sim.metrics` (one owner); this module only reshapes them for plots and the
report, and aggregates what is not a saving (where a policy settles, markers, power profiles).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SUMMARY_KEYS = ["gpu", "workload", "policy", "eta", "beta"]
_REFS = {"baseline": "baseline", "max-batch": "max_batch"}


def _require(df: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {', '.join(missing)}")


def summary_of(table: pd.DataFrame) -> pd.DataFrame:
    """The ``sim_summary`` rows of ``table``: as is if it is one, else summarised by zeus-bench.

    A ``runs`` table (one row per try: it has ``attempt``) goes through
    :func:`zeus_bench.sim.summarize.summarize`, the only place savings, cost ratios and regret are
    computed; this module never recomputes them.
    """
    if "attempt" not in table.columns:
        return table
    from zeus_bench.sim.summarize import summarize

    return summarize(table)


def normalised(table: pd.DataFrame, reference: str = "baseline", last: int | None = None) -> pd.DataFrame:
    """Each policy's cumulative energy, time and cost relative to ``reference``, reshaped for plots.

    Args:
        table: ``sim_summary`` rows, or a ``runs`` table (summarised first, :func:`summary_of`).
        reference: ``baseline`` or ``max-batch``.
        last: None for all recurrences, 10 for the last 10 (the summary's two scopes).

    Returns:
        One row per (gpu, workload, policy, eta, beta): ``reference``, ``energy_ratio_mean/std``
        and ``time_ratio_mean/std`` (1 - saving / 100 and saving std / 100 of the summary),
        ``cost_ratio_mean/std`` (all recurrences only; missing for the last 10),
        ``energy_saving_pct``, ``time_saving_pct`` (the summary's means) and ``n_seeds``.

    Raises:
        ValueError: unknown reference or scope, or the summary has no figures for the reference.
    """
    if reference not in _REFS:
        raise ValueError(f"unknown reference {reference!r}: one of {', '.join(_REFS)}")
    if last not in (None, 10):
        raise ValueError(f"the summary has all recurrences and the last 10, not the last {last}")
    summary = summary_of(table)
    ref, scope = _REFS[reference], "cum" if last is None else "last10"
    cols = {m: f"{m}_savings_vs_{ref}_{scope}_pct" for m in ("energy", "time")}
    _require(summary, [*SUMMARY_KEYS, "seeds", *(f"{c}_mean" for c in cols.values())], "summary rows")
    if summary[f"{cols['energy']}_mean"].isna().all():
        raise ValueError(f"reference policy {reference!r} is not in the simulation rows")
    out = summary[SUMMARY_KEYS].copy()
    out.insert(3, "reference", reference)
    for m, c in cols.items():
        out[f"{m}_ratio_mean"] = 1.0 - summary[f"{c}_mean"] / 100.0
        out[f"{m}_ratio_std"] = summary[f"{c}_std"] / 100.0
    cost = f"cost_ratio_vs_{ref}_cum"
    out["cost_ratio_mean"] = summary[f"{cost}_mean"] if scope == "cum" else np.nan
    out["cost_ratio_std"] = summary[f"{cost}_std"] if scope == "cum" else np.nan
    out["n_seeds"] = summary["seeds"]
    out["energy_saving_pct"] = summary[f"{cols['energy']}_mean"]
    out["time_saving_pct"] = summary[f"{cols['time']}_mean"]
    return out.sort_values(SUMMARY_KEYS).reset_index(drop=True)


def convergence(
    sim: pd.DataFrame, policies: tuple[str, ...] = ("zeus", "grid-search"), oracle: str = "oracle"
) -> pd.DataFrame:
    """Cost per recurrence and cumulative regret against the oracle: :func:`zeus_bench.sim.metrics.convergence`.

    Returns:
        One row per (gpu, workload, eta, beta, window, policy, recurrence): ``cost_mean``,
        ``cost_lo``, ``cost_hi``, ``oracle_cost``, ``regret_mean``, ``regret_lo``,
        ``regret_hi``, ``n_seeds``.
    """
    from zeus_bench.sim.metrics import convergence as curves

    return curves(sim, policies, oracle)


def settled(sim: pd.DataFrame, policy: str = "zeus", last: int = 10) -> pd.DataFrame:
    """Where a policy settles: the most frequent configuration of its last recurrences.

    Counts the successful tries of the last ``last`` recurrences over all seeds.

    Returns:
        One row per (gpu, workload, eta, beta): ``batch_size``, ``power_limit_w`` and ``share``
        (fraction of those tries that used it).
    """
    rows = sim[(sim["policy"] == policy) & sim["reached"].astype(bool)]
    if rows.empty:
        return pd.DataFrame(
            columns=["gpu", "workload", "eta", "beta", "batch_size", "power_limit_w", "share"]
        )
    top = rows.groupby(["gpu", "workload", "eta", "beta", "seed"], dropna=False)["recurrence"].transform(
        "max"
    )
    rows = rows[rows["recurrence"] > top - last]
    job = ["gpu", "workload", "eta", "beta"]
    counts = (
        rows.groupby([*job, "batch_size", "power_limit_w"], dropna=False).size().rename("n").reset_index()
    )
    counts["share"] = counts["n"] / counts.groupby(job, dropna=False)["n"].transform("sum")
    best = counts.sort_values([*job, "n", "batch_size"], ascending=[True] * len(job) + [False, True])
    return best.drop_duplicates(job).drop(columns="n").reset_index(drop=True)


def markers(
    configs: pd.DataFrame, potential: pd.DataFrame, zeus_at: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The points marked on the ETA-vs-TTA scatter: baseline, oracle and where Zeus settles.

    Args:
        configs: Configurations of one or more jobs (gpu, workload, batch_size, power_limit_w,
            eta_j, tta_s).
        potential: Potential-savings rows of the same jobs (baseline and min-cost columns).
        zeus_at: :func:`settled` rows; the point is looked up in ``configs``.

    Returns:
        Rows ``gpu, workload, marker, batch_size, power_limit_w, eta_j, tta_s``; ``marker`` is
        ``baseline``, ``oracle`` or ``zeus``.
    """
    rows: list[dict[str, object]] = []
    max_pl = configs.groupby(["gpu", "workload"])["power_limit_w"].max()
    for p in potential.itertuples(index=False):
        key = (p.gpu, p.workload)
        if key not in max_pl.index:
            continue
        rows.append(
            {
                "gpu": p.gpu,
                "workload": p.workload,
                "marker": "baseline",
                "batch_size": int(p.b0),
                "power_limit_w": float(max_pl[key]),
                "eta_j": p.baseline_eta_j,
                "tta_s": p.baseline_tta_s,
            }
        )
        rows.append(
            {
                "gpu": p.gpu,
                "workload": p.workload,
                "marker": "oracle",
                "batch_size": int(p.min_cost_bs),
                "power_limit_w": float(p.min_cost_pl_w),
                "eta_j": p.min_cost_eta_j,
                "tta_s": p.min_cost_tta_s,
            }
        )
    if zeus_at is not None:
        idx = configs.set_index(["gpu", "workload", "batch_size", "power_limit_w"])
        for z in zeus_at.itertuples(index=False):
            key4 = (z.gpu, z.workload, int(z.batch_size), float(z.power_limit_w))
            if key4 in idx.index:
                c = idx.loc[key4]
                rows.append(
                    {
                        "gpu": z.gpu,
                        "workload": z.workload,
                        "marker": "zeus",
                        "batch_size": key4[2],
                        "power_limit_w": key4[3],
                        "eta_j": float(c["eta_j"]),
                        "tta_s": float(c["tta_s"]),
                    }
                )
    return pd.DataFrame(
        rows, columns=["gpu", "workload", "marker", "batch_size", "power_limit_w", "eta_j", "tta_s"]
    )


def power_profile(configs: pd.DataFrame, batch_sizes: pd.DataFrame) -> pd.DataFrame:
    """Average power, throughput and energy per epoch against the limit, relative to the max limit.

    Args:
        configs: Configurations (gpu, workload, batch_size, power_limit_w, time_per_epoch_s,
            avg_power_w, energy_per_epoch_j).
        batch_sizes: One row per (gpu, workload) with the ``batch_size`` to profile (e.g. b0).

    Returns:
        Rows ``gpu, workload, batch_size, power_limit_w, avg_power_w, epochs_per_hour,
        energy_per_epoch_j`` and the three ``*_rel`` columns (value / value at the maximum limit).
    """
    df = configs.merge(batch_sizes[["gpu", "workload", "batch_size"]], on=["gpu", "workload", "batch_size"])
    df = df.sort_values(["gpu", "workload", "power_limit_w"]).reset_index(drop=True)
    df["epochs_per_hour"] = 3600.0 / df["time_per_epoch_s"]
    cols = [
        "gpu",
        "workload",
        "batch_size",
        "power_limit_w",
        "avg_power_w",
        "epochs_per_hour",
        "energy_per_epoch_j",
    ]
    out = df[cols].copy()
    at_max = out.loc[out.groupby(["gpu", "workload"])["power_limit_w"].idxmax()].set_index(
        ["gpu", "workload"]
    )
    for c in ("avg_power_w", "epochs_per_hour", "energy_per_epoch_j"):
        ref = out.set_index(["gpu", "workload"]).index.map(at_max[c])
        out[f"{c}_rel"] = out[c].to_numpy() / np.asarray(ref, dtype=float)
    return out


def per_sample(power: pd.DataFrame) -> pd.DataFrame:
    """Energy per sample and throughput of measured power traces (rows with ``samples_per_s``).

    Returns:
        Rows ``gpu, workload, batch_size, power_limit_w, samples_per_s, avg_power_w,
        energy_per_sample_j`` (average power / throughput); ``workload`` is dataset/network.
    """
    df = power.dropna(subset=["samples_per_s"]).copy()
    df["workload"] = df["dataset"].astype(str) + "/" + df["network"].astype(str)
    df["samples_per_s"] = df["samples_per_s"].astype(float)
    df["energy_per_sample_j"] = df["avg_power_w"].astype(float) / df["samples_per_s"]
    cols = [
        "gpu",
        "workload",
        "batch_size",
        "power_limit_w",
        "samples_per_s",
        "avg_power_w",
        "energy_per_sample_j",
    ]
    return df[cols].sort_values(["gpu", "workload", "batch_size"]).reset_index(drop=True)


#: The cluster replay's (Alibaba job groups) policies and baselines (label: ``sim_summary`` column infix).
CLUSTER_POLICIES = ("zeus", "zeus-plus")
CLUSTER_BASELINES = {"b0": "baseline", "max-batch": "max_batch"}
#: (policy, baseline) pairs of the cluster figure and table, in their order.
CLUSTER_SERIES = [(p, b) for p in CLUSTER_POLICIES for b in CLUSTER_BASELINES]


def cluster_savings(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per (GPU, workload, policy, baseline): energy and time saving over all recurrences (%)."""
    rows = []
    for r in summary[summary["policy"].isin(CLUSTER_POLICIES)].itertuples(index=False):
        for label, ref in CLUSTER_BASELINES.items():
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
