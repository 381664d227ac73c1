"""The zeus-plus study: Zeus against zeus-plus per job, drift recovery, cross-GPU warm start.

``zeus-bench study --arena results/policy/arena/known --traces GPU=DIR ... --seeds 1-10 --out-dir
results/policy`` (:mod:`zeus_bench.cli.study`) writes six tables (CSV, documented in
``results/README.md``'s policy section):

* ``comparison.csv``, regenerated from the arena (:mod:`zeus_bench.studies.arena`): the arena's jobs
  (fold 1: the judged half of the training paths), seeds, eta, beta and horizon, replayed by the
  arena's own :func:`~zeus_bench.studies.arena_protocol.seed_costs`, and checked against the arena's table
  (:func:`check_against_arena`: every mean the same). Per (gpu, workload, policy): cumulative cost over the baseline's (b0 at the
  maximum limit) and over max-batch's, each replayed on the same seed (paired, as in the arena), regret against the
  oracle (cumulative cost over the oracle's expected cost, minus 1, in %), each mean and std over seeds, and failed
  recurrences.
* ``curves.csv``, per (gpu, workload, policy, recurrence): cumulative regret (%) so far, mean and
  10th/90th percentiles over seeds.
* ``drift.csv``, per (gpu, workload, scenario, epoch factor, policy): recurrences after the
  change (after the end of a morph) until the policy's mean cost over seeds, averaged over 5
  recurrences, is back within 5 % of the new oracle's (empty: not within the horizon), and the
  cost after the change over the drifted oracle's. Scenarios (:func:`zeus_bench.sim.scenarios.drift.scenario`):
  the oracle batch size's epochs grow 1.5x or 2x at mid-horizon (step) or over 20 recurrences
  (morph), or the whole convergence curve tilts by that factor over 20 recurrences (tilt, the
  neutral gradual drift). Policies: Zeus, Zeus with window 10, zeus-plus and sw-ts.
* ``drift_curves.csv``, per (gpu, workload, scenario, epoch factor, policy, ``since_change``: recurrences
  from the change): mean cost over seeds over the drifted oracle's.
* ``warmstart.csv``, per (prior gpu, gpu, workload): zeus-plus's regret over the first 20
  recurrences and its mean cost over the last 20 (steady state), cold and warm; the prior comes
  from the tries a cold zeus-plus replay on the prior GPU observed (one per seed).
* ``warmstart_jobs.csv`` (schema ``warmstart_jobs``, :mod:`zeus_bench.studies.warmjobs`): per job, the
  paired warm - cold regret with its bootstrap interval, and each pair's cut with and without it.

Every replay is the simulator's own (:func:`zeus_bench.sim.replay.replay`), eta and beta the
defaults of :mod:`zeus_bench.core.cost` unless given, recurrences ``2 x |B| x |P|`` of the whole job;
ratios, regret and the charge of a failed recurrence come from :mod:`zeus_bench.sim.metrics`, as
in the summary table. The drift and warm-start experiments replay every training path (no
constant is chosen on them; docs/policies.md says so beside their numbers).
"""

from __future__ import annotations

import itertools
import logging
import sys
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_COST, Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.core.progress import Progress
from zeus_bench.sim.metrics import cost_ratio, regret_pct
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import JobModel, default_recurrences, replay_drifts
from zeus_bench.sim.scenarios.drift import SCENARIOS, Drift, oracle_cost_by_recurrence, scenario
from zeus_bench.sim.scenarios.warmstart import PriorReplays
from zeus_bench.studies.arena_protocol import ArenaJob, Protocol, policies_seed_costs
from zeus_bench.studies.recurrences import references, tries_costs
from zeus_bench.studies.warmjobs import EARLY, WarmCosts, warm_job_costs
from zeus_bench.traces.jobs import JobTrace, TraceSet

log = logging.getLogger(__name__)

