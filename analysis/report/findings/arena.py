"""The arena's findings: zeus-plus's claims computed from the arena tables, with their intervals.

Each function takes rows of the ``arena_summary`` / ``arena_jobs`` tables (``zeus-bench arena``:
the default protocol, ``--horizon known``, and the same with ``--horizon unknown``) and returns
:class:`~analysis.report.findings.Finding` objects whose sentences are built from the tables'
numbers, so a goal that is missed reads as missed; "every job" is checked job by job, never on a
mean. The section that reads the folders and lays them out is :mod:`analysis.report.sections.arena`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from analysis.report.findings import Finding

PLUS = "zeus-plus"
ZEUS = "zeus"
SAFE = 1.02  # goal: 95th percentile over seeds of cost / the baseline's (same seed) <= 1.02 on every job (unknown)
BETTER = 0.6  # goal: per GPU mean regret <= 0.6 x Zeus's
FOLD_GOAL = 0.10  # goal: split 1's folds' intervals disjoint on at most this share of the (GPU, policy) pairs
NON_LEARNING = ("baseline", "max-batch", "oracle", "grid-search")  # not competitors for the rank goal


def ci_text(m: float, lo: float, hi: float, fmt: str = "{:.2f}") -> str:
    """A mean with its interval: ``m [lo, hi]``."""
    return f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def _jobs(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


FOLD_LABEL = {0: "every split's two folds pooled: the spread across splits inside the intervals",
              1: "fold 1: the judge half, constants chosen on the tune half",
              2: "fold 2: the tune half, constants chosen on the judge half"}  # fmt: skip


def scope(fold: int) -> str:
    """A fold as a table cell: ``pooled`` (fold 0: every split), ``fold 1``, ``fold 2``."""
    return "pooled" if fold == 0 else f"fold {fold}"


def scope_of(suffix: str) -> str:
    """The scope cell of a finding from its id suffix (``""`` fold 1, ``.pooled``, ``.fold2``)."""
    return (
        "fold 1"
        if not suffix
        else "pooled"
        if suffix == ".pooled"
        else f"fold {suffix.removeprefix('.fold')}"
    )


def by_fold(df: pd.DataFrame) -> list[tuple[int, str, str, pd.DataFrame]]:
    """Each fold's rows: ``(fold, id suffix, label, rows)``; fold 1's findings keep their plain ids."""
    folds = sorted(set(df["fold"])) if "fold" in df.columns else [1]
    out = []
    for f in folds:
        rows = df[df["fold"] == f] if "fold" in df.columns else df
        suffix = "" if f == 1 else ".pooled" if f == 0 else f".fold{f}"
        out.append((int(f), suffix, FOLD_LABEL.get(int(f), f"fold {f}"), rows))
    return out


def _per_fold(
    finding: Callable[[pd.DataFrame, pd.DataFrame, str, str], list[Finding]],
    summary: pd.DataFrame,
    jobs: pd.DataFrame,
) -> list[Finding]:
    """``finding(summary rows, jobs rows, id suffix, label)`` on each fold, the findings concatenated."""
    out = []
    for fold, suffix, label, fold_rows in by_fold(summary):
        fold_jobs = jobs[jobs["fold"] == fold] if "fold" in jobs.columns else jobs
        horizon = f"horizon {fold_rows['horizon'].iloc[0]}" if "horizon" in fold_rows.columns else ""
        parts = [p for p in (horizon, "" if fold == 1 else label) if p]
        out += finding(fold_rows, fold_jobs, suffix, f" ({'; '.join(parts)})" if parts else "")
    return out


def setup(summary: pd.DataFrame) -> Finding:
    """What the arena ran (one sentence): splits, folds, seeds, replicate traces, how intervals are made."""
    folds = summary[summary["fold"] > 0]
    splits = int(summary["splits"].max()) if "splits" in summary.columns else 1
    replicates = int(summary["replicates"].max()) if "replicates" in summary.columns else 0
    nums = {
        "seeds": float(summary["seeds"].max()),
        "policies": float(summary["policy"].nunique()),
        "gpus": float(summary["gpu"].nunique()),
        "jobs": float(folds[folds["fold"] == folds["fold"].min()].groupby("gpu")["jobs"].first().sum()),
        "folds": float(folds["fold"].nunique()),
        "splits": float(splits),
        "replicates": float(replicates),
        "level_pct": 95.0,
    }
    halves = " and ".join(
        f"the {h} half (fold {f})" for f, h in folds.groupby("fold")["half"].first().items()
    )
    pooled = (
        f"; rows of fold 0 pool both folds of {splits} random split(s) of the paths, the spread across splits "
        "inside their intervals"
        if (summary["fold"] == 0).any()
        else ""
    )
    level = (
        f"two-stage 95 % bootstrap intervals (the training paths by {replicates} replicate traces per fold of the "
        "first split, then the seeds)"
        if replicates >= 2
        else "95 % bootstrap intervals over seeds"
    )
    sentence = (
        f"The arena (docs/policies.md, 'The arena protocol') replays {int(nums['policies'])} policies on "
        f"{int(nums['jobs'])} jobs of {int(nums['gpus'])} GPUs, {int(nums['seeds'])} seeds each, on {halves} "
        f"of the training paths (each judged half with the constants chosen on the other half, never on itself){pooled}; "
        f"intervals are {level}, differences against Zeus are paired (same seeds, same paths); every number is "
        "simulated, the H200's projected."
    )
    return Finding("arena.setup", sentence, nums)


def safety(jobs_unknown: pd.DataFrame) -> list[Finding]:
    """Per GPU, horizon unknown: zeus-plus's largest 95th percentile of cost / the baseline's (same seed), jobs above 1.02."""
    out = []
    for fold, suffix, label, fold_rows in by_fold(jobs_unknown):
        out += _safety(fold_rows, suffix, "" if fold == 1 else f" ({label})")
    return out


def _safety(jobs_unknown: pd.DataFrame, suffix: str, label: str) -> list[Finding]:
    """:func:`safety` on one fold's rows (arena_jobs version 4: paired ratios)."""
    out = []
    for gpu, rows in jobs_unknown[jobs_unknown["policy"] == PLUS].groupby("gpu", sort=False):
        g = rows.set_index("workload")
        p95 = g["cost_ratio_vs_baseline_p95"]
        over = sorted(g.index[p95 > SAFE])
        worst = str(p95.idxmax())
        nums = {
            "p95_max": float(p95.max()),
            "p95_max_ci_lo": float(g.loc[worst, "cost_ratio_vs_baseline_p95_ci_lo"]),
            "p95_max_ci_hi": float(g.loc[worst, "cost_ratio_vs_baseline_p95_ci_hi"]),
            "seeds": float(g["seeds"].max()),
            "jobs_over": float(len(over)),
            "jobs": float(len(g)),
            "unsafe_seed_share_max": float(g["unsafe_seed_share"].max()),
            "worst_recurrences": float(g.loc[worst, "recurrences"]),
            "worst_allowance_recurrences": float((SAFE - 1.0) * g.loc[worst, "recurrences"]),
            "expected_p95_max": float(g["cost_ratio_vs_expected_baseline_p95"].max()),
            "expected_jobs_over": float((g["cost_ratio_vs_expected_baseline_p95"] > SAFE).sum()),
            "floor_max": float(g["baseline_p95"].max()),
            "goal": SAFE,
        }
        verdict = (
            f"meets the safety goal on all {len(g)} jobs"
            if not over
            else f"misses the safety goal on {len(over)} of {len(g)} jobs ({_jobs(over)})"
        )
        bound = ""
        if over:
            bound = (
                f" The bound on {worst}: {int(nums['worst_recurrences'])} recurrences give a 2 % allowance of "
                f"{nums['worst_allowance_recurrences']:.2f} of the baseline's recurrence: every probe that does not "
                "pay for itself within the job's recurrences must cost less than that in total."
            )
        bound += _probe_bound(g, over, nums)
        expected = (
            f" Against the baseline's expected cost instead (the reading before arena_jobs version 4), the largest "
            f"95th percentile is {nums['expected_p95_max']:.3f} ({int(nums['expected_jobs_over'])} jobs above 1.02), "
            f"and the baseline itself reaches {nums['floor_max']:.3f} there: the luck of the sampled paths."
        )
        row = {
            "GPU": str(gpu),
            "scope": scope_of(suffix),
            "zeus-plus": verdict,
            "largest p95 [95 % CI] (job)": f"{ci_text(nums['p95_max'], nums['p95_max_ci_lo'], nums['p95_max_ci_hi'], '{:.3f}')} ({worst})",
            "most seeds above 1.02 (a job)": f"{100 * nums['unsafe_seed_share_max']:.0f} %",
            "jobs above 1.02: probe floor above / within": (
                f"{int(nums['jobs_over_with_probe_floor_over'])} / {int(nums['jobs_over_within_probe_floor'])}"
            ),
            "largest p95 vs the baseline's expected cost (jobs above 1.02)": (
                f"{nums['expected_p95_max']:.3f} ({int(nums['expected_jobs_over'])})"
            ),
            "the baseline's own p95 vs its expected cost": f"{nums['floor_max']:.3f}",
        }
        out.append(
            Finding(
                f"arena.safety.{gpu}{suffix}",
                f"With the horizon unknown on {gpu}{label}, zeus-plus {verdict}: the largest 95th percentile over "
                f"{int(nums['seeds'])} seeds of its cumulative cost over the baseline's on the same seed is "
                f"{ci_text(nums['p95_max'], nums['p95_max_ci_lo'], nums['p95_max_ci_hi'], '{:.3f}')} ({worst}; 95 % "
                f"bootstrap interval), and at most {100 * nums['unsafe_seed_share_max']:.0f} % of a job's seeds "
                f"exceed 1.02.{bound}{expected}",
                nums,
                row=row,
            )
        )
    return out


