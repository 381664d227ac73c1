"""Finding functions of the traces, the reference numbers and the measured GPUs.

Each takes small tables and returns a :class:`~analysis.report.findings.Finding`, its sentence built from
the numbers it carries (each is tested on tables where it flips).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.text import (
    MOVE_PT,
    ORIGINAL_LABEL,
    PAPER_LABEL,
    beta_text,
    gpu_name,
    pct,
)
from analysis.style import gpu_notes, ordered


def summary_column(baseline: str, metric: str) -> str | None:
    """The summary column of a reference row: ``energy_savings_cum`` vs ``b0`` -> ``energy_savings_vs_baseline_cum_pct_mean``."""
    m = re.fullmatch(r"(energy|time)_savings_(cum|last10)", str(metric))
    ref = {"b0": "baseline", "baseline": "baseline", "max-batch": "max_batch"}.get(str(baseline))
    if m is None or ref is None:
        return None
    return f"{m.group(1)}_savings_vs_{ref}_{m.group(2)}_pct_mean"


def paper_comparable(row: Any, pot: pd.DataFrame | None, summary: pd.DataFrame | None) -> tuple[float, str]:
    """zeus-bench's number comparable with one of the paper's stated range ends, and what it is.

    ``least_energy_savings_min/max`` (against b0 on one GPU): the least/largest saving of the
    least-energy configuration over that GPU's workloads (``results/potential``);
    ``energy_savings_min/max`` against max-batch: the least/largest cumulative energy saving of
    Zeus against max-batch over the workloads of the published-trace GPUs. Anything else: none.
    """
    m = re.fullmatch(r"(least_energy_savings|energy_savings)_(min|max)", str(row.metric))
    if m is None:
        return float("nan"), ""
    pick = min if m.group(2) == "min" else max
    if m.group(1) == "least_energy_savings" and pot is not None and str(row.baseline) in ("b0", "baseline"):
        d = pot if str(row.gpu) == "all" else pot[pot["gpu"] == row.gpu]
        if not d.empty:
            return float(
                pick(d["min_energy_saving_pct"])
            ), f"least-energy configuration vs b0, {m.group(2)} over workloads"
    if m.group(1) == "energy_savings" and summary is not None and str(row.baseline) == "max-batch":
        z = summary[(summary["policy"] == "zeus") & ~summary["gpu"].map(lambda g: bool(gpu_notes(g)))]
        if str(row.gpu) != "all":
            z = z[z["gpu"] == row.gpu]
        col = "energy_savings_vs_max_batch_cum_pct_mean"
        if not z.empty:
            return float(
                pick(z[col])
            ), f"Zeus vs max-batch, all recurrences, {m.group(2)} over published-trace jobs"
    return float("nan"), ""


def reference_agreement(summary: pd.DataFrame, refs: pd.DataFrame) -> Finding:
    """How zeus-bench's Zeus rows compare with the original simulator's, and how the paper's relate."""
    orig = refs[refs["source"] == ORIGINAL_LABEL]
    zeus = summary[summary["policy"] == "zeus"].set_index(["gpu", "workload", "eta", "beta"])
    diffs = []
    for r in orig.itertuples(index=False):
        col = summary_column(r.baseline, r.metric)
        key = (r.gpu, r.workload, float(r.eta), float(r.beta))
        if col and col in zeus.columns and key in zeus.index:
            diffs.append(abs(float(zeus.at[key, col]) - float(r.value_pct)))
    n_paper = int((refs["source"] == PAPER_LABEL).sum())
    numbers: dict[str, float] = {"compared": len(diffs), "paper_rows": n_paper}
    parts = []
    if diffs:
        numbers["max_diff_pt"] = max(diffs)
        parts.append(
            f"On the {len(diffs)} savings of the {ORIGINAL_LABEL} that these results also compute, zeus-bench "
            f"differs from it by at most {max(diffs):.2g} points."
        )
    else:
        parts.append(f"None of the {ORIGINAL_LABEL}'s numbers match a setting simulated here.")
    if n_paper:
        parts.append(
            f"The {ORIGINAL_LABEL} rows are what that code outputs on the published traces; the {PAPER_LABEL} rows "
            "are what the paper's text states (its own runs, often as ranges over workloads), so the two agree only "
            "as far as the paper reports that code's output."
        )
    return Finding("reference.agreement", " ".join(parts), numbers)


