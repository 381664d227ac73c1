"""The arena's statistics: per-replay quantities, two-stage bootstrap intervals, the jobs and summary rows.

From a (split, fold)'s replays (:class:`~zeus_bench.studies.arena_protocol.Draws`),
:func:`job_parts` computes each job's per-replay quantities (a :class:`Part`); :func:`jobs_frame`
and :func:`summary_table` resample them in two stages (replicate traces, then seeds:
:func:`~zeus_bench.sim.two_stage.two_stage_resamples`) into the ``arena_jobs`` and ``arena_summary``
rows (``docs/policies.md``, "The arena protocol").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from zeus_bench.core.cost import Cost
from zeus_bench.optimizers.posterior import PAIRWISE_BLOCK
from zeus_bench.sim.metrics import BOOTSTRAP_REPS, cost_ratio, percentile_ci, percentile_cis, regret_pct
from zeus_bench.sim.replay import JobModel
from zeus_bench.sim.two_stage import two_stage_means, two_stage_percentiles, two_stage_resamples
from zeus_bench.studies.arena_protocol import (
    COMPARATOR,
    P_SAFE,
    PAIRED,
    SAFE,
    ArenaJob,
    Draws,
    Protocol,
    Runs,
    as_arena_jobs,
    replayed_total,
)
from zeus_bench.studies.crossfit import judged_half
from zeus_bench.studies.recurrences import anytime_floor, probe_floor
from zeus_bench.studies.recurrences import references as job_refs
from zeus_bench.traces.jobs import JobTrace


def _as_draws(value: Draws | tuple[np.ndarray, np.ndarray]) -> Draws:
    """A :class:`Draws`, or ``(per-seed cost, failed)`` on the recorded paths alone."""
    return value if isinstance(value, Draws) else Draws(np.asarray(value[0]), np.asarray(value[1]))


Pair = tuple[np.ndarray, np.ndarray]
"""A per-replay quantity: ``(recorded (N,), replicates (R, S))``."""


@dataclass
class Part:
    """One (split, fold) of one job: its per-replay quantities per policy and its floors.

    ``resampled``: each policy's :class:`Resampled` (:func:`part_resampled`), kept once asked;
    ``path_draw``: how a draw's path-level shift is made (:func:`~zeus_bench.sim.two_stage.path_shifts`).
    """

    split: int
    fold: int
    values: dict[str, dict[str, Pair]]
    floors: dict[str, float]
    path_draw: str = "pick"
    resampled: dict[str, Resampled] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Resampled:
    """One policy's two-stage resamples (:func:`two_stage_resamples`) on one part, reduced to what rows read.

    ``means``: per quantity of :data:`QUANTITIES` (rows), each draw's mean over the seeds;
    ``p95``: each draw's :data:`P_SAFE` percentile of ``cost_ratio_vs_baseline`` over the seeds.
    Every part's draws are the same indices, so several parts' rows are their concatenation.
    """

    means: np.ndarray
    p95: np.ndarray


def part_resampled(part: Part, policy: str) -> Resampled:
    """``policy``'s :class:`Resampled` on ``part``, drawn once per part (every policy, every scope reads it)."""
    hit = part.resampled.get(policy)
    if hit is None:
        names = list(part.values)
        ratios = [part.values[p][QUANTITIES[0]] for p in names]
        p95 = two_stage_percentiles(
            np.stack([r[0] for r in ratios]),
            np.stack([r[1] for r in ratios]),
            P_SAFE,
            path_draw=part.path_draw,
        )
        # Several policies' quantities resampled as one stack (rows): each row's mean is summed as
        # alone (the quantities stay innermost), in as few passes as the memory bound allows.
        seeds, q_n = len(ratios[0][0]), len(QUANTITIES)
        size = max(1, _DRAWS_AT_ONCE // (q_n * BOOTSTRAP_REPS * max(1, seeds)))
        for lo in range(0, len(names), size):
            group = names[lo : lo + size]
            means = _resampled_means([[part.values[p][q] for p in group for q in QUANTITIES]], part.path_draw)
            for i, p in enumerate(group):
                part.resampled[p] = Resampled(means[i * q_n : (i + 1) * q_n], p95[lo + i])
        hit = part.resampled[policy]
    return hit


_DRAWS_AT_ONCE = 4_000_000
"""The most draws x seeds values :func:`part_resampled` resamples at once (32 MB)."""


def resampled_means(pairs: Sequence[Pair], path_draw: str = "pick") -> np.ndarray:
    """Each pair's two-stage resamples' means over the seeds: shape ``(len(pairs), draws)``."""
    return _resampled_means([pairs], path_draw)


def _verdict(lo: float, hi: float) -> str:
    """``better`` (interval below 0), ``worse`` (above 0) or ``tie``, for a difference policy - Zeus."""
    return "better" if hi < 0.0 else "worse" if lo > 0.0 else "tie"


def _resamples(parts: Sequence[Sequence[Pair]], path_draw: str = "pick") -> np.ndarray:
    """Two-stage resamples (quantities x draws x seeds) of each part, the parts' draws concatenated.

    ``parts[j][q]`` is quantity ``q`` of part ``j``; over several parts (splits and folds) every
    part's draws are kept, each around its own estimate: the spread across splits is inside.
    """
    out = []
    for quantities in parts:
        rec = np.stack([q[0] for q in quantities])
        reps = np.stack([q[1] for q in quantities])
        out.append(two_stage_resamples(rec, reps, path_draw=path_draw))
    return out[0] if len(out) == 1 else np.concatenate(out, axis=1)


def _resampled_means(parts: Sequence[Sequence[Pair]], path_draw: str = "pick") -> np.ndarray:
    """``_resamples(parts, path_draw).mean(axis=2)``, the same floats, without the draws where the seeds are few.

    Fewer seeds than NumPy's pairwise block: each part's :func:`~zeus_bench.sim.two_stage.two_stage_means`
    (the draws' means whatever their layout), side by side. More: the draws' own mean (its order
    of summation is their layout's, parts joined).
    """
    if any(len(q[0]) >= PAIRWISE_BLOCK for quantities in parts for q in quantities):
        return _resamples(parts, path_draw).mean(axis=2)  # type: ignore[no-any-return]
    out = [
        two_stage_means(
            np.stack([q[0] for q in quantities]), np.stack([q[1] for q in quantities]), path_draw=path_draw
        )
        for quantities in parts
    ]
    return out[0] if len(out) == 1 else np.concatenate(out, axis=1)


def _joined(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The parts' draws side by side (last axis): one part's as they are."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=-1)


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


def scaled(rep: np.ndarray, factor: float) -> np.ndarray:
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
        out[q] = (rec, scaled(rep, scale))
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
    for aj in as_arena_jobs(jobs):
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
        out[(gpu, w)] = Part(protocol.split, protocol.fold, values, floors, protocol.path_draw)
    return out


def _intervals(
    parts: Sequence[Part], policies: Sequence[str]
) -> dict[str, tuple[list[list[float]], list[float]]]:
    """Each policy's intervals over ``parts``: of every quantity's mean, and of the p95 cost ratio vs the baseline.

    The policies' resampled draws as the rows of one :func:`~zeus_bench.sim.metrics.percentile_cis`
    call each (every row's figures those of a call on it alone).
    """
    resampled = [[part_resampled(p, policy) for p in parts] for policy in policies]
    q_n = len(QUANTITIES)
    means = percentile_cis(np.concatenate([_joined([r.means for r in rs]) for rs in resampled])).tolist()
    p95 = percentile_cis(np.stack([_joined([r.p95 for r in rs]) for rs in resampled])).tolist()
    return {policy: (means[k * q_n : (k + 1) * q_n], p95[k]) for k, policy in enumerate(policies)}


def _row(
    parts: Sequence[Part], policy: str, intervals: tuple[list[list[float]], list[float]]
) -> dict[str, object]:
    """The metrics of a job's ``arena_jobs`` row over ``parts`` (one (split, fold), or several pooled).

    ``intervals``: the policy's, from :func:`_intervals`.
    """
    qs = [[p.values[policy][q] for q in QUANTITIES] for p in parts]
    mean_cis, p95_ci = intervals
    row: dict[str, object] = {}
    for i, (name, (lo, hi)) in enumerate(zip(QUANTITIES, mean_cis, strict=True)):
        row[f"{name}_mean"], row[f"{name}_ci_lo"], row[f"{name}_ci_hi"] = _point(qs, i), lo, hi
    ratio_b = np.concatenate([p.values[policy]["cost_ratio_vs_baseline"][0] for p in parts])
    expected_b = np.concatenate([p.values[policy]["cost_ratio_vs_expected_baseline"][0] for p in parts])
    row["cost_ratio_vs_baseline_p95"] = float(np.percentile(ratio_b, P_SAFE))
    lo, hi = p95_ci
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


def row_scopes(
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
    """The ``arena_jobs`` rows of every scope (:func:`row_scopes`) from each (split, fold)'s parts."""
    rows = []
    for fold, splits, keys in row_scopes(parts):
        first = parts[keys[0]]
        for (gpu, w), part in first.items():
            scope = [parts[k][(gpu, w)] for k in keys]
            intervals = _intervals(scope, list(part.values))
            for p in part.values:
                row: dict[str, object] = {
                    "gpu": gpu, "workload": w, "policy": p, "fold": fold, "splits": splits,
                    "half": judged_half(fold) if fold else "both", "seeds": len(protocol.seeds),
                    "replicates": protocol.replicates, "paths": int(part.floors["paths"]),
                    "paths_min": int(part.floors["paths_min"]), "recurrences": int(part.floors["recurrences"]),
                    "horizon": str(protocol.horizon), "noise": float(protocol.noise),
                }  # fmt: skip
                row.update(_row(scope, p, intervals[p]))
                rows.append(row)
    return pd.DataFrame(rows)


def summary_table(
    jobs_df: pd.DataFrame, parts: dict[tuple[int, int], dict[tuple[str, str], Part]]
) -> pd.DataFrame:
    """The ``arena_summary`` rows: per (gpu, policy, scope) mean regret over jobs with its interval, etc.

    Per part (split, fold), the per-replay mean over a GPU's jobs (the seeds and replicates are
    shared by its jobs) is resampled in two stages (:func:`~zeus_bench.sim.two_stage.two_stage_resamples`);
    the ratio to Zeus's mean regret uses the same draws for both.
    """
    rows = []
    scopes = {(fold, splits): keys for fold, splits, keys in row_scopes(parts)}
    # kept across scopes (the pooled scope reads its parts' draws again)
    gpu_means: dict[tuple[str, tuple[str, ...]], _JobMeans] = {}
    for (gpu, fold, splits), g in jobs_df.groupby(["gpu", "fold", "splits"], sort=False):
        keys = scopes[(int(fold), int(splits))]
        workloads = tuple(dict.fromkeys(g["workload"]))
        jm = gpu_means.get((str(gpu), workloads))
        if jm is None:
            jm = gpu_means[(str(gpu), workloads)] = _JobMeans(parts, str(gpu), workloads)
        floor = float(g.drop_duplicates("workload")["anytime_floor_regret_pct"].mean())
        zeus_parts = [jm.pair(k, COMPARATOR) for k in keys]
        zdraws = jm.draws(keys, COMPARATOR)
        zpoint = _point([[z] for z in zeus_parts], 0)
        f = floor / zpoint if zpoint else float("nan")
        flo, fhi = finite_ci(floor / zdraws)
        for p, gp in g.groupby("policy", sort=False):
            qs = [[jm.pair(k, str(p)), z] for k, z in zip(keys, zeus_parts, strict=True)]
            d = jm.paired_draws(keys, str(p))
            m, r = _point(qs, 0), _point(qs, 0) / zpoint if zpoint else float("nan")
            lo, hi = percentile_ci(d[0])
            rlo, rhi = finite_ci(d[0] / d[1])
            worst = gp.loc[gp["regret_pct_mean"].idxmax()]
            rows.append(
                {
                    "gpu": gpu, "policy": p, "fold": int(fold), "splits": int(splits), "jobs": len(gp),
                    "seeds": int(gp["seeds"].iloc[0]), "replicates": int(gp["replicates"].iloc[0]),
                    "half": str(gp["half"].iloc[0]), "horizon": str(gp["horizon"].iloc[0]),
                    "noise": float(gp["noise"].iloc[0]),
                    "regret_pct_mean": m, "regret_pct_ci_lo": lo, "regret_pct_ci_hi": hi,
                    **_job_means(keys, str(p), jm),
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


def jobs_mean(pairs: Sequence[Pair]) -> Pair:
    """The per-replay mean over several jobs' quantities (recorded seeds, replicate traces): a GPU's."""
    return np.mean([x[0] for x in pairs], axis=0), np.mean([x[1] for x in pairs], axis=0)


class _JobMeans:
    """A GPU's per-replay means over its jobs (``workloads``), per part, policy and quantity, and their draws' means.

    Both kept: every scope asks its parts' again (the pooled scope, each part's).
    """

    def __init__(
        self, parts: dict[tuple[int, int], dict[tuple[str, str], Part]], gpu: str, workloads: tuple[str, ...]
    ) -> None:
        """The GPU ``gpu``'s means over its jobs ``workloads`` of ``parts``."""
        self.parts, self.gpu, self.workloads = parts, gpu, workloads
        self._kept: dict[tuple[object, ...], Pair] = {}
        self._drawn_kept: dict[tuple[object, ...], np.ndarray] = {}

    def pair(self, k: tuple[int, int], policy: str, q: str = "regret_pct") -> Pair:
        """The mean over the jobs of quantity ``q`` of ``policy`` on part ``k``, per replay."""
        key = (k, policy, q)
        hit = self._kept.get(key)
        if hit is None:
            hit = self._kept[key] = jobs_mean(
                [self.parts[k][(self.gpu, w)].values[policy][q] for w in self.workloads]
            )
        return hit

    def draws(self, keys: Sequence[tuple[int, int]], policy: str, q: str = "regret_pct") -> np.ndarray:
        """Each two-stage draw's mean of :meth:`pair` over the seeds, the parts ``keys``' draws side by side."""
        return _joined([self._drawn(k, (policy,), q) for k in keys])

    def paired_draws(self, keys: Sequence[tuple[int, int]], policy: str) -> np.ndarray:
        """:meth:`draws` of the regret of ``policy`` and of Zeus (rows), resampled together (the same draws)."""
        return _joined([self._drawn(k, (policy, COMPARATOR), "regret_pct") for k in keys])

    def _drawn(self, k: tuple[int, int], policies: tuple[str, ...], q: str) -> np.ndarray:
        """The draws' means of the policies' :meth:`pair` on part ``k`` (one row: that row alone), kept.

        Resampled together as :func:`resampled_means` resamples them: a row's means are summed in
        the order that the number of rows gives (one row alone, or several side by side).
        """
        key = (k, policies, q)
        hit = self._drawn_kept.get(key)
        if hit is None:
            draw = next(iter(self.parts[k].values())).path_draw
            hit = self._drawn_kept[key] = resampled_means([self.pair(k, p, q) for p in policies], draw)
        return hit[0] if len(policies) == 1 else hit


def _job_means(keys: Sequence[tuple[int, int]], policy: str, jm: _JobMeans) -> dict[str, float]:
    """``<ratio>_mean/_ci_lo/_ci_hi`` of :data:`SUMMARY_RATIOS`: the mean over jobs, two-stage resampled."""
    out = {}
    for q in SUMMARY_RATIOS:
        qs = [[jm.pair(k, policy, q)] for k in keys]
        lo, hi = percentile_ci(jm.draws(keys, policy, q))
        out[f"{q}_mean"], out[f"{q}_ci_lo"], out[f"{q}_ci_hi"] = _point(qs, 0), lo, hi
    return out


def finite_ci(values: np.ndarray) -> tuple[float, float]:
    """Percentile interval of the finite values (NaN, NaN when none is: e.g. Zeus's regret 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = values[np.isfinite(values)]
    return percentile_ci(v) if len(v) else (float("nan"), float("nan"))