def _probe_bound(g: pd.DataFrame, over: list[str], nums: dict[str, float]) -> str:
    """The probe floor's part of a safety finding: which unsafe jobs a policy leaving b0 can still make safe.

    Adds ``jobs_over_with_probe_floor_over`` (one dropped probe already above 1.02) and
    ``jobs_over_within_probe_floor`` to ``nums``.
    """
    probe = g["probe_floor_p95"]
    probed = [w for w in over if probe[w] > SAFE]
    free = [w for w in over if probe[w] <= SAFE]
    nums["jobs_over_with_probe_floor_over"] = float(len(probed))
    nums["jobs_over_within_probe_floor"] = float(len(free))
    nums["probe_floor_max"] = float(probe.max())
    text = ""
    if probed:
        text += (
            f" On {_jobs(probed)} b0 plus one epoch of the cheapest other batch size is already above 1.02 of the "
            f"baseline (probe floor {_jobs([f'{probe[w]:.3f}' for w in probed])}): a policy that tries another "
            "batch size there and does not find a better one cannot meet the goal."
        )
    if free:
        text += (
            f" On {_jobs(free)} the probe floor is within 1.02 "
            f"({_jobs([f'{probe[w]:.3f}' for w in free])}): the excess is zeus-plus's own exploration, which "
            "its budget (set by the horizon it assumes, or the anytime budget's credit) lets exceed the job's 2 % "
            "allowance."
        )
    return text