POLICIES = ("zeus", "zeus-plus")
PAIRED = {"baseline": "baseline", "max_batch": "max-batch"}
"""comparison.csv's ratio columns and the reference policy replayed on the same seeds for each."""
RECOVERY_WITHIN = 0.05  # "back within 5 % of the new oracle cost" (the goal)
RECOVERY_SPAN = 5  # recurrences averaged when testing recovery
DRIFT_FACTORS = (1.5, 2.0)  # epochs of the old optimum after the change, relative to before
DRIFT_WINDOW = 10  # Zeus's window in the drift experiment
MORPH_RAMP = 20
DRIFT_RUNS = (
    ("zeus", "zeus", 0),
    (f"zeus-window{DRIFT_WINDOW}", "zeus", DRIFT_WINDOW),
    ("zeus-plus", "zeus-plus", 0),
    ("sw-ts", "sw-ts", 0),
)
"""The drift experiment's runs: (label, policy, Zeus's window)."""


#: What :func:`recurrence_costs` returned for one run without drift or window, by (gpu, workload,
#: policy, seeds, cost, beta, recurrences): :func:`compare` records its runs, :func:`warmstart_study`
#: reuses the cold ones (the same replays) instead of replaying them again.
Runs = dict[tuple[str, str, str, tuple[int, ...], Cost, float, int], tuple[np.ndarray, np.ndarray]]


