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
:func:`~zeus_bench.sim.executor.missed_row`). Energy, time and cost in the ``runs`` rows are
scaled by ``runtime_ratio``; the policy and the early-stop threshold see unscaled costs, as in
the paper. The ``zeus`` policy with the paper's knobs and no window replays through a fused loop
(:mod:`zeus_bench.sim.scenarios.fastarrivals`), equal row for row to the generic one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.sim.executor import OneTry, missed_row, try_row
from zeus_bench.sim.model import row_columns
from zeus_bench.sim.policies import Decision, Outcome, Policy, PolicyContext
from zeus_bench.sim.policies.builtin import Zeus
from zeus_bench.sim.replay import BanditKnobs, JobModel, Row, seed_generators
from zeus_bench.sim.rules import (
    KNOWN,
    MAX_SUBMISSION_TRIES,
    MAX_ZERO_BUDGET_TRIES,
    replay_options,
)
from zeus_bench.sim.scenarios.arrival_table import (
    ARRIVAL_COLUMNS,
    MAX_RUNTIME_RATIO,
    ArrivalColumns,
    read_arrival_columns,
    read_arrivals,
    synthetic_arrivals,
    validate_arrivals,
)

if TYPE_CHECKING:
    import pandas as pd

    from zeus_bench.sim.scenarios.fastarrivals import SharedTries

__all__ = [
    "ARRIVAL_COLUMNS",
    "MAX_RUNTIME_RATIO",
    "ArrivalColumns",
    "fused_chunks",
    "generic_chunks",
    "read_arrival_columns",
    "read_arrivals",
    "replay_group",
    "replay_groups",
    "synthetic_arrivals",
    "validate_arrivals",
]  # the table's functions are arrival_table's, imported from here as before


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