def plus_regret(s: pd.DataFrame) -> dict[str, float]:
    """zeus-plus's mean regret, Zeus's, and their ratio with its interval, from one GPU's summary rows (by policy)."""
    r = s.loc[PLUS]
    return {
        "regret": float(r["regret_pct_mean"]),
        "zeus_regret": float(s.loc[ZEUS, "regret_pct_mean"]),
        "ratio": float(r["regret_ratio_vs_zeus"]),
        "ratio_lo": float(r["regret_ratio_vs_zeus_ci_lo"]),
        "ratio_hi": float(r["regret_ratio_vs_zeus_ci_hi"]),
    }


def regret(summary: pd.DataFrame, jobs: pd.DataFrame) -> list[Finding]:
    """Per GPU and fold: zeus-plus's mean regret over Zeus's with its interval, the 0.6 goal, and per job."""
    return _per_fold(_regret, summary, jobs)


def _regret(summary: pd.DataFrame, jobs: pd.DataFrame, suffix: str, label: str) -> list[Finding]:
    """:func:`regret` on one fold's rows."""
    out = []
    for gpu, rows in summary.groupby("gpu", sort=False):
        s = rows.set_index("policy")
        if PLUS not in s.index:
            continue
        r = s.loc[PLUS]
        j = jobs[jobs["gpu"] == gpu]
        plus = j[j["policy"] == PLUS].set_index("workload")
        zeus = j[j["policy"] == ZEUS].set_index("workload")["regret_pct_mean"]
        per_job = plus["regret_pct_mean"] <= BETTER * zeus.reindex(plus.index)
        worse = sorted(plus.index[plus["vs_zeus"] == "worse"])
        nums = {
            **plus_regret(s),
            "jobs_ratio_met": float(per_job.sum()),
            "jobs": float(len(plus)),
            "jobs_worse": float(len(worse)),
            "jobs_better": float(r["jobs_better_than_zeus"]),
            "goal": BETTER,
        }
        if nums["ratio_hi"] <= BETTER:
            verdict = f"meets the {BETTER} x goal with 95 % confidence"
        elif nums["ratio"] <= BETTER:
            verdict = f"meets the {BETTER} x goal on the mean, but its interval reaches above it"
        else:
            verdict = f"misses the {BETTER} x goal"
        sentence = (
            f"On {gpu}{label}, zeus-plus's mean regret is {ci_text(nums['regret'], float(r['regret_pct_ci_lo']), float(r['regret_pct_ci_hi']))} % "
            f"against Zeus's {nums['zeus_regret']:.2f} %: {ci_text(nums['ratio'], nums['ratio_lo'], nums['ratio_hi'])} x, it "
            f"{verdict}. Per job the {BETTER} x holds on {int(nums['jobs_ratio_met'])} of {len(plus)}; zeus-plus is "
            f"significantly better than Zeus on {int(nums['jobs_better'])} and significantly worse on "
            f"{len(worse)} ({_jobs(worse)})."
        )
        row = {
            "GPU": str(gpu),
            "scope": scope_of(suffix),
            "zeus-plus regret % [95 % CI]": ci_text(
                nums["regret"], float(r["regret_pct_ci_lo"]), float(r["regret_pct_ci_hi"])
            ),
            "Zeus regret %": f"{nums['zeus_regret']:.2f}",
            "x Zeus [95 % CI]": ci_text(nums["ratio"], nums["ratio_lo"], nums["ratio_hi"]),
            f"{BETTER} x goal": verdict,
            f"jobs within {BETTER} x": f"{int(nums['jobs_ratio_met'])} of {len(plus)}",
            "significantly better / worse than Zeus (jobs)": f"{int(nums['jobs_better'])} / {len(worse)} ({_jobs(worse)})",
        }
        out.append(Finding(f"arena.regret.{gpu}{suffix}", sentence, nums, row=row))
    return out


