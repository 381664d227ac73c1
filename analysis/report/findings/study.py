"""The zeus-plus study's findings, computed from the study's tables.

Each function takes one table of ``zeus-bench study`` (``results/policy/``) and
returns :class:`~analysis.report.findings.Finding` objects whose sentences are built from their
numbers, so that the sentence follows the data (a goal that is missed reads as missed).
:mod:`analysis.report.sections.study` assembles the section.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.report.findings import Finding

SAFE = 1.02  # goal: cumulative cost at most 1.02 x the baseline's on every job
BETTER = 0.6  # goal: per GPU, mean regret at most 0.6 x Zeus's
WARM_CUT = 30.0  # goal: first-20 regret cut by at least 30 % by the warm start
FIRST = 20  # recurrences of the warm-start comparison (the study's columns ..._first20_...)


def _pct(x: float) -> str:
    return f"{x:.1f} %"


def _jobs(n: int) -> str:
    return f"{n} job" if n == 1 else f"{n} jobs"


def setup(comparison: pd.DataFrame, seeds: Sequence[int]) -> Finding:
    """What the comparison ran: seeds, eta, beta (one sentence).

    The seed count is the table's (``zeus-bench study --arena`` replays the arena's seeds, which
    may be more than the study's ``seeds``, then used by the drift and warm-start tables only).
    """
    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA

    n = int(comparison["seeds"].max()) if "seeds" in comparison.columns else len(seeds)
    nums = {"seeds": float(n), "eta": DEFAULT_ETA, "beta": DEFAULT_BETA}
    nums["jobs"] = float(len(comparison[["gpu", "workload"]].drop_duplicates()))
    which = f"seeds {min(seeds)}-{max(seeds)}" if n == len(seeds) else f"{n} seeds (the arena's)"
    sentence = (
        f"zeus-plus (docs/policies.md) against Zeus on {int(nums['jobs'])} jobs, eta {nums['eta']:g}, "
        f"beta {nums['beta']:g}, {which}, as many recurrences as the simulator's default, horizon known (zeus-plus is "
        "told that number; simulated, H200 projected); the workflow replays "
        "the arena's fold 1 (the judged half of the training paths, zeus-bench study --arena, every mean equal to "
        "the arena's table); costs are cumulative over the references' cumulative costs on the same seed and "
        "paths (baseline: b0 at the maximum limit; max-batch at the maximum limit, both replayed) and regret is "
        "cumulative cost over the oracle's expected cost, in percent above it."
    )
    return Finding("policy.setup", sentence, nums)


def _over(g: pd.DataFrame, column: str, limit: float) -> tuple[dict[str, float], dict[str, str]]:
    """Per policy (zeus-plus, zeus) of one GPU's rows: the largest ``column`` and the jobs above ``limit``.

    Returns:
        ``{policy}_max_ratio`` and ``{policy}_jobs_over`` per policy, and the job of each largest.
    """
    nums: dict[str, float] = {}
    worst: dict[str, str] = {}
    for p in ("zeus-plus", "zeus"):
        r = g[g["policy"] == p].set_index("workload")[column]
        nums[f"{p}_max_ratio"] = float(r.max())
        nums[f"{p}_jobs_over"] = float((r > limit).sum())
        worst[p] = str(r.idxmax())
    return nums, worst


def safety(comparison: pd.DataFrame) -> list[Finding]:
    """Per GPU: zeus-plus's (and Zeus's) largest cumulative cost over the baseline's, jobs above 1.02."""
    out = []
    for gpu, g in comparison.groupby("gpu", sort=False):
        nums, worst = _over(g, "cost_ratio_vs_baseline_cum_mean", SAFE)
        jobs = int((g["policy"] == "zeus-plus").sum())
        over = int(nums["zeus-plus_jobs_over"])
        nums["jobs"] = float(jobs)
        nums["goal"] = SAFE
        verdict = (
            f"meets the safety goal on all {jobs} jobs"
            if over == 0
            else f"misses the safety goal on {over} of {jobs} jobs"
        )
        sentence = (
            f"On {gpu}, zeus-plus {verdict} (largest cumulative cost {nums['zeus-plus_max_ratio']:.3f} x "
            f"the baseline's, {worst['zeus-plus']}; Zeus: {nums['zeus_max_ratio']:.3f}, "
            f"{worst['zeus']}, {_jobs(int(nums['zeus_jobs_over']))} above {SAFE})."
        )
        row = {
            "GPU": str(gpu),
            "zeus-plus: cost <= 1.02 x the baseline's": f"on all {jobs} jobs"
            if over == 0
            else f"missed on {over} of {jobs}",
            "zeus-plus's largest cost / baseline's (job)": f"{nums['zeus-plus_max_ratio']:.3f} ({worst['zeus-plus']})",
            "Zeus's largest (job; jobs above 1.02)": (
                f"{nums['zeus_max_ratio']:.3f} ({worst['zeus']}; {int(nums['zeus_jobs_over'])})"
            ),
        }
        out.append(Finding(f"policy.safety.{gpu}", sentence, nums, row=row))
    return out