def replay_groups(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    groups: Iterable[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    window: int = 0,
    knobs: BanditKnobs | None = None,
) -> Iterator[tuple[str, list[Row]]]:
    """Replay every group of one workload (``(name, starts, ends, ratios)`` each): ``(name, rows)``.

    Each group's rows are :func:`replay_group`'s. The ``zeus`` policy (or a subclass that
    overrides none of its decisions) with the paper's knobs and no window replays through the
    fused loop (:mod:`zeus_bench.sim.scenarios.fastarrivals`), whose tries are shared by every group of the
    (model, seed, beta); any other policy through the generic loop, one group at a time.
    """
    knobs = knobs or BanditKnobs()
    shared = fused_tries(model, policy_cls, seed, beta, window, knobs)
    if shared is not None:
        for name, starts, ends, ratios in groups:
            yield name, shared.replay(seed, starts, ends, ratios)
        return
    for name, starts, ends, ratios in groups:
        yield name, _replay_generic(model, policy_cls, seed, beta, (starts, ends, ratios), window, knobs)


def fused_tries(
    model: JobModel, policy_cls: type[Policy], seed: int, beta: float, window: int, knobs: BanditKnobs
) -> SharedTries | None:
    """The fused loop's shared tries when it replays this policy (:func:`replay_groups`), else None.

    The ``zeus`` policy (or a subclass that overrides none of its decisions) with the paper's
    knobs and no window, on a job the fused loop applies to
    (:func:`~zeus_bench.sim.scenarios.fastarrivals.shared_tries`).
    """
    if not (_fused(policy_cls) and window == 0 and knobs.default):
        return None
    from zeus_bench.sim.scenarios.fastarrivals import shared_tries

    return shared_tries(model, seed, beta)


def _fused(policy_cls: type[Policy]) -> bool:
    """Whether ``policy_cls`` decides as :class:`Zeus` does (every decision method Zeus's own)."""
    return issubclass(policy_cls, Zeus) and all(
        getattr(policy_cls, m, None) is getattr(Zeus, m, None) for m in _ZEUS_DECISIONS
    )


#: The methods that make the ``zeus`` policy's decisions (a subclass overriding one is replayed generically).
_ZEUS_DECISIONS = ("__init__", "predict", "observe", "best", "started", "_decide")


def replay_group(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    starts: np.ndarray,
    ends: np.ndarray,
    ratios: np.ndarray,
    **options: Any,
) -> list[Row]:
    """Replay one group of an arrival table (rows in start order) under one policy and seed.

    ``options``: fields of :class:`~zeus_bench.sim.rules.ReplayOptions` by name (the others: the
    paper's); the arrival replay reads ``window`` and ``knobs`` (no horizon or noise: it refuses them).

    Returns:
        One row per try that ran, in the order the tries end (observed), fields as
        :data:`~zeus_bench.sim.replay.RUN_FIELDS`, ``recurrence`` the submission's number in
        the group (from 1); plus one row per submission given up without a try that ran.

    Raises:
        TypeError: a keyword that is no field of :class:`~zeus_bench.sim.rules.ReplayOptions`.
        ValueError: a horizon other than ``known`` or noise.
    """
    opts = replay_options(None, options)
    if opts.horizon != KNOWN or opts.noise > 0.0:
        raise ValueError("the arrival replay takes no --horizon or --noise")
    group = ("", starts, ends, ratios)
    return next(replay_groups(model, policy_cls, seed, beta, [group], opts.window, opts.knobs))[1]


def _replay_generic(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    group: tuple[np.ndarray, np.ndarray, np.ndarray],
    window: int,
    knobs: BanditKnobs,
) -> list[Row]:
    """:func:`replay_group` of ``group`` (starts, ends, ratios) through the policy's own methods and the executor's tries (:class:`~zeus_bench.sim.executor.OneTry`)."""
    starts, ends, ratios = group
    env_rng, pol_rng = seed_generators(seed)
    ctx = PolicyContext(model.job, model.cost, beta, window, pol_rng, None, *knobs, concurrent=True)
    policy = policy_cls(ctx)
    runner = OneTry(model, policy, beta, env_rng, zero_budget_penalty=0.0)
    running: list[_Running] = []
    rows: list[Row] = []
    best: Decision | None = None

    def launch(start: float, end: float, ratio: float, sub: int, attempt: int, zeros: int, ran: bool) -> None:
        decision = (best if best is not None else policy.best()) if running else policy.predict()
        out = runner.run(decision)
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
                rows.append(try_row(model, job.submission, job.attempt, out, job.ratio))
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
                rows.append(missed_row(model, job.submission, job.attempt, out, job.ratio))

    for k in range(len(starts)):
        reap(float(starts[k]))
        launch(float(starts[k]), float(ends[k]), float(ratios[k]), k + 1, 1, 0, False)
    reap(math.inf)
    return rows


def _end(job: _Running) -> float:
    return job.end


def group_columns(
    arrivals: ArrivalColumns | pd.DataFrame,
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per group (sorted by name), its start, end and runtime-ratio arrays in start order.

    The table's rows are in (group, start_time) order (:class:`ArrivalColumns`; a frame is
    validated first, :func:`validate_arrivals`' rules), and its group codes follow the names'
    order; this slices the columns, so that no frame per group is built.
    """
    table = ArrivalColumns.of(arrivals)
    codes, labels = table.group, table.group_names
    starts, ends, ratios = table.start_time, table.end_time, table.runtime_ratio
    cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(codes)]
    if not len(codes):
        return []
    return [(labels[codes[a]], starts[a:b], ends[a:b], ratios[a:b]) for a, b in itertools.pairwise(bounds)]


def fused_chunks(
    shared: SharedTries,
    seed: int,
    groups: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    ratios: np.ndarray,
    offsets: np.ndarray,
    chunk_rows: int,
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """The fused loop's rows of every group, whole groups of about ``chunk_rows`` rows: (group number per row, columns)."""
    codes: list[int] = []
    sizes: list[int] = []
    first = 0
    for g, (_, starts, ends, _) in enumerate(groups):
        done = shared.codes(seed, starts, ends)
        codes.extend(done)
        sizes.append(len(done))
        if len(codes) >= chunk_rows or g == len(groups) - 1:
            if codes:
                group_codes = np.repeat(np.arange(first, g + 1), sizes)
                arr = np.array(codes, dtype=np.int64)
                row_ratios = ratios[offsets[group_codes] + shared.submissions(arr) - 1]
                yield group_codes, shared.columns(arr, row_ratios)
            codes, sizes, first = [], [], g + 1


def generic_chunks(
    model: JobModel,
    policy_cls: type[Policy],
    seed: int,
    beta: float,
    groups: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
    chunk_rows: int,
    window: int = 0,
    knobs: BanditKnobs | None = None,
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """:func:`fused_chunks` for a policy the fused loop does not replay (the generic loop's rows)."""
    rows: list[Row] = []
    sizes: list[int] = []
    first = 0
    replayed = replay_groups(model, policy_cls, seed, beta, groups, window, knobs)
    for g, (_, done) in enumerate(replayed):
        rows.extend(done)
        sizes.append(len(done))
        if len(rows) >= chunk_rows or g == len(groups) - 1:
            if rows:
                yield np.repeat(np.arange(first, g + 1), sizes), row_columns(rows)
            rows, sizes, first = [], [], g + 1