def rank(summary: pd.DataFrame, jobs: pd.DataFrame) -> list[Finding]:
    """Per GPU and fold: zeus-plus's rank among the learning policies; where another wins, by how much and where."""
    return _per_fold(_rank, summary, jobs)


def _rank(summary: pd.DataFrame, jobs: pd.DataFrame, suffix: str, label: str) -> list[Finding]:
    """:func:`rank` on one fold's rows."""
    out = []
    for gpu, rows in summary.groupby("gpu", sort=False):
        s = rows[~rows["policy"].isin(NON_LEARNING)].set_index("policy")
        if PLUS not in s.index:
            continue
        best = str(s["regret_pct_mean"].idxmin())
        nums = {"rank": float(s["regret_pct_mean"].rank(method="min")[PLUS]), "policies": float(len(s))}
        if best == PLUS:
            sentence = (
                f"On {gpu}{label}, zeus-plus has the least mean regret of the {len(s)} learning policies."
            )
            lead = ""
        else:
            j = jobs[jobs["gpu"] == gpu].pivot_table(
                index="workload", columns="policy", values="regret_pct_mean"
            )
            gap = (j[PLUS] - j[best]).sort_values(ascending=False)
            nums.update(
                winner_regret=float(s.loc[best, "regret_pct_mean"]),
                plus_regret=float(s.loc[PLUS, "regret_pct_mean"]),
                gap_max=float(gap.iloc[0]),
            )
            sentence = (
                f"On {gpu}{label}, {best} has less mean regret than zeus-plus ({nums['winner_regret']:.2f} % against "
                f"{nums['plus_regret']:.2f} %; zeus-plus ranks {int(nums['rank'])} of {len(s)}); its lead comes "
                f"mostly from {gap.index[0]} ({nums['gap_max']:.2f} points of regret)."
            )
            lead = f"{gap.index[0]} ({nums['gap_max']:.2f} points)"
        row = {
            "GPU": str(gpu),
            "scope": scope_of(suffix),
            "least mean regret (learning policies)": best,
            "zeus-plus's rank": f"{int(nums['rank'])} of {len(s)}",
            "the winner's lead mostly from": lead or "-",
        }
        out.append(Finding(f"arena.rank.{gpu}{suffix}", sentence, nums, row=row))
    return out