def regret(comparison: pd.DataFrame) -> list[Finding]:
    """Per GPU: mean regret of zeus-plus against Zeus's and the 0.6 x goal."""
    out = []
    for gpu, g in comparison.groupby("gpu", sort=False):
        means = g.groupby("policy")["regret_vs_oracle_cum_pct_mean"].mean()
        zeus, plus = float(means["zeus"]), float(means["zeus-plus"])
        ratio = plus / zeus if zeus > 0 else float("nan")
        verdict = "meets" if ratio <= BETTER else "misses"
        sentence = (
            f"On {gpu}, zeus-plus's mean cumulative regret is {_pct(plus)} against Zeus's {_pct(zeus)} "
            f"({ratio:.2f} x; it {verdict} the {BETTER} x goal)."
        )
        out.append(
            Finding(
                f"policy.regret.{gpu}",
                sentence,
                {"zeus": zeus, "zeus-plus": plus, "ratio": ratio, "goal": BETTER},
                row={
                    "GPU": str(gpu),
                    "regret %: zeus-plus / Zeus": f"{plus:.1f} / {zeus:.1f}",
                    "x Zeus": f"{ratio:.2f}",
                    f"{BETTER} x goal": f"{verdict}",
                },
            )
        )
    return out


def max_batch(comparison: pd.DataFrame) -> list[Finding]:
    """Per GPU: jobs where each policy costs more than max-batch."""
    out = []
    for gpu, g in comparison.groupby("gpu", sort=False):
        nums, _ = _over(g, "cost_ratio_vs_max_batch_cum_mean", 1.0)
        sentence = (
            f"Against max-batch on {gpu}: zeus-plus costs more on {_jobs(int(nums['zeus-plus_jobs_over']))} "
            f"(largest ratio {nums['zeus-plus_max_ratio']:.3f}), Zeus on {_jobs(int(nums['zeus_jobs_over']))} "
            f"(largest ratio {nums['zeus_max_ratio']:.3f})."
        )
        row = {
            "GPU": str(gpu),
            "jobs dearer than max-batch: zeus-plus / Zeus": (
                f"{int(nums['zeus-plus_jobs_over'])} / {int(nums['zeus_jobs_over'])}"
            ),
            "largest cost / max-batch's: zeus-plus / Zeus": f"{nums['zeus-plus_max_ratio']:.3f} / {nums['zeus_max_ratio']:.3f}",
        }
        out.append(Finding(f"policy.max_batch.{gpu}", sentence, nums, row=row))
    return out


DRIFT_WHAT = {  # how a finding names each drift scenario (zeus_bench/sim/scenarios/drift.py)
    "step": "epochs of the optimum x{f:g}",
    "morph": "epochs of the optimum x{f:g} over 20 recurrences",
    "tilt": "the whole convergence curve tilted x{f:g} per doubling over 20 recurrences",
}


def drift(table: pd.DataFrame) -> list[Finding]:
    """Per scenario and factor: jobs where zeus-plus is back within 5 % sooner than windowed Zeus."""
    out = []
    for (scenario, factor), g in table.groupby(["scenario", "epoch_factor"], sort=True):
        wide = g.pivot_table(
            index=["gpu", "workload"], columns="policy", values="recovery_recurrences", dropna=False
        )
        plus = wide["zeus-plus"].fillna(np.inf)
        window = wide[next(c for c in wide.columns if c.startswith("zeus-window"))].fillna(np.inf)
        n = len(wide)
        nums = {
            "jobs": float(n),
            "plus_sooner": float((plus < window).sum()),
            "plus_later": float((plus > window).sum()),
            "plus_never": float(np.isinf(plus).sum()),
            "window_never": float(np.isinf(window).sum()),
            "plus_median": float(np.median(plus)),
            "window_median": float(np.median(window)),
            "factor": float(factor),
            "within_pct": 5.0,
        }
        sentence = (
            f"{scenario.capitalize()} change ({DRIFT_WHAT.get(scenario, 'epochs x{f:g}').format(f=factor)}): zeus-plus is back within "
            f"{nums['within_pct']:g} % of the new oracle sooner than windowed Zeus on {int(nums['plus_sooner'])} of {n} jobs, "
            f"later on {int(nums['plus_later'])} (median {nums['plus_median']:g} vs {nums['window_median']:g} "
            f"recurrences; never within the horizon: zeus-plus {int(nums['plus_never'])}, windowed Zeus "
            f"{int(nums['window_never'])})."
        )
        row = {
            "change": f"{scenario} ({DRIFT_WHAT.get(scenario, 'epochs x{f:g}').format(f=factor)})",
            "jobs: zeus-plus sooner / later": f"{int(nums['plus_sooner'])} / {int(nums['plus_later'])} of {n}",
            "median recurrences: zeus-plus / windowed Zeus": f"{nums['plus_median']:g} / {nums['window_median']:g}",
            "never back within the horizon: zeus-plus / windowed Zeus": (
                f"{int(nums['plus_never'])} / {int(nums['window_never'])}"
            ),
        }
        out.append(Finding(f"policy.drift.{scenario}.{factor:g}", sentence, nums, row=row))
    return out


