"""The report's headline: which definition of "Zeus's savings" reproduces the paper's stated ranges.

The paper states that Zeus reduces energy by 15.3-75.8 % and training time by up to 60.6 % against
the maximum batch size at the maximum power limit, without saying over which recurrences, against
which exact baseline or on which GPU. This module computes every candidate definition from the
``sim_summary`` rows (and from the Alibaba replay's rows when present):

- recurrences: ``cum`` (every recurrence, exploration included) or ``last10`` (the last 10,
  converged);
- baseline: ``b0`` (the default batch size at the maximum limit) or ``max-batch``;
- scope: every published-trace GPU together, or one GPU;
- replay: the single-job recurrences, or the Alibaba arrival replay.

For each candidate it takes the least and largest energy saving over the jobs (workload x GPU)
and the largest time saving, and :func:`headline_finding` says which candidate reproduces the
paper's three numbers (each within :data:`MATCH_PT` of the stated value, i.e. equal at the
paper's one decimal) or, when none does, which comes nearest (least largest deviation).
Savings come from the summary tables (:mod:`zeus_bench.sim.metrics`), never recomputed here.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from analysis.report.findings import Finding
from analysis.style import gpu_notes

#: Deviation (points) under which a computed number reproduces a stated one (the paper prints one decimal).
MATCH_PT = 0.05
#: The paper's statements the headline reconciles: (metric of results/reference/paper.csv, fallback value).
TARGETS = {"energy_savings_min": 15.3, "energy_savings_max": 75.8, "time_savings_max": 60.6}
BASELINES = {"b0": "baseline", "max-batch": "max_batch"}
CANDIDATE_COLUMNS = [
    "replay",
    "scope",
    "baseline",
    "recurrences",
    "jobs",
    "energy_min_pct",
    "energy_min_job",
    "energy_max_pct",
    "energy_max_job",
    "time_max_pct",
    "time_max_job",
    "deviation_pt",
]


def paper_targets(refs: pd.DataFrame | None) -> dict[str, float]:
    """The paper's three headline numbers from the reference rows (``source == "paper"``, max-batch).

    Falls back to :data:`TARGETS` for a number the rows lack.
    """
    out = dict(TARGETS)
    if refs is not None and not refs.empty:
        paper = refs[(refs["source"] == "paper") & (refs["baseline"].astype(str) == "max-batch")]
        for r in paper.itertuples(index=False):
            if str(r.metric) in out and str(r.gpu) == "all":
                out[str(r.metric)] = float(r.value_pct)
    return out


def _job(row: pd.Series) -> str:
    return f"{row['workload']} ({str(row['gpu']).upper()})"


def candidates(
    summary: pd.DataFrame, alibaba: pd.DataFrame | None = None, targets: dict[str, float] | None = None
) -> pd.DataFrame:
    """Every candidate definition's range over jobs (columns :data:`CANDIDATE_COLUMNS`).

    Args:
        summary: ``sim_summary`` rows of the single-job replay (policy ``zeus`` is used; GPUs
            without a published Zeus trace are left out, as the paper had none).
        alibaba: ``sim_summary`` rows of the Alibaba arrival replay, if it ran.
        targets: The paper's numbers (:func:`paper_targets`); used for ``deviation_pt``, the
            largest distance of the three numbers from them.
    """
    goal = targets or TARGETS
    rows = []
    for replay, table in (("single-job recurrences", summary), ("Alibaba arrival replay", alibaba)):
        if table is None or table.empty:
            continue
        z = table[(table["policy"] == "zeus") & ~table["gpu"].map(lambda g: bool(gpu_notes(str(g))))]
        z = z.reset_index(drop=True)
        if z.empty:
            continue
        gpus = sorted(z["gpu"].astype(str).unique())
        scopes = [("all GPUs", z)] + ([(g.upper(), z[z["gpu"] == g]) for g in gpus] if len(gpus) > 1 else [])
        for scope, d in scopes:
            for baseline, ref in BASELINES.items():
                for recs in ("cum", "last10"):
                    e = d[f"energy_savings_vs_{ref}_{recs}_pct_mean"].astype(float)
                    t = d[f"time_savings_vs_{ref}_{recs}_pct_mean"].astype(float)
                    if e.isna().all() or t.isna().all():
                        continue
                    lo, hi, tm = d.loc[e.idxmin()], d.loc[e.idxmax()], d.loc[t.idxmax()]
                    values = (float(e.min()), float(e.max()), float(t.max()))
                    dev = max(abs(v - goal[k]) for v, k in zip(values, TARGETS, strict=True))
                    spans = (values[0], _job(lo), values[1], _job(hi), values[2], _job(tm))
                    rows.append((replay, scope, baseline, recs, len(d), *spans, dev))
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def _definition(r: pd.Series) -> str:
    recs = "all recurrences" if r["recurrences"] == "cum" else "the last 10 recurrences"
    return f"{r['replay']}, {recs}, against {r['baseline']}, {r['scope']}"


def headline_finding(cands: pd.DataFrame, targets: dict[str, float] | None = None) -> Finding:
    """Which candidate reproduces the paper's energy range and time saving, or which comes nearest."""
    goal = targets or TARGETS
    stated = (
        f"{goal['energy_savings_min']:g}-{goal['energy_savings_max']:g} % energy and up to "
        f"{goal['time_savings_max']:g} % time"
    )
    if cands.empty:
        return Finding(
            "headline.reconcile",
            f"No Zeus replay to compare with the paper's {stated}.",
            {f"paper.{k}": float(v) for k, v in goal.items()},
        )
    exact = cands[cands["deviation_pt"] < MATCH_PT]
    energy_ok = cands[
        ((cands["energy_min_pct"] - goal["energy_savings_min"]).abs() < MATCH_PT)
        & ((cands["energy_max_pct"] - goal["energy_savings_max"]).abs() < MATCH_PT)
    ]
    time_ok = cands[(cands["time_max_pct"] - goal["time_savings_max"]).abs() < MATCH_PT]
    best = cands.loc[cands["deviation_pt"].idxmin()]
    numbers = {
        **{f"paper.{k}": float(v) for k, v in goal.items()},
        "match_pt": MATCH_PT,
        "last_n": 10,
        "candidates": len(cands),
        "exact": len(exact),
        "energy_matches": len(energy_ok),
        "time_matches": len(time_ok),
        "nearest.energy_min": float(best["energy_min_pct"]),
        "nearest.energy_max": float(best["energy_max_pct"]),
        "nearest.time_max": float(best["time_max_pct"]),
        "nearest.deviation": float(best["deviation_pt"]),
    }
    got = (
        f"{best['energy_min_pct']:.1f} % ({best['energy_min_job']}) to {best['energy_max_pct']:.1f} % "
        f"({best['energy_max_job']}) energy and up to {best['time_max_pct']:.1f} % time ({best['time_max_job']})"
    )
    if len(exact):
        sentence = (
            f"Of {len(cands)} candidate definitions of Zeus's savings, {len(exact)} reproduce the paper's {stated} "
            f"(each number within {MATCH_PT:g} point): {'; '.join(_definition(r) for _, r in exact.iterrows())}."
        )
    else:
        sentence = (
            f"None of {len(cands)} candidate definitions of Zeus's savings reproduces the paper's {stated} "
            f"(each number within {MATCH_PT:g} point). Nearest: {_definition(best)}, {got}, "
            f"{best['deviation_pt']:.1f} points from the farthest stated number."
        )
        for label, ok in (("energy range", energy_ok), ("time saving", time_ok)):
            if len(ok):
                sentence += f" The {label} alone is reproduced by {'; '.join(_definition(r) for _, r in ok.iterrows())}."
    return Finding("headline.reconcile", sentence, numbers)


