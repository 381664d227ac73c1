"""Run the simulator over a grid: workloads x policies x eta x beta x seeds, into a ``runs`` frame.

:func:`simulate` is what ``zeus-bench simulate`` calls. Per (workload, eta) the job's figures are
computed once (:class:`~zeus_bench.sim.replay.JobModel`); each (policy, beta, seed) replay then
runs on Python floats. ``jobs > 1`` spreads (workload, eta, policy) tasks over processes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from zeus_bench.errors import ConfigError, ZeusBenchError
from zeus_bench.jobs import JobTrace, TraceSet
from zeus_bench.sim.arrivals import replay_group
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import load_policy_module
from zeus_bench.sim.replay import RUN_FIELDS, JobModel, Row, check_job, default_recurrences, replay

log = logging.getLogger(__name__)

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Task:
    """One unit of work: a job, one eta, one policy, every beta and seed."""

    job: JobTrace
    eta: float
    policy: str
    betas: tuple[float, ...]
    seeds: tuple[int, ...]
    recurrences: int
    window: int
    arrivals: pd.DataFrame | None = None
    policy_modules: tuple[str, ...] = ()

    @property
    def units(self) -> int:
        """Replays in the task (for progress)."""
        return len(self.betas) * len(self.seeds)


def _frame(task: Task, blocks: list[tuple[float, int, str | None, list[Row]]]) -> pd.DataFrame:
    """All rows of a task as one frame with identity columns (built once, not per replay)."""
    rows = [r for *_, block in blocks for r in block]
    n = len(rows)
    sizes = [len(block) for *_, block in blocks]
    cols: list[Sequence[object]] = list(zip(*rows, strict=True)) if n else [[] for _ in RUN_FIELDS]
    data: dict[str, object] = {
        "gpu": np.full(n, task.job.gpu, dtype=object),
        "workload": np.full(n, task.job.workload.id, dtype=object),
        "policy": np.full(n, task.policy, dtype=object),
        "seed": np.repeat(np.array([b[1] for b in blocks], dtype=np.int64), sizes),
        "eta": np.full(n, task.eta),
        "beta": np.repeat(np.array([b[0] for b in blocks], dtype=float), sizes),
    }
    for name, values in zip(RUN_FIELDS, cols, strict=True):
        data[name] = np.asarray(values)
    data["window"] = np.full(n, task.window, dtype=np.int64)
    data["num_gpus"] = np.full(n, task.job.num_gpus, dtype=np.int64)
    data["max_power_w"] = np.full(n, task.job.max_power_w)
    if task.arrivals is not None:
        data["group"] = np.repeat(np.array([b[2] for b in blocks], dtype=object), sizes)
    return pd.DataFrame(data)


def run_task(task: Task, progress: Progress | None = None) -> pd.DataFrame:
    """Replay one task; returns its rows."""
    for module in task.policy_modules:  # worker processes need the user's policies too
        load_policy_module(module)
    model = JobModel(task.job, task.eta)
    policy_cls = get_policy(task.policy)
    blocks: list[tuple[float, int, str | None, list[Row]]] = []
    groups = [] if task.arrivals is None else list(task.arrivals.groupby("group", sort=True))
    try:
        _replay_blocks(task, model, policy_cls, groups, blocks, progress)
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
    return _frame(task, blocks)


def _replay_blocks(
    task: Task,
    model: JobModel,
    policy_cls: Any,
    groups: list[Any],
    blocks: list[tuple[float, int, str | None, list[Row]]],
    progress: Progress | None,
) -> None:
    """Replay every (beta, seed) of a task (and every arrival group) into ``blocks``."""
    for beta in task.betas:
        for seed in task.seeds:
            if task.arrivals is None:
                blocks.append(
                    (beta, seed, None, replay(model, policy_cls, seed, beta, task.recurrences, task.window))
                )
            for group, g in groups:
                rows = replay_group(
                    model, policy_cls, seed, beta, g["start_time"].to_numpy(), g["end_time"].to_numpy(),
                    g["runtime_ratio"].to_numpy(), task.window,
                )  # fmt: skip
                blocks.append((beta, seed, str(group), rows))
            if progress is not None:
                progress(1)


def _run_task_quiet(task: Task) -> pd.DataFrame:
    return run_task(task)


def plan(
    traces: TraceSet,
    gpu: str,
    workloads: Sequence[str] | None,
    policies: Sequence[str],
    seeds: Sequence[int],
    etas: Sequence[float],
    betas: Sequence[float],
    recurrences: int | None = None,
    window: int = 0,
    arrivals: pd.DataFrame | None = None,
    policy_modules: Sequence[str] = (),
) -> list[Task]:
    """Check the inputs and lay out the tasks (no replay yet).

    Raises:
        ConfigError: unknown GPU, workload or policy, empty seeds, bad eta/beta/window, a
            workload whose b0 is missing or never converges.
    """
    if gpu not in traces.gpus:
        raise traces.unknown_gpu(gpu)
    if not seeds:
        raise ConfigError("no seeds given")
    if not policies:
        raise ConfigError("no policies given")
    for module in policy_modules:
        load_policy_module(module)
    for p in policies:
        get_policy(p)
    if window < 0:
        raise ConfigError(f"window must be >= 0, got {window}")
    if recurrences is not None and recurrences < 1:
        raise ConfigError(f"recurrences must be >= 1, got {recurrences}")
    from zeus_bench.cost import check_beta, check_eta

    etas = [check_eta(e) for e in etas]
    betas = [check_beta(b) for b in betas]
    if arrivals is not None:
        in_table = list(dict.fromkeys(arrivals["workload"]))
        if workloads is not None:
            in_table = [w for w in in_table if w in set(workloads)]
        workloads = in_table
    elif workloads is None:
        workloads = traces.workload_ids(gpu)
    if not workloads:
        raise ConfigError(f"no workloads to simulate on GPU {gpu!r}")
    tasks = []
    for w in workloads:
        job = traces.job(gpu, w)
        check_job(job)
        n_rec = recurrences if recurrences is not None else default_recurrences(job)
        sub = None if arrivals is None else arrivals[arrivals["workload"] == w]
        for eta in etas:
            for p in policies:
                tasks.append(
                    Task(job, eta, p, tuple(betas), tuple(seeds), n_rec, window, sub, tuple(policy_modules))
                )
    return tasks


def simulate(tasks: Sequence[Task], jobs: int = 1, progress: Progress | None = None) -> pd.DataFrame:
    """Run the tasks (in ``jobs`` processes when > 1); returns the ``runs`` frame."""
    if jobs > 1 and len(tasks) > 1:
        frames = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for task, frame in zip(tasks, pool.map(_run_task_quiet, tasks), strict=True):
                frames.append(frame)
                if progress is not None:
                    progress(task.units)
    else:
        frames = [run_task(t, progress) for t in tasks]
    df = pd.concat(frames, ignore_index=True)
    if "group" not in df.columns:
        df["group"] = pd.NA
    return df