def compare(
    jobs: Mapping[str, Sequence[JobTrace | ArenaJob]],
    seeds: Sequence[int],
    cost: Cost = DEFAULT_COST,
    beta: float = DEFAULT_BETA,
    runs: Runs | None = None,
    protocol: Protocol | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``comparison`` and ``curves`` tables for every job and policy.

    ``jobs`` are whole jobs or the arena's (:class:`~zeus_bench.studies.arena_protocol.ArenaJob`: one half of
    the paths, recurring as often as the whole job); every run is the arena's
    :func:`~zeus_bench.studies.arena_protocol.seed_costs` under ``protocol`` (default: ``seeds``, ``cost``'s eta,
    ``beta``, horizon known), a job's references and policies in one walk
    (:func:`~zeus_bench.studies.arena_protocol.policies_seed_costs`). Runs of whole jobs are also
    kept in ``runs`` (the warm start reuses them).
    """
    protocol = Protocol(tuple(seeds), cost.eta, beta) if protocol is None else protocol
    seeds, cost, beta = protocol.seeds, Cost(protocol.eta), protocol.beta
    rows, curves = [], []
    progress = Progress("study: jobs compared", sum(len(js) for js in jobs.values()), logger=log)
    for gpu, js in jobs.items():
        for item in js:
            job, n = (
                (item.job, item.recurrences)
                if isinstance(item, ArenaJob)
                else (item, default_recurrences(item))
            )
            model = JobModel(job, cost)
            refs = references(model)
            # the references and the policies in one walk (each run's rows its own replay's)
            classes = [get_policy(p) for p in PAIRED.values()] + [protocol.policy(name) for name in POLICIES]
            replayed = policies_seed_costs(model, classes, protocol, n)
            paired = {c: replayed[k][0].sum(axis=1) for k, c in enumerate(PAIRED)}
            for name, (costs, failed) in zip(POLICIES, replayed[len(PAIRED) :], strict=True):
                if runs is not None and not isinstance(item, ArenaJob):
                    runs[(gpu, job.workload.id, name, tuple(seeds), cost, beta, n)] = (costs, failed)
                total = costs.sum(axis=1)
                row = {
                    "gpu": gpu,
                    "workload": job.workload.id,
                    "policy": name,
                    "seeds": len(seeds),
                    "recurrences": n,
                }
                for col, ref in paired.items():
                    ratio = cost_ratio(total, ref)
                    row[f"cost_ratio_vs_{col}_cum_mean"] = ratio.mean()
                    row[f"cost_ratio_vs_{col}_cum_std"] = ratio.std()
                regret = regret_pct(total, n * refs.oracle)
                row["regret_vs_oracle_cum_pct_mean"] = regret.mean()
                row["regret_vs_oracle_cum_pct_std"] = regret.std()
                row["failed_recurrences_mean"] = failed.sum(axis=1).mean()
                rows.append(row)
                t = np.arange(1, n + 1)
                cum = regret_pct(np.cumsum(costs, axis=1), t * refs.oracle)
                curves.append(
                    pd.DataFrame(
                        {
                            "gpu": gpu,
                            "workload": job.workload.id,
                            "policy": name,
                            "recurrence": t,
                            "regret_pct_mean": cum.mean(axis=0),
                            "regret_pct_p10": np.percentile(cum, 10, axis=0),
                            "regret_pct_p90": np.percentile(cum, 90, axis=0),
                        }
                    )
                )
            progress.done(1, f"{gpu} {job.workload.id}")
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


#: comparison.csv's mean columns and the arena_jobs columns they must equal.
ARENA_COLUMNS = {
    "cost_ratio_vs_baseline_cum_mean": "cost_ratio_vs_baseline_mean",
    "cost_ratio_vs_max_batch_cum_mean": "cost_ratio_vs_max_batch_mean",
    "regret_vs_oracle_cum_pct_mean": "regret_pct_mean",
    "failed_recurrences_mean": "failed_recurrences_mean",
}


def check_against_arena(comparison: pd.DataFrame, arena_jobs: pd.DataFrame, where: str = "arena") -> None:
    """Every (gpu, workload, policy) mean of ``comparison`` equals the arena's (fold 1, relative 1e-9).

    Raises:
        ConfigError: a row missing from the arena, or a mean that differs (naming the row and column).
    """
    arena = arena_jobs[arena_jobs["fold"] == 1].set_index(["gpu", "workload", "policy"])
    for row in comparison.itertuples(index=False):
        key = (row.gpu, row.workload, row.policy)
        if key not in arena.index:
            raise ConfigError(
                f"{where}: no fold-1 row for {'/'.join(key)} (run the arena on the study's jobs)"
            )
        if int(arena.loc[key, "seeds"]) != int(row.seeds):
            raise ConfigError(
                f"{where}: {'/'.join(key)} has {arena.loc[key, 'seeds']} seeds, the study {row.seeds}"
            )
        for ours, theirs in ARENA_COLUMNS.items():
            a, b = float(getattr(row, ours)), float(arena.loc[key, theirs])
            if not np.isclose(a, b, rtol=1e-9, atol=1e-12):
                raise ConfigError(
                    f"{where}: {'/'.join(key)} {theirs} is {b!r}, the study's replay gives {a!r}"
                )


def recovery(mean_cost: np.ndarray, oracle: np.ndarray, at: int) -> float:
    """Recurrences from ``at`` until the policy is back near the oracle (NaN: never).

    Back: the mean cost over the next :data:`RECOVERY_SPAN` recurrences is within
    :data:`RECOVERY_WITHIN` of the oracle's over the same recurrences.
    """
    n = len(mean_cost)
    for r in range(at, n - RECOVERY_SPAN + 2):
        span = slice(r - 1, r - 1 + RECOVERY_SPAN)
        if mean_cost[span].mean() <= (1.0 + RECOVERY_WITHIN) * oracle[span].mean():
            return float(r - at)
    return float("nan")


def drift_study(
    jobs: dict[str, list[JobTrace]], seeds: Sequence[int], cost: Cost, beta: float, n_jobs: int = 1
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Recovery after every drift scenario (:data:`~zeus_bench.sim.scenarios.drift.SCENARIOS`) of every multi-limit job.

    ``n_jobs`` > 1 replays the jobs in that many processes (a job's replays in one), the rows in
    the same order and equal to one process's.
    """
    tasks = [(gpu, job, tuple(seeds), cost, beta) for gpu, js in jobs.items() for job in js]
    per_job = len(SCENARIOS) * len(DRIFT_FACTORS) * len(DRIFT_RUNS)
    progress = Progress("study: drift replays", len(tasks) * per_job, logger=log)
    rows: list[dict[str, object]] = []
    curves: list[pd.DataFrame] = []

    def collect(done: Iterable[tuple[list[dict[str, object]], list[pd.DataFrame]]]) -> None:
        for (gpu, job, *_), (job_rows, job_curves) in zip(tasks, done, strict=True):
            rows.extend(job_rows)
            curves.extend(job_curves)
            progress.done(per_job, f"{gpu} {job.workload.id}")

    if n_jobs > 1 and len(tasks) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(n_jobs, len(tasks))) as pool:
            collect(pool.map(_drift_job, tasks))
    else:
        collect(map(_drift_job, tasks))
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