def _with_job(values: pd.Series, jobs: pd.Series) -> list[str]:
    return [f"{v:.1f} % ({j})" for v, j in zip(values, jobs, strict=True)]


def candidates_table(cands: pd.DataFrame) -> pd.DataFrame:
    """The candidates as the report prints them (percentages with one decimal), nearest first."""
    d = cands.sort_values("deviation_pt", kind="stable")
    return pd.DataFrame(
        {
            "replay": d["replay"],
            "GPUs": d["scope"],
            "against": d["baseline"],
            "recurrences": d["recurrences"].map({"cum": "all", "last10": "last 10"}),
            "energy saving, least (job)": _with_job(d["energy_min_pct"], d["energy_min_job"]),
            "energy saving, largest (job)": _with_job(d["energy_max_pct"], d["energy_max_job"]),
            "time saving, largest (job)": _with_job(d["time_max_pct"], d["time_max_job"]),
            "largest deviation (points)": d["deviation_pt"].map(lambda v: f"{v:.1f}"),
        }
    )


def headline_lines(
    summary: pd.DataFrame | None, alibaba: pd.DataFrame | None, refs: pd.DataFrame | None
) -> tuple[list[Finding], pd.DataFrame]:
    """The headline's finding and the candidates table the report prints below it."""
    if summary is None:
        return [], pd.DataFrame(columns=CANDIDATE_COLUMNS)
    goal = paper_targets(refs)
    cands = candidates(summary, alibaba, goal)
    return [headline_finding(cands, goal)], candidates_table(cands)


def read_alibaba_summaries(paths: Iterable[str]) -> pd.DataFrame | None:
    """The Alibaba replay's summary tables (CSV), concatenated; None when there are none."""
    frames = [pd.read_csv(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else None
