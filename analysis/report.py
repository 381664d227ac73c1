"""``python -m analysis.report --out results/report.md ...``: the report of the main workflow.

Two layers. **Finding functions** (``potential_ranges``, ``zeus_vs_baseline``, ``eta_effect``...)
are pure: they take small tables (summary rows, potential rows, ...) and return an
:class:`analysis.findings.Finding` whose sentence is built from the numbers it carries, so that
no sentence states a direction the data contradict (each is tested on tables where it flips).
The **renderer** (:class:`Report`) reads the results files, lays out the figures, the findings
and the tables. Savings, cost ratios and regret come from the ``sim_summary`` table (or
:mod:`zeus_bench.sim.metrics`), never recomputed here; reference numbers from
``results/reference/*.csv``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import metrics
from analysis.findings import Finding
from analysis.style import WORKLOAD_ORDER, gpu_notes, ordered
from analysis.tables import load_all
from zeus_bench.cli.common import int_range_arg
from zeus_bench.fsutil import atomic_write_text
from zeus_bench.sim.metrics import RUN, savings_pct

ORIGINAL_LABEL = "original simulator (Zeus v0.3.0 code)"
PAPER_LABEL = "paper"
REFERENCE_COLUMNS = ["gpu", "workload", "eta", "beta", "seeds", "baseline", "metric", "value_pct", "source"]
NEAR_PT = 1.0  # "within 1 point"
MOVE_PT = 0.5  # a change smaller than this is "no change"
LITTLE_PCT = 5.0  # "little to gain": the oracle saves less than this


# -- formatting ------------------------------------------------------------------------------
def pct(v: float | None) -> str:
    """A percentage as the report prints it: ``12.3 %`` (``n/a`` when missing)."""
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f} %"


def _gpu(g: Any) -> str:
    return str(g).upper()


def _names(jobs: Iterable[tuple[Any, Any]]) -> str:
    return ", ".join(f"{w} ({_gpu(g)})" for g, w in jobs)


def _pair(a: str, b: str) -> str:
    """``a / b %`` of two formatted numbers, ``n/a`` when both are."""
    return "n/a" if a == b == "n/a" else f"{a} / {b} %"


def _beta(v: float) -> str:
    return "off" if math.isinf(v) else f"{v:g}"


def portable(text: str) -> str:
    """``text`` without absolute file-system paths (each becomes ``…/<its last part>``).

    The report must be byte-identical wherever the project is checked out; URLs and the
    documentation placeholder ``/path/to/...`` are kept.
    """

    def short(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).startswith("/path/to/") else f"…/{m.group(1)}"

    return re.sub(r"(?<![\w:/.])/(?:[^\s'\"`/,;)]+/)*([^\s'\"`/,;)]+)", short, text)


# -- references ------------------------------------------------------------------------------
def read_references(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Reference numbers (``results/reference/*.csv``): original-simulator outputs and paper statements.

    Columns :data:`REFERENCE_COLUMNS`; ``source`` is the label to print (``paper`` or
    ``original simulator (Zeus v0.3.0 code)``). Missing files are skipped.

    Raises:
        ValueError: a file lacks one of the columns.
    """
    frames = []
    for name in paths:
        path = Path(name)
        if not path.is_file():
            continue
        df = pd.read_csv(path, dtype={"seeds": str})
        missing = [c for c in REFERENCE_COLUMNS if c not in df.columns]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {', '.join(missing)}")
        extra = [c for c in ("statement",) if c in df.columns]  # optional: the words the source uses
        frames.append(df[REFERENCE_COLUMNS + extra])
    if not frames:
        return pd.DataFrame(columns=REFERENCE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


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
        f"**Settings.** eta {eta:g}, beta {_beta(beta)}, seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}), policies "
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
        by_text.setdefault("; ".join(n), []).append(_gpu(g))
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
            parts.append(f"{_gpu(g)} {pct(lo['min_energy_saving_pct'])} ({lo['workload']}, its only job)")
        else:
            parts.append(
                f"{_gpu(g)} {pct(lo['min_energy_saving_pct'])} ({lo['workload']}) to "
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
            f"to {gap[i]:.1f} points ({pot['workload'].iloc[i]}, {_gpu(pot['gpu'].iloc[i])}: the largest batch size "
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
        text = f"{_gpu(g)} {pct(d[e].mean())} energy and {pct(d[t].mean())} time"
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
        f"ends up behind the baseline: {_names(jobs.index)}.",
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
    sentence += f"; it did not slow down on {_names(rest)}." if rest else "."
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
        parts.append(f"{r.policy} on {r.workload} ({_gpu(r.gpu)}) {getattr(r, col):g} per seed")
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
        parts.append(f"both get worse on {int(worse.sum())} ({_names(de.index[worse])})")
    if better.any():
        parts.append(f"both improve on {int(better.sum())} ({_names(de.index[better])})")
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
            f"(best values per job: {', '.join(_beta(v) for v in sorted(set(best)))})."
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
                    f"Beta {_beta(b)} loses more than {NEAR_PT:g} point against beta 2 on {k} of {len(piv)} jobs ({why})."
                )
            else:
                parts.append(f"Beta {_beta(b)} never loses more than {NEAR_PT:g} point against beta 2.")
    parts.append(
        f"The lowest energy saving of the sweep is {worst_job[1]} on the {_gpu(worst_job[0])} with beta {_beta(worst_beta)} "
        f"({pct(piv.loc[worst_job, worst_beta])} energy saving)."
    )
    return Finding("beta.effect", " ".join(parts), numbers)


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
            f"on the {_gpu(gpu)} at {vals['limit']:g} W, power is {vals['p_lo']:.2f}-{vals['p_hi']:.2f}x and throughput "
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


# -- renderer --------------------------------------------------------------------------------
STATIC_NUMBERS = (0.0, 1.0, 10.0)
"""Numbers the renderer's fixed descriptions use by definition (eta 0 and 1, the oracle line at 1, the last 10)."""


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def _figure(name: str, figures: set[str], alt: str) -> str:
    png = f"figures/{name}.png"
    return (
        f"![{alt}]({png})"
        if any(f.endswith(f"/{name}.png") for f in figures)
        else f"*(figure {name} not drawn)*"
    )


def _by_workload(df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by GPU, then workload in the paper's order."""
    order = ordered(df["workload"].unique(), WORKLOAD_ORDER)
    return (
        df.assign(_w=df["workload"].map({w: i for i, w in enumerate(order)}))
        .sort_values(["gpu", "_w"])
        .drop(columns="_w")
    )


class Report:
    """Reads the results files once and lays out the sections; every sentence with a number is a Finding."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Keep the inputs."""
        self.args = args
        self.figures = {str(f) for f in args.figures}
        self.parts: list[str] = []
        self.skipped: list[str] = []
        self.findings: list[Finding] = []
        self._cache: dict[str, Any] = {}

    def add(self, *lines: str) -> None:
        """Append lines (fixed text: no number but :data:`STATIC_NUMBERS`)."""
        self.parts.extend(lines)

    def say(self, *findings: Finding, before: str = "", after: str = "") -> None:
        """Append one paragraph: fixed text ``before``, the findings' sentences, fixed text ``after``."""
        self.findings.extend(findings)
        text = " ".join(x for x in (before, *(f.sentence for f in findings), after) if x)
        if text:
            self.add(text, "")

    # -- inputs -------------------------------------------------------------------------------
    def _get(self, name: str, build: Any) -> Any:
        if name not in self._cache:
            self._cache[name] = build()
        return self._cache[name]

    @property
    def sim(self) -> pd.DataFrame | None:
        """The main simulation rows of every GPU."""
        return self._get("sim", lambda: load_all(self.args.sim) if self.args.sim else None)

    @property
    def summary(self) -> pd.DataFrame | None:
        """The ``sim_summary`` rows of the main simulation (the files, else summarised from the runs)."""

        def build() -> pd.DataFrame | None:
            if self.args.summary:
                return load_all(self.args.summary)
            return metrics.summary_of(self.sim) if self.sim is not None else None

        return self._get("summary", build)

    @property
    def potential_rows(self) -> pd.DataFrame | None:
        """The potential-savings rows of every GPU."""
        return self._get("potential", lambda: load_all(self.args.potential) if self.args.potential else None)

    @property
    def configs(self) -> pd.DataFrame | None:
        """The configurations (``zeus-bench pareto --all``) of every job."""
        return self._get("configs", lambda: load_all(self.args.configs) if self.args.configs else None)

    @property
    def references(self) -> pd.DataFrame:
        """The reference numbers (:func:`read_references`)."""
        return self._get("references", lambda: read_references(self.args.reference))

    @property
    def limits(self) -> dict[str, list[float]]:
        """Power limits per GPU in the data (simulation rows, else configurations)."""

        def build() -> dict[str, list[float]]:
            src = self.sim if self.sim is not None else self.configs
            if src is None:
                return {}
            return {str(g): sorted(set(d["power_limit_w"].astype(float))) for g, d in src.groupby("gpu")}

        return self._get("limits", build)

    def one_limit(self) -> list[str]:
        """GPUs whose data hold a single power limit."""
        return [g for g, lim in self.limits.items() if len(lim) == 1]

    def caveats(self, gpus: Iterable[Any]) -> None:
        """The notes of the given GPUs that need one (one power limit, measured by a sweep)."""
        wanted = {str(g) for g in gpus}
        self.say(gpu_caveats({g: lim for g, lim in self.limits.items() if g in wanted}))

    # -- sections -----------------------------------------------------------------------------
    def header(self) -> None:
        """Title, sources and settings."""
        a = self.args
        manifest: dict[str, Any] = (
            json.loads(Path(a.manifest).read_text())
            if a.manifest
            else {"status": "unavailable", "message": "no manifest"}
        )
        self.add("# zeus-bench: reproduction report", "")
        self.add(
            "Generated by `make reproduce` (`python -m analysis.report`) from the results files; every number "
            "below is computed from them (savings, cost ratios and regret from the `sim_summary` tables). Reference "
            f"numbers are labelled: *{ORIGINAL_LABEL}* for what that code outputs, *{PAPER_LABEL}* for what the Zeus "
            "paper (You, Chung, Chowdhury, NSDI'23) states.",
            "",
        )
        if manifest.get("status") == "ok":
            files = ", ".join(
                f"`{n}` ({'sha256 verified' if i['verified'] else 'UNVERIFIED'})"
                for n, i in sorted(manifest["files"].items())
            )
            source = str(manifest.get("source", ""))
            where = (
                "a local copy" if source.startswith("local:") else portable(source.removeprefix("download:"))
            )
            self.add(f"**Traces.** Zeus traces from {where}: {files}.", "")
            for name, why in sorted(manifest.get("skipped", {}).items()):
                self.skipped.append(f"Zeus trace `{name}`: {portable(str(why))}.")
        else:
            self.skipped.append(
                "Every figure and number from the Zeus traces (potential savings, Pareto fronts, simulations): "
                f"{portable(str(manifest.get('message', 'traces unavailable')))}"
            )
        if a.configured_gpus != "all":
            have = set(manifest.get("gpus", []))
            for g in a.configured_gpus.split(","):
                if g and g not in have:
                    self.skipped.append(f"GPU `{g}` is named in the config but has no Zeus power trace.")
        if self.sim is not None and not self.sim.empty:
            self.say(settings(self.sim))

    def potential(self) -> None:
        """Potential savings."""
        pot = self.potential_rows
        if pot is None:
            return
        self.add(
            "## 1. Potential energy savings", "", _figure("potential", self.figures, "potential savings"), ""
        )
        self.caveats(pot["gpu"].unique())
        self.say(
            potential_ranges(pot),
            maxbatch_gap(pot),
            before="The least-energy (batch size, power limit) whose runs all reach the target, against the default "
            "batch size at the maximum power limit (left) and against the largest converging batch size at the "
            "maximum limit (right).",
        )
        t = _by_workload(pot)
        table = pd.DataFrame(
            {
                "GPU": t["gpu"].str.upper(),
                "workload": t["workload"].astype(str),
                "b0": t["b0"],
                "least-energy (bs, W)": [
                    f"{b}, {p:g}" for b, p in zip(t["min_energy_bs"], t["min_energy_pl_w"], strict=True)
                ],
                "energy saving vs b0": t["min_energy_saving_pct"].map(pct),
                "time saving vs b0": t["min_energy_time_saving_pct"].map(pct),
                "energy saving vs max-batch": t["min_energy_saving_vs_maxbatch_pct"].map(pct),
                "least-cost (bs, W)": [
                    f"{b}, {p:g}" for b, p in zip(t["min_cost_bs"], t["min_cost_pl_w"], strict=True)
                ],
            }
        )
        self.add(_md_table(table), "")

    def pareto(self) -> None:
        """ETA-vs-TTA scatter."""
        sim, pot = self.sim, self.potential_rows
        if sim is None or pot is None:
            return
        self.add("## 2. Energy vs. time to accuracy: the Pareto frontier", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"pareto-{gpu}", self.figures, f"Pareto {gpu}"), "")
        self.caveats(sim["gpu"].unique())
        fixed = (
            "Every measured configuration (grey; hollow: some runs miss the target) on log axes, the Pareto frontier "
            "of the feasible ones (blue), the baseline (black square), the least-cost configuration at this eta "
            "(green star) and the configuration Zeus uses most in its last 10 recurrences (vermillion ring)."
        )
        if self.configs is not None:
            self.say(dominated(pot, self.configs), before=fixed)
        else:
            self.add(fixed, "")
        settled = metrics.settled(sim)
        rows = []
        for p in _by_workload(pot).itertuples(index=False):
            z = settled[(settled["gpu"] == p.gpu) & (settled["workload"] == p.workload)]
            zs = sim[(sim["gpu"] == p.gpu) & (sim["workload"] == p.workload) & (sim["policy"] == "zeus")]
            zeus = "n/a"
            if not z.empty:
                zb, zp = int(z["batch_size"].iloc[0]), float(z["power_limit_w"].iloc[0])
                match = zs[(zs["batch_size"] == zb) & (zs["power_limit_w"] == zp)]
                eta_j = float(match["expected_energy_j"].iloc[0]) if not match.empty else float("nan")
                zeus = (
                    f"{zb}, {zp:g} ({pct(savings_pct(eta_j, p.baseline_eta_j))} energy vs b0; "
                    f"{z['share'].iloc[0]:.0%} of tries)"
                )
            rows.append(
                {
                    "GPU": _gpu(p.gpu),
                    "workload": p.workload,
                    "baseline (bs, W)": f"{p.b0}, {max(self.limits.get(str(p.gpu), [p.max_power_w])):g}",
                    "optimum (bs, W)": f"{p.min_cost_bs}, {p.min_cost_pl_w:g}",
                    "optimum energy / time saving": f"{pct(p.min_cost_energy_saving_pct)} / {pct(p.min_cost_time_saving_pct)}",
                    "Zeus settles at (bs, W)": zeus,
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def policies(self) -> None:
        """Zeus vs baselines and grid search."""
        summary = self.summary
        if summary is None:
            return
        self.add("## 3. Zeus against the baselines and grid search", "")
        for gpu in sorted(summary["gpu"].unique()):
            self.add(_figure(f"policies-{gpu}", self.figures, f"policies {gpu}"), "")
        self.caveats(summary["gpu"].unique())
        self.say(
            zeus_vs_baseline(summary),
            little_to_gain(summary),
            failed_recurrences(summary),
            before="Cumulative energy and time over all recurrences, relative to the max-batch baseline (left) and to "
            "b0 at the maximum limit (right); bars are means over seeds, error bars one standard deviation.",
        )
        s = _by_workload(summary).set_index(["gpu", "workload", "policy"])
        refs = self.references
        orig = refs[(refs["source"] == ORIGINAL_LABEL) & refs["baseline"].isin(["b0", "baseline"])]
        orig = orig.set_index(["gpu", "workload", "metric"])["value_pct"]
        rows = []
        for g, w in dict.fromkeys((g, w) for g, w, _ in s.index):
            if (g, w, "zeus") not in s.index:
                continue
            z = s.loc[(g, w, "zeus")]

            def ref(metric: str, key: tuple[Any, Any] = (g, w)) -> str:
                k = (*key, metric)
                return f"{orig.loc[k]:.1f}" if k in orig.index else "n/a"

            gs = s.loc[(g, w, "grid-search")] if (g, w, "grid-search") in s.index else None
            rows.append(
                {
                    "GPU": _gpu(g),
                    "workload": w,
                    "Zeus energy saving (all / last 10)": f"{pct(z['energy_savings_vs_baseline_cum_pct_mean'])} / "
                    f"{pct(z['energy_savings_vs_baseline_last10_pct_mean'])}",
                    f"{ORIGINAL_LABEL} (all / last 10)": _pair(
                        ref("energy_savings_cum"), ref("energy_savings_last10")
                    ),
                    "Zeus time saving": pct(z["time_savings_vs_baseline_cum_pct_mean"]),
                    "Zeus energy saving vs max-batch": pct(z["energy_savings_vs_max_batch_cum_pct_mean"]),
                    "Zeus cost / baseline's": f"{z['cost_ratio_vs_baseline_cum_mean']:.2f}",
                    "grid search energy saving": pct(gs["energy_savings_vs_baseline_cum_pct_mean"])
                    if gs is not None
                    else "n/a",
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def ablation(self) -> None:
        """Knob ablation."""
        summary = self.summary
        if summary is None or not {"bs-only", "pl-only"} <= set(summary["policy"]):
            return
        self.add("## 4. Knob ablation", "")
        for gpu in sorted(summary["gpu"].unique()):
            self.add(_figure(f"ablation-{gpu}", self.figures, f"ablation {gpu}"), "")
        self.caveats(summary["gpu"].unique())
        one = self.one_limit()
        self.say(
            ablation_both(summary, one),
            before="Energy and time of optimising the batch size only (at the maximum limit), the power limit only "
            "(at b0) and both (Zeus), relative to the baseline.",
        )
        col = "energy_savings_vs_baseline_cum_pct_mean"
        piv = summary.pivot_table(index=["gpu", "workload"], columns="policy", values=col)
        table = _by_workload(piv[["bs-only", "pl-only", "zeus"]].map(pct).reset_index())
        table.loc[table["gpu"].isin(one), "pl-only"] = "n/a (one limit)"
        table.columns = ["GPU", "workload", "batch size only", "power limit only", "both (Zeus)"]
        table["GPU"] = table["GPU"].str.upper()
        self.add("Energy savings vs. the baseline, all recurrences:", "", _md_table(table), "")

    def convergence(self) -> None:
        """Convergence and regret."""
        sim, summary = self.sim, self.summary
        if sim is None or summary is None or "oracle" not in set(sim["policy"].unique()):
            return
        self.add("## 5. Convergence and regret", "")
        for gpu in sorted(sim["gpu"].unique()):
            self.add(_figure(f"convergence-{gpu}", self.figures, f"convergence {gpu}"), "")
            self.add(_figure(f"regret-{gpu}", self.figures, f"regret {gpu}"), "")
        self.caveats(sim["gpu"].unique())
        self.say(
            regret_shape(metrics.convergence(sim)),
            grid_vs_zeus_regret(summary),
            before="Cost of each recurrence relative to the oracle's expected cost (log scale; mean over seeds, band "
            "the range over seeds) for Zeus and grid search, the oracle as a dashed line at 1, and the cumulative "
            "regret (cost above the oracle's, summed over recurrences; a failed recurrence counts with its fallback "
            "to the baseline).",
            after="The settling recurrence below is the first from which every try uses Zeus's final configuration.",
        )
        s = summary.set_index(["gpu", "workload", "policy"])
        rows = []
        for g, w in sorted({(g, w) for g, w, _ in s.index}):
            z = s.loc[(g, w, "zeus")] if (g, w, "zeus") in s.index else None
            gs = s.loc[(g, w, "grid-search")] if (g, w, "grid-search") in s.index else None
            rows.append(
                {
                    "GPU": _gpu(g),
                    "workload": w,
                    "final regret Zeus (J)": f"{z['regret_vs_oracle_cost_j_mean']:.3g}"
                    if z is not None
                    else "n/a",
                    "Zeus regret (% of oracle)": pct(z["regret_vs_oracle_cum_pct_mean"])
                    if z is not None
                    else "n/a",
                    "final regret grid search (J)": f"{gs['regret_vs_oracle_cost_j_mean']:.3g}"
                    if gs is not None
                    else "n/a",
                    "Zeus settles at recurrence (mean)": f"{z['settle_recurrence_mean']:.1f}"
                    if z is not None
                    else "n/a",
                }
            )
        self.add(_md_table(pd.DataFrame(rows)), "")

    def _sweep(self, paths: list[Path], name: str, title: str, param: str, text: str, finding: Any) -> None:
        if not paths:
            return
        # Runs tables or their summaries (one file per GPU): in summarize's row order either way.
        summary = metrics.summary_of(load_all(paths)).sort_values(RUN, kind="stable", ignore_index=True)
        norm = metrics.normalised(summary, "baseline")
        z = norm[norm["policy"] == "zeus"]
        self.add(f"## {title}", "")
        for gpu in sorted(z["gpu"].unique()):
            self.add(_figure(f"{name}-{gpu}", self.figures, f"{name} {gpu}"), "")
        self.caveats(z["gpu"].unique())
        self.say(finding(z), before=text)
        table = z.pivot_table(
            index=["gpu", "workload"], columns=param, values=["energy_saving_pct", "time_saving_pct"]
        )
        rows = []
        for (gpu, w), r in table.iterrows():
            row = {"GPU": _gpu(gpu), "workload": w}
            for v in sorted(z[param].unique()):
                row[f"{param} {_beta(v)}: energy / time"] = (
                    f"{pct(r[('energy_saving_pct', v)])} / {pct(r[('time_saving_pct', v)])}"
                )
            rows.append(row)
        self.add("Zeus's savings vs. the baseline (all recurrences):", "", _md_table(pd.DataFrame(rows)), "")

    def sweeps(self) -> None:
        """Eta and beta."""
        self._sweep(
            self.args.eta_sim,
            "eta",
            "6. The energy/time trade-off as eta varies",
            "eta",
            "Zeus's cumulative energy and time relative to the baseline for eta from 0 (optimise time only) to 1 "
            "(energy only).",
            eta_effect,
        )
        self._sweep(
            self.args.beta_sim,
            "beta",
            "7. Sensitivity to beta (early stopping)",
            "beta",
            "Zeus's cumulative energy and time relative to the baseline for several early-stopping thresholds beta "
            "(a try stops once its cost exceeds beta times the best recurrence cost so far; off: never).",
            beta_effect,
        )

    def power_profiles(self) -> None:
        """Power-limit profiles (GPUs with several limits only)."""
        pot, configs = self.potential_rows, self.configs
        if pot is None or configs is None:
            return
        n_limits = configs.groupby("gpu")["power_limit_w"].nunique()
        configs = configs[configs["gpu"].isin(n_limits[n_limits > 1].index)]
        if configs.empty:
            return
        prof = metrics.power_profile(configs, pot.rename(columns={"b0": "batch_size"}))
        self.add("## 8. Power limit profiles", "")
        for gpu in sorted(prof["gpu"].unique()):
            self.add(_figure(f"power-profiles-{gpu}", self.figures, f"power profiles {gpu}"), "")
        single = sorted(set(n_limits[n_limits == 1].index))
        self.say(
            power_profile_finding(prof),
            before="Average power, throughput and energy per epoch at b0 against the power limit, relative to the "
            "maximum limit"
            + (f" (not drawn for {', '.join(_gpu(g) for g in single)}: one power limit)." if single else "."),
            after="The JIT profiler picks, per batch size, the limit of least eta-weighted cost; the time term of "
            "the cost favours the limits at which an epoch is fastest. Below: the lowest limit, and the limit of least energy per epoch.",
        )
        low = prof.loc[prof.groupby(["gpu", "workload"])["power_limit_w"].idxmin()]
        best = prof.loc[prof.groupby(["gpu", "workload"])["energy_per_epoch_j_rel"].idxmin()].set_index(
            ["gpu", "workload"]
        )
        keys = list(zip(low["gpu"], low["workload"], strict=True))
        table = pd.DataFrame(
            {
                "GPU": low["gpu"].str.upper(),
                "workload": low["workload"],
                "limit (W)": low["power_limit_w"].map(lambda v: f"{v:g}"),
                "power": low["avg_power_w_rel"].map(lambda v: f"{v:.2f}x"),
                "throughput": low["epochs_per_hour_rel"].map(lambda v: f"{v:.2f}x"),
                "energy per epoch": low["energy_per_epoch_j_rel"].map(lambda v: f"{v:.2f}x"),
                "least energy per epoch at (W)": [
                    f"{best.at[k, 'power_limit_w']:g} ({best.at[k, 'energy_per_epoch_j_rel']:.2f}x)"
                    for k in keys
                ],
            }
        )
        self.add(_md_table(table), "")

    def own(self) -> None:
        """The project's own measurements."""
        self.add("## 9. H200 measurements (this project)", "")
        if not self.args.own:
            self.skipped.append(
                "H200 figure: no committed sweep traces under `results/traces/h200/` (run the sweep workflow, "
                "`workflows/rules/sweep.smk`, on a GPU)."
            )
            self.add("Skipped: no H200 sweep traces are committed yet.", "")
            return
        power = load_all(self.args.own)
        per = metrics.per_sample(power)
        if per.empty:
            self.skipped.append("H200 figure: the committed power traces have no throughput (samples_per_s).")
            return
        self.add(_figure("h200", self.figures, "H200"), "")
        self.say(gpu_caveats({str(g): list(d["power_limit_w"]) for g, d in per.groupby("gpu")}))
        self.say(
            own_batch_finding(per, self.potential_rows),
            before="Energy per sample and throughput against the batch size, measured by `zeus-bench sweep` in observe "
            "mode (the lender does not allow changing the power limit, so there is no power-limit axis); where the "
            "Zeus train trace is available, the sections above evaluate these GPUs with the batch size as the only "
            "knob."
            + (
                " `h200x2` is data-parallel training on two GPUs."
                if "h200x2" in set(per["gpu"].astype(str))
                else ""
            ),
        )
        best = per.loc[per.groupby(["gpu", "workload"])["energy_per_sample_j"].idxmin()]
        sizes = per.groupby(["gpu", "workload"])["batch_size"]
        keys = list(zip(best["gpu"], best["workload"], strict=True))
        table = pd.DataFrame(
            {
                "GPU": best["gpu"],
                "workload": best["workload"],
                "batch sizes measured": [
                    f"{sizes.nunique()[k]} ({sizes.min()[k]}-{sizes.max()[k]})" for k in keys
                ],
                "least energy per sample at bs": best["batch_size"],
                "energy per sample (J)": best["energy_per_sample_j"].map(lambda v: f"{v:.3g}"),
                "throughput (samples/s)": best["samples_per_s"].map(lambda v: f"{v:.4g}"),
            }
        )
        self.add(_md_table(table), "")

    def reference(self) -> None:
        """Reference numbers: the original simulator's outputs and the paper's statements, beside ours."""
        refs = self.references
        if refs.empty:
            return
        summary = self.summary
        self.add("## 10. Reference numbers", "")
        if summary is not None:
            self.say(reference_agreement(summary, refs))
        zeus = (
            summary[summary["policy"] == "zeus"].set_index(["gpu", "workload", "eta", "beta"])
            if summary is not None
            else pd.DataFrame()
        )
        orig = refs[refs["source"] == ORIGINAL_LABEL]
        if not orig.empty:
            keys = ["gpu", "workload", "eta", "beta", "seeds", "baseline"]
            rows = []
            for key, d in orig.groupby(keys, sort=False, dropna=False):
                gpu, workload, eta, beta, seeds, baseline = key
                row = {
                    "GPU": _gpu(gpu),
                    "workload": workload,
                    "eta / beta / seeds": f"{float(eta):g} / {_beta(float(beta))} / {seeds}",
                    "against": baseline,
                }
                for r in d.itertuples(index=False):
                    col = summary_column(baseline, r.metric)
                    k = (gpu, workload, float(eta), float(beta))
                    ours = (
                        pct(float(zeus.at[k, col]))
                        if col and col in zeus.columns and k in zeus.index
                        else "n/a"
                    )
                    row[f"{r.metric}: reference / zeus-bench"] = f"{pct(float(r.value_pct))} / {ours}"
                rows.append(row)
            self.add(f"{ORIGINAL_LABEL}:", "", _md_table(pd.DataFrame(rows)), "")
        paper = refs[refs["source"] == PAPER_LABEL]
        if not paper.empty:
            rows = []
            for r in paper.itertuples(index=False):
                value, what = paper_comparable(r, self.potential_rows, summary)
                rows.append(
                    {
                        "what the paper states": getattr(r, "statement", "") or r.metric,
                        "GPU": _gpu(r.gpu),
                        "against": r.baseline,
                        "paper": pct(float(r.value_pct)),
                        "zeus-bench": pct(value) if what else "n/a",
                        "zeus-bench number": what or "none comparable",
                    }
                )
            self.add(f"{PAPER_LABEL}:", "", _md_table(pd.DataFrame(rows)), "")

    def skipped_section(self) -> None:
        """What was not done and how to get it."""
        self.add("## What was skipped", "")
        if not self.skipped:
            self.add("Nothing.", "")
            return
        self.add(*[f"- {s}" for s in self.skipped], "")

    def policy_study(self) -> None:
        """The zeus-plus section (:mod:`analysis.policy_findings`), when the study's tables are given."""
        if self.args.policy_study is None:
            return
        from analysis.policy_findings import section_items

        for item in section_items(self.args.policy_study, self.args.policy_seeds):
            if isinstance(item, list):
                self.say(*item)
            else:
                self.add(item, "")

    def arena(self) -> None:
        """The arena section (:mod:`analysis.arena_findings`), when the arena's tables are given."""
        if self.args.arena is not None:
            from analysis.arena_findings import section_items as arena_items

            for item in arena_items(self.args.arena, self.args.arena_unknown, self.args.arena_tuning):
                self.say(*item) if isinstance(item, list) else self.add(item, "")

    def render(self) -> str:
        """Build every section."""
        from analysis import evaluation

        self.header()
        for section in (
            lambda: evaluation.headline(self),
            self.potential,
            self.pareto,
            self.policies,
            self.ablation,
            self.convergence,
            self.sweeps,
            self.power_profiles,
            self.own,
            self.reference,
            self.policy_study,
            self.arena,
            lambda: evaluation.cluster(self),
            lambda: evaluation.capriccio(self),
        ):
            section()
        self.skipped_section()
        return "\n".join(self.parts).rstrip() + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m analysis.report``."""
    p = argparse.ArgumentParser(prog="python -m analysis.report", description=__doc__)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--manifest", type=Path, default=None, help="MANIFEST.json of zeus-bench fetch-traces")
    p.add_argument("--configured-gpus", default="all")
    for name in ("potential", "summary", "sim", "configs", "own", "figures"):
        p.add_argument(f"--{name}", type=Path, nargs="*", default=[])
    for name in ("eta", "beta"):
        p.add_argument(
            f"--{name}-sim",
            type=Path,
            nargs="*",
            default=[],
            help=f"the {name} sweep: its runs tables, or their sim_summary tables (one per GPU)",
        )
    from analysis.evaluation import add_arguments

    add_arguments(p)
    p.add_argument("--policy-study", type=Path, default=None, help="folder of the zeus-plus study's tables")
    p.add_argument("--policy-seeds", type=int_range_arg, default=list(range(1, 11)), help="its seeds")
    p.add_argument("--arena", type=Path, default=None, help="arena folder, horizon known (zeus-bench arena)")
    p.add_argument("--arena-unknown", type=Path, default=None, help="arena folder, horizon unknown")
    p.add_argument(
        "--arena-tuning",
        type=Path,
        nargs=2,
        default=None,
        metavar=("TUNE_HALF_CSV", "JUDGE_HALF_CSV"),
        help="zeus-plus tuning tables of both folds (python -m zeus_bench.sim.tuning)",
    )
    p.add_argument(
        "--reference",
        type=Path,
        nargs="*",
        default=[Path("results/reference/original_simulator.csv"), Path("results/reference/paper.csv")],
        help="reference number files (default: results/reference/original_simulator.csv and paper.csv)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Write the report."""
    args = build_parser().parse_args(argv)
    atomic_write_text(args.out, Report(args).render())
    return 0


if __name__ == "__main__":
    from zeus_bench.cli.common import exit_command

    exit_command(main())
