"""The arena's findings with the horizon unknown.

Its regret against the known horizon's, the anytime floor's share of the gap and the safe policy
of least regret (split from :mod:`analysis.report.findings.arena`, whose constants and helpers
they use).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.report.findings import Finding
from analysis.report.findings.arena import (
    BETTER,
    NON_LEARNING,
    PLUS,
    SAFE,
    ZEUS,
    by_fold,
    ci_text,
    plus_regret,
    scope_of,
)


def unknown_regret(summary_unknown: pd.DataFrame, summary_known: pd.DataFrame) -> list[Finding]:
    """Per GPU and fold: what not being told the number of recurrences costs zeus-plus in regret, and its rank then."""
    out = []
    for fold, suffix, label, rows in by_fold(summary_unknown):
        known = (
            summary_known[summary_known["fold"] == fold] if "fold" in summary_known.columns else summary_known
        )
        lab = "" if fold == 1 else f" ({label})"
        for gpu, g in rows.groupby("gpu", sort=False):
            s = g[~g["policy"].isin(NON_LEARNING)].set_index("policy")
            k = known[(known["gpu"] == gpu) & (known["policy"] == PLUS)]
            if PLUS not in s.index or ZEUS not in s.index or k.empty:
                continue
            r = s.loc[PLUS]
            best = str(s["regret_pct_mean"].idxmin())
            nums = {
                **plus_regret(s),
                "known_ratio": float(k["regret_ratio_vs_zeus"].iloc[0]),
                "known_regret": float(k["regret_pct_mean"].iloc[0]),
                "rank": float(s["regret_pct_mean"].rank(method="min")[PLUS]),
                "policies": float(len(s)),
                "best_regret": float(s.loc[best, "regret_pct_mean"]),
            }
            lead = (
                "the least of them" if best == PLUS else f"the least is {best}'s, {nums['best_regret']:.2f} %"
            )
            dearer = nums["regret"] > nums["known_regret"]
            safe_nums, safe_sentence = _safe_rank(s, best)
            nums.update(safe_nums)
            floor_nums, floor_sentence = _anytime_floor(r, nums["regret"])
            floor_row = (
                {
                    "anytime floor % (x Zeus [95 % CI])": (
                        f"{floor_nums['floor']:.2f} ({ci_text(floor_nums['floor_ratio'], floor_nums['floor_ratio_lo'], floor_nums['floor_ratio_hi'])})"
                    ),
                    f"{BETTER} x goal under the per-recurrence guarantee": floor_verdict(floor_nums),
                }
                if floor_nums
                else {}
            )
            nums.update(floor_nums)
            sentence = (
                f"With the horizon unknown on {gpu}{lab}, zeus-plus's mean regret is "
                f"{ci_text(nums['regret'], float(r['regret_pct_ci_lo']), float(r['regret_pct_ci_hi']))} % against Zeus's "
                f"{nums['zeus_regret']:.2f} %: {ci_text(nums['ratio'], nums['ratio_lo'], nums['ratio_hi'])} x "
                f"({nums['known_ratio']:.2f} x with the horizon known), rank {int(nums['rank'])} of {len(s)} learning "
                f"policies ({lead}). "
                + (
                    f"Not being told the number of recurrences costs it {nums['regret'] - nums['known_regret']:.2f} points "
                    "of regret."
                    if dearer
                    else "Not being told the number of recurrences costs it no regret here."
                )
                + floor_sentence
                + safe_sentence
            )
            row = {
                "GPU": str(gpu),
                "scope": scope_of(suffix),
                "zeus-plus regret % [95 % CI]": ci_text(
                    nums["regret"], float(r["regret_pct_ci_lo"]), float(r["regret_pct_ci_hi"])
                ),
                "x Zeus [95 % CI]": ci_text(nums["ratio"], nums["ratio_lo"], nums["ratio_hi"]),
                "x Zeus, horizon known": f"{nums['known_ratio']:.2f}",
                "rank (learning policies)": f"{int(nums['rank'])} of {len(s)}",
                "least regret": "zeus-plus" if best == PLUS else f"{best} ({nums['best_regret']:.2f} %)",
                "the least's jobs above 1.02": f"{int(nums['best_unsafe_jobs'])}",
                "zeus-plus's rank among policies within 1.02": (
                    f"{int(nums['safe_rank'])} of {int(nums['safe_policies'])}"
                    if math.isfinite(nums["safe_rank"])
                    else f"not within 1.02 ({int(nums['safe_policies'])} are)"
                ),
                **floor_row,
            }
            out.append(Finding(f"arena.unknown_regret.{gpu}{suffix}", sentence, nums, row=row))
    return out


def _anytime_floor(r: pd.Series, regret: float) -> tuple[dict[str, float], str]:
    """What the anytime guarantee itself leaves of the 0.6 x goal on one GPU (``r``: zeus-plus's summary row).

    The floor (``anytime_floor_regret_pct``, :func:`zeus_bench.studies.recurrences.anytime_floor`) is
    the least expected regret of any policy that stays within :data:`SAFE` after every recurrence,
    knowing every expected cost; its ratio to Zeus's regret carries Zeus's interval. Nothing is
    said for tables without it (version 4).
    """
    floor = float(r.get("anytime_floor_regret_pct", float("nan")))
    if not math.isfinite(floor):
        return {}, ""
    f, lo, hi = (float(r[f"anytime_floor_ratio_vs_zeus{x}"]) for x in ("", "_ci_lo", "_ci_hi"))
    nums = {"floor": floor, "floor_ratio": f, "floor_ratio_lo": lo, "floor_ratio_hi": hi}
    verdict = {
        "out of reach": f"the {BETTER} x goal is out of reach of every policy that keeps this guarantee",
        "room left": f"the guarantee itself leaves room for the {BETTER} x goal",
        "within the floor's interval": (
            f"the {BETTER} x goal is within the interval of the floor: the guarantee leaves it no room for a search"
        ),
    }[floor_verdict(nums)]
    sentence = (
        f" The per-recurrence guarantee it keeps then (within {SAFE} x the baseline after every recurrence, should a "
        "try fail; zeus-plus's own, not the arena's safety goal on the final cost) has a "
        f"floor: knowing every expected cost, such a policy has at least {floor:.2f} % regret here "
        f"({ci_text(f, lo, hi)} x Zeus's), so {verdict}"
    )
    if floor > 0.0:
        nums["over_floor"] = regret / floor
        sentence += f"; zeus-plus is at {nums['over_floor']:.1f} x the floor."
    else:
        sentence += "."
    return nums, sentence


def floor_verdict(nums: dict[str, float]) -> str:
    """The 0.6 x goal under zeus-plus's per-recurrence guarantee, from :func:`_anytime_floor`'s numbers (a table cell)."""
    if nums["floor_ratio_lo"] > BETTER:
        return "out of reach"
    return "room left" if nums["floor_ratio_hi"] < BETTER else "within the floor's interval"


def _safe_rank(s: pd.DataFrame, best: str) -> tuple[dict[str, float], str]:
    """Whether the least-regret policy kept the safety goal, and zeus-plus's rank among those that did.

    ``s``: one GPU's learning policies (by policy, zeus-plus among them). Safe: the 95th
    percentile of the paired cost ratio within :data:`SAFE` on every job (``jobs_p95_over_safe``
    0). Returns the numbers (``safe_rank`` NaN when zeus-plus is not safe) and the sentences.
    """
    safe = s[s["jobs_p95_over_safe"] == 0]["regret_pct_mean"]
    n = int(s.loc[best, "jobs_p95_over_safe"])
    nums = {
        "best_unsafe_jobs": float(n),
        "best_p95_max": float(s.loc[best, "cost_ratio_vs_baseline_p95_max"]),
        "safe_policies": float(len(safe)),
        "safe_rank": float(safe.rank(method="min")[PLUS]) if PLUS in safe.index else float("nan"),
        "best_safe_regret": float(safe.min()) if len(safe) else float("nan"),
    }
    out = ""
    if best != PLUS:
        out = (
            f" {best} exceeds {SAFE} x the baseline (95th percentile, same seed) on {n} job(s), up to "
            f"{nums['best_p95_max']:.3f}: the least regret there is bought with the safety goal."
            if n
            else f" {best} is within {SAFE} x the baseline on every job too."
        )
    if PLUS not in safe.index:
        return nums, out + f" zeus-plus is not within {SAFE} on every job here."
    first = str(safe.idxmin())
    lead = (
        "the least of them" if first == PLUS else f"the least is {first}'s, {nums['best_safe_regret']:.2f} %"
    )
    return nums, out + (
        f" Among the {len(safe)} learning policies within {SAFE} on every job, zeus-plus ranks "
        f"{int(nums['safe_rank'])} ({lead})."
    )
