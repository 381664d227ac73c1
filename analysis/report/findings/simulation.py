"""Finding functions of the simulations.

Zeus against the baselines and grid search, ablation, regret, failed recurrences, and the eta
and beta sweeps: each takes ``sim_summary`` (or convergence) rows and returns a
:class:`~analysis.report.findings.Finding` whose sentence the numbers build.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.text import (
    LITTLE_PCT,
    MOVE_PT,
    NEAR_PT,
    beta_text,
    gpu_name,
    job_names,
    pct,
)
from analysis.style import WORKLOAD_ORDER, ordered


def zeus_vs_baseline(summary: pd.DataFrame) -> Finding:
    """Per GPU: Zeus's mean energy and time saving vs the baseline, and on how many jobs it uses more energy."""
    z = summary[summary["policy"] == "zeus"]
    e, t = "energy_savings_vs_baseline_cum_pct_mean", "time_savings_vs_baseline_cum_pct_mean"
    parts, numbers = [], {}
    for g, d in z.groupby("gpu"):
        worse = d[d[e] < 0]
        numbers.update(
            {
                f"{g}.energy": float(d[e].mean()),
                f"{g}.time": float(d[t].mean()),
                f"{g}.worse": len(worse),
                f"{g}.jobs": len(d),
            }
        )
        text = f"{gpu_name(g)} {pct(d[e].mean())} energy and {pct(d[t].mean())} time"
        if len(worse):
            text += (
                f", but Zeus uses more energy than the baseline on {len(worse)} of {len(d)} jobs "
                f"({', '.join(ordered(worse['workload'], WORKLOAD_ORDER))})"
            )
        else:
            text += f", less energy than the baseline on all {len(d)} jobs"
        parts.append(text)
    return Finding(
        "policies.zeus",
        f"Zeus's savings against the baseline, mean over workloads: {'; '.join(parts)}.",
        numbers,
    )


def little_to_gain(summary: pd.DataFrame) -> Finding:
    """Jobs where even the oracle saves little energy and Zeus ends up behind the baseline."""
    col = "energy_savings_vs_baseline_cum_pct_mean"
    piv = summary.pivot_table(index=["gpu", "workload"], columns="policy", values=col)
    numbers: dict[str, float] = {"threshold_pct": LITTLE_PCT}
    if not {"zeus", "oracle"} <= set(piv.columns):
        return Finding("policies.little_to_gain", "", numbers)
    jobs = piv[(piv["oracle"] < LITTLE_PCT) & (piv["zeus"] < 0.0)]
    numbers["jobs"] = len(jobs)
    if jobs.empty:
        return Finding("policies.little_to_gain", "", numbers)
    return Finding(
        "policies.little_to_gain",
        f"Where even the oracle saves under {LITTLE_PCT:g} % energy, exploring costs more than it can save and Zeus "
        f"ends up behind the baseline: {job_names(jobs.index)}.",
        numbers,
    )


def ablation_both(summary: pd.DataFrame, one_limit: Iterable[str] = ()) -> Finding:
    """On how many jobs tuning both knobs is within 1 point of the best single knob, or better."""
    col = "energy_savings_vs_baseline_cum_pct_mean"
    piv = summary.pivot_table(index=["gpu", "workload"], columns="policy", values=col)
    single = set(one_limit)
    best = [
        max(r["bs-only"], r["pl-only"]) if g not in single else r["bs-only"]
        for (g, _w), r in piv[["bs-only", "pl-only"]].iterrows()
    ]
    n = int((piv["zeus"].to_numpy() >= pd.Series(best).to_numpy() - NEAR_PT).sum())
    sentence = (
        f"Tuning both is within {NEAR_PT:g} point of the best single knob or better on {n} of {len(piv)} jobs"
        + (" (on GPUs with one power limit the batch size is the only knob)." if single else ".")
    )
    return Finding("ablation.both", sentence, {"jobs_within": n, "jobs": len(piv), "margin_pt": NEAR_PT})


