"""Run the simulator over a grid: workloads x policies x costs x beta x seeds, into a ``runs`` frame.

``zeus-bench simulate`` calls :func:`iter_simulate_tables` (rows as :class:`~zeus_bench.store.ColumnTable`,
no pandas); :func:`simulate` and :func:`iter_simulate` give frames. A policy's seeds are replayed
together, in groups of at most :data:`GROUP_SEEDS`, each in one run of the executor
(:func:`~zeus_bench.sim.replay.replay_many`, through the policy's face over seeds; arrival tasks
by :mod:`zeus_bench.sim.scenarios.arrivals`); in one process, a job's policies whose tasks are a
single walk each share it (:func:`~zeus_bench.sim.replay.replay_policies`: the same tables, in the
same order); ``jobs > 1`` spreads tasks over processes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.core.cost import Cost
from zeus_bench.core.entry import MAX_RECURRENCES, check_tries
from zeus_bench.core.errors import ConfigError, ZeusBenchError
from zeus_bench.sim.model import row_columns
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy, load_policy_module
from zeus_bench.sim.replay import (
    BanditKnobs,
    JobModel,
    Row,
    check_job,
    default_recurrences,
    replay_many,
    replay_policies,
)
from zeus_bench.sim.rules import KNOWN, PAPER_OPTIONS, Horizon, ReplayOptions, check_horizon, check_noise
from zeus_bench.store import Coded, ColumnTable, ColumnValues, as_frame
from zeus_bench.traces.jobs import JobTrace, TraceSet

if TYPE_CHECKING:  # frames come from pandas only where callers ask for them
    import pandas as pd

    from zeus_bench.sim.scenarios.arrival_table import ArrivalColumns
    from zeus_bench.sim.scenarios.warmstart import Prior


log = logging.getLogger(__name__)
DEFAULT_KNOBS = BanditKnobs()
#: Seconds between two recurrences of a plain recurring job, placing them in time for the cost's
#: terms (a daily retraining); an arrival table places each submission at its ``start_time``.
DEFAULT_PERIOD_S = 86400.0

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Task:
    """One unit of work: a job, one cost, one policy, every beta and seed."""

    job: JobTrace
    cost: Cost
    policy: str
    betas: tuple[float, ...]
    seeds: tuple[int, ...]
    recurrences: int
    window: int
    arrivals: ArrivalColumns | None = None  # the job's submissions (zeus_bench.sim.scenarios.arrival_table)
    policy_modules: tuple[str, ...] = ()
    drift: pd.DataFrame | None = None  # the job's drift rows (zeus_bench.sim.scenarios.drift)
    prior: Prior | None = None  # cross-GPU warm start (zeus_bench.sim.scenarios.warmstart)
    horizon: Horizon = KNOWN  # what the policy is told of the recurrences (zeus_bench.sim.rules)
    noise: float = 0.0  # per-try noise on time and power (relative std; 0: none)
    knobs: BanditKnobs = DEFAULT_KNOBS  # the batch-size optimizer's prior and pruning rounds
    period_s: float = DEFAULT_PERIOD_S  # time between recurrences (their places, for the cost's terms)
    origin_s: float = 0.0  # the arrival table's earliest start, placed at time 0

    @property
    def units(self) -> int:
        """Replays in the task (for progress)."""
        return len(self.betas) * len(self.seeds)


def _frame(task: Task, blocks: list[tuple[float, int, str | None, list[Row]]]) -> ColumnTable:
    """All rows of a task as one table with identity columns (built once, not per replay)."""
    rows = [r for *_, block in blocks for r in block]
    sizes = [len(block) for *_, block in blocks]
    seeds = np.repeat(np.array([b[1] for b in blocks], dtype=np.int64), sizes)
    betas = np.repeat(np.array([b[0] for b in blocks], dtype=float), sizes)
    groups = (
        None if task.arrivals is None else np.repeat(np.array([b[2] for b in blocks], dtype=object), sizes)
    )
    return _table(task, seeds, betas, row_columns(rows), groups)


def _table(
    task: Task,
    seeds: np.ndarray,
    betas: np.ndarray | float,
    tries: dict[str, np.ndarray],
    groups: np.ndarray | Coded | None = None,
) -> ColumnTable:
    """A task's rows from their seed, beta and try columns, with the identity columns."""
    data: dict[str, ColumnValues] = {
        "gpu": task.job.gpu,
        "workload": task.job.workload.id,
        "policy": task.policy,
        "seed": seeds,
        "eta": float(task.cost.eta),
        "beta": betas,
    }
    data.update(tries)
    data["window"] = int(task.window)
    data["num_gpus"] = int(task.job.num_gpus)
    data["max_power_w"] = float(task.job.max_power_w)
    if groups is not None:
        data["group"] = groups
    return ColumnTable(len(seeds), data)


