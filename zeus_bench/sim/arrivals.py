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

Rules: those of the paper's simulator (``Simulator.simulate_one_alibaba_group`` of PyPI
``zeus==0.16.0``, its optimizer built with ``concurrency=True``), try for try
(``tests/sim/test_sim_arrivals_golden.py``). Each group is replayed on its own, with fresh
generators seeded as a single job's, in start order. Before a submission starts, the jobs that
ended by its start time are observed, in order of end time (the first listed among equal
ends). A job started while other jobs of its group run uses the best configuration known: the
batch size of the cheapest single try that reached the target so far (b0 before any) at its JIT
limit; otherwise the policy predicts. A batch size's JIT limit is known from the moment its
profiling try is launched, so a job started meanwhile runs at it without profiling again
(:meth:`~zeus_bench.sim.policies.Policy.started`). A job's outcome is computed when it starts
and observed when it ends (``end_time``). A job that does not reach the target is retried at its
end, for the same duration, choosing its configuration the same way. The early-stop threshold
is beta x the least cost of one successful try. A try whose early-stop budget is zero never
runs: the policy observes cost 0 and not reached (the paper's simulator in this mode), no row
is written, and the job is retried.

Departures, where the paper's simulator never ends: it retries a job without limit, and a job
whose every retry has a zero budget (cost 0 observed, so Thompson Sampling keeps choosing it)
retries forever once no other job runs. Here a submission is given up after
:data:`MAX_ZERO_BUDGET_TRIES` zero-budget tries in a row, or :data:`MAX_SUBMISSION_TRIES` tries
in all; a submission in which no try ran then gets one row (``ran`` False, as
:meth:`~zeus_bench.sim.replay.Runner.missed_row`). Energy, time and cost in the ``runs`` rows are
scaled by ``runtime_ratio``; the policy and the early-stop threshold see unscaled costs, as in
the paper. The ``zeus`` policy with the paper's knobs and no window replays through a fused loop
(:func:`replay_group_zeus`), equal row for row to the generic one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.errors import TraceFormatError
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext
from zeus_bench.sim.policies.builtin import Zeus
from zeus_bench.sim.replay import BanditKnobs, JobModel, Row, Runner, seed_generators
from zeus_bench.sim.rules import MAX_SUBMISSION_TRIES, MAX_ZERO_BUDGET_TRIES
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
    ratio_sigma: float = 0.25,
) -> pd.DataFrame:
    """Generate a synthetic arrival table for tests and examples.

    Within a group, gaps between submissions are exponential with mean ``mean_runtime_s x (1 -
    overlap)``, so that about ``overlap`` of the jobs start while the previous one still runs;
    runtimes are log-normal around ``mean_runtime_s`` (log-standard deviation ``ratio_sigma``;
    1.0 spreads ``runtime_ratio`` over about 0.1-10) and ``runtime_ratio`` is runtime / mean.
    """
    import pandas as pd

    rows = []
    for w in workloads:
        for g in range(groups_per_workload):
            t = 0.0
            runtimes = rng.lognormal(0.0, ratio_sigma, size=jobs_per_group)
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
    submission: int
    attempt: int
    zeros: int  # zero-budget tries in a row, this one included
    ran: bool  # a try of this submission ran (this one or an earlier)


def replay_group(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    starts: np.ndarray,
    ends: np.ndarray,
    ratios: np.ndarray,
    window: int = 0,
    knobs: BanditKnobs | None = None,
) -> list[Row]:
    """Replay one group of an arrival table (rows in start order) under one policy and seed.

    Returns:
        One row per try that ran, in the order the tries end (observed), fields as
        :data:`~zeus_bench.sim.replay.RUN_FIELDS`, ``recurrence`` the submission's number in
        the group (from 1); plus one row per submission given up without a try that ran.
    """
    knobs = knobs or BanditKnobs()
    if policy_cls is Zeus and window == 0 and knobs.default:
        from zeus_bench.sim.fastarrivals import replay_group_zeus

        fast = replay_group_zeus(model, seed, beta, starts, ends, ratios)
        if fast is not None:
            return fast
    env_rng, pol_rng = seed_generators(seed)
    ctx = PolicyContext(model.job, model.eta, beta, window, pol_rng, None, *knobs, concurrent=True)
    policy = policy_cls(ctx)
    runner = Runner(model, policy, beta, env_rng, zero_budget_penalty=0.0)
    running: list[_Running] = []
    rows: list[Row] = []
    best: Decision | None = None

    def launch(start: float, end: float, ratio: float, sub: int, attempt: int, zeros: int, ran: bool) -> None:
        decision = (best if best is not None else policy.best()) if running else policy.predict()
        out = runner.run_try(decision)
        policy.started(out.batch_size, out.power_limit_w, out.profiled)
        zeros = zeros + 1 if out.epochs == 0.0 else 0
        running.append(_Running(start, end, ratio, out, sub, attempt, zeros, ran or out.epochs > 0.0))

    def reap(now: float) -> None:
        nonlocal best
        while running:
            job = min(running, key=_end)
            if job.end > now:
                return
            running.remove(job)
            out = job.outcome
            policy.observe(out)
            if out.epochs > 0.0:
                rows.append(runner.row(job.submission, job.attempt, out, job.ratio))
            if out.reached:
                if out.cost < runner.min_cost:
                    runner.min_cost = out.cost
                    best = Decision(out.batch_size, out.power_limit_w)
            elif job.zeros < MAX_ZERO_BUDGET_TRIES and job.attempt < MAX_SUBMISSION_TRIES:
                span = job.end - job.start
                launch(
                    job.end, job.end + span, job.ratio, job.submission, job.attempt + 1, job.zeros, job.ran
                )
            elif not job.ran:
                rows.append(runner.missed_row(job.submission, job.attempt, out, job.ratio))

    for k in range(len(starts)):
        reap(float(starts[k]))
        launch(float(starts[k]), float(ends[k]), float(ratios[k]), k + 1, 1, 0, False)
    reap(math.inf)
    return rows


def _end(job: _Running) -> float:
    return job.end