def folds(tune_table: pd.DataFrame, judge_table: pd.DataFrame) -> list[Finding]:
    """The second fold, from the two tuning tables: constants chosen on the judge half, judged on the tune half.

    ``tune_table`` / ``judge_table``: ``python -m zeus_bench.studies.tuning`` on the tune / judge half
    (horizon known), the same grid. Per GPU: the regret ratio to Zeus that the judge half's pick
    has on the tune half, and whether the 0.6 x goal holds there.
    """
    keys = [
        c for c in ("horizon", "margin", "up_first", "noise_z", "loan", "prune") if c in judge_table.columns
    ]
    pick = judge_table[judge_table["chosen"]].iloc[0]
    first = tune_table[tune_table["chosen"]].iloc[0]
    row = tune_table
    for k in keys:
        row = row[row[k] == pick[k]]
    setting = ", ".join(f"{k} {pick[k]}" for k in keys)
    same = all(first[k] == pick[k] for k in keys)
    out = []
    for gpu in [c.removesuffix("_regret_ratio") for c in tune_table.columns if c.endswith("_regret_ratio")]:
        ratio = float(row[f"{gpu}_regret_ratio"].iloc[0])
        nums = {"ratio": ratio, "same_pick": float(same), "goal": BETTER}
        verdict = "meets" if ratio <= BETTER else "misses"
        sentence = (
            f"Second fold on {gpu}: the judge half picks {setting} ({'the same as' if same else 'not'} the tune half's "
            f"pick); on the tune half that setting's regret is {ratio:.2f} x Zeus's (tuning table, no interval), "
            f"so it {verdict} the {BETTER} x goal there."
        )
        out.append(Finding(f"arena.folds.{gpu}", sentence, nums))
    return out


def max_batch(jobs: pd.DataFrame) -> list[Finding]:
    """Per GPU: jobs where zeus-plus costs significantly more than max-batch (interval above 1)."""
    out = []
    for gpu, rows in jobs[jobs["policy"] == PLUS].groupby("gpu", sort=False):
        g = rows.set_index("workload")
        above = sorted(g.index[g["cost_ratio_vs_max_batch_ci_lo"] > 1.0])
        worst = str(g["cost_ratio_vs_max_batch_mean"].idxmax())
        nums = {"jobs_above": float(len(above)), "max_ratio": float(g["cost_ratio_vs_max_batch_mean"].max())}
        out.append(
            Finding(
                f"arena.max_batch.{gpu}",
                f"Against max-batch on {gpu}, zeus-plus costs significantly more on {len(above)} of {len(g)} jobs "
                f"({_jobs(above)}; largest mean ratio {nums['max_ratio']:.3f}, {worst}).",
                nums,
                row={
                    "GPU": str(gpu),
                    "jobs where zeus-plus costs significantly more than max-batch": f"{len(above)} of {len(g)} ({_jobs(above)})",
                    "largest mean cost / max-batch's (job)": f"{nums['max_ratio']:.3f} ({worst})",
                },
            )
        )
    return out