CHUNK_ROWS = 1 << 17  # rows per frame a task yields (one Parquet row group each)


def _seeds_per_walk(task: Task, chunk_rows: int) -> int:
    """The most seeds of a task replayed in one walk: :data:`GROUP_SEEDS`, and about ``chunk_rows`` rows."""
    return max(1, min(GROUP_SEEDS, chunk_rows // max(1, task.recurrences)))


def iter_task(
    task: Task, progress: Progress | None = None, chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame]:
    """Replay one task; yields its rows in frames of about ``chunk_rows`` (whole replays each)."""
    return map(as_frame, iter_task_tables(task, progress, chunk_rows))


def iter_task_tables(
    task: Task, progress: Progress | None = None, chunk_rows: int = CHUNK_ROWS
) -> Iterator[ColumnTable]:
    """Replay one task; yields its rows in tables of about ``chunk_rows`` (whole replays each).

    Raises:
        ConfigError: a user's policy (``--policy-module``) raised: one line naming it and the
            exception (a failure of the project's own policies keeps its traceback).
    """
    for module in task.policy_modules:  # worker processes need the user's policies too
        load_policy_module(module)
    policy_cls = get_policy(task.policy)
    if task.prior is not None:  # (the scenarios' modules are imported where a task has one)
        from zeus_bench.sim.scenarios.warmstart import bind_prior

        policy_cls = bind_prior(policy_cls, task.prior)
    try:
        yield from _replay_frames(task, policy_cls, progress, chunk_rows)
    except ZeusBenchError:
        raise
    except Exception as exc:
        if policy_cls.__module__.startswith("zeus_bench."):
            raise  # a bug of ours: keep the traceback
        # A user's policy (--policy-module) may fail in any way: one line naming it, no traceback.
        raise ConfigError(
            f"policy {task.policy!r} ({policy_cls.__module__}) raised {type(exc).__name__}: {exc} "
            f"(replaying {task.job.workload.id} on {task.job.gpu})"
        ) from None


def _replay_frames(
    task: Task, policy_cls: Any, progress: Progress | None, chunk_rows: int
) -> Iterator[ColumnTable]:
    """Replay every (beta, seed) of a task (or its arrival groups), yielding tables of rows.

    Seeds go in groups of at most :data:`GROUP_SEEDS` and about ``chunk_rows`` rows, each group
    in one run of the executor (one table).
    """
    if task.arrivals is not None:
        model = JobModel(task.job, task.cost)
        yield from _arrival_tables(task, model, policy_cls, progress, chunk_rows)
        return
    model, when = _recurring_model(task)
    drift = None
    if task.drift is not None:
        from zeus_bench.sim.scenarios.drift import Drift

        drift = Drift(task.drift, task.job)
    options = ReplayOptions(task.recurrences, task.window, task.horizon, task.noise, task.knobs)
    per_group = _seeds_per_walk(task, chunk_rows)
    seeds = list(task.seeds)
    for beta in task.betas:
        for start in range(0, len(seeds), per_group):
            group = seeds[start : start + per_group]
            tries = replay_many(
                model, policy_cls, group, beta, task.recurrences, drift=drift, options=options
            )
            if progress is not None:
                progress(len(group))
            seed_col = np.asarray(group, dtype=np.int64)[tries.seed]
            columns = tries.columns
            if when is not None:
                columns = with_terms(columns, task.cost, when[columns["recurrence"]])
            yield _table(task, seed_col, float(beta), columns)


def _recurring_model(task: Task) -> tuple[JobModel, np.ndarray | None]:
    """The model a recurring task replays, and its recurrences' places in time (None: no priced term)."""
    when = recurrence_times(task.recurrences, task.period_s) if task.cost.terms else None
    for term in task.cost.terms:  # (plan checked it for the grid's tasks; a task built by hand too)
        term.reach(when[1:], "recurrence")  # type: ignore[index]
    return JobModel(task.job, task.cost, when), when


def _walk_mates(tasks: Sequence[Task], i: int, chunk_rows: int) -> int:
    """How many tasks from ``tasks[i]`` on replay in one executor walk (:func:`_walked_together`; 1: alone).

    Consecutive tasks of one job and cost (``plan`` lists a job's policies one after the other)
    that differ in their policy alone, each a single walk (one beta, one group of seeds), with the
    paper's window and knobs and no arrivals, drift or prior, and a policy of the project's own (a
    user's replays alone, so its failure names it); together about ``chunk_rows`` rows at most
    (one table's worth: the tables of a shared walk are held until the last is made).
    """

    def plain(t: Task) -> bool:
        cls = POLICIES.get(t.policy)
        return (
            cls is not None
            and cls.__module__.startswith("zeus_bench.")
            and t.arrivals is None
            and t.drift is None
            and t.prior is None
            and t.window == 0
            and t.knobs == DEFAULT_KNOBS
            and len(t.betas) == 1
            and 0 < len(t.seeds) <= _seeds_per_walk(t, chunk_rows)
        )

    first = tasks[i]
    if not plain(first):
        return 1
    same = (
        first.job,
        first.cost,
        first.betas,
        first.seeds,
        first.recurrences,
        first.horizon,
        first.noise,
        first.period_s,
    )
    rows = len(first.seeds) * max(1, first.recurrences)  # (about: a recurrence is a row or more)
    j = i + 1
    while j < len(tasks) and (j - i + 1) * rows <= chunk_rows:
        t = tasks[j]
        if (
            not plain(t)
            or t.job is not first.job
            or (t.job, t.cost, t.betas, t.seeds, t.recurrences, t.horizon, t.noise, t.period_s) != same
        ):
            break
        j += 1
    return j - i


def _walked_together(tasks: Sequence[Task], progress: Progress | None) -> Iterator[ColumnTable]:
    """The tables of tasks that differ in their policy alone (:func:`_walk_mates`), their seeds in one walk.

    Each policy's seeds keep their own objects and generators, so each task's table is the one its
    own walk gives (:func:`~zeus_bench.sim.replay.replay_policies`), yielded in the tasks' order.
    """
    first = tasks[0]
    model, when = _recurring_model(first)
    beta, seeds = first.betas[0], list(first.seeds)
    classes = [get_policy(t.policy) for t in tasks]
    runs = replay_policies(model, classes, seeds, beta, first.recurrences, first.horizon, first.noise)
    for task, tries in zip(tasks, runs, strict=True):
        if progress is not None:
            progress(len(seeds))
        columns = tries.columns
        if when is not None:
            columns = with_terms(columns, task.cost, when[columns["recurrence"]])
        yield _table(task, np.asarray(seeds, dtype=np.int64)[tries.seed], float(beta), columns)


def _arrival_tables(
    task: Task, model: JobModel, policy_cls: type[Policy], progress: Progress | None, chunk_rows: int
) -> Iterator[ColumnTable]:
    """Every (beta, seed) of an arrival task, every group in name order: tables of about ``chunk_rows`` rows."""
    assert task.arrivals is not None
    from zeus_bench.sim.scenarios.arrivals import fused_chunks, fused_tries, generic_chunks, group_columns

    groups = group_columns(task.arrivals)
    labels = [g[0] for g in groups]
    # Each row's runtime ratio is its submission's: the groups' ratios end to end, by offset.
    ratios = np.concatenate([g[3] for g in groups]) if groups else np.zeros(0)
    offsets = np.cumsum([0, *(len(g[3]) for g in groups)])[:-1]
    # Each submission's place in time, the groups' end to end as the ratios (for the cost's terms).
    when = np.concatenate([np.zeros(0), *(g[1] - task.origin_s for g in groups)]) if task.cost.terms else None
    yielded = False
    for beta in task.betas:
        for seed in task.seeds:
            shared = fused_tries(model, policy_cls, seed, beta, task.window, task.knobs)
            if shared is None:
                chunks = generic_chunks(
                    model, policy_cls, seed, beta, groups, chunk_rows, task.window, task.knobs
                )
            else:
                chunks = fused_chunks(shared, seed, groups, ratios, offsets, chunk_rows)
            for group_codes, chunk in chunks:
                n = len(group_codes)
                tries = chunk
                if when is not None:
                    rows = offsets[group_codes] + np.asarray(chunk["recurrence"], dtype=np.int64) - 1
                    tries = with_terms(chunk, task.cost, when[rows])
                yield _table(
                    task, np.full(n, seed, dtype=np.int64), float(beta), tries, Coded(group_codes, labels)
                )
                yielded = True
            if progress is not None:
                progress(1)
    if not yielded:
        yield _frame(task, [])


def recurrence_times(recurrences: int, period_s: float) -> np.ndarray:
    """Each recurrence ``1..recurrences``'s place in time, ``period_s`` apart from 0 (index 0: NaN, unused)."""
    out = np.full(recurrences + 1, np.nan)
    out[1:] = np.arange(recurrences) * float(period_s)
    return out


def with_terms(tries: dict[str, np.ndarray], cost: Cost, when_s: np.ndarray) -> dict[str, np.ndarray]:
    """The try columns with each of the cost's terms' amount (its column), each row at its place ``when_s``.

    With a priced term, ``expected_cost`` adds the terms' price of ``expected_energy_j`` and
    ``expected_time_s`` at the same place (the replay's ``cost`` has it already).
    """
    out = dict(tries)
    energy = np.asarray(tries["energy_j"], dtype=float)
    time = np.asarray(tries["time_s"], dtype=float)
    for term in cost.terms:
        out[term.column] = term.amount(energy, time, when_s)
    if cost.priced:
        energy, time = (np.asarray(tries[k], dtype=float) for k in ("expected_energy_j", "expected_time_s"))
        out["expected_cost"] = tries["expected_cost"] + cost.term_cost(energy, time, when_s)
    return out


def check_period(period_s: float) -> float:
    """``period_s`` if a finite number > 0, else :class:`ConfigError`."""
    if not (np.isfinite(period_s) and period_s > 0):
        raise ConfigError(f"--recurrence-period-s must be a finite number > 0, got {period_s}")
    return float(period_s)


#: Seeds replayed together in one run of the executor (more amortise each step's array
#: operations over more tries; fewer hold less of the generators' outputs fetched ahead).
GROUP_SEEDS = 1024


def run_task(task: Task, progress: Progress | None = None) -> pd.DataFrame:
    """Replay one task; returns its rows."""
    import pandas as pd

    frames = list(iter_task(task, progress))
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _run_task_quiet(task: Task) -> pd.DataFrame:
    return run_task(task)


def check_window(window: int) -> int:
    """``window`` (Thompson sampling's, in observations per arm; 0: unbounded) if it is usable.

    Raises:
        ConfigError: negative, beyond :data:`~zeus_bench.core.entry.MAX_RECURRENCES`, or 1.
    """
    if not 0 <= window <= MAX_RECURRENCES:
        raise ConfigError(f"window must be in [0, {MAX_RECURRENCES}], got {window}")
    if window == 1:
        raise ConfigError(
            "window 1 makes every choice random (an arm needs 2 observations in its window before "
            "Thompson Sampling samples it, so every prediction explores); use 0 (unbounded) or >= 2"
        )
    return window


@dataclass(frozen=True)
class Grid:
    """What :func:`plan` crosses: workloads (None: all of the GPU's, or the arrival table's), policies, seeds, costs, betas."""

    workloads: Sequence[str] | None
    policies: Sequence[str]
    seeds: Sequence[int]
    costs: Sequence[Cost]
    betas: Sequence[float]


@dataclass(frozen=True)
class Scenario:
    """What the jobs live through besides recurring (none by default)."""

    arrivals: pd.DataFrame | ArrivalColumns | None = None  # arrival table (zeus_bench.sim.scenarios.arrivals)
    drift: pd.DataFrame | None = None  # drift table (zeus_bench.sim.scenarios.drift)
    prior: tuple[TraceSet, str] | None = (
        None  # warm start from (traces, GPU) (zeus_bench.sim.scenarios.warmstart)
    )
    period_s: float = DEFAULT_PERIOD_S  # time between recurrences (their places, for the cost's terms)


def _check_options(grid: Grid, options: ReplayOptions) -> ReplayOptions:
    """``options`` checked (horizon and noise normalized), the grid's policies and betas known."""
    if not grid.seeds:
        raise ConfigError("no seeds given")
    if not grid.policies:
        raise ConfigError("no policies given")
    for module in options.policy_modules:
        load_policy_module(module)
    for p in grid.policies:
        get_policy(p)
    check_window(options.window)
    if options.knobs is not None:
        options.knobs.check()
    if options.recurrences is not None and not 1 <= options.recurrences <= MAX_RECURRENCES:
        raise ConfigError(f"recurrences must be in [1, {MAX_RECURRENCES}], got {options.recurrences}")
    return replace(options, horizon=check_horizon(options.horizon), noise=check_noise(options.noise))


def _check_scenario(grid: Grid, options: ReplayOptions, scenario: Scenario) -> Scenario:
    """``scenario`` checked against the options and the grid's costs (a priced term needs plain recurring jobs)."""
    arrivals = scenario.arrivals
    period_s = check_period(scenario.period_s)
    priced = sorted({t.column for c in grid.costs for t in c.priced})
    if priced and arrivals is not None:
        raise ConfigError(
            f"a price on {', '.join(priced)} applies to plain recurring jobs: the arrival replays price no cost term"
        )
    if scenario.drift is not None and arrivals is not None:
        raise ConfigError("--drift and --arrivals cannot be combined")
    if arrivals is not None and (options.horizon != KNOWN or options.noise > 0.0):
        raise ConfigError("--horizon and --noise apply to plain recurring jobs, not to --arrivals")
    if scenario.prior is not None:
        from zeus_bench.sim.scenarios.warmstart import check_prior_gpu

        check_prior_gpu(*scenario.prior)
    return replace(scenario, period_s=period_s)


def _workloads(traces: TraceSet, gpu: str, grid: Grid, arrivals: ArrivalColumns | None) -> list[str]:
    """The workloads to simulate: the grid's (in the arrival table's order with one), else the GPU's."""
    workloads = grid.workloads
    if arrivals is not None:
        in_table = arrivals.workloads()  # in order of appearance
        if workloads is not None:
            in_table = [w for w in in_table if w in set(workloads)]
        workloads = in_table
    elif workloads is None:
        workloads = traces.workload_ids(gpu)
    if not workloads:
        raise ConfigError(f"no workloads to simulate on GPU {gpu!r}")
    return list(workloads)


def plan(
    traces: TraceSet,
    gpu: str,
    grid: Grid,
    options: ReplayOptions = PAPER_OPTIONS,
    scenario: Scenario = Scenario(),
) -> list[Task]:
    """Check the inputs and lay out the tasks (no replay yet).

    Raises:
        ConfigError: unknown GPU, workload or policy, empty seeds, bad beta/window, a
            workload whose b0 is missing or never converges; a drift table with arrivals or
            naming batch sizes the job lacks; a prior (traces, GPU) without the job's workload or
            without a converging batch size in common; a cost term whose data end before the last
            recurrence (or submission), a priced term with arrivals.
    """
    if gpu not in traces.gpus:
        raise traces.unknown_gpu(gpu)
    options = _check_options(grid, options)
    from zeus_bench.core.cost import check_beta

    betas = tuple(check_beta(b) for b in grid.betas)
    sc = _check_scenario(grid, options, scenario)
    table = None
    if sc.arrivals is not None:  # (a frame is validated: the replay reads columns)
        from zeus_bench.sim.scenarios.arrival_table import ArrivalColumns

        table = ArrivalColumns.of(sc.arrivals)
    origin_s = 0.0 if table is None else float(table.start_time.min())
    terms = list({id(t): t for c in grid.costs for t in c.terms}.values())
    if sc.drift is not None:
        from zeus_bench.sim.scenarios.drift import drift_of
    if sc.prior is not None:
        from zeus_bench.sim.scenarios.warmstart import prior_for
    tasks = []
    for w in _workloads(traces, gpu, grid, table):
        job = traces.job(gpu, w)
        check_job(job)
        n_rec = options.recurrences if options.recurrences is not None else default_recurrences(job)
        sub = None if table is None else table.of_workload(w)
        job_drift = None if sc.drift is None else drift_of(sc.drift, job)
        for term in terms:  # a term's data too short fails here, before any replay
            if sub is None:
                term.reach(recurrence_times(n_rec, sc.period_s)[1:], "recurrence")
            else:
                term.reach(sub.start_time - origin_s, "submission")
        for cost in grid.costs:
            job_prior = None if sc.prior is None else prior_for(job, sc.prior[0], sc.prior[1], cost)
            tasks += [
                Task(
                    job,
                    cost,
                    p,
                    betas,
                    tuple(grid.seeds),
                    n_rec,
                    options.window,
                    sub,
                    tuple(options.policy_modules),
                    job_drift,
                    job_prior,
                    options.horizon,
                    options.noise,
                    options.knobs or BanditKnobs(),
                    sc.period_s,
                    origin_s,
                )
                for p in grid.policies
            ]
    n_policies = len(grid.policies)
    check_tries(
        sum(t.units * (len(t.arrivals) if t.arrivals is not None else t.recurrences) for t in tasks),
        f"{len(grid.seeds)} seed(s) x {len(betas)} beta(s) x {len(grid.costs)} cost(s) x {n_policies} "
        f"polic{'y' if n_policies == 1 else 'ies'} x {len(tasks) // max(1, n_policies * len(grid.costs))} "
        f"job(s) of GPU {gpu} x their recurrences",
    )
    return tasks


def iter_simulate(
    tasks: Sequence[Task], jobs: int = 1, progress: Progress | None = None, chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame]:
    """Run the tasks (in ``jobs`` processes when > 1); yields the ``runs`` rows frame by frame.

    In one process, a task's frames come as its replays finish (about ``chunk_rows`` rows each),
    so memory holds one frame at a time however large the grid; with ``jobs > 1`` each task's
    rows come back whole.
    """
    for table in iter_simulate_tables(tasks, jobs, progress, chunk_rows):
        yield table if not isinstance(table, ColumnTable) else as_frame(table)


def iter_simulate_tables(
    tasks: Sequence[Task], jobs: int = 1, progress: Progress | None = None, chunk_rows: int = CHUNK_ROWS
) -> Iterator[pd.DataFrame | ColumnTable]:
    """:func:`iter_simulate`, yielding in one process :class:`~zeus_bench.store.ColumnTable` (no pandas)."""
    if jobs > 1 and len(tasks) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for task, frame in zip(tasks, pool.map(_run_task_quiet, tasks), strict=True):
                if progress is not None:
                    progress(task.units)
                yield frame
    else:
        i = 0
        while i < len(tasks):
            mates = _walk_mates(tasks, i, chunk_rows)
            if mates > 1:  # a job's policies in one walk
                yield from _walked_together(tasks[i : i + mates], progress)
            else:
                yield from iter_task_tables(tasks[i], progress, chunk_rows)
            i += mates


def simulate(tasks: Sequence[Task], jobs: int = 1, progress: Progress | None = None) -> pd.DataFrame:
    """Run the tasks (in ``jobs`` processes when > 1); returns the ``runs`` frame."""
    import pandas as pd

    df = pd.concat(list(iter_simulate(tasks, jobs, progress)), ignore_index=True)
    if "group" not in df.columns:
        df["group"] = pd.NA
    return df
