"""The policy arena: every policy under one protocol, with confidence intervals and paired tests.

``zeus-bench arena --traces DIR --gpu v100,a40 --policies zeus,zeus-plus,pl-only --seeds 1-50
--out DIR`` replays each policy on each job's *judged* half of the training paths
(:mod:`zeus_bench.studies.crossfit`) and writes two tables (``DIR/arena_jobs.parquet``,
``DIR/arena_summary.parquet``; schemas in :mod:`zeus_bench.studies.arena_schema`). The protocol
(``docs/policies.md``, "The arena protocol"):

* each seed samples the same training paths under every policy (common random numbers), so the
  difference against Zeus is paired seed by seed;
* a recurrence is charged as in the summary table (:func:`zeus_bench.sim.metrics.charged`); the
  baseline and max-batch (at the maximum limit) are replayed on the same seeds: cost ratios are
  paired, a seed's cumulative cost over theirs on it (:func:`replayed_total`; the ratio to the
  baseline's expected cost is kept beside); regret is against the oracle's expected cost;
* intervals are 95 % percentile-bootstrap intervals over seeds
  (:func:`zeus_bench.sim.metrics.bootstrap_ci`), the same resampled seeds for every statistic of a
  job, so paired differences and ratios stay paired;
* ``--horizon`` says what a policy is told about the number of recurrences, ``--noise`` adds
  seeded per-try noise on time and power (:mod:`zeus_bench.sim.rules`).

Every policy's seeds run in one run of the executor (:func:`~zeus_bench.sim.replay.replay_many`;
``zeus`` through its face over seeds on arrays); ``jobs`` worker processes spread the (job,
policy) tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
from zeus_bench.core.entry import check_tries
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import (
    bootstrap_ci,
    bootstrap_indices,
    charged,
    cost_ratio,
    percentile_ci,
    ratio_ci,
    regret_pct,
)
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.replay import JobModel, check_job, default_recurrences, replay_many
from zeus_bench.sim.rules import KNOWN, Horizon, check_horizon, check_noise
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, judged_half, split_job, variant
from zeus_bench.studies.recurrences import anytime_floor, probe_floor
from zeus_bench.studies.recurrences import references as job_refs
from zeus_bench.traces.jobs import JobTrace, TraceSet

log = logging.getLogger(__name__)

REFERENCES = ("baseline", "max-batch", "oracle")
"""Reference policies: not in the default arena (their expected costs are the references)."""
COMPARATOR = "zeus"
"""The policy every other is paired with (always replayed)."""
SAFE = 1.02
"""A seed is unsafe when its cumulative cost exceeds this multiple of the baseline's on the same seed."""
P_SAFE = 95.0
"""Percentile over seeds of the cost ratio the safety goal bounds."""


def default_policies() -> list[str]:
    """Every registered policy but the references (so newly registered ones join the arena)."""
    return [p for p in POLICIES if p not in REFERENCES]


Constants = tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
"""Per policy, its constant overrides: ``((policy, ((name, value), ...)), ...)`` (hashable, picklable)."""


def frozen_constants(constants: dict[str, dict[str, Any]]) -> Constants:
    """``{policy: {name: value}}`` as :data:`Constants`."""
    return tuple((p, tuple(sorted(c.items()))) for p, c in sorted(constants.items()))


@dataclass(frozen=True)
class Protocol:
    """How every policy of an arena is replayed and judged.

    ``fold`` (:data:`~zeus_bench.studies.crossfit.FOLDS`) names the cross-fitting fold: ``half`` is
    the half it judges and ``constants`` the overrides chosen on its other half
    (:meth:`for_fold` sets both).
    """

    seeds: tuple[int, ...]
    eta: float = DEFAULT_ETA
    beta: float = DEFAULT_BETA
    horizon: Horizon = KNOWN
    noise: float = 0.0
    half: str = "judge"
    fold: int = 1
    constants: Constants = field(default=())

    def for_fold(self, fold: int) -> Protocol:
        """This protocol on fold ``fold``: its judged half and its constants (crossfit.FOLD_CONSTANTS).

        Overrides already in ``constants`` (``zeus-bench arena --set``) win over the fold's.
        """
        merged = {p: dict(c) for p, c in FOLD_CONSTANTS[fold].items()}
        for p, c in self.constants:
            merged.setdefault(p, {}).update(dict(c))
        return replace(self, fold=fold, half=judged_half(fold), constants=frozen_constants(merged))

    def policy(self, name: str) -> type[Policy]:
        """The registered policy ``name`` with this protocol's overrides of its constants."""
        return variant(name, dict(dict(self.constants).get(name, ())))


