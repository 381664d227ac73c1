"""The report's first screen: three questions answered, one labelled line each.

1. How much does Zeus save against b0 and against max-batch, per GPU? (:func:`zeus_savings`: the
   arena's Zeus rows, every split pooled: 100 x (1 - the mean over jobs of the paired cost ratio),
   with its two-stage interval.)
2. Which policy is best per GPU, with the horizon unknown, then known? (:func:`best_policy`: rank 1
   by mean regret; it *beats* Zeus only when the interval of its regret ratio lies below 1; its
   safety goal on every job.) Which one to use instead of Zeus, if any? (:func:`recommendation`: one
   that beats Zeus and meets the safety goal on every GPU, checked with each GPU held out.)
3. Which of the paper's stated numbers reproduce? (:func:`paper_lines`: one line per stated
   number, the nearest computed definition named with its baseline.)

Every policy number is simulated (replays of recorded traces); the H200's are projected (the
arena tables' provenance labels each GPU).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from analysis.report.findings import Finding

#: Lines the first screen may take (the issue's bound).
MAX_LINES = 40
#: Deviation (points) under which a computed number reproduces a stated one (one decimal).
MATCH_PT = 0.05
#: The arena's safety goal: p95 of the cost over the same-seed baseline's, on every job.
SAFE = 1.02


def scope(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows an answer is read from: every split's folds pooled (fold 0) when present, else fold 1."""
    pooled = summary[summary["fold"] == 0]
    return pooled if len(pooled) else summary[summary["fold"] == 1]


def label(gpu: str, labels: Mapping[str, str]) -> str:
    """``simulated``, or ``projected`` for a GPU the project measured (the arena's provenance)."""
    return labels.get(gpu, "simulated")


