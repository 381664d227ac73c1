"""Four claims of earlier reports, restated as the data support them (issue 33, Deliver 4).

Each function computes the claim's verdict from the committed tables, so that the sentence flips
where the data flip:

* :func:`pairing` -- does dividing a policy's cost by the baseline's on the same seed cancel the luck of
  the sampled training paths? (the spread of the ratio with and without the same-seed baseline).
* :func:`anytime_floor` -- which policies meet the arena's safety goal with less regret than the anytime
  floor (the floor bounds zeus-plus's own per-recurrence guarantee, not the goal on the final p95).
* :func:`horizon_price` -- of what not being told the horizon costs zeus-plus, the part the anytime
  guarantee forces (the floor) and the part that is its search's.
* :func:`warm_start_goal` -- whether a warm start meets the 30 % goal with every job and without each.

Inputs are rows of ``arena_jobs`` / ``arena_summary`` (``zeus-bench arena``) and of
``warmstart_jobs.csv`` (``zeus-bench study``); nothing is recomputed that those tables hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.findings.arena import NON_LEARNING, PLUS, SAFE, by_fold, scope
from analysis.report.findings.study import WARM_CUT

SAME = 1e-4
"""Two relative spreads closer than this (0.01 point) are the same."""


def _spread(jobs: pd.DataFrame, p95: str, mean: str) -> pd.Series:
    """The upper spread over seeds of a ratio: its 95th percentile over its mean, minus 1."""
    return jobs[p95] / jobs[mean] - 1.0


def pairing(jobs: pd.DataFrame) -> Finding:
    """Whether the same-seed baseline cancels path luck: the spread of cost with and without dividing by it.

    ``jobs``: ``arena_jobs`` rows of one fold. For every (GPU, policy, job) but the baseline's own,
    the upper spread over seeds (95th percentile over mean, minus 1) of the cost over the baseline's
    on the same seed is set against that of the cost over the baseline's expected cost (the policy's
    own spread). Dividing narrows the spread only where the two totals move together; where a policy
    leaves b0 its paths are not the baseline's and dividing can widen it.
    """
    rows = jobs[jobs["policy"] != "baseline"]
    paired = _spread(rows, "cost_ratio_vs_baseline_p95", "cost_ratio_vs_baseline_mean")
    alone = _spread(rows, "cost_ratio_vs_expected_baseline_p95", "cost_ratio_vs_expected_baseline_mean")
    wider, narrower = paired > alone + SAME, paired < alone - SAME
    nums: dict[str, float] = {
        "pairs": float(len(rows)),
        "wider": float(wider.sum()),
        "narrower": float(narrower.sum()),
        "same": float(len(rows) - wider.sum() - narrower.sum()),
    }
    for gpu in sorted(set(rows["gpu"])):
        on = rows["gpu"] == gpu
        nums[f"wider_{gpu}"] = float((wider & on).sum())
    per_gpu = ", ".join(f"{g} {int(nums[f'wider_{g}'])}" for g in sorted(set(rows["gpu"])))
    horizon = f"horizon {rows['horizon'].iloc[0]}; " if "horizon" in rows.columns and len(rows) else ""
    sentence = (
        "Does the baseline's cost on the same seed cancel the luck of the sampled training paths "
        f"({horizon}simulated, H200 projected)? Dividing a policy's cumulative cost by it narrows the spread over seeds (95th "
        f"percentile over the mean) on {int(nums['narrower'])} of {len(rows)} (GPU, policy, job) cells, "
        f"leaves it within 0.01 point on {int(nums['same'])} and widens it on {int(nums['wider'])} ({per_gpu})"
    )
    if nums["wider"]:
        worst = (paired - alone).idxmax()
        r = rows.loc[worst]
        nums.update(worst_paired_pct=100 * float(paired[worst]), worst_alone_pct=100 * float(alone[worst]))
        sentence += (
            f"; most on {r['workload']} ({r['gpu']}, {r['policy']}: {nums['worst_paired_pct']:.2f} % against "
            f"{nums['worst_alone_pct']:.2f} %). So the same-seed ratio does not in general cancel path luck (a policy "
            "that leaves b0 does not share the baseline's paths): the safety goal is defined on it, but it is no "
            "variance reduction."
        )
    else:
        sentence += ". So here the same-seed ratio cancels the path luck it shares with the baseline."
    return Finding("claims.pairing", sentence, nums)


def anytime_floor(summary: pd.DataFrame) -> Finding:
    """Which learning policies meet the arena's safety goal with less regret than the anytime floor.

    ``summary``: ``arena_summary`` rows with the horizon unknown (any folds). The floor
    (``anytime_floor_regret_pct``) is the least regret of a policy that stays within 1.02 x the
    baseline *after every recurrence*, knowing every expected cost: zeus-plus's own guarantee. The
    arena's goal is on the 95th percentile over seeds of the *final* cumulative cost
    (``jobs_p95_over_safe`` 0), which the floor does not bound; a policy below it shows so.
    """
    rows = summary[~summary["policy"].isin(NON_LEARNING) & summary["anytime_floor_regret_pct"].notna()]
    below = rows[
        (rows["jobs_p95_over_safe"] == 0) & (rows["regret_pct_mean"] < rows["anytime_floor_regret_pct"])
    ]
    cells = rows[["gpu", "fold"]].drop_duplicates()
    nums = {"cells": float(len(cells)), "below": float(len(below)), "goal": SAFE}
    sentence = (
        "The anytime floor (the least regret of a policy that stays within 1.02 x the baseline after every "
        "recurrence, knowing every expected cost) bounds zeus-plus's own guarantee, not the arena's safety goal "
        "(the 95th percentile of the final cumulative cost over the same-seed baseline's <= 1.02 on every job). "
    )
    if len(below):
        names = [
            f"{r.policy} on {r.gpu} {scope(int(r.fold))} ({r.regret_pct_mean:.2f} % < {r.anytime_floor_regret_pct:.2f} %)"
            for r in below.sort_values(["fold", "gpu"]).itertuples()
        ]
        sentence += (
            f"With the horizon unknown (simulated), {len(below)} policy result(s) meet that goal with less regret "
            f"than the floor: {'; '.join(names)}."
        )
    else:
        sentence += (
            f"With the horizon unknown (simulated), no policy that meets that goal has less regret than the floor "
            f"on any of {len(cells)} GPU x fold cells: the floor also binds the goal here, though it does not bound it."
        )
    return Finding("claims.anytime_floor", sentence, nums)


def horizon_price(summary_unknown: pd.DataFrame, summary_known: pd.DataFrame) -> list[Finding]:
    """Per GPU and fold: what not being told the horizon costs zeus-plus, split into the guarantee's and the search's.

    The anytime guarantee forces at least the floor's regret on any policy that keeps it; what the
    known-horizon zeus-plus has below the floor is the most the guarantee can explain (``budget``),
    the rest of the difference is its search's (``search``). Each finding carries a table row.
    """
    out = []
    cells = [
        (gpu, fold, g)
        for fold, _, _, rows in by_fold(summary_unknown)
        for gpu, g in rows.groupby("gpu", sort=False)
    ]
    for gpu, fold, g in cells:
        u = g.set_index("policy")
        k = summary_known[(summary_known["gpu"] == gpu) & (summary_known["fold"] == fold)].set_index("policy")
        if PLUS not in u.index or PLUS not in k.index:
            continue
        unknown, known = float(u.loc[PLUS, "regret_pct_mean"]), float(k.loc[PLUS, "regret_pct_mean"])
        floor = float(u.loc[PLUS, "anytime_floor_regret_pct"])
        if not math.isfinite(floor):
            continue
        price = unknown - known
        budget = min(max(floor - known, 0.0), max(price, 0.0))
        search = price - budget
        nums = {
            "unknown": unknown,
            "known": known,
            "floor": floor,
            "price": price,
            "budget": budget,
            "search": search,
        }
        whose = "its search's" if search > budget else "the guarantee's"
        sentence = (
            f"With the horizon unknown on {gpu} ({scope(int(fold))}, simulated), zeus-plus's regret is "
            f"{unknown:.2f} % against {known:.2f} % told the horizon: {price:.2f} points, of which the anytime "
            f"guarantee (floor {floor:.2f} %) explains at most {budget:.2f} and its search the other {search:.2f}: "
            f"mostly {whose}."
        )
        row = {
            "GPU": str(gpu),
            "scope": scope(int(fold)),
            "regret %, horizon unknown": f"{unknown:.2f}",
            "regret %, horizon known": f"{known:.2f}",
            "anytime floor %": f"{floor:.2f}",
            "price of not knowing, points": f"{price:.2f}",
            "of which the guarantee's (at most)": f"{budget:.2f}",
            "the search's": f"{search:.2f}",
            "mostly": whose,
        }
        out.append(Finding(f"claims.horizon_price.{gpu}.{scope(int(fold))}", sentence, nums, row=row))
    return out


def warm_start_goal(table: pd.DataFrame, labels: Mapping[str, str] | None = None) -> list[Finding]:
    """Per (prior, target) pair, from ``warmstart_jobs.csv``: the 30 % goal with every job and without each.

    ``pair_cut_pct``: the pair's cut of the first-20 regret over all its jobs;
    ``pair_cut_without_pct``: the same with one job left out. The goal "holds" only where it holds
    with every job left out in turn; else the finding names the jobs it rests on. ``labels``: each
    GPU's label (``projected`` for a GPU the project measured; ``simulated`` by default).
    """
    out = []
    for (src, dst), g in table.groupby(["prior_gpu", "gpu"], sort=False):
        cut = float(g["pair_cut_pct"].iloc[0])
        without = g.dropna(subset=["pair_cut_without_pct"]).set_index("workload")["pair_cut_without_pct"]
        rests_on = sorted(without.index[without < WARM_CUT])
        nums = {
            "cut_pct": cut,
            "goal": WARM_CUT,
            "jobs": float(len(g)),
            "rests_on": float(len(rests_on)),
            "without_min_pct": float(without.min()) if len(without) else float("nan"),
        }
        if cut < WARM_CUT:
            verdict = "misses the goal"
        elif rests_on:
            verdict = "meets the goal only with " + ", ".join(
                f"{w} ({without[w]:.1f} % without it)" for w in rests_on
            )
        else:
            verdict = f"meets the goal with any one job left out (least {nums['without_min_pct']:.1f} %)"
        sentence = (
            f"Warm start {src} -> {dst} ({(labels or {}).get(dst, 'simulated')}): a {cut:.1f} % cut of the "
            f"first-20 regret over {len(g)} jobs; it {verdict}."
        )
        row = {"prior -> target": f"{src} -> {dst}", "leaving one job out": verdict}
        out.append(Finding(f"claims.warm_start.{src}.{dst}", sentence, nums, row=row))
    return out


__all__ = ["anytime_floor", "horizon_price", "pairing", "warm_start_goal"]