def seed_costs(
    model: JobModel, policy_cls: type[Policy], protocol: Protocol, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Charged cost of every recurrence (rows: seeds, columns: recurrences) and failed flags.

    A failed recurrence (no try reached the target) is charged its tries plus the baseline's
    expected recurrence cost (:func:`~zeus_bench.sim.metrics.charged`).
    """
    seeds = list(protocol.seeds)
    spent = np.zeros((len(seeds), n))
    reached = np.zeros((len(seeds), n), dtype=bool)
    tries = replay_many(model, policy_cls, seeds, protocol.beta, n, 0, None, protocol.horizon, protocol.noise)
    cols = tries.columns
    rec = cols["recurrence"] - 1
    np.add.at(spent, (tries.seed, rec), cols["cost"])
    np.logical_or.at(reached, (tries.seed, rec), cols["reached"])
    failed = ~reached
    return charged(spent, failed.astype(float), job_refs(model).baseline), failed


def replayed_total(model: JobModel, name: str, protocol: Protocol, n: int) -> np.ndarray:
    """Per seed, the cumulative charged cost of the registered policy ``name`` (a paired reference)."""
    return seed_costs(model, get_policy(name), protocol, n)[0].sum(axis=1)


@dataclass(frozen=True)
class _Task:
    job: JobTrace
    policy: str
    protocol: Protocol
    recurrences: int
    policy_modules: tuple[str, ...] = ()


def _run(task: _Task) -> tuple[str, str, str, np.ndarray, np.ndarray]:
    """(gpu, workload, policy, per-seed cumulative cost, per-seed failed recurrences) of a task."""
    from zeus_bench.sim.policies.base import load_policy_module

    for module in task.policy_modules:
        load_policy_module(module)
    model = JobModel(task.job, Cost(task.protocol.eta))
    costs, failed = seed_costs(model, task.protocol.policy(task.policy), task.protocol, task.recurrences)
    return task.job.gpu, task.job.workload.id, task.policy, costs.sum(axis=1), failed.sum(axis=1)


@dataclass(frozen=True)
class ArenaJob:
    """A job restricted to one half of its paths, replayed as often as the whole job recurs.

    ``recurrences`` is ``2 x |B| x |P|`` of the *whole* job: leaving a single-path batch size out of
    both halves does not change how often the job recurs.
    """

    job: JobTrace
    recurrences: int


def judged_jobs(
    traces: dict[str, TraceSet], gpus: Sequence[str], workloads: Sequence[str] | None, half: str
) -> list[ArenaJob]:
    """Every (GPU, workload) job restricted to ``half`` of its training paths.

    Raises:
        ConfigError: an unknown GPU or workload, or a job whose split is empty.
    """
    jobs = []
    for gpu in gpus:
        ts = traces[gpu]
        if gpu not in ts.gpus:
            raise ts.unknown_gpu(gpu)
        ids = ts.workload_ids(gpu) if workloads is None else list(workloads)
        if not ids:
            raise ConfigError(f"no workloads on GPU {gpu!r}")
        for w in ids:
            whole = ts.job(gpu, w)
            job = split_job(whole, half)
            check_job(job)
            jobs.append(ArenaJob(job, default_recurrences(whole)))
    return jobs


def _arena_jobs(jobs: Sequence[ArenaJob | JobTrace]) -> list[ArenaJob]:
    """Plain jobs recur ``2 x |B| x |P|`` times (their own batch sizes)."""
    return [j if isinstance(j, ArenaJob) else ArenaJob(j, default_recurrences(j)) for j in jobs]


def run_arena(
    jobs: Sequence[ArenaJob | JobTrace],
    policies: Sequence[str],
    protocol: Protocol,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
    """Replay every (job, policy) on the protocol's seeds: ``{(gpu, workload, policy): (cost, failed)}``.

    Zeus is added when missing (every policy is paired with it).
    """
    names = list(dict.fromkeys([COMPARATOR, *policies]))
    for p in names:
        get_policy(p)
    if not protocol.seeds:
        raise ConfigError("no seeds given")
    check_horizon(protocol.horizon)
    check_noise(protocol.noise)
    tasks = [
        _Task(j.job, p, protocol, j.recurrences, tuple(policy_modules))
        for j in _arena_jobs(jobs)
        for p in names
    ]
    check_tries(
        sum(len(protocol.seeds) * t.recurrences for t in tasks),
        f"{len(protocol.seeds)} seed(s) x {len(names)} policies x {len(tasks) // len(names)} job(s) x their recurrences",
    )
    out: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    if jobs_n > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs_n) as pool:
            results = pool.map(_run, tasks)
            for gpu, w, p, cost, failed in results:
                out[(gpu, w, p)] = (cost, failed)
                if progress is not None:
                    progress(1)
    else:
        for t in tasks:
            gpu, w, p, cost, failed = _run(t)
            out[(gpu, w, p)] = (cost, failed)
            if progress is not None:
                progress(1)
    return out


def _ci(values: np.ndarray, idx: np.ndarray) -> tuple[float, float, float]:
    """Mean and percentile interval of ``values`` over the resampled seed indices ``idx``."""
    lo, hi = percentile_ci(values[idx].mean(axis=1))
    return float(values.mean()), lo, hi


def _verdict(lo: float, hi: float) -> str:
    """``better`` (interval below 0), ``worse`` (above 0) or ``tie``, for a difference policy - Zeus."""
    return "better" if hi < 0.0 else "worse" if lo > 0.0 else "tie"


def job_table(
    jobs: Sequence[ArenaJob | JobTrace],
    totals: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]],
    protocol: Protocol,
) -> tuple[pd.DataFrame, dict[tuple[str, str, str], np.ndarray]]:
    """The ``arena_jobs`` rows, and every (gpu, workload, policy)'s per-seed regret (%)."""
    rows = []
    regrets: dict[tuple[str, str, str], np.ndarray] = {}
    idx = bootstrap_indices(len(protocol.seeds))
    policies = list(dict.fromkeys(k[2] for k in totals))
    for aj in _arena_jobs(jobs):
        job, n = aj.job, aj.recurrences
        gpu, w = job.gpu, job.workload.id
        model = JobModel(job, Cost(protocol.eta))
        refs = job_refs(model)
        zeus_total = totals[(gpu, w, COMPARATOR)][0]
        # The paired references: the baseline and max-batch replayed on the same seeds and paths.
        base_totals = replayed_total(model, "baseline", protocol, n)
        mb_totals = replayed_total(model, "max-batch", protocol, n)
        floor_p95 = float(np.percentile(cost_ratio(base_totals, n * refs.baseline), P_SAFE))
        probe_p95 = float(np.percentile(probe_floor(model, base_totals), P_SAFE))
        floor_regret = anytime_floor(model, n, SAFE - 1.0)
        for p in policies:
            total, failed = totals[(gpu, w, p)]
            ratio_b = cost_ratio(total, base_totals)
            ratio_mb = cost_ratio(total, mb_totals)
            expected_b = cost_ratio(total, n * refs.baseline)
            regret = regret_pct(total, n * refs.oracle)
            regrets[(gpu, w, p)] = regret
            diff = regret - regret_pct(zeus_total, n * refs.oracle)
            row: dict[str, object] = {
                "gpu": gpu, "workload": w, "policy": p, "fold": protocol.fold, "half": protocol.half,
                "seeds": len(total),
                "recurrences": n, "horizon": str(protocol.horizon), "noise": float(protocol.noise),
            }  # fmt: skip
            for name, values in (
                ("cost_ratio_vs_baseline", ratio_b),
                ("cost_ratio_vs_max_batch", ratio_mb),
                ("regret_pct", regret),
                ("regret_diff_vs_zeus_pct", diff),
            ):
                m, lo, hi = _ci(values, idx)
                row[f"{name}_mean"], row[f"{name}_ci_lo"], row[f"{name}_ci_hi"] = m, lo, hi
                if name == "regret_diff_vs_zeus_pct":
                    verdict = "same" if p == COMPARATOR else _verdict(lo, hi)
            row["cost_ratio_vs_baseline_p95"] = float(np.percentile(ratio_b, P_SAFE))
            p95_ci = percentile_ci(np.percentile(ratio_b[idx], P_SAFE, axis=1))
            row["cost_ratio_vs_baseline_p95_ci_lo"], row["cost_ratio_vs_baseline_p95_ci_hi"] = p95_ci
            row["unsafe_seed_share"] = float(np.mean(ratio_b > SAFE))
            row["cost_ratio_vs_expected_baseline_mean"] = float(expected_b.mean())
            row["cost_ratio_vs_expected_baseline_p95"] = float(np.percentile(expected_b, P_SAFE))
            row["baseline_p95"] = floor_p95
            row["probe_floor_p95"] = probe_p95
            row["anytime_floor_regret_pct"] = floor_regret
            row["vs_zeus"] = verdict
            row["failed_recurrences_mean"] = float(failed.mean())
            rows.append(row)
    return pd.DataFrame(rows), regrets


def summary_table(jobs_df: pd.DataFrame, regrets: dict[tuple[str, str, str], np.ndarray]) -> pd.DataFrame:
    """The ``arena_summary`` rows: per (gpu, policy) mean regret over jobs with its interval, etc.

    The per-seed mean over a GPU's jobs is resampled over seeds (the seeds are shared by the
    jobs); the ratio to Zeus's mean regret resamples the same seeds for both.
    """
    rows = []
    for gpu, g in jobs_df.groupby("gpu", sort=False):
        workloads = list(dict.fromkeys(g["workload"]))
        zeus = np.mean([regrets[(gpu, w, COMPARATOR)] for w in workloads], axis=0)
        # The anytime floor is the job's, the same on every policy's row: its mean and ratio once per GPU.
        floor = float(g.drop_duplicates("workload")["anytime_floor_regret_pct"].mean())
        f, flo, fhi = ratio_ci(np.full(len(zeus), floor), zeus)
        for p, gp in g.groupby("policy", sort=False):
            per_seed = np.mean([regrets[(gpu, w, p)] for w in workloads], axis=0)
            m, lo, hi = bootstrap_ci(per_seed)
            r, rlo, rhi = ratio_ci(per_seed, zeus)
            worst = gp.loc[gp["regret_pct_mean"].idxmax()]
            rows.append(
                {
                    "gpu": gpu, "policy": p, "fold": int(gp["fold"].iloc[0]), "jobs": len(gp),
                    "seeds": int(gp["seeds"].iloc[0]),
                    "half": str(gp["half"].iloc[0]), "horizon": str(gp["horizon"].iloc[0]),
                    "noise": float(gp["noise"].iloc[0]),
                    "regret_pct_mean": m, "regret_pct_ci_lo": lo, "regret_pct_ci_hi": hi,
                    "regret_ratio_vs_zeus": r, "regret_ratio_vs_zeus_ci_lo": rlo, "regret_ratio_vs_zeus_ci_hi": rhi,
                    "worst_workload": str(worst["workload"]), "worst_regret_pct_mean": float(worst["regret_pct_mean"]),
                    "jobs_better_than_zeus": int((gp["vs_zeus"] == "better").sum()),
                    "jobs_worse_than_zeus": int((gp["vs_zeus"] == "worse").sum()),
                    "cost_ratio_vs_baseline_p95_max": float(gp["cost_ratio_vs_baseline_p95"].max()),
                    "jobs_p95_over_safe": int((gp["cost_ratio_vs_baseline_p95"] > SAFE).sum()),
                    "cost_ratio_vs_expected_baseline_p95_max": float(gp["cost_ratio_vs_expected_baseline_p95"].max()),
                    "jobs_baseline_p95_over_safe": int((gp["baseline_p95"] > SAFE).sum()),
                    "jobs_probe_floor_over_safe": int((gp["probe_floor_p95"] > SAFE).sum()),
                    "anytime_floor_regret_pct": floor, "anytime_floor_ratio_vs_zeus": f,
                    "anytime_floor_ratio_vs_zeus_ci_lo": flo, "anytime_floor_ratio_vs_zeus_ci_hi": fhi,
                }
            )  # fmt: skip
    out = pd.DataFrame(rows)
    out["rank"] = out.groupby("gpu")["regret_pct_mean"].rank(method="min").astype(int)
    return out


def arena(
    traces: dict[str, TraceSet],
    gpus: Sequence[str],
    policies: Sequence[str],
    protocol: Protocol,
    workloads: Sequence[str] | None = None,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the arena on one fold and build its two tables (``arena_jobs``, ``arena_summary``)."""
    jobs = judged_jobs(traces, gpus, workloads, protocol.half)
    totals = run_arena(jobs, policies, protocol, jobs_n, policy_modules, progress)
    jobs_df, regrets = job_table(jobs, totals, protocol)
    return jobs_df, summary_table(jobs_df, regrets)


def arena_folds(
    traces: dict[str, TraceSet],
    gpus: Sequence[str],
    policies: Sequence[str],
    protocol: Protocol,
    folds: Sequence[int],
    workloads: Sequence[str] | None = None,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The arena on each of ``folds`` (:meth:`Protocol.for_fold`), both tables stacked (column ``fold``)."""
    parts = [
        arena(traces, gpus, policies, protocol.for_fold(f), workloads, jobs_n, policy_modules, progress)
        for f in folds
    ]
    return (
        pd.concat([p[0] for p in parts], ignore_index=True),
        pd.concat([p[1] for p in parts], ignore_index=True),
    )
