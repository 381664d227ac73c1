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
import math
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
    charged,
    cost_ratio,
    percentile_ci,
    regret_pct,
    two_stage_resamples,
)
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.replay import JobModel, check_job, default_recurrences, replay_many
from zeus_bench.sim.rules import KNOWN, Horizon, check_horizon, check_noise
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, judged_half, replicate_job, split_job, variant
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
    (:meth:`for_fold` sets both); ``split`` the split of the paths
    (:func:`~zeus_bench.studies.crossfit.path_halves`). ``replicates`` replicate traces
    (:func:`~zeus_bench.studies.crossfit.replicate_job`) are replayed on the first
    ``replicate_seeds`` seeds each (the path level of the intervals; 0: seeds only).
    ``recurrences``: replay every job this many times (None: ``2 x |B| x |P|`` of the whole job).
    """

    seeds: tuple[int, ...]
    eta: float = DEFAULT_ETA
    beta: float = DEFAULT_BETA
    horizon: Horizon = KNOWN
    noise: float = 0.0
    half: str = "judge"
    fold: int = 1
    constants: Constants = field(default=())
    split: int = 1
    replicates: int = 0
    replicate_seeds: int = 1
    recurrences: int | None = None

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
class Draws:
    """One (job, policy)'s replays under a protocol: on the recorded paths and on replicate traces.

    ``recorded``/``failed``: per seed, the cumulative charged cost and the failed recurrences on the
    judged half's recorded paths; ``replicates``: shape ``(R, S)``, the cumulative charged cost on
    each replicate trace and seed; ``oracle``: shape ``(R,)``, each replicate's expected oracle
    recurrence cost (its regret's reference).
    """

    recorded: np.ndarray
    failed: np.ndarray
    replicates: np.ndarray = field(default_factory=lambda: np.zeros((0, 1)))
    oracle: np.ndarray = field(default_factory=lambda: np.zeros(0))


def replay_draws(job: JobTrace, n: int, policy_cls: type[Policy], protocol: Protocol) -> Draws:
    """Replay ``policy_cls`` on the job's recorded paths (every seed) and its replicate traces."""
    costs, failed = seed_costs(JobModel(job, Cost(protocol.eta)), policy_cls, protocol, n)
    reps, oracle = [], []
    few = replace(protocol, seeds=protocol.seeds[: protocol.replicate_seeds])
    for r in range(protocol.replicates):
        model = JobModel(replicate_job(job, protocol.split, protocol.fold, r), Cost(protocol.eta))
        reps.append(seed_costs(model, policy_cls, few, n)[0].sum(axis=1))
        oracle.append(job_refs(model).oracle)
    width = len(few.seeds)
    return Draws(
        costs.sum(axis=1),
        failed.sum(axis=1),
        np.array(reps).reshape(len(reps), width),
        np.array(oracle, dtype=float),
    )


PAIRED = ("baseline", "max-batch")
"""The references replayed on the same seeds, paths and replicates as every policy (paired ratios)."""


@dataclass(frozen=True)
class _Task:
    job: JobTrace
    policy: str
    protocol: Protocol
    recurrences: int
    policy_modules: tuple[str, ...] = ()


def _run(task: _Task) -> tuple[str, str, str, Draws]:
    """(gpu, workload, policy, its draws) of a task."""
    from zeus_bench.sim.policies.base import load_policy_module

    for module in task.policy_modules:
        load_policy_module(module)
    cls = task.protocol.policy(task.policy)
    return (
        task.job.gpu,
        task.job.workload.id,
        task.policy,
        replay_draws(task.job, task.recurrences, cls, task.protocol),
    )


@dataclass(frozen=True)
class ArenaJob:
    """A job restricted to one half of its paths, replayed as often as the whole job recurs.

    ``recurrences`` is ``2 x |B| x |P|`` of the *whole* job: leaving a single-path batch size out of
    both halves does not change how often the job recurs.
    """

    job: JobTrace
    recurrences: int


def judged_jobs(
    traces: dict[str, TraceSet],
    gpus: Sequence[str],
    workloads: Sequence[str] | None,
    half: str,
    split: int = 1,
    recurrences: int | None = None,
) -> list[ArenaJob]:
    """Every (GPU, workload) job restricted to ``half`` of its training paths (of split ``split``).

    ``recurrences``: replay each job this many times (None: ``2 x |B| x |P|`` of the whole job).

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
            job = split_job(whole, half, split)
            check_job(job)
            jobs.append(ArenaJob(job, recurrences or default_recurrences(whole)))
    return jobs


def _arena_jobs(jobs: Sequence[ArenaJob | JobTrace]) -> list[ArenaJob]:
    """Plain jobs recur ``2 x |B| x |P|`` times (their own batch sizes)."""
    return [j if isinstance(j, ArenaJob) else ArenaJob(j, default_recurrences(j)) for j in jobs]


class Runs(dict[tuple[str, str, str], Draws]):
    """``{(gpu, workload, policy): draws}`` of one (split, fold); ``policies``: those asked for (rows)."""

    policies: tuple[str, ...] = ()


def run_arena(
    jobs: Sequence[ArenaJob | JobTrace],
    policies: Sequence[str],
    protocol: Protocol,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> Runs:
    """Replay every (job, policy) on the protocol's seeds and replicates.

    Zeus is added when missing (every policy is paired with it), and so are the paired references
    (:data:`PAIRED`, the ratios' denominators).
    """
    names = list(dict.fromkeys([COMPARATOR, *policies, *PAIRED]))
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
    out = Runs()
    out.policies = tuple(n for n in names if n not in PAIRED or n in policies)
    if jobs_n > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs_n) as pool:
            for gpu, w, p, draws in pool.map(_run, tasks):
                out[(gpu, w, p)] = draws
                if progress is not None:
                    progress(1)
    else:
        for t in tasks:
            gpu, w, p, draws = _run(t)
            out[(gpu, w, p)] = draws
            if progress is not None:
                progress(1)
    return out


def _as_draws(value: Draws | tuple[np.ndarray, np.ndarray]) -> Draws:
    """A :class:`Draws`, or ``(per-seed cost, failed)`` on the recorded paths alone."""
    return value if isinstance(value, Draws) else Draws(np.asarray(value[0]), np.asarray(value[1]))


Pair = tuple[np.ndarray, np.ndarray]
"""A per-replay quantity: ``(recorded (N,), replicates (R, S))``."""


@dataclass
class Part:
    """One (split, fold) of one job: its per-replay quantities per policy and its floors."""

    split: int
    fold: int
    values: dict[str, dict[str, Pair]]
    floors: dict[str, float]


def _verdict(lo: float, hi: float) -> str:
    """``better`` (interval below 0), ``worse`` (above 0) or ``tie``, for a difference policy - Zeus."""
    return "better" if hi < 0.0 else "worse" if lo > 0.0 else "tie"


def _resamples(parts: Sequence[Sequence[Pair]]) -> np.ndarray:
    """Two-stage resamples (quantities x draws x seeds) of each part, the parts' draws concatenated.

    ``parts[j][q]`` is quantity ``q`` of part ``j``; over several parts (splits and folds) every
    part's draws are kept, each around its own estimate: the spread across splits is inside.
    """
    out = []
    for quantities in parts:
        rec = np.stack([q[0] for q in quantities])
        reps = np.stack([q[1] for q in quantities])
        out.append(two_stage_resamples(rec, reps))
    return np.concatenate(out, axis=1)


def _point(parts: Sequence[Sequence[Pair]], q: int) -> float:
    """The estimate of quantity ``q``: its mean over the recorded replays of every part."""
    return float(np.mean([p[q][0].mean() for p in parts]))


QUANTITIES = (
    "cost_ratio_vs_baseline",
    "cost_ratio_vs_max_batch",
    "regret_pct",
    "regret_diff_vs_zeus_pct",
)
"""The per-replay quantities of ``arena_jobs`` reported as a mean with its interval."""


def path_scale(job: JobTrace) -> float:
    """``sqrt(n / (n - 1))``, ``n`` the median judged paths of a batch size: the path level's correction.

    A bootstrap over ``n`` values estimates the variance of their mean ``(n - 1) / n`` too low (with
    2-5 paths per batch size, by a factor 0.5-0.8); the replicates' deviations are scaled by this
    factor so that their variance is unbiased (a rescaled bootstrap, as Rao and Wu's for few units).
    """
    n = float(np.median([len(t) for t in job.target_epochs]))
    return math.sqrt(n / (n - 1.0)) if n > 1.0 else 1.0


def _scaled(rep: np.ndarray, factor: float) -> np.ndarray:
    """Replicate values (R, S) with their deviations from the replicates' mean scaled by ``factor``."""
    if rep.shape[0] < 2 or factor == 1.0:
        return rep
    mean = rep.mean(axis=0, keepdims=True)
    return mean + factor * (rep - mean)  # type: ignore[no-any-return]


def _quantities(
    draws: Draws, zeus: Draws, base: Draws, mb: Draws, n: int, refs: Any, scale: float = 1.0
) -> dict[str, Pair]:
    """Per replay (recorded seeds, replicate traces): the quantities of a job's row, paired.

    The interval quantities' replicate deviations are scaled by ``scale`` (:func:`path_scale`);
    ``better`` and ``replay_ratio`` (the paired cost ratio to the baseline) keep every replay as it is.
    """
    out = _raw_quantities(draws, zeus, base, mb, n, refs)
    for q in QUANTITIES:
        rec, rep = out[q]
        out[q] = (rec, _scaled(rep, scale))
    return out


def _raw_quantities(draws: Draws, zeus: Draws, base: Draws, mb: Draws, n: int, refs: Any) -> dict[str, Pair]:
    """The quantities of :func:`_quantities`, unscaled."""
    reg = (
        regret_pct(draws.recorded, n * refs.oracle),
        regret_pct(draws.replicates, n * draws.oracle[:, None]),
    )
    zreg = (regret_pct(zeus.recorded, n * refs.oracle), regret_pct(zeus.replicates, n * zeus.oracle[:, None]))
    return {
        "cost_ratio_vs_baseline": (
            cost_ratio(draws.recorded, base.recorded), cost_ratio(draws.replicates, base.replicates)
        ),
        "cost_ratio_vs_max_batch": (
            cost_ratio(draws.recorded, mb.recorded), cost_ratio(draws.replicates, mb.replicates)
        ),
        "regret_pct": reg,
        "regret_diff_vs_zeus_pct": (reg[0] - zreg[0], reg[1] - zreg[1]),
        "cost_ratio_vs_expected_baseline": (
            cost_ratio(draws.recorded, n * refs.baseline), np.zeros_like(draws.replicates)
        ),
        "better": (_better(draws.recorded, zeus.recorded), _better(draws.replicates, zeus.replicates)),
        "replay_ratio": (
            cost_ratio(draws.recorded, base.recorded), cost_ratio(draws.replicates, base.replicates)
        ),
        "failed": (draws.failed.astype(float), np.zeros_like(draws.replicates)),
    }  # fmt: skip


def _better(cost: np.ndarray, zeus: np.ndarray) -> np.ndarray:
    """1 where the cost is below Zeus's on the same replay, 0.5 on a tie, else 0."""
    return np.where(cost < zeus, 1.0, np.where(cost == zeus, 0.5, 0.0))


def job_parts(
    jobs: Sequence[ArenaJob | JobTrace],
    totals: Runs | dict[tuple[str, str, str], Any],
    protocol: Protocol,
    policies: Sequence[str] | None = None,
) -> dict[tuple[str, str], Part]:
    """Per (gpu, workload), its :class:`Part` of this protocol's (split, fold).

    ``policies``: the rows (default: those :func:`run_arena` was asked for, else every policy of
    ``totals`` but the paired references). The paired references come from ``totals`` when there,
    else are replayed on the seeds.
    """
    runs = {k: _as_draws(v) for k, v in totals.items()}
    asked = getattr(totals, "policies", ()) or tuple(dict.fromkeys(k[2] for k in runs if k[2] not in PAIRED))
    names = list(policies) if policies is not None else list(asked)
    out = {}
    for aj in _arena_jobs(jobs):
        job, n = aj.job, aj.recurrences
        gpu, w = job.gpu, job.workload.id
        model = JobModel(job, Cost(protocol.eta))
        refs = job_refs(model)
        paired = {
            p: runs.get((gpu, w, p))
            or Draws(replayed_total(model, p, protocol, n), np.zeros(len(protocol.seeds)))
            for p in PAIRED
        }
        zeus = runs[(gpu, w, COMPARATOR)]
        scale = path_scale(job)
        values = {
            p: _quantities(runs[(gpu, w, p)], zeus, paired["baseline"], paired["max-batch"], n, refs, scale)
            for p in names
        }
        base = paired["baseline"].recorded
        floors = {
            "recurrences": float(n),
            "baseline_p95": float(np.percentile(cost_ratio(base, n * refs.baseline), P_SAFE)),
            "probe_floor_p95": float(np.percentile(probe_floor(model, base), P_SAFE)),
            "anytime_floor_regret_pct": anytime_floor(model, n, SAFE - 1.0),
            "paths": float(sum(len(t) for t in job.target_epochs)),
            "paths_min": float(min(len(t) for t in job.target_epochs)),
        }
        out[(gpu, w)] = Part(protocol.split, protocol.fold, values, floors)
    return out


def _row(parts: Sequence[Part], policy: str) -> dict[str, object]:
    """The metrics of a job's ``arena_jobs`` row over ``parts`` (one (split, fold), or several pooled)."""
    qs = [[p.values[policy][q] for q in QUANTITIES] for p in parts]
    draws = _resamples(qs)
    means = draws.mean(axis=2)
    row: dict[str, object] = {}
    for i, name in enumerate(QUANTITIES):
        lo, hi = percentile_ci(means[i])
        row[f"{name}_mean"], row[f"{name}_ci_lo"], row[f"{name}_ci_hi"] = _point(qs, i), lo, hi
    ratio_b = np.concatenate([p.values[policy]["cost_ratio_vs_baseline"][0] for p in parts])
    expected_b = np.concatenate([p.values[policy]["cost_ratio_vs_expected_baseline"][0] for p in parts])
    row["cost_ratio_vs_baseline_p95"] = float(np.percentile(ratio_b, P_SAFE))
    lo, hi = percentile_ci(np.percentile(draws[0], P_SAFE, axis=1))
    row["cost_ratio_vs_baseline_p95_ci_lo"], row["cost_ratio_vs_baseline_p95_ci_hi"] = lo, hi
    row["unsafe_seed_share"] = float(np.mean(ratio_b > SAFE))
    row["cost_ratio_vs_expected_baseline_mean"] = float(expected_b.mean())
    row["cost_ratio_vs_expected_baseline_p95"] = float(np.percentile(expected_b, P_SAFE))
    for name in ("baseline_p95", "probe_floor_p95", "anytime_floor_regret_pct"):
        row[name] = float(np.mean([p.floors[name] for p in parts]))
    better = [p.values[policy]["better"] for p in parts]
    row["prob_better_than_zeus"] = float(np.concatenate([np.r_[b[0], b[1].ravel()] for b in better]).mean())
    row["vs_zeus"] = "same" if policy == COMPARATOR else _verdict(row["regret_diff_vs_zeus_pct_ci_lo"], row["regret_diff_vs_zeus_pct_ci_hi"])  # type: ignore[arg-type]  # fmt: skip
    row["failed_recurrences_mean"] = float(np.mean([p.values[policy]["failed"][0].mean() for p in parts]))
    return row


def _scopes(
    parts: dict[tuple[int, int], dict[tuple[str, str], Part]],
) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """``(fold, splits, [(split, fold), ...])`` of every row: split 1's folds, then all pooled (fold 0)."""
    keys = sorted(parts)
    scopes = [(f, 1, [(s, f)]) for s, f in keys if s == 1]
    if len(keys) > 1:
        scopes.append((0, len({s for s, _ in keys}), keys))
    return scopes


def job_table(
    jobs: Sequence[ArenaJob | JobTrace],
    totals: Runs | dict[tuple[str, str, str], Any],
    protocol: Protocol,
    policies: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, dict[tuple[str, str, str], Any]]:
    """The ``arena_jobs`` rows of one (split, fold), and the parts :func:`summary_table` reads."""
    parts = {(protocol.split, protocol.fold): job_parts(jobs, totals, protocol, policies)}
    return jobs_frame(parts, protocol), parts  # type: ignore[return-value]


def jobs_frame(parts: dict[tuple[int, int], dict[tuple[str, str], Part]], protocol: Protocol) -> pd.DataFrame:
    """The ``arena_jobs`` rows of every scope (:func:`_scopes`) from each (split, fold)'s parts."""
    rows = []
    for fold, splits, keys in _scopes(parts):
        first = parts[keys[0]]
        for (gpu, w), part in first.items():
            scope = [parts[k][(gpu, w)] for k in keys]
            for p in part.values:
                row: dict[str, object] = {
                    "gpu": gpu, "workload": w, "policy": p, "fold": fold, "splits": splits,
                    "half": judged_half(fold) if fold else "both", "seeds": len(protocol.seeds),
                    "replicates": protocol.replicates, "paths": int(part.floors["paths"]),
                    "paths_min": int(part.floors["paths_min"]), "recurrences": int(part.floors["recurrences"]),
                    "horizon": str(protocol.horizon), "noise": float(protocol.noise),
                }  # fmt: skip
                row.update(_row(scope, p))
                rows.append(row)
    return pd.DataFrame(rows)


def summary_table(
    jobs_df: pd.DataFrame, parts: dict[tuple[int, int], dict[tuple[str, str], Part]]
) -> pd.DataFrame:
    """The ``arena_summary`` rows: per (gpu, policy, scope) mean regret over jobs with its interval, etc.

    Per part (split, fold), the per-replay mean over a GPU's jobs (the seeds and replicates are
    shared by its jobs) is resampled in two stages (:func:`~zeus_bench.sim.metrics.two_stage_resamples`);
    the ratio to Zeus's mean regret uses the same draws for both.
    """
    rows = []
    scopes = {(fold, splits): keys for fold, splits, keys in _scopes(parts)}
    for (gpu, fold, splits), g in jobs_df.groupby(["gpu", "fold", "splits"], sort=False):
        keys = scopes[(int(fold), int(splits))]
        workloads = list(dict.fromkeys(g["workload"]))

        def job_mean(
            k: tuple[int, int],
            p: str,
            q: str = "regret_pct",
            w_list: list[str] = workloads,
            gpu: str = str(gpu),
        ) -> Pair:
            pairs = [parts[k][(gpu, w)].values[p][q] for w in w_list]
            return np.mean([q[0] for q in pairs], axis=0), np.mean([q[1] for q in pairs], axis=0)

        floor = float(g.drop_duplicates("workload")["anytime_floor_regret_pct"].mean())
        zeus_parts = [job_mean(k, COMPARATOR) for k in keys]
        zdraws = _resamples([[z] for z in zeus_parts])[0].mean(axis=1)
        zpoint = _point([[z] for z in zeus_parts], 0)
        f = floor / zpoint if zpoint else float("nan")
        flo, fhi = _finite_ci(floor / zdraws)
        for p, gp in g.groupby("policy", sort=False):
            qs = [[job_mean(k, str(p)), z] for k, z in zip(keys, zeus_parts, strict=True)]
            d = _resamples(qs).mean(axis=2)
            m, r = _point(qs, 0), _point(qs, 0) / zpoint if zpoint else float("nan")
            lo, hi = percentile_ci(d[0])
            rlo, rhi = _finite_ci(d[0] / d[1])
            worst = gp.loc[gp["regret_pct_mean"].idxmax()]
            rows.append(
                {
                    "gpu": gpu, "policy": p, "fold": int(fold), "splits": int(splits), "jobs": len(gp),
                    "seeds": int(gp["seeds"].iloc[0]), "replicates": int(gp["replicates"].iloc[0]),
                    "half": str(gp["half"].iloc[0]), "horizon": str(gp["horizon"].iloc[0]),
                    "noise": float(gp["noise"].iloc[0]),
                    "regret_pct_mean": m, "regret_pct_ci_lo": lo, "regret_pct_ci_hi": hi,
                    **_job_means(keys, str(p), job_mean),
                    "regret_ratio_vs_zeus": r, "regret_ratio_vs_zeus_ci_lo": rlo, "regret_ratio_vs_zeus_ci_hi": rhi,
                    "prob_better_than_zeus_mean": float(gp["prob_better_than_zeus"].mean()),
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
    out["rank"] = out.groupby(["gpu", "fold", "splits"])["regret_pct_mean"].rank(method="min").astype(int)
    return out


SUMMARY_RATIOS = ("cost_ratio_vs_baseline", "cost_ratio_vs_max_batch")
"""Paired cost ratios whose mean over a GPU's jobs ``arena_summary`` gives with its two-stage interval."""


def _job_means(
    keys: Sequence[tuple[int, int]], policy: str, job_mean: Callable[[tuple[int, int], str, str], Pair]
) -> dict[str, float]:
    """``<ratio>_mean/_ci_lo/_ci_hi`` of :data:`SUMMARY_RATIOS`: the mean over jobs, two-stage resampled."""
    out = {}
    for q in SUMMARY_RATIOS:
        qs = [[job_mean(k, policy, q)] for k in keys]
        lo, hi = percentile_ci(_resamples(qs)[0].mean(axis=1))
        out[f"{q}_mean"], out[f"{q}_ci_lo"], out[f"{q}_ci_hi"] = _point(qs, 0), lo, hi
    return out


def _finite_ci(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval of the finite values (NaN, NaN when none is: e.g. Zeus's regret 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = values[np.isfinite(values)]
    return percentile_ci(v) if len(v) else (float("nan"), float("nan"))


PROFILE_TAUS = np.round(np.arange(0.80, 2.0001, 0.01), 2)
"""Thresholds of the performance profile: cost ratio to the baseline on the same replay."""


def profile_table(parts: dict[tuple[int, int], dict[tuple[str, str], Part]]) -> pd.DataFrame:
    """``arena_profile``: per (gpu, policy, scope, tau), the share of jobs x replays with ratio <= tau.

    The ratio is the paired cost ratio to the baseline; every replay counts (recorded seeds and
    replicate traces), each job weighs the same.
    """
    rows: list[dict[str, object]] = []
    for fold, splits, keys in _scopes(parts):
        first = parts[keys[0]]
        gpus = list(dict.fromkeys(g for g, _ in first))
        for gpu in gpus:
            workloads = [w for g, w in first if g == gpu]
            for p in first[(gpu, workloads[0])].values:
                shares = np.zeros(len(PROFILE_TAUS))
                for w in workloads:
                    pairs = [parts[k][(gpu, w)].values[p]["replay_ratio"] for k in keys]
                    v = np.concatenate([np.r_[a, b.ravel()] for a, b in pairs])
                    shares += (v[None, :] <= PROFILE_TAUS[:, None] + 1e-12).mean(axis=1)
                shares /= len(workloads)
                rows.extend(
                    {
                        "gpu": gpu,
                        "policy": p,
                        "fold": fold,
                        "splits": splits,
                        "tau": float(t),
                        "share": float(s),
                    }
                    for t, s in zip(PROFILE_TAUS, shares, strict=True)
                )
    return pd.DataFrame(rows)


def _split_protocol(protocol: Protocol, split: int) -> Protocol:
    """The protocol on split ``split``: replicate traces on split 1 alone.

    A replay's cost is mostly its executor's walk over the recurrences, whatever the number of
    seeds, so each replicate trace costs about as much as a run of all seeds. Splits 2..K are the
    path level of the pooled rows themselves (other halves of the same paths), so they replay the
    recorded halves only.
    """
    return replace(protocol, split=split, replicates=protocol.replicates if split == 1 else 0)


@dataclass(frozen=True)
class ArenaTables:
    """The arena's three tables."""

    jobs: pd.DataFrame
    summary: pd.DataFrame
    profile: pd.DataFrame


def arena_parts(
    traces: dict[str, TraceSet],
    gpus: Sequence[str],
    policies: Sequence[str],
    protocol: Protocol,
    workloads: Sequence[str] | None = None,
    jobs_n: int = 1,
    policy_modules: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> dict[tuple[str, str], Part]:
    """Run the arena on the protocol's (split, fold): each job's :class:`Part`."""
    jobs = judged_jobs(traces, gpus, workloads, protocol.half, protocol.split, protocol.recurrences)
    totals = run_arena(jobs, policies, protocol, jobs_n, policy_modules, progress)
    return job_parts(jobs, totals, protocol)


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
    parts = {(protocol.split, protocol.fold): arena_parts(traces, gpus, policies, protocol, workloads, jobs_n, policy_modules, progress)}  # fmt: skip
    jobs_df = jobs_frame(parts, protocol)
    return jobs_df, summary_table(jobs_df, parts)


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
    splits: int = 1,
) -> ArenaTables:
    """The arena on each of ``folds`` of each split 1..``splits`` (:meth:`Protocol.for_fold`).

    Rows: split 1's folds (column ``fold``), and, with more than one (split, fold), every split's
    folds pooled (``fold`` 0, ``splits`` K): the across-split spread inside the intervals.
    Replicate traces are replayed on split 1 only (:func:`_split_protocol`).
    """
    if splits < 1:
        raise ConfigError(f"--splits must be at least 1, got {splits}")
    parts = {
        (k, f): arena_parts(
            traces,
            gpus,
            policies,
            _split_protocol(protocol.for_fold(f), k),
            workloads,
            jobs_n,
            policy_modules,
            progress,
        )
        for k in range(1, splits + 1)
        for f in folds
    }
    jobs_df = jobs_frame(parts, protocol)
    return ArenaTables(jobs_df, summary_table(jobs_df, parts), profile_table(parts))


@dataclass(frozen=True)
class FoldAgreement:
    """How often split 1's two folds disagree: their 95 % intervals of a statistic disjoint."""

    column: str
    pairs: tuple[tuple[str, str], ...]
    """The (gpu, policy) pairs compared: not Zeus, no constant that differs by fold."""
    disjoint: tuple[tuple[str, str], ...]

    @property
    def share(self) -> float:
        """Share of the pairs whose two intervals are disjoint (NaN without pairs)."""
        return len(self.disjoint) / len(self.pairs) if self.pairs else float("nan")


def fold_agreement(summary: pd.DataFrame, column: str = "regret_ratio_vs_zeus") -> FoldAgreement:
    """Split 1's folds compared on ``column`` (its ``_ci_lo``/``_ci_hi``; ``regret_pct``: ``regret_pct_ci_*``).

    The intervals' coverage check: where nothing was tuned by fold, an interval over one half's
    paths should usually overlap the other half's. Pairs: every (gpu, policy) with a row in both
    folds but Zeus (ratio 1 by definition) and the policies with fold constants
    (:data:`~zeus_bench.studies.crossfit.FOLD_CONSTANTS`).
    """
    stem = column.removesuffix("_mean")
    lo, hi = f"{stem}_ci_lo", f"{stem}_ci_hi"
    first = summary[summary["splits"] == 1] if "splits" in summary.columns else summary
    a = first[first["fold"] == 1].set_index(["gpu", "policy"])
    b = first[first["fold"] == 2].set_index(["gpu", "policy"])
    tuned = {p for consts in FOLD_CONSTANTS.values() for p in consts}
    pairs = tuple(
        (str(g), str(p)) for g, p in a.index if (g, p) in b.index and p != COMPARATOR and p not in tuned
    )
    disjoint = tuple(k for k in pairs if a.loc[k, hi] < b.loc[k, lo] or b.loc[k, hi] < a.loc[k, lo])
    return FoldAgreement(column, pairs, disjoint)