def _drift_job(
    task: tuple[str, JobTrace, tuple[int, ...], Cost, float],
) -> tuple[list[dict[str, object]], list[pd.DataFrame]]:
    """One job's drift rows and curves (every scenario, factor and run of :func:`drift_study`)."""
    gpu, job, seeds, cost, beta = task
    rows: list[dict[str, object]] = []
    curves: list[pd.DataFrame] = []
    model = JobModel(job, cost)
    n = default_recurrences(job)
    at = n // 2
    scenarios = list(itertools.product(SCENARIOS, DRIFT_FACTORS))
    drifts = [Drift(scenario(job, cost, kind, at, factor, MORPH_RAMP), job) for kind, factor in scenarios]
    # every run under every scenario in one walk of the executor (each replay as its own)
    runs = replay_drifts(
        model, [(get_policy(name), window) for _, name, window in DRIFT_RUNS], seeds, drifts, beta, n
    )
    for g, ((kind, factor), drift) in enumerate(zip(scenarios, drifts, strict=True)):
        oracle = oracle_cost_by_recurrence(job, cost, drift, n)
        for (label, _, _), tries in zip(DRIFT_RUNS, runs, strict=True):
            costs, _ = tries_costs(model, tries[g], n)
            mean = costs.mean(axis=0)
            after = slice(at - 1, n)
            rows.append(
                {
                    "gpu": gpu,
                    "workload": job.workload.id,
                    "scenario": kind,
                    "epoch_factor": factor,
                    "policy": label,
                    "change_at": at,
                    "recurrences": n,
                    "recovery_recurrences": recovery(mean, oracle, at if kind == "step" else at + MORPH_RAMP),
                    "cost_after_change_vs_oracle": float(mean[after].sum() / oracle[after].sum()),
                }
            )
            curves.append(
                pd.DataFrame(
                    {
                        "gpu": gpu,
                        "workload": job.workload.id,
                        "scenario": kind,
                        "epoch_factor": factor,
                        "policy": label,
                        "since_change": np.arange(1, n + 1) - at,
                        "cost_vs_oracle_mean": mean / oracle,
                    }
                )
            )
    return rows, curves


def warmstart_study(
    sets: dict[str, TraceSet],
    pairs: Sequence[tuple[str, str]],
    seeds: Sequence[int],
    cost: Cost,
    beta: float,
    workloads: set[str] | None = None,
    runs: Runs | None = None,
    warm_runs: dict[tuple[str, str, str], WarmCosts] | None = None,
) -> pd.DataFrame:
    """zeus-plus cold and warm-started from another GPU's observed tries, per job both GPUs have.

    The prior of seed ``s`` comes from a cold zeus-plus replay on the prior GPU
    (:func:`zeus_bench.studies.warmjobs.warm_job_costs`). A cold run already in ``runs``
    (:func:`compare`'s, the same replay) is not replayed again; each job's costs are also kept in
    ``warm_runs`` (for :func:`zeus_bench.studies.warmjobs.jobs_table`).
    """
    rows = []
    todo = [
        (src, dst, w)
        for src, dst in pairs
        for w in sets[dst].workload_ids(dst)
        if w in sets[src].workload_ids(src) and (workloads is None or w in workloads)
    ]
    progress = Progress("study: warm-start jobs", len(todo), logger=log)
    replays: PriorReplays = {}  # a prior GPU's job replayed once for all its targets
    for src, dst, w in todo:
        job = sets[dst].job(dst, w)
        model = JobModel(job, cost)
        n = default_recurrences(job)
        key = (dst, w, "zeus-plus", tuple(seeds), cost, beta, n)
        cold = runs[key][0] if runs is not None and key in runs else None
        c = warm_job_costs(model, sets[src], src, seeds, beta, cold, replays)
        if warm_runs is not None:
            warm_runs[(src, dst, w)] = c
        row: dict[str, object] = {"prior_gpu": src, "gpu": dst, "workload": w, "recurrences": n}
        for label, costs in (("cold", c.cold), ("warm", c.warm)):
            k = min(EARLY, n)
            row[f"regret_first{EARLY}_pct_{label}"] = regret_pct(
                costs[:, :k].sum(axis=1).mean(), k * c.oracle
            )
            row[f"cost_last{EARLY}_vs_oracle_{label}"] = costs[:, -k:].sum(axis=1).mean() / (k * c.oracle)
        rows.append(row)
        progress.done(1, f"{src} -> {dst} {w}")
    return pd.DataFrame(rows)


if __name__ == "__main__":  # the old entry point: say where the command went, never run silently
    print("python -m zeus_bench.studies.study: moved to `zeus-bench study` (same options)", file=sys.stderr)
    raise SystemExit(2)