# -- findings --------------------------------------------------------------------------------
def settings(sim: pd.DataFrame) -> Finding:
    """The simulated settings."""
    seeds = sorted(int(s) for s in sim["seed"].unique())
    eta, beta = float(sim["eta"].iloc[0]), float(sim["beta"].iloc[0])
    sentence = (
        f"**Settings.** eta {eta:g}, beta {beta_text(beta)}, seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}), policies "
        f"{', '.join(ordered(sim['policy'].unique(), ()))}; GPUs {', '.join(sorted(sim['gpu'].unique()))}."
    )
    return Finding(
        "header.settings",
        sentence,
        {"eta": eta, "beta": beta, "first_seed": seeds[0], "last_seed": seeds[-1], "seeds": len(seeds)},
    )


def gpu_caveats(limits: Mapping[str, Iterable[float]]) -> Finding:
    """What a reader must know about GPUs that are not the published Zeus traces (one limit, a sweep)."""
    notes = {g: gpu_notes(g, lim) for g, lim in sorted(limits.items())}
    flagged = {g: n for g, n in notes.items() if n}
    numbers = {f"{g}.limit_w": float(min(lim)) for g, lim in limits.items() if g in flagged}
    if not flagged:
        return Finding("gpus.caveats", "", numbers)
    by_text: dict[str, list[str]] = {}
    for g, n in flagged.items():
        by_text.setdefault("; ".join(n), []).append(gpu_name(g))
    sentence = " ".join(f"*{', '.join(gs)}: {text}.*" for text, gs in by_text.items())
    return Finding("gpus.caveats", sentence, numbers)


def potential_ranges(pot: pd.DataFrame) -> Finding:
    """Per GPU, the least and the largest energy saving of the least-energy configuration vs b0."""
    parts, numbers = [], {}
    for g, d in pot.groupby("gpu"):
        lo = d.loc[d["min_energy_saving_pct"].idxmin()]
        hi = d.loc[d["min_energy_saving_pct"].idxmax()]
        numbers[f"{g}.min"] = float(lo["min_energy_saving_pct"])
        numbers[f"{g}.max"] = float(hi["min_energy_saving_pct"])
        if len(d) == 1:
            parts.append(f"{gpu_name(g)} {pct(lo['min_energy_saving_pct'])} ({lo['workload']}, its only job)")
        else:
            parts.append(
                f"{gpu_name(g)} {pct(lo['min_energy_saving_pct'])} ({lo['workload']}) to "
                f"{pct(hi['min_energy_saving_pct'])} ({hi['workload']})"
            )
    return Finding("potential.ranges", f"Savings against b0: {'; '.join(parts)}.", numbers)


def maxbatch_gap(pot: pd.DataFrame) -> Finding:
    """Where the potential against max-batch is smaller than against b0, and by how much."""
    gap = (pot["min_energy_saving_pct"] - pot["min_energy_saving_vs_maxbatch_pct"]).to_numpy()
    smaller, larger = gap > MOVE_PT, gap < -MOVE_PT
    n = len(pot)
    numbers: dict[str, float] = {"smaller": int(smaller.sum()), "larger": int(larger.sum()), "jobs": n}
    if not smaller.any():
        sentence = f"Against max-batch the potential is nowhere smaller than against b0 by more than {MOVE_PT:g} point."
        numbers["threshold"] = MOVE_PT
    else:
        i = int(gap.argmax())
        numbers["largest_gap_pt"] = float(gap[i])
        sentence = (
            f"Against max-batch the potential is smaller than against b0 on {int(smaller.sum())} of {n} jobs, by up "
            f"to {gap[i]:.1f} points ({pot['workload'].iloc[i]}, {gpu_name(pot['gpu'].iloc[i])}: the largest batch size "
            "is already near the optimum there)"
        )
        sentence += (
            f", and larger on {int(larger.sum())} (where b0 is nearer the optimum than the largest batch size)."
            if larger.any()
            else "."
        )
    return Finding("potential.maxbatch", sentence, numbers)


def dominated(pot: pd.DataFrame, configs: pd.DataFrame) -> Finding:
    """On how many jobs a feasible configuration beats the baseline in energy (by > 1 %) without being slower."""
    n = 0
    for p in pot.itertuples(index=False):
        c = configs[
            (configs["gpu"] == p.gpu) & (configs["workload"] == p.workload) & configs["feasible"].astype(bool)
        ]
        if ((c["eta_j"] < p.baseline_eta_j * 0.99) & (c["tta_s"] <= p.baseline_tta_s)).any():
            n += 1
    m = len(pot)
    sentence = (
        f"On {n} of {m} jobs a configuration uses over 1 % less energy than the baseline and is no slower"
    )
    sentence += "." if n == m else "; elsewhere saving energy costs time, and eta sets the exchange rate."
    return Finding("pareto.dominated", sentence, {"jobs_dominated": n, "jobs": m, "margin_pct": 1.0})