def _where(rows: pd.DataFrame) -> str:
    """The horizon and the folds of a table's rows, as a finding names them (``horizon known, fold 1``)."""
    horizon = (
        f"horizon {rows['horizon'].iloc[0]}" if "horizon" in rows.columns and len(rows) else "horizon known"
    )
    folds = sorted(set(rows["fold"])) if "fold" in rows.columns else [1]
    return ", ".join([horizon, *(scope(int(f)) for f in folds)])


def pl_only(jobs: pd.DataFrame) -> Finding:
    """Jobs where power-limit-only costs less than zeus-plus (mean over seeds), among multi-batch jobs."""
    p = jobs.pivot_table(index=["gpu", "workload"], columns="policy", values="cost_ratio_vs_baseline_mean")
    if "pl-only" not in p.columns or PLUS not in p.columns:
        return Finding("arena.pl_only", "", {})
    cheaper = p.index[p["pl-only"] < p[PLUS]]
    names = [f"{w} ({g}: {p.loc[(g, w), 'pl-only']:.3f} vs {p.loc[(g, w), PLUS]:.3f})" for g, w in cheaper]
    nums = {"jobs_cheaper": float(len(cheaper)), "jobs": float(len(p))}
    sentence = (
        f"Power-limit-only (JIT at b0) costs less than zeus-plus (mean over seeds; {_where(jobs)}; simulated, H200 "
        f"projected) on {len(cheaper)} of {len(p)} jobs" + (f": {_jobs(names)}." if names else ".")
    )
    return Finding("arena.pl_only", sentence, nums)


def fold_agreement_check(
    known: pd.DataFrame, unknown: pd.DataFrame | None, coverage: pd.DataFrame | None = None
) -> Finding:
    """The intervals' check on the real paths: split 1's two folds' 95 % intervals of the regret ratio to Zeus, disjoint how often.

    ``known``/``unknown``: ``arena_summary`` rows (horizon known / unknown); ``coverage``: the
    coverage study's settings (``results/policy/coverage.csv``), whose chosen row says how the
    intervals' settings were picked (on synthetic paths, not on these folds).
    """
    from zeus_bench.studies.arena_profile import fold_agreement

    nums: dict[str, float] = {}
    parts = []
    for name, summary in (("known", known), ("unknown", unknown)):
        if summary is None or summary["fold"].nunique() < 2:
            continue
        agree = fold_agreement(summary)
        nums[f"disjoint_{name}"], nums[f"pairs_{name}"] = float(len(agree.disjoint)), float(len(agree.pairs))
        shown = f" ({', '.join(f'{g} {p}' for g, p in agree.disjoint)})" if agree.disjoint else ""
        parts.append(f"{len(agree.disjoint)} of {len(agree.pairs)} with the horizon {name}{shown}")
    if not parts:
        return Finding("arena.fold_agreement", "")
    met = all(
        nums[f"disjoint_{n}"] <= FOLD_GOAL * nums[f"pairs_{n}"]
        for n in ("known", "unknown")
        if f"pairs_{n}" in nums
    )
    sentence = (
        "Coverage check (simulated): split 1's two folds judge disjoint halves of the recorded paths, so their 95 % "
        "intervals of the regret ratio to Zeus should rarely be disjoint where no constant differs by fold; they are "
        f"disjoint on {' and '.join(parts)} (goal: at most {FOLD_GOAL:.0%}: {'met' if met else 'not met'})."
    )
    if coverage is not None and coverage["chosen"].any():
        c = coverage[coverage["chosen"]].iloc[0]
        nums.update(
            replicates=float(c["replicates"]), coverage_min=float(c["coverage_min"]), coverage_mean=float(c["coverage_mean"]),
            worlds=float(c["worlds"]),
        )  # fmt: skip
        sentence += (
            f" The intervals' settings ({int(c['replicates'])} replicate traces, path draw '{c['path_draw']}') were "
            f"chosen by the coverage study on synthetic paths, never on these folds: their intervals held the "
            f"synthetic truth {c['coverage_min']:.0%} of the time in the worst of {int(c['worlds'])} worlds, "
            f"{c['coverage_mean']:.0%} on average (results/policy/coverage.csv, docs/policies.md 'Coverage study')"
            + ("." if bool(c["rule_met"]) else "; no setting reached the study's 90 % in every world.")
        )
    return Finding("arena.fold_agreement", sentence, nums)