def _ci(mean: float, lo: float, hi: float, fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(mean)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def zeus_savings(summary: pd.DataFrame, labels: Mapping[str, str]) -> list[Finding]:
    """Per GPU: what Zeus saves against b0 and against max-batch (cost, %), with the intervals."""
    out = []
    rows = scope(summary)
    for r in rows[rows["policy"] == "zeus"].itertuples(index=False):
        nums: dict[str, float] = {}
        parts = []
        for ref, col in (("b0", "cost_ratio_vs_baseline"), ("max_batch", "cost_ratio_vs_max_batch")):
            m, lo, hi = (float(getattr(r, f"{col}_{e}")) for e in ("mean", "ci_lo", "ci_hi"))
            s = (100 * (1 - m), 100 * (1 - hi), 100 * (1 - lo))
            nums.update({f"{ref}_pct": s[0], f"{ref}_lo": s[1], f"{ref}_hi": s[2]})
            parts.append(f"{_ci(*s)} % against {ref.replace('_', '-')}")
        nums.update({"jobs": float(r.jobs), "splits": float(r.splits)})
        sentence = (
            f"{r.gpu} ({label(str(r.gpu), labels)}): Zeus saves {parts[0]} and {parts[1]} of the cost "
            f"(mean over {int(r.jobs)} jobs, every recurrence, judged paths of {int(r.splits)} split(s))."
        )
        out.append(Finding(f"answer.savings.{r.gpu}", sentence, nums))
    return out


def best_policy(summary: pd.DataFrame, horizon: str, labels: Mapping[str, str]) -> list[Finding]:
    """Per GPU: the least-regret policy with the horizon ``horizon``, whether it beats Zeus, its safety."""
    out = []
    rows = scope(summary)
    for gpu, g in rows.groupby("gpu", sort=False):
        best = g.sort_values(["rank", "policy"], kind="stable").iloc[0]
        policy = str(best["policy"])
        beats = policy != "zeus" and bool(best["regret_ratio_vs_zeus_ci_hi"] < 1.0)
        unsafe = int(best["jobs_p95_over_safe"])
        ratio = _ci(
            best["regret_ratio_vs_zeus"],
            best["regret_ratio_vs_zeus_ci_lo"],
            best["regret_ratio_vs_zeus_ci_hi"],
            "{:.2f}",
        )
        verdict = (
            f"beats Zeus ({ratio} x its regret)"
            if beats
            else f"no policy beats Zeus with 95 % confidence ({ratio})"
        )
        prob = best.get("prob_better_than_zeus_mean", float("nan"))
        safe = "meets" if unsafe == 0 else f"misses on {unsafe} of {int(best['jobs'])} jobs"
        sentence = (
            f"{gpu} ({label(str(gpu), labels)}), horizon {horizon}: least regret {policy}, "
            f"{_ci(best['regret_pct_mean'], best['regret_pct_ci_lo'], best['regret_pct_ci_hi'])} %; {verdict}; "
            f"P(cheaper than Zeus) {prob:.2f}; it {safe} the safety goal (p95 <= {SAFE} x b0)."
        )
        nums = {
            "beats": float(beats),
            "unsafe_jobs": float(unsafe),
            "ratio": float(best["regret_ratio_vs_zeus"]),
        }
        out.append(Finding(f"answer.best.{horizon}.{gpu}", sentence, nums))
    return out


def _passes(row: pd.Series) -> bool:
    """Beats Zeus with 95 % confidence (ratio interval below 1) and meets the safety goal on every job."""
    return bool(row["regret_ratio_vs_zeus_ci_hi"] < 1.0) and int(row["jobs_p95_over_safe"]) == 0


def _pick(rows: pd.DataFrame, gpus: Sequence[str]) -> str | None:
    """The policy passing (:func:`_passes`) on every GPU of ``gpus`` with the least mean ratio to Zeus."""
    ok = []
    for policy, g in rows[rows["gpu"].isin(gpus)].groupby("policy", sort=True):
        if policy == "zeus" or set(g["gpu"]) != set(gpus):
            continue
        if all(_passes(r) for _, r in g.iterrows()):
            ok.append((float(g["regret_ratio_vs_zeus"].mean()), str(policy)))
    return min(ok)[1] if ok else None


def recommendation(summary: pd.DataFrame, horizon: str, labels: Mapping[str, str]) -> Finding:
    """The policy to use instead of Zeus with the horizon ``horizon``, or none.

    Recommended: the policy that beats Zeus with 95 % confidence and meets the safety goal on every
    job on *every* GPU of the table (least mean ratio to Zeus among those). Held-out GPUs: the same
    rule applied without each GPU in turn; the finding counts the GPUs on which that pick also
    passes (a GPU one does not have). None passing everywhere: the nearest policy (the most GPUs
    passed, then the least mean ratio) and where it fails, and the advice to keep Zeus.
    """
    rows = scope(summary)
    gpus = sorted(str(g) for g in rows["gpu"].unique())
    where = ", ".join(f"{g} ({label(g, labels)})" for g in gpus)
    held = 0
    for g in gpus:
        pick = _pick(rows, [x for x in gpus if x != g]) if len(gpus) > 1 else None
        ok = pick is not None and _passes(rows[(rows["gpu"] == g) & (rows["policy"] == pick)].iloc[0])
        held += int(ok)
    chosen = _pick(rows, gpus)
    nums = {"recommended": float(chosen is not None), "gpus": float(len(gpus)), "held_out_kept": float(held)}
    held_s = f"chosen without each GPU in turn, the pick passes on the GPU left out in {held} of {len(gpus)}"
    if chosen is not None:
        sentence = (
            f"Recommended over Zeus, horizon {horizon}: **{chosen}**: it beats Zeus with 95 % confidence and meets "
            f"the safety goal on every job on each of {where}; {held_s}."
        )
        return Finding(f"answer.recommend.{horizon}", sentence, nums)
    scores = []
    for policy, g in rows.groupby("policy", sort=True):
        if policy != "zeus":
            passed = sum(_passes(r) for _, r in g.iterrows())
            scores.append((-passed, float(g["regret_ratio_vs_zeus"].mean()), str(policy)))
    fails = []
    if scores:
        near = min(scores)[2]
        for _, r in rows[rows["policy"] == near].sort_values("gpu").iterrows():
            if r["regret_ratio_vs_zeus_ci_hi"] >= 1.0:
                fails.append(f"on {r['gpu']} it does not beat Zeus with 95 % confidence")
            if int(r["jobs_p95_over_safe"]):
                fails.append(
                    f"on {r['gpu']} it misses the safety goal on {int(r['jobs_p95_over_safe'])} of {int(r['jobs'])} jobs"
                )
        nums["nearest_gpus_passed"] = float(-min(scores)[0])
    nearest = f"; nearest: {near} ({'; '.join(fails)})" if scores else ""
    sentence = (
        f"Recommended over Zeus, horizon {horizon}: **none**: no policy beats Zeus with 95 % confidence and meets "
        f"the safety goal on every job on each of {where}{nearest}. Keep Zeus."
    )
    return Finding(f"answer.recommend.{horizon}", sentence, nums)


def _verdict(stated: float, got: float) -> str:
    d = got - stated
    return "reproduces" if abs(d) < MATCH_PT else f"differs by {d:+.1f} points"


def paper_lines(
    refs: pd.DataFrame | None,
    candidates: pd.DataFrame | None,
    potential: pd.DataFrame | None,
    configs: pd.DataFrame | None,
) -> list[Finding]:
    """One line per number the paper states (``results/reference/paper.csv``): the nearest computed one.

    * Zeus's savings (max-batch; least/largest energy, largest time): the nearest candidate of the
      headline (:mod:`analysis.report.findings.headline`) for that number alone, its definition named;
    * the least-energy configuration's saving against b0 (V100): the potential rows' least and largest;
    * the power limit alone (V100): b0 at its least-energy limit against b0 at the maximum limit
      (the configs' energy to accuracy; original data, no policy).
    """
    if refs is None or refs.empty:
        return []
    paper = refs[refs["source"] == "paper"]
    cand_cols = {
        "energy_savings_min": "energy_min_pct",
        "energy_savings_max": "energy_max_pct",
        "time_savings_max": "time_max_pct",
    }
    out = []
    for r in paper.itertuples(index=False):
        metric, stated = str(r.metric), float(r.value_pct)
        got, how = _computed(metric, str(r.gpu), stated, candidates, potential, configs, cand_cols)
        if got is None:
            sentence = f"Paper: {metric} {stated:g} % ({r.baseline}): not computed in this run ({how})."
            nums = {"stated": stated}
        else:
            sentence = f"Paper: {metric} {stated:g} % ({r.baseline}); computed {got:.1f} % ({how}): {_verdict(stated, got)}."
            nums = {
                "stated": stated, "computed": got, "diff": got - stated, "last_n": 10.0,
                "reproduces": float(abs(got - stated) < MATCH_PT),
            }  # fmt: skip
        out.append(Finding(f"answer.paper.{metric}", sentence, nums))
    return out


def _computed(
    metric: str,
    gpu: str,
    stated: float,
    candidates: pd.DataFrame | None,
    potential: pd.DataFrame | None,
    configs: pd.DataFrame | None,
    cand_cols: Mapping[str, str],
) -> tuple[float | None, str]:
    """The computed number nearest to a stated one, and how it was computed (or why not)."""
    if metric in cand_cols:
        if candidates is None or candidates.empty:
            return None, "no Zeus replay"
        col = cand_cols[metric]
        best = candidates.loc[(candidates[col] - stated).abs().idxmin()]
        recs = "all recurrences" if best["recurrences"] == "cum" else "the last 10 recurrences"
        return float(
            best[col]
        ), f"Zeus, {best['replay']}, {recs}, against {best['baseline']}, {best['scope']}, simulated"
    if metric.startswith("least_energy_savings") and potential is not None and not potential.empty:
        pot = potential[potential["gpu"] == gpu] if gpu != "all" else potential
        vals = pot["min_energy_saving_pct"]
        got = float(vals.min() if metric.endswith("_min") else vals.max())
        return got, f"least-energy configuration against b0, {gpu}, original data (no policy)"
    if metric.startswith("power_limit_only") and potential is not None and configs is not None:
        savings = power_limit_only(potential[potential["gpu"] == gpu], configs)
        if savings.empty:
            return None, "no configuration table"
        got = float(savings.min() if metric.endswith("_min") else savings.max())
        return got, f"b0 at its least-energy limit against b0 at the maximum limit, {gpu}, original data"
    return None, "no table computes it"


def power_limit_only(potential: pd.DataFrame, configs: pd.DataFrame) -> pd.Series:
    """Per job: energy saved (%) by b0's least-energy power limit against b0 at the maximum limit."""
    out = {}
    for p in potential.itertuples(index=False):
        c = configs[
            (configs["gpu"] == p.gpu) & (configs["workload"] == p.workload) & (configs["batch_size"] == p.b0)
        ]
        c = c[c["eta_j"].notna()]
        if len(c):
            out[(p.gpu, p.workload)] = 100.0 * (1.0 - float(c["eta_j"].min()) / float(p.baseline_eta_j))
    return pd.Series(out, dtype=float)


def validation_lines(tables: Mapping[str, pd.DataFrame]) -> list[Finding]:
    """Per measured GPU: where the measured online run lies in the simulated distribution at N.

    ``tables``: each ``results/validation/<gpu>/findings.parquet`` (kind ``validation_findings``) by
    its folder's path. The line states the gap to the simulated median, the 95 % band with and
    without the measured noise, the measured runs' own spread (with repeats) and the early-stop
    rule's share of the gap, each from its computed finding.
    """
    out = []
    for path, t in tables.items():
        v = dict(zip(t["finding"], t["value"].astype(float), strict=True))
        gpu, workload = str(t["gpu"].iloc[0]), str(t["workload"].iloc[0])
        n = int(v["recurrences"])
        diff = v["diff_from_median_pct"]
        inside = v["in_band_at_N"] == 1.0
        sentence = (
            f"{gpu} (measured, {workload}, N = {n}; batch-size side only, at the GPU's current power limit): the "
            f"measured cumulative cost is {abs(diff):.1f} % {'above' if diff >= 0 else 'below'} the simulated "
            f"median, {'inside' if inside else 'outside'} the simulated 95 % band "
            f"(percentile {v['percentile_at_N']:.0f}); with the measured run-to-run noise the band "
            f"{'covers' if v['noise_covers_at_N'] == 1.0 else 'does not cover'} it"
        )
        if "measured_runs_spread_pct" in v:
            sentence += (
                f"; {int(v['repeat_runs']) + 1} measured runs spread by {v['measured_runs_spread_pct']:.1f} %"
            )
        if "time_power_share_of_gap" in v:
            sentence += (
                f"; the run's own time and power beyond the measured trace, on the same tries, make "
                f"{100 * v['time_power_share_of_gap']:.0f} % of the gap"
            )
        if "early_stop_share_of_gap" in v:
            sentence += (
                f" and the online optimizer's early stop (one epoch after the replay's) about "
                f"{100 * v['early_stop_share_of_gap']:.0f} %"
            )
        sentence += f" (`{Path(path).parent}/report.md`)."
        out.append(Finding(f"answer.validation.{gpu}", sentence, v))
    return out