def regret_shape(conv: pd.DataFrame, policy: str = "zeus", window: int = 10) -> Finding:
    """Whether a policy's cumulative regret grows more slowly at the end than at the start.

    Jobs with fewer than ``2 x window`` recurrences are left out (and counted as such).
    """
    c = conv[conv["policy"] == policy]
    slows, jobs, short = [], [], 0
    for (g, w), d in c.groupby(["gpu", "workload"]):
        r = d.sort_values("recurrence")["regret_mean"].to_numpy()
        if len(r) < 2 * window:
            short += 1
            continue
        first = r[window - 1]
        last = r[-1] - r[-window - 1]
        jobs.append((g, w))
        if last < first:
            slows.append((g, w))
    n, m = len(slows), len(jobs)
    numbers = {
        "jobs_slower": n,
        "jobs": m,
        "window": window,
        "short_jobs": short,
        "min_recurrences": 2 * window,
    }
    if m == 0:
        return Finding("convergence.shape", "", numbers)
    sentence = (
        f"Zeus's cumulative regret grew less over its last {window} recurrences than over its first {window} on "
        f"{n} of {m} jobs"
    )
    if short:
        sentence += f" (the {m} with at least {2 * window} recurrences)"
    rest = [j for j in jobs if j not in slows]
    sentence += f"; it did not slow down on {job_names(rest)}." if rest else "."
    return Finding("convergence.shape", sentence, numbers)


def grid_vs_zeus_regret(summary: pd.DataFrame) -> Finding:
    """On how many jobs grid search's final regret exceeds Zeus's, and the range of their ratio."""
    piv = summary.pivot_table(
        index=["gpu", "workload"], columns="policy", values="regret_vs_oracle_cost_j_mean"
    )
    if not {"zeus", "grid-search"} <= set(piv.columns):
        return Finding("convergence.grid", "", {})
    ok = piv[(piv["zeus"] > 0) & (piv["grid-search"] > 0)]
    ratio = ok["grid-search"] / ok["zeus"]
    n = int((ratio > 1).sum())
    numbers: dict[str, float] = {"jobs_higher": n, "jobs": len(ratio)}
    if ratio.empty:
        return Finding("convergence.grid", "", numbers)
    numbers.update({"ratio_min": float(ratio.min()), "ratio_max": float(ratio.max())})
    return Finding(
        "convergence.grid",
        f"Grid search's final regret exceeds Zeus's on {n} of {len(ratio)} jobs (grid search / Zeus from "
        f"{ratio.min():.1f} to {ratio.max():.1f}).",
        numbers,
    )


def failed_recurrences(summary: pd.DataFrame) -> Finding:
    """Which policies had recurrences that never reached the target (charged the baseline's cost on top)."""
    col = "failed_recurrences_mean"
    if col not in summary.columns:
        return Finding("policies.failed", "", {})
    f = summary[summary[col] > 0]
    numbers: dict[str, float] = {"rows": len(f)}
    if f.empty:
        return Finding("policies.failed", "Every recurrence of every policy reached the target.", numbers)
    parts = []
    for r in f.itertuples(index=False):
        numbers[f"{r.gpu}.{r.workload}.{r.policy}"] = float(getattr(r, col))
        parts.append(f"{r.policy} on {r.workload} ({gpu_name(r.gpu)}) {getattr(r, col):g} per seed")
    return Finding(
        "policies.failed",
        "Recurrences that never reached the target (each charged what its tries spent plus the baseline's expected "
        f"cost, as if the user fell back to the default): {'; '.join(parts)}.",
        numbers,
    )


