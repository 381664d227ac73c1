"""Aggregations of result tables into the numbers each figure and the report show (pure functions).

Input frames have the columns the ``zeus-bench`` commands write:

* simulation rows (``zeus-bench simulate``): one row per try, with ``gpu, workload, policy, seed,
  eta, beta, recurrence, attempt, batch_size, power_limit_w, epochs, energy_j, time_s, cost,
  reached, profiled``;
* configurations (``zeus-bench pareto --all``): one row per (batch size, power limit) with
  expected ``eta_j``, ``tta_s``, ``cost``, ``feasible``, ``on_frontier``;
* potential savings (``zeus-bench potential --format csv``).

Ratios are per seed (policy total / reference total over the same recurrences and seed), then
averaged over seeds; a saving in percent is ``100 * (1 - ratio)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RUN_KEYS = ["gpu", "workload", "policy", "eta", "beta", "seed"]
REC_KEYS = [*RUN_KEYS, "recurrence"]


def _require(df: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {', '.join(missing)}")


def per_recurrence(sim: pd.DataFrame) -> pd.DataFrame:
    """Energy, time and cost of each recurrence (sum over its tries) and whether it succeeded."""
    _require(sim, [*REC_KEYS, "energy_j", "time_s", "cost", "reached"], "simulation rows")
    out = sim.groupby(REC_KEYS, sort=True, dropna=False).agg(
        energy_j=("energy_j", "sum"),
        time_s=("time_s", "sum"),
        cost=("cost", "sum"),
        tries=("attempt", "size"),
        reached=("reached", "any"),
    )
    return out.reset_index()


def run_totals(sim: pd.DataFrame, last: int | None = None) -> pd.DataFrame:
    """Cumulative energy, time and cost of each run (policy x seed x eta x beta of a job).

    Args:
        sim: Simulation rows.
        last: Only the last ``last`` recurrences of each run (None: all).
    """
    rec = per_recurrence(sim)
    if last is not None:
        top = rec.groupby(RUN_KEYS, dropna=False)["recurrence"].transform("max")
        rec = rec[rec["recurrence"] > top - last]
    out = rec.groupby(RUN_KEYS, sort=True, dropna=False).agg(
        energy_j=("energy_j", "sum"),
        time_s=("time_s", "sum"),
        cost=("cost", "sum"),
        recurrences=("recurrence", "size"),
    )
    return out.reset_index()


def reference_totals(sim: pd.DataFrame, reference: str, last: int | None = None) -> pd.DataFrame:
    """Cumulative energy, time and cost of the reference policy, per run.

    When the rows carry ``expected_energy_j`` (the simulator writes it), the reference is its
    *expected* energy, time and cost per recurrence (mean over training paths), as the paper
    defines savings; otherwise the simulated totals.
    """
    ref = sim[sim["policy"] == reference]
    if ref.empty:
        raise ValueError(f"reference policy {reference!r} is not in the simulation rows")
    expected = ["expected_energy_j", "expected_time_s", "expected_cost"]
    if all(c in ref.columns for c in expected) and ref[expected].notna().all().all():
        ref = ref[ref["reached"].astype(bool)].drop(columns=["energy_j", "time_s", "cost"])
        ref = ref.rename(
            columns={"expected_energy_j": "energy_j", "expected_time_s": "time_s", "expected_cost": "cost"}
        )
    return run_totals(ref, last)


def normalised(sim: pd.DataFrame, reference: str = "baseline", last: int | None = None) -> pd.DataFrame:
    """Each policy's cumulative energy and time relative to ``reference``, mean and std over seeds.

    The reference totals are those of :func:`reference_totals` (expected values when known).

    Returns:
        One row per (gpu, workload, policy, eta, beta) with ``energy_ratio_mean/std``,
        ``time_ratio_mean/std``, ``cost_ratio_mean/std``, ``energy_saving_pct`` (100 x (1 - mean
        energy ratio)), ``time_saving_pct`` and ``n_seeds``.

    Raises:
        ValueError: the reference policy is not in the rows.
    """
    totals = run_totals(sim, last)
    ref = reference_totals(sim, reference, last)
    keys = ["gpu", "workload", "eta", "beta", "seed"]
    merged = totals.merge(ref[[*keys, "energy_j", "time_s", "cost"]], on=keys, suffixes=("", "_ref"))
    for m, col in (("energy", "energy_j"), ("time", "time_s"), ("cost", "cost")):
        merged[f"{m}_ratio"] = merged[col] / merged[f"{col}_ref"]
    group = merged.groupby(["gpu", "workload", "policy", "eta", "beta"], sort=True, dropna=False)
    out = group.agg(
        energy_ratio_mean=("energy_ratio", "mean"),
        energy_ratio_std=("energy_ratio", _std),
        time_ratio_mean=("time_ratio", "mean"),
        time_ratio_std=("time_ratio", _std),
        cost_ratio_mean=("cost_ratio", "mean"),
        cost_ratio_std=("cost_ratio", _std),
        n_seeds=("seed", "nunique"),
    ).reset_index()
    out["energy_saving_pct"] = 100.0 * (1.0 - out["energy_ratio_mean"])
    out["time_saving_pct"] = 100.0 * (1.0 - out["time_ratio_mean"])
    out.insert(3, "reference", reference)
    return out


def _std(values: pd.Series) -> float:
    """Sample standard deviation; 0 for a single value."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def convergence(
    sim: pd.DataFrame, policies: tuple[str, ...] = ("zeus", "grid-search"), oracle: str = "oracle"
) -> pd.DataFrame:
    """Cost per recurrence and cumulative regret against the oracle, over seeds.

    Regret of a recurrence is its cost minus the oracle's expected recurrence cost (the
    ``expected_cost`` of its configuration when the rows carry it, else the mean of the oracle's
    simulated recurrence costs).

    Returns:
        One row per (gpu, workload, eta, beta, policy, recurrence): ``cost_mean``, ``cost_lo``,
        ``cost_hi`` (mean, minimum and maximum over seeds), ``oracle_cost``, ``regret_mean``,
        ``regret_lo``, ``regret_hi`` (cumulative; mean, minimum and maximum over seeds),
        ``n_seeds``.
    """
    rec = per_recurrence(sim)
    job = ["gpu", "workload", "eta", "beta"]
    orc_rows = sim[sim["policy"] == oracle]
    if orc_rows.empty:
        raise ValueError(f"oracle policy {oracle!r} is not in the simulation rows")
    if "expected_cost" in orc_rows.columns and orc_rows["expected_cost"].notna().all():
        orc = orc_rows[orc_rows["reached"].astype(bool)].groupby(job, dropna=False)["expected_cost"].mean()
    else:
        orc = rec[rec["policy"] == oracle].groupby(job, dropna=False)["cost"].mean()
    orc = orc.rename("oracle_cost")
    rec = rec[rec["policy"].isin(policies)].merge(orc.reset_index(), on=job)
    rec = rec.sort_values([*RUN_KEYS, "recurrence"])
    rec["regret"] = (
        (rec["cost"] - rec["oracle_cost"]).groupby([rec[k] for k in RUN_KEYS], dropna=False).cumsum()
    )
    g = rec.groupby([*job, "policy", "recurrence"], sort=True, dropna=False)
    out = g.agg(
        cost_mean=("cost", "mean"),
        cost_lo=("cost", "min"),
        cost_hi=("cost", "max"),
        oracle_cost=("oracle_cost", "first"),
        regret_mean=("regret", "mean"),
        regret_lo=("regret", "min"),
        regret_hi=("regret", "max"),
        n_seeds=("seed", "nunique"),
    ).reset_index()
    return out


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
