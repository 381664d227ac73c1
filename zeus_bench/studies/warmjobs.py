"""Warm start per job, and each pair's result leaving each job out: the ``warmstart_jobs`` table.

For a (prior GPU, target GPU, workload) and every seed ``s``: zeus-plus runs cold on the target,
and warm with the prior of what a cold zeus-plus replay on the prior GPU observed with seed
``s + PRIOR_SEED_OFFSET`` (:func:`zeus_bench.sim.scenarios.warmstart.prior_for`; a seed whose prior replay
saw no shared batch size reach the target runs cold, and is counted). Per job the table gives
the regret over the first :data:`~zeus_bench.studies.study.EARLY` recurrences cold and warm, their
paired difference (warm - cold, same seed, same target paths) with a 95 % bootstrap interval over
seeds, the job's cut, the pair's cut over all its jobs (as the report computes it: one minus the
ratio of the mean over jobs of the warm regret to the cold) and the pair's cut **leaving this job
out**, so that a pair whose result rests on one job shows it.

:func:`warm_job_costs` is what the study (and any other caller, e.g. the arena) calls per job;
:func:`jobs_table` turns the collected costs into the table; the schema is ``warmstart_jobs``
(:data:`WARMSTART_JOBS`, documented in ``results/README.md``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.metrics import bootstrap_ci, regret_pct
from zeus_bench.sim.scenarios.warmstart import (
    PRIOR_SEED_OFFSET,
    NoSharedBatchSize,
    PriorReplays,
    bind_prior,
    priors_for,
)
from zeus_bench.studies.warmjobs_schema import WARMSTART_JOBS
from zeus_bench.traces.jobs import TraceSet

__all__ = ["WARMSTART_JOBS", "WarmCosts", "jobs_table", "warm_job_costs", "write_jobs_table"]

if TYPE_CHECKING:
    import pandas as pd

    from zeus_bench.sim.replay import JobModel

log = logging.getLogger(__name__)

EARLY = 20  # recurrences of the warm-start comparison (the study's "first 20")


@dataclass(frozen=True)
class WarmCosts:
    """What one job was charged per seed and recurrence, cold and warm (J), and its oracle."""

    cold: np.ndarray
    warm: np.ndarray
    oracle: float
    recurrences: int
    seeds_without_prior: int


def warm_job_costs(
    model: JobModel,
    prior_traces: TraceSet,
    prior_gpu: str,
    seeds: Sequence[int],
    beta: float,
    cold: np.ndarray | None = None,
    replays: PriorReplays | None = None,
) -> WarmCosts:
    """Cold and warm zeus-plus on one target job, one prior replay per seed.

    Every seed's prior replay runs in one executor walk, and every seed's warm replay in another,
    with the cold replay (when not given) beside them: each seed a lane of its own class, one
    zeus-plus face for all (:meth:`ZeusPlus.face_family
    <zeus_bench.sim.policies.zeus_plus.ZeusPlus.face_family>`), each seed's rows its own replay's.

    Args:
        model: The target job's model (its cost is the prior replay's).
        prior_traces: Trace folder of the prior GPU.
        prior_gpu: The prior GPU kind.
        seeds: Seeds of the target replays (the prior replay of ``s`` uses ``s + PRIOR_SEED_OFFSET``).
        beta: Early-stopping threshold of both replays.
        cold: The cold runs' charged costs if already replayed (rows: seeds).
        replays: The prior replays of earlier calls, where this one's is kept (:func:`priors_for`'s
            cache: the targets of one prior job share its replay); None: none kept.
    """
    from zeus_bench.sim.policies import get_policy
    from zeus_bench.sim.replay import Lane, default_recurrences, replay_lanes
    from zeus_bench.studies.recurrences import references, tries_costs

    job = model.job
    n = default_recurrences(job)
    plus = get_policy("zeus-plus")
    priors = priors_for(
        job, prior_traces, prior_gpu, model.cost, beta, [int(s) + PRIOR_SEED_OFFSET for s in seeds], replays
    )
    # the cold replay (unless given) and one lane per seed with a prior (its own class), in one walk
    lanes = [] if cold is not None else [Lane(model, tuple(int(s) for s in seeds), (plus,))]
    at = []
    for i, (s, prior) in enumerate(zip(seeds, priors, strict=True)):
        if isinstance(prior, NoSharedBatchSize):
            log.info("%s on %s, seed %d: %s; runs cold", job.workload.id, job.gpu, s, prior)
            continue
        lanes.append(Lane(model, (int(s),), (bind_prior(plus, prior),)))
        at.append(i)
    runs = replay_lanes(lanes, beta, n) if lanes else []
    if cold is None:
        cold = tries_costs(model, runs.pop(0)[0], n)[0]
    warm = cold.copy()  # (a seed without a prior runs cold)
    for i, rows in zip(at, runs, strict=True):
        warm[i] = tries_costs(model, rows[0], n)[0][0]
    return WarmCosts(cold, warm, references(model).oracle, n, len(seeds) - len(at))


def _cut(cold: float, warm: float) -> float:
    return 100.0 * (1.0 - warm / cold) if cold > 0 else float("nan")


def jobs_table(costs: Mapping[tuple[str, str, str], WarmCosts]) -> pd.DataFrame:
    """The ``warmstart_jobs`` rows from :func:`warm_job_costs` results keyed by (prior, gpu, workload)."""
    import pandas as pd

    rows = []
    for (src, dst, w), c in costs.items():
        k = min(EARLY, c.recurrences)
        early = {
            lab: regret_pct(a[:, :k].sum(axis=1), k * c.oracle)
            for lab, a in (("cold", c.cold), ("warm", c.warm))
        }
        cum = {
            lab: regret_pct(a.sum(axis=1), c.recurrences * c.oracle)
            for lab, a in (("cold", c.cold), ("warm", c.warm))
        }
        diff = early["warm"] - early["cold"]
        _, lo, hi = bootstrap_ci(diff)
        rows.append(
            {
                "prior_gpu": src,
                "gpu": dst,
                "workload": w,
                "seeds": len(diff),
                "recurrences": c.recurrences,
                "seeds_without_prior": c.seeds_without_prior,
                f"regret_first{EARLY}_pct_cold_mean": float(early["cold"].mean()),
                f"regret_first{EARLY}_pct_warm_mean": float(early["warm"].mean()),
                f"regret_first{EARLY}_diff_pct_mean": float(diff.mean()),
                f"regret_first{EARLY}_diff_pct_ci_low": lo,
                f"regret_first{EARLY}_diff_pct_ci_high": hi,
                "regret_cum_pct_cold_mean": float(cum["cold"].mean()),
                "regret_cum_pct_warm_mean": float(cum["warm"].mean()),
                f"cost_last{EARLY}_vs_oracle_cold_mean": float(
                    c.cold[:, -k:].sum(axis=1).mean() / (k * c.oracle)
                ),
                f"cost_last{EARLY}_vs_oracle_warm_mean": float(
                    c.warm[:, -k:].sum(axis=1).mean() / (k * c.oracle)
                ),
                "cut_pct": _cut(float(early["cold"].mean()), float(early["warm"].mean())),
            }
        )
    df = pd.DataFrame(rows)
    if df.empty:
        return df.assign(pair_cut_pct=[], pair_cut_without_pct=[])
    cold_col, warm_col = f"regret_first{EARLY}_pct_cold_mean", f"regret_first{EARLY}_pct_warm_mean"
    pair, without = [], []
    for _, g in df.groupby(["prior_gpu", "gpu"], sort=False):
        total = _cut(g[cold_col].mean(), g[warm_col].mean())
        for idx in g.index:
            rest = g.drop(index=idx)
            pair.append((idx, total))
            without.append((idx, _cut(rest[cold_col].mean(), rest[warm_col].mean()) if len(rest) else np.nan))
    df["pair_cut_pct"] = pd.Series(dict(pair))
    df["pair_cut_without_pct"] = pd.Series(dict(without))
    return df


def write_jobs_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Validate ``table`` as ``warmstart_jobs`` and write it (``.parquet`` with its schema, or ``.csv``).

    Raises:
        ConfigError: another suffix.
        TraceFormatError: the table does not match the schema.
    """
    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.store import validate, write_table

    out = Path(path)
    if out.suffix == ".parquet":
        return write_table(table, out, "warmstart_jobs")
    if out.suffix != ".csv":
        raise ConfigError(f"{out}: the warmstart_jobs table is written as .parquet or .csv")
    checked = validate(table, "warmstart_jobs", str(out))
    with atomic_path(out) as tmp:
        checked.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
    return out