def eta_effect(z: pd.DataFrame) -> Finding:
    """What moving eta from its smallest to its largest value does to Zeus's energy and time savings.

    Args:
        z: :func:`analysis.metrics.normalised` rows of Zeus at several eta.
    """
    lo, hi = float(z["eta"].min()), float(z["eta"].max())
    a = z[z["eta"] == lo].set_index(["gpu", "workload"])
    b = z[z["eta"] == hi].set_index(["gpu", "workload"])
    de = (b["energy_saving_pct"] - a["energy_saving_pct"]).dropna()
    dt = (b["time_saving_pct"] - a["time_saving_pct"]).reindex(de.index)
    trade = (de > MOVE_PT) & (dt < -MOVE_PT)
    worse = (de < -MOVE_PT) & (dt < -MOVE_PT)
    better = (de > MOVE_PT) & (dt > MOVE_PT)
    n = len(de)
    numbers = {
        "eta_lo": lo,
        "eta_hi": hi,
        "jobs": n,
        "trade": int(trade.sum()),
        "worse": int(worse.sum()),
        "better": int(better.sum()),
        "threshold_pt": MOVE_PT,
        "mean_energy_pt": float(de.mean()),
        "mean_time_pt": float(dt.mean()),
    }
    parts = [
        f"From eta {lo:g} to {hi:g} (changes over {MOVE_PT:g} point), Zeus trades time for energy (energy saving up, "
        f"time saving down) on {int(trade.sum())} of {n} jobs"
    ]
    if worse.any():
        parts.append(f"both get worse on {int(worse.sum())} ({job_names(de.index[worse])})")
    if better.any():
        parts.append(f"both improve on {int(better.sum())} ({job_names(de.index[better])})")
    sentence = (
        "; ".join(parts)
        + f". Mean change: {de.mean():+.1f} points of energy saving, {dt.mean():+.1f} of time saving."
    )
    return Finding("eta.effect", sentence, numbers)


def beta_effect(z: pd.DataFrame) -> Finding:
    """Which beta is best per job, how beta 2 compares, the worst case, and what the extremes cost."""
    piv = z.pivot_table(index=["gpu", "workload"], columns="beta", values="energy_saving_pct")
    betas = sorted(piv.columns)
    best = piv.idxmax(axis=1)
    worst_job = piv.min(axis=1).idxmin()
    worst_beta = float(piv.loc[worst_job].idxmin())
    numbers: dict[str, float] = {
        "jobs": len(piv),
        "margin_pt": NEAR_PT,
        "worst_pct": float(piv.loc[worst_job, worst_beta]),
    }
    numbers.update({f"beta{i}": float(b) for i, b in enumerate(betas) if not math.isinf(b)})
    parts = []
    if 2.0 in betas:
        near = int((piv[2.0] >= piv.max(axis=1) - NEAR_PT).sum())
        numbers["near_two"] = near
        parts.append(
            f"The paper's beta 2 is within {NEAR_PT:g} point of the best tested value on {near} of {len(piv)} jobs "
            f"(best values per job: {', '.join(beta_text(v) for v in sorted(set(best)))})."
        )
        numbers["two"] = 2.0
        for name, b, why in (
            (
                "off",
                betas[-1],
                "without early stopping a try at a batch size that does not converge runs its whole epoch budget",
            ),
            (
                "tight",
                betas[0],
                "with a tight threshold tries are cut off before they converge, so recurrences need more tries",
            ),
        ):
            if b == 2.0:
                continue
            k = int((piv[b] < piv[2.0] - NEAR_PT).sum())
            numbers[f"{name}_worse"] = k
            if k:
                parts.append(
                    f"Beta {beta_text(b)} loses more than {NEAR_PT:g} point against beta 2 on {k} of {len(piv)} jobs ({why})."
                )
            else:
                parts.append(f"Beta {beta_text(b)} never loses more than {NEAR_PT:g} point against beta 2.")
    parts.append(
        f"The lowest energy saving of the sweep is {worst_job[1]} on the {gpu_name(worst_job[0])} with beta {beta_text(worst_beta)} "
        f"({pct(piv.loc[worst_job, worst_beta])} energy saving)."
    )
    return Finding("beta.effect", " ".join(parts), numbers)