def power_profile_finding(prof: pd.DataFrame) -> Finding:
    """Power, throughput and energy per epoch at the lowest limit, and where energy per epoch is least."""
    low = prof.loc[prof.groupby(["gpu", "workload"])["power_limit_w"].idxmin()]
    numbers: dict[str, float] = {}
    per_gpu = []
    for gpu, g in low.groupby("gpu"):
        saves = int((g["energy_per_epoch_j_rel"] < 1).sum())
        vals = {
            "limit": g["power_limit_w"].min(),
            "p_lo": g["avg_power_w_rel"].min(),
            "p_hi": g["avg_power_w_rel"].max(),
            "t_lo": g["epochs_per_hour_rel"].min(),
            "t_hi": g["epochs_per_hour_rel"].max(),
            "saves": saves,
            "n": len(g),
        }
        numbers.update({f"{gpu}.{k}": float(v) for k, v in vals.items()})
        per_gpu.append(
            f"on the {gpu_name(gpu)} at {vals['limit']:g} W, power is {vals['p_lo']:.2f}-{vals['p_hi']:.2f}x and throughput "
            f"{vals['t_lo']:.2f}-{vals['t_hi']:.2f}x of their values at the maximum limit, and the energy per epoch is "
            f"lower than at the maximum limit for {saves} of {len(g)} workloads"
        )
    g = prof.groupby(["gpu", "workload"])
    best = prof.loc[g["energy_per_epoch_j_rel"].idxmin()].set_index(["gpu", "workload"])["power_limit_w"]
    lo, hi = g["power_limit_w"].min(), g["power_limit_w"].max()
    n_lo, n_hi = int((best == lo).sum()), int((best == hi).sum())
    numbers.update(
        {
            "least_at_lowest": n_lo,
            "least_at_max": n_hi,
            "least_between": len(best) - n_lo - n_hi,
            "jobs": len(best),
        }
    )
    sentence = (
        "; ".join(per_gpu)[0].upper()
        + "; ".join(per_gpu)[1:]
        + f". The energy per epoch is least at the lowest limit for {n_lo} of {len(best)} jobs, at the maximum limit "
        f"for {n_hi} and at a limit in between for {len(best) - n_lo - n_hi}."
    )
    return Finding("profiles.limits", sentence, numbers)


def own_batch_finding(per: pd.DataFrame, pot: pd.DataFrame | None = None) -> Finding:
    """Measured sweeps: does throughput rise and energy per sample fall with the batch size?"""
    best = per.loc[per.groupby(["gpu", "workload"])["energy_per_sample_j"].idxmin()]
    best_bs = dict(zip(zip(best["gpu"], best["workload"], strict=True), best["batch_size"], strict=True))
    rises = 0
    at_max = 0
    for (g, w), rows in per.groupby(["gpu", "workload"]):
        d = rows.sort_values("batch_size")
        rises += int(d["samples_per_s"].iloc[-1] > d["samples_per_s"].iloc[0])
        at_max += int(best_bs[(g, w)] == d["batch_size"].max())
    n = len(best)
    numbers: dict[str, float] = {
        "series": n,
        "throughput_rises": rises,
        "least_at_largest": at_max,
        "section": 1,
    }
    sentence = (
        f"Throughput at the largest batch size measured exceeds that at the smallest on {rises} of {n} series, and "
        f"the least energy per sample is at the largest batch size measured on {at_max} of {n}."
    )
    if pot is not None and not pot.empty:
        published = pot[~pot["gpu"].map(lambda g: bool(gpu_notes(g)))]
        if not published.empty:
            below = int((published["min_energy_bs"] < published["maxbatch_bs"]).sum())
            numbers.update({"published_below": below, "published_jobs": len(published)})
            sentence += (
                " Energy per sample ignores statistical efficiency (the epochs needed to reach the target depend on "
                f"the batch size): on the published traces the least-energy batch size is below the largest "
                f"converging one on {below} of {len(published)} jobs (section 1)."
            )
    return Finding("own.batch", sentence, numbers)