def warm_start(table: pd.DataFrame) -> list[Finding]:
    """Per (prior, target) pair: cut of the first-20 regret and the steady-state change."""
    out = []
    for (src, dst), g in table.groupby(["prior_gpu", "gpu"], sort=False):
        cold, warm = g["regret_first20_pct_cold"].mean(), g["regret_first20_pct_warm"].mean()
        cut = 100.0 * (1.0 - warm / cold) if cold > 0 else float("nan")
        steady = 100.0 * (
            g["cost_last20_vs_oracle_warm"].mean() / g["cost_last20_vs_oracle_cold"].mean() - 1.0
        )
        verdict = "meets" if cut >= WARM_CUT else "misses"
        k = FIRST
        sentence = (
            f"Warm start {src} -> {dst}: mean regret over the first {k} recurrences {_pct(warm)} against "
            f"{_pct(cold)} cold, a {cut:.0f} % cut (it {verdict} the {WARM_CUT:.0f} % goal); steady-state "
            f"cost {steady:+.1f} %."
        )
        out.append(
            Finding(
                f"policy.warm.{src}.{dst}",
                sentence,
                {
                    "cold": cold,
                    "warm": warm,
                    "cut_pct": cut,
                    "steady_pct": steady,
                    "goal": WARM_CUT,
                    "first": float(k),
                },
                row={
                    "prior -> target": f"{src} -> {dst}",
                    f"first-{k} regret %: warm / cold (mean over jobs)": f"{warm:.1f} / {cold:.1f}",
                    f"cut ({WARM_CUT:.0f} % goal)": f"{cut:.0f} % ({verdict})",
                    "steady-state cost": f"{steady:+.1f} %",
                },
            )
        )
    return out


def warm_start_per_job(table: pd.DataFrame) -> list[Finding]:
    """Per pair, from ``warmstart_jobs.csv``: jobs significantly helped or hurt, and the cut without each job."""
    out = []
    for (src, dst), g in table.groupby(["prior_gpu", "gpu"], sort=False):
        better = g[g["regret_first20_diff_pct_ci_high"] < 0]
        worse = g[g["regret_first20_diff_pct_ci_low"] > 0]
        cuts = g.dropna(subset=["pair_cut_without_pct"])
        if cuts.empty:  # no cold regret to cut (e.g. cold already at the oracle): no leave-one-out
            hurt = f" (worse on {', '.join(worse['workload'])})" if len(worse) else ""
            sentence = (
                f"Warm start {src} -> {dst} per job: the paired first-{FIRST} regret difference (95 % bootstrap "
                f"over {int(g['seeds'].min())} seeds) is significantly better on {len(better)} of {len(g)} jobs "
                f"and worse on {len(worse)}{hurt}; cold zeus-plus has no regret to cut on these jobs."
            )
            nums = {"jobs": float(len(g)), "better": float(len(better)), "worse": float(len(worse))}
            out.append(
                Finding(
                    f"policy.warm_jobs.{src}.{dst}", sentence, nums, row=_warm_row(src, dst, better, worse, g)
                )
            )
            continue
        low = cuts.loc[cuts["pair_cut_without_pct"].idxmin()]
        high = cuts.loc[cuts["pair_cut_without_pct"].idxmax()]
        nums = {
            "jobs": float(len(g)),
            "better": float(len(better)),
            "worse": float(len(worse)),
            "cut_pct": float(g["pair_cut_pct"].iloc[0]),
            "without_min_pct": float(low["pair_cut_without_pct"]),
            "without_max_pct": float(high["pair_cut_without_pct"]),
            "seeds": float(g["seeds"].min()),
            "first": float(FIRST),
            "level_pct": 95.0,
        }
        hurt = f" (worse on {', '.join(worse['workload'])})" if len(worse) else ""
        sentence = (
            f"Warm start {src} -> {dst} per job: the paired first-{FIRST} regret difference (95 % bootstrap "
            f"over {int(nums['seeds'])} seeds) is significantly better on {len(better)} of {len(g)} jobs and worse on "
            f"{len(worse)}{hurt}; leaving one job out, the pair's {nums['cut_pct']:.0f} % cut ranges from "
            f"{nums['without_min_pct']:.1f} % (without {low['workload']}) to {nums['without_max_pct']:.1f} % "
            f"(without {high['workload']})."
        )
        out.append(
            Finding(
                f"policy.warm_jobs.{src}.{dst}", sentence, nums, row=_warm_row(src, dst, better, worse, g)
            )
        )
    return out


def _warm_row(
    src: str, dst: str, better: pd.DataFrame, worse: pd.DataFrame, g: pd.DataFrame
) -> dict[str, str]:
    """A pair's per-job verdicts as table cells (jobs significantly helped / hurt by the warm start)."""
    hurt = f" ({', '.join(worse['workload'])})" if len(worse) else ""
    return {
        "prior -> target": f"{src} -> {dst}",
        f"jobs better / worse (paired, 95 %, {int(g['seeds'].min())} seeds)": f"{len(better)} / {len(worse)}{hurt} of {len(g)}",
    }
