"""Concurrent submissions: replay recurring jobs from an arrival table.

An arrival table has one row per job submission, columns (exactly these names):

========== ===== ==================================================================
column     type  meaning
========== ===== ==================================================================
group      str   Recurring job the submission belongs to (one policy per group)
start_time float Submission time (s, any origin)
end_time   float Time the job ended in the original trace (s), > start_time
workload   str   Workload id (registry); one workload per group
runtime_ratio float Runtime of this job over its workload's mean runtime (> 0)
========== ===== ==================================================================

Rules (after the paper's simulator): each group is replayed on its own in start order. When a
job starts while other jobs of its group still run, it uses the best configuration known at
that time (the least-cost run that reached the target so far; before any, the policy's
:meth:`~zeus_bench.sim.policies.Policy.best`); otherwise the policy's prediction. A job's outcome
is computed when it starts and observed by the policy when it ends (``end_time``), in order of
end time. A job that does not reach the target is retried at its end, for the same duration,
choosing its configuration the same way (at most 20 tries). The early-stop threshold is beta
x the least cost of one successful run. Energy, time and cost in the ``runs`` rows are scaled by
``runtime_ratio``; the policy and the early-stop threshold see unscaled costs, as in the paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.errors import TraceFormatError
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext
from zeus_bench.sim.replay import MAX_TRIES, JobModel, Row, Runner, seed_generators
from zeus_bench.usertables import read_user_table

if TYPE_CHECKING:  # pandas is imported where tables are read or built
    import pandas as pd

ARRIVAL_COLUMNS = ("group", "start_time", "end_time", "workload", "runtime_ratio")
#: Largest runtime_ratio accepted: a job a million times its workload's mean runtime is a unit
#: mistake, and scaled costs that large overflow the replay's energy and time (float64) downstream.
MAX_RUNTIME_RATIO = 1e6


def read_arrivals(path: str | Path) -> pd.DataFrame:
    """Read and validate an arrival table (``.csv`` or ``.parquet``).

    Raises:
        TraceFormatError: unreadable file, missing columns, bad values, or a group with more
            than one workload.
    """
    df = read_user_table(path, "arrival table")
    return validate_arrivals(df, str(path))


def validate_arrivals(df: pd.DataFrame, where: str = "arrival table") -> pd.DataFrame:
    """Validate an arrival table; return it typed, sorted by (group, start_time)."""
    import pandas as pd

    missing = [c for c in ARRIVAL_COLUMNS if c not in df.columns]
    if missing:
        raise TraceFormatError(
            f"{where}: missing column(s) {', '.join(missing)} (need {', '.join(ARRIVAL_COLUMNS)})"
        )
    if df.empty:
        raise TraceFormatError(f"{where}: no rows")
    out = pd.DataFrame({"group": df["group"].astype(str), "workload": df["workload"].astype(str)})
    for col in ("start_time", "end_time", "runtime_ratio"):
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise TraceFormatError(
                f"{where}: column {col!r} row {row}: not a finite number: {df[col].iloc[row]!r}"
            )
        out[col] = values
    if df["group"].isna().any() or df["workload"].isna().any():
        raise TraceFormatError(f"{where}: missing group or workload")
    bad = np.flatnonzero(out["end_time"].to_numpy() <= out["start_time"].to_numpy())
    if len(bad):
        raise TraceFormatError(f"{where}: row {int(bad[0])}: end_time must be after start_time")
    ratio = out["runtime_ratio"].to_numpy()
    bad = np.flatnonzero((ratio <= 0) | (ratio > MAX_RUNTIME_RATIO))
    if len(bad):
        raise TraceFormatError(
            f"{where}: column 'runtime_ratio' row {int(bad[0])}: {float(ratio[bad[0]]):g} is outside (0, {MAX_RUNTIME_RATIO:g}] "
            "(a job's runtime over its workload's mean)"
        )
    per_group = out.groupby("group")["workload"].nunique()
    mixed = per_group[per_group > 1]
    if len(mixed):
        raise TraceFormatError(f"{where}: group {mixed.index[0]!r} has more than one workload")
    return out.sort_values(["group", "start_time"], kind="stable").reset_index(drop=True)[
        list(ARRIVAL_COLUMNS)
    ]


def synthetic_arrivals(
    workloads: list[str],
    groups_per_workload: int,
    jobs_per_group: int,
    rng: np.random.Generator,
    mean_runtime_s: float = 3600.0,
    overlap: float = 0.3,
) -> pd.DataFrame:
    """Generate a synthetic arrival table for tests and examples.

    Within a group, gaps between submissions are exponential with mean ``mean_runtime_s x (1 -
    overlap)``, so that about ``overlap`` of the jobs start while the previous one still runs;
    runtimes are log-normal around ``mean_runtime_s`` and ``runtime_ratio`` is runtime / mean.
    """
    import pandas as pd

    rows = []
    for w in workloads:
        for g in range(groups_per_workload):
            t = 0.0
            runtimes = rng.lognormal(0.0, 0.25, size=jobs_per_group)
            runtimes = runtimes / runtimes.mean()
            for k in range(jobs_per_group):
                runtime = float(runtimes[k] * mean_runtime_s)
                rows.append((f"{w}-{g}", t, t + runtime, w, float(runtimes[k])))
                t += float(rng.exponential(mean_runtime_s * max(1.0 - overlap, 1e-3)))
    return validate_arrivals(pd.DataFrame(rows, columns=list(ARRIVAL_COLUMNS)), "synthetic arrivals")


@dataclass
class _Running:
    start: float
    end: float
    ratio: float
    outcome: Outcome
    recurrence: int
    attempt: int


def replay_group(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    starts: np.ndarray,
    ends: np.ndarray,
    ratios: np.ndarray,
    window: int = 0,
) -> list[Row]:
    """Replay one group of an arrival table (rows in start order) under one policy and seed."""
    env_rng, pol_rng = seed_generators(seed)
    policy = policy_cls(PolicyContext(model.job, model.eta, beta, window, pol_rng))
    runner = Runner(model, policy, beta, env_rng)
    running: list[_Running] = []
    rows: list[Row] = []
    ran: set[int] = set()  # recurrences with a try that ran
    best: Decision | None = None

    def launch(start: float, end: float, ratio: float, recurrence: int, attempt: int) -> None:
        decision = (best if best is not None else policy.best()) if running else policy.predict()
        running.append(_Running(start, end, ratio, runner.run_try(decision), recurrence, attempt))

    def reap(now: float) -> None:
        nonlocal best
        while running:
            job = min(running, key=lambda j: j.end)
            if job.end > now:
                return
            running.remove(job)
            out = job.outcome
            policy.observe(out)
            if out.epochs > 0:
                rows.append(runner.row(job.recurrence, job.attempt, out, job.ratio))
                ran.add(job.recurrence)
            elif job.attempt == MAX_TRIES and job.recurrence not in ran:
                rows.append(runner.missed_row(job.recurrence, job.attempt, out, job.ratio))
            if out.reached:
                if out.cost < runner.min_cost:
                    runner.min_cost = out.cost
                    best = Decision(out.batch_size, out.power_limit_w)
            elif job.attempt < MAX_TRIES:
                launch(job.end, job.end + (job.end - job.start), job.ratio, job.recurrence, job.attempt + 1)

    for k in range(len(starts)):
        reap(float(starts[k]))
        launch(float(starts[k]), float(ends[k]), float(ratios[k]), k + 1, 1)
    reap(math.inf)
    return rows
