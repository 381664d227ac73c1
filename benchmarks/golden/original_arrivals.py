"""Golden outputs of the original simulator's concurrent replay and of its optimizer's knobs.

Called by ``run_original.py`` (``--arrivals`` and ``--knobs``); our own code, which imports and
calls the original (``zeus._legacy``, PyPI ``zeus==0.16.0``) and copies none of it.

* Arrivals: ``Simulator.simulate_one_alibaba_group`` with ``PruningGTSBatchSizeOptimizer(
  concurrency=True)`` on synthetic arrival tables (:data:`TABLES`, made by zeus-bench's
  ``synth-arrivals`` generator, seeded: no trace data in them), one call per group. Every try is
  recorded in the order the original observes it, with the submission it belongs to (read from
  the original's own ``RunningJob`` when it is observed) and its attempt number.
* Knobs: ``Simulator.simulate_one_job`` with a nonzero prior (``prior_mean``,
  ``prior_precision``) or other pruning rounds (``num_pruning_rounds`` of the optimizer's
  ``PruningExploreManager``, set when the job is registered), every try recorded.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

log = logging.getLogger("golden")

#: Synthetic group tables: (name, jobs per group, groups per workload, overlap, ratio sigma, seed),
#: each the output of ``zeus-bench synth-arrivals --workloads <all six> --groups G
#: --jobs-per-group J --overlap O --ratio-sigma S --seed SEED``.
TABLES = (
    ("single", 1, 6, 0.5, 1.0, 11),
    ("small", 6, 4, 0.9, 1.0, 12),
    ("medium", 40, 2, 0.7, 1.0, 13),
    ("large", 200, 1, 0.95, 1.0, 14),
)
ARRIVAL_SETTINGS = ((0.5, 2.0), (0.25, 1.25))  # (eta, beta)
ARRIVAL_SEEDS = (1, 2)
#: Zero-budget tries in a row of one submission after which the original is taken to loop forever.
LOOP_ZEROS = 500
#: (prior_mean, prior_precision, prune_rounds) of the knobs grid, at eta 0.5, beta 2.
KNOBS = ((0.0, 1e-10, 2), (-2e5, 1e-9, 2), (0.0, 0.0, 3), (0.0, 0.0, 1))
KNOB_SEEDS = (1, 2)

ARRIVAL_COLUMNS = (
    "gpu", "workload", "table", "group", "eta", "beta", "seed", "order", "submission", "attempt",
    "batch_size", "power_limit_w", "ran", "reached", "profiled", "energy_j", "time_s", "cost",
    "runtime_ratio",
)  # fmt: skip
KNOB_COLUMNS = (
    "gpu", "workload", "prior_mean", "prior_precision", "prune_rounds", "seed", "recurrence",
    "attempt", "batch_size", "power_limit_w", "ran", "reached", "profiled", "energy_j", "time_s", "cost",
)  # fmt: skip


class LoopsForever(Exception):
    """The original would retry a submission forever (zero-budget tries, cost 0 observed)."""


def synth_command(name: str, jobs: int, groups: int, overlap: float, sigma: float, seed: int) -> str:
    """The ``zeus-bench synth-arrivals`` command of a table."""
    return (
        "zeus-bench synth-arrivals --workloads cifar100,imagenet,squad,librispeech,movielens-1m,sentiment140 "
        f"--groups {groups} --jobs-per-group {jobs} --overlap {overlap} --ratio-sigma {sigma} --seed {seed} "
        f"--out {name}.csv"
    )


def synth_table(repo: Path, jobs: int, groups: int, overlap: float, sigma: float, seed: int) -> pd.DataFrame:
    """The table ``synth-arrivals`` writes (zeus-bench's own generator, called in process)."""
    import numpy as np

    sys.path.insert(0, str(repo))
    from zeus_bench.sim.scenarios.arrivals import synthetic_arrivals
    from zeus_bench.traces.workloads import load_workloads

    wids = list(load_workloads())
    rng = np.random.default_rng(seed)
    return synthetic_arrivals(wids, groups, jobs, rng, overlap=overlap, ratio_sigma=sigma)


@dataclass(frozen=True)
class ArrivalTask:
    """All settings and seeds of one (gpu, workload, table)."""

    traces: str
    repo: str
    gpu: str
    workload: str
    table: tuple[str, int, int, float, float, int]


def _job(original: Any, spec: Any, power: pd.DataFrame) -> Any:
    _, Job, *_ = original
    b0 = min(spec.default_batch_size, int(power.loc[power.dataset == spec.dataset, "batch_size"].max()))
    return Job(spec.dataset, spec.network, spec.optimizer, spec.target_metric, spec.max_epochs, b0)


def run_arrival_task(
    task: ArrivalTask, original: Any, spec: Any
) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Run the original on every group of one table for one (gpu, workload); try rows and group rows."""
    simulate, _, JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer = original
    name, jobs, groups, overlap, sigma, tseed = task.table
    table = synth_table(Path(task.repo), jobs, groups, overlap, sigma, tseed)
    table = table[table.workload == task.workload]
    train = pd.read_csv(Path(task.traces) / "summary_train.csv")
    power = pd.read_csv(Path(task.traces) / f"summary_power_{task.gpu}.csv")
    job = _job(original, spec, power)
    events: list[tuple[Any, ...]] = []

    class RecordingBSO(PruningGTSBatchSizeOptimizer):  # type: ignore[misc,valid-type]
        def observe(self, job: Any, batch_size: int, cost: float, converged: bool | None = None) -> None:
            rjob = sys._getframe(1).f_locals["rjob"]  # the original's RunningJob being observed
            events.append(
                ("observe", rjob.start_time, rjob.end_time, int(batch_size), float(cost), bool(converged))
            )
            super().observe(job, batch_size, cost, converged)

    class RecordingSimulator(simulate.Simulator):  # type: ignore[misc,name-defined]
        def _run_job(self, job: Any, batch_size: int, power_limit: int, *args: Any, **kw: Any) -> Any:
            out = super()._run_job(job, batch_size, power_limit, *args, **kw)
            events.append(("run", int(batch_size), float(power_limit), bool(kw["profile_power"]), out))
            _check_loop(events)
            return out

    rows: list[tuple[Any, ...]] = []
    runs: list[dict[str, Any]] = []
    for seed in ARRIVAL_SEEDS:
        plo = JITPowerLimitOptimizer(verbose=False)
        bso = RecordingBSO(concurrency=True, seed=seed, verbose=False)
        sim = RecordingSimulator(train, power, bso, plo, seed=seed, verbose=False)
        for eta, beta in ARRIVAL_SETTINGS:
            for group, g in table.groupby("group", sort=True):
                g = g.sort_values("start_time", kind="stable")
                group_df = pd.DataFrame(
                    {
                        "group": g.group.to_numpy(),
                        "dataset": spec.dataset,
                        "start_time": g.start_time.to_numpy(),
                        "end_time": g.end_time.to_numpy(),
                        "runtime_ratio": g.runtime_ratio.to_numpy(),
                    }
                )
                events.clear()
                error = ""
                with contextlib.redirect_stdout(io.StringIO()):  # the original prints zero-budget tries
                    try:
                        sim.simulate_one_alibaba_group(job, group_df, beta, eta)
                    except LoopsForever as exc:
                        error = f"loops forever: {exc}"
                    except Exception as exc:  # the original's own failures are results, recorded
                        error = f"{type(exc).__name__}: {exc}"
                ident = (task.gpu, task.workload, name, str(group), eta, beta, seed)
                got = _tries(events, group_df, ident)
                rows.extend(got)
                runs.append(
                    dict(
                        zip(("gpu", "workload", "table", "group", "eta", "beta", "seed"), ident, strict=True),
                        b0=job.default_bs,
                        submissions=len(group_df),
                        tries=len(got),
                        error=error,
                    )
                )
    return rows, runs


def _check_loop(events: list[tuple[Any, ...]]) -> None:
    """Raise :class:`LoopsForever` after :data:`LOOP_ZEROS` zero-budget tries in a row of the latest runs."""
    zeros = 0
    for e in reversed(events):
        if e[0] != "run":
            continue
        energy, time, reached = e[4]
        if energy == 0 and time == 0 and not reached:
            zeros += 1
            if zeros >= LOOP_ZEROS:
                raise LoopsForever(f"{zeros} zero-budget tries in a row")
        else:
            return


def _tries(
    events: list[tuple[Any, ...]], group_df: pd.DataFrame, ident: tuple[Any, ...]
) -> list[tuple[Any, ...]]:
    """Try rows, in observation order, from the recorded launches and observations.

    A launch right after the observation of a try that did not reach the target is that
    submission's retry (the original retries at once, in both branches); any other launch is the
    next submission of the table. Launched jobs are found again, when observed, by their
    (start, end) times, which the original computes for a retry as ``end + (end - start)``.
    """
    starts = group_df.start_time.tolist()
    ends = group_df.end_time.tolist()
    ratios = group_df.runtime_ratio.tolist()
    launched: dict[tuple[float, float], deque[tuple[int, int, tuple[Any, ...]]]] = defaultdict(deque)
    next_sub = 0
    retry: tuple[int, int, tuple[float, float]] | None = None
    rows: list[tuple[Any, ...]] = []
    for e in events:
        if e[0] == "run":
            if retry is not None:
                sub, attempt, key = retry
                retry = None
            else:
                sub, attempt, key = next_sub, 1, (starts[next_sub], ends[next_sub])
                next_sub += 1
            launched[key].append((sub, attempt, e))
            continue
        _, start, end, bs, cost, reached = e
        sub, attempt, run = launched[(start, end)].popleft()
        _, rbs, pl, profiled, (energy, time, run_reached) = run
        assert rbs == bs and run_reached == reached, "an observation that is not the launch found"
        ran = not (energy == 0 and time == 0 and not reached)
        rows.append(
            (
                *ident,
                len(rows),
                sub + 1,
                attempt,
                bs,
                pl,
                ran,
                reached,
                profiled,
                energy,
                time,
                cost,
                ratios[sub],
            )
        )
        if not reached:
            retry = (sub, attempt + 1, (end, end + (end - start)))
    return rows


@dataclass(frozen=True)
class KnobTask:
    """All knob settings of one (gpu, workload, seed)."""

    traces: str
    gpu: str
    workload: str
    seed: int


def run_knob_task(
    task: KnobTask, original: Any, spec: Any
) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Run ``simulate_one_job`` at each knob setting; try rows and run rows."""
    simulate, _, JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer = original
    from zeus._legacy.policy.optimizer import PruningExploreManager

    train = pd.read_csv(Path(task.traces) / "summary_train.csv")
    power = pd.read_csv(Path(task.traces) / f"summary_power_{task.gpu}.csv")
    job = _job(original, spec, power)
    job_df = job.filter_df(train.merge(power, how="inner"))
    recurrences = 2 * job_df.batch_size.nunique() * job_df.power_limit.nunique()
    trace: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    runs: list[dict[str, Any]] = []
    for prior_mean, prior_precision, rounds in KNOBS:

        class KnobBSO(PruningGTSBatchSizeOptimizer):  # type: ignore[misc,valid-type]
            num_pruning_rounds = rounds

            def register_job(self, job: Any, batch_sizes: list[int]) -> None:
                super().register_job(job, batch_sizes)
                self.exp_manager[job] = PruningExploreManager(
                    sorted(batch_sizes), job.default_bs, num_pruning_rounds=self.num_pruning_rounds
                )

            def observe(self, job: Any, batch_size: int, cost: float, converged: bool | None = None) -> None:
                trace.append(("observe", float(cost)))
                super().observe(job, batch_size, cost, converged)

        class RecordingSimulator(simulate.Simulator):  # type: ignore[misc,name-defined]
            def _run_job(self, job: Any, batch_size: int, power_limit: int, *args: Any, **kw: Any) -> Any:
                out = super()._run_job(job, batch_size, power_limit, *args, **kw)
                trace.append(("run", int(batch_size), float(power_limit), bool(kw["profile_power"]), out))
                return out

        plo = JITPowerLimitOptimizer(verbose=False)
        bso = KnobBSO(prior_mean=prior_mean, prior_precision=prior_precision, seed=task.seed, verbose=False)
        sim = RecordingSimulator(train, power, bso, plo, seed=task.seed, verbose=False)
        trace.clear()
        error = ""
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                sim.simulate_one_job(job, recurrences, 2.0, 0.5)
            except Exception as exc:  # the original's own failures are results, recorded
                error = f"{type(exc).__name__}: {exc}"
        ident = (task.gpu, task.workload, prior_mean, prior_precision, rounds, task.seed)
        from run_original import job_tries  # the golden script's own reading of a single job's trace

        got, _ = job_tries(trace, ident)
        rows.extend(got)
        n = len(got)
        runs.append(
            dict(
                zip(
                    ("gpu", "workload", "prior_mean", "prior_precision", "prune_rounds", "seed"),
                    ident,
                    strict=True,
                ),
                b0=job.default_bs,
                recurrences=recurrences,
                tries=n,
                error=error,
            )
        )
    return rows, runs


def _worker(kind: str, task: Any) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    from run_original import _original, _workloads  # the golden script's own helpers

    spec = _workloads()[task.workload]
    if kind == "arrivals":
        return run_arrival_task(task, _original(), spec)
    return run_knob_task(task, _original(), spec)


def run_extra_grid(
    kind: str, traces: Path, out: Path, gpus: list[str], jobs: int, repo: Path
) -> dict[str, Any]:
    """Run the arrivals or knobs grid; write ``original_<kind>_tries.parquet`` and ``..._runs.csv``.

    Returns the grid's provenance entry for ``metadata_<kind>.json``.
    """
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    from run_original import _workloads

    tasks: list[Any]
    if kind == "arrivals":
        tasks = [
            ArrivalTask(str(traces), str(repo), g, w, t) for g in gpus for w in _workloads() for t in TABLES
        ]
        columns, keys = ARRIVAL_COLUMNS, ["gpu", "workload", "table", "group", "eta", "beta", "seed", "order"]
        run_keys = ["gpu", "workload", "table", "group", "eta", "beta", "seed"]
    else:
        tasks = [KnobTask(str(traces), g, w, s) for g in gpus for w in _workloads() for s in KNOB_SEEDS]
        columns = KNOB_COLUMNS
        keys = [
            "gpu",
            "workload",
            "prior_mean",
            "prior_precision",
            "prune_rounds",
            "seed",
            "recurrence",
            "attempt",
        ]
        run_keys = ["gpu", "workload", "prior_mean", "prior_precision", "prune_rounds", "seed"]
    rows: list[tuple[Any, ...]] = []
    runs: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, (r, s) in enumerate(pool.map(partial(_worker, kind), tasks), 1):
            rows.extend(r)
            runs.extend(s)
            log.info("%s %d/%d: %d tries", kind, i, len(tasks), len(r))
    tries = pd.DataFrame(rows, columns=list(columns)).sort_values(keys, kind="stable")
    run_table = pd.DataFrame(runs).sort_values(run_keys, kind="stable")
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"original_{kind}_tries.parquet.tmp"
    tries.to_parquet(tmp, index=False, compression="zstd", compression_level=19)
    tmp.replace(out / f"original_{kind}_tries.parquet")
    run_table.to_csv(out / f"original_{kind}_runs.csv", index=False)
    grid: dict[str, Any] = {"gpus": gpus, "workloads": list(_workloads())}
    if kind == "arrivals":
        grid.update(
            tables=[dict(zip(("name", "jobs_per_group", "groups", "overlap", "ratio_sigma", "seed"), t, strict=True))
                    for t in TABLES],
            synth_commands=[synth_command(*t[:1], t[1], t[2], t[3], t[4], t[5]) for t in TABLES],
            settings_eta_beta=[list(s) for s in ARRIVAL_SETTINGS],
            seeds=list(ARRIVAL_SEEDS),
            loop_zeros=LOOP_ZEROS,
            optimizer="PruningGTSBatchSizeOptimizer(concurrency=True)",
            simulator="zeus._legacy.simulate.Simulator.simulate_one_alibaba_group (PyPI zeus==0.16.0)",
        )  # fmt: skip
    else:
        grid.update(
            knobs_prior_mean_prior_precision_prune_rounds=[list(k) for k in KNOBS],
            seeds=list(KNOB_SEEDS),
            eta=0.5,
            beta=2.0,
            simulator="zeus._legacy.simulate.Simulator.simulate_one_job (PyPI zeus==0.16.0)",
        )
    return {
        "grid": grid,
        "tries": len(tries),
        "runs": len(run_table),
        "runs_with_error": int((run_table["error"].fillna("") != "").sum()),
    }
