"""Golden outputs of the original Zeus simulator, for the replay's exactness test.

Runs the paper's trace-driven simulator (Zeus v0.3.0 code, shipped as ``zeus._legacy.simulate`` in
PyPI ``zeus==0.16.0``) on the published traces and records every try it makes. This script is our
own; it imports and calls the original, it does not copy it. It needs a throwaway virtual
environment with ``zeus==0.16.0`` installed without its dependencies plus numpy, pandas,
scikit-learn, pyarrow and pyyaml (``make golden`` builds one; see ``benchmarks/golden/README.md``).

Outputs (in ``--out``):

* ``original_tries.parquet``: one row per try the original made, including tries whose early-stop
  budget was zero (``ran`` False: they never ran, the batch-size optimizer observed a penalty).
* ``original_runs.csv``: one row per run (gpu, workload, eta, beta, seed): recurrences asked,
  completed, and the error the original raised, if any (its tries up to the error are kept).
* ``metadata.json``: provenance (package versions, command, date, trace sha256s, grid).

``--reference`` also writes ``results/reference/original_simulator.csv``: savings of the original's
runs at eta 0.5, beta 2, seeds 1-10 against b0 and max-batch at the maximum limit.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import io
import json
import logging
import math
import os
import platform
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from peer import LABEL, REFERENCE_SEEDS, REPO, GoldenError, original, workloads
from reference import write_reference

log = logging.getLogger("golden")

ETAS = (0.25, 0.5, 0.75)
BETAS = (1.25, 1.5, 2.0, 3.0, math.inf)
GPUS = ("v100", "a40")
SEEDS = (1, 2, 3)
MAX_TRIES = 20
TRY_COLUMNS = (
    "gpu",
    "workload",
    "eta",
    "beta",
    "seed",
    "recurrence",
    "attempt",
    "batch_size",
    "power_limit_w",
    "ran",
    "reached",
    "profiled",
    "energy_j",
    "time_s",
    "cost",
)


class _SharedLog(list):  # type: ignore[type-arg]
    """A list that survives the original's ``deepcopy`` of its optimizers (copies are itself)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedLog:
        return self


@dataclass(frozen=True)
class Task:
    """All (eta, beta) runs of one (gpu, workload, seed)."""

    traces: str
    gpu: str
    workload: str
    seed: int
    settings: tuple[tuple[float, float], ...]


def job_tries(trace: list[tuple[Any, ...]], ident: tuple[Any, ...]) -> tuple[list[tuple[Any, ...]], int]:
    """Try rows of one ``simulate_one_job`` from its recorded launches and observations.

    Returns the rows (``ident``, recurrence, attempt, batch size, limit, ran, reached, profiled,
    energy, time, cost observed) and the number of recurrences completed.
    """
    rows: list[tuple[Any, ...]] = []
    recurrence, attempt, completed = 1, 0, 0
    pending = None
    for entry in trace:
        if entry[0] == "run":
            pending = entry
            continue
        assert pending is not None, "an observation without a try"
        _, bs, pl, profiled, (energy, time, reached) = pending
        pending = None
        attempt += 1
        ran = not (energy == 0 and time == 0 and not reached)
        rows.append(
            (*ident, recurrence, attempt, bs, pl, ran, bool(reached), profiled, energy, time, entry[1])
        )
        if reached:
            completed += 1
            recurrence, attempt = recurrence + 1, 0
    return rows, completed


def _run_task(task: Task) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Run the original simulator for one task; returns try rows and run rows."""
    simulate, Job, JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer = original()
    spec = workloads()[task.workload]
    train = pd.read_csv(Path(task.traces) / "summary_train.csv")
    power = pd.read_csv(Path(task.traces) / f"summary_power_{task.gpu}.csv")
    # b0 capped at the largest batch size this GPU's power trace holds for the dataset.
    b0 = min(spec.default_batch_size, int(power.loc[power.dataset == spec.dataset, "batch_size"].max()))
    job = Job(spec.dataset, spec.network, spec.optimizer, spec.target_metric, spec.max_epochs, b0)
    # 2 x |B| x |P| as the paper's run script computes it.
    job_df = job.filter_df(train.merge(power, how="inner"))
    recurrences = 2 * job_df.batch_size.nunique() * job_df.power_limit.nunique()
    trace: _SharedLog = _SharedLog()

    class RecordingBSO(PruningGTSBatchSizeOptimizer):  # type: ignore[misc,valid-type]
        def observe(self, job: Any, batch_size: int, cost: float, converged: bool | None = None) -> None:
            trace.append(("observe", float(cost)))
            super().observe(job, batch_size, cost, converged)

    class RecordingSimulator(simulate.Simulator):  # type: ignore[misc,name-defined]
        def _run_job(self, job: Any, batch_size: int, power_limit: int, *args: Any, **kw: Any) -> Any:
            out = super()._run_job(job, batch_size, power_limit, *args, **kw)
            trace.append(("run", int(batch_size), float(power_limit), bool(kw["profile_power"]), out))
            return out

    rows: list[tuple[Any, ...]] = []
    runs: list[dict[str, Any]] = []
    plo = JITPowerLimitOptimizer(verbose=False)
    bso = RecordingBSO(seed=task.seed, verbose=False)
    sim = RecordingSimulator(train, power, bso, plo, seed=task.seed, verbose=False)
    for eta, beta in task.settings:
        trace.clear()
        error = ""
        with contextlib.redirect_stdout(io.StringIO()):  # the original prints zero-budget tries
            try:
                sim.simulate_one_job(job, recurrences, beta, eta)
            except Exception as exc:  # the original's own failures are results, recorded
                error = f"{type(exc).__name__}: {exc}"
        ident = (task.gpu, task.workload, eta, beta, task.seed)
        got, completed = job_tries(trace, ident)
        rows.extend(got)
        runs.append(
            dict(
                zip(("gpu", "workload", "eta", "beta", "seed"), ident, strict=True),
                b0=b0,
                recurrences=recurrences,
                completed=completed,
                tries=sum(1 for r in rows if r[:5] == ident),
                error=error,
            )
        )
    return rows, runs


def _tasks(traces: Path, gpus: Iterable[str], seeds: Iterable[int]) -> list[Task]:
    grid = tuple((e, b) for e in ETAS for b in BETAS)
    tasks = []
    for gpu in gpus:
        for workload in workloads():
            for seed in sorted(set(seeds) | set(REFERENCE_SEEDS)):
                settings = grid if seed in seeds else ((0.5, 2.0),)
                tasks.append(Task(str(traces), gpu, workload, seed, settings))
    return tasks


def _command(gpus: list[str], seeds: list[int]) -> str:
    """The command that writes these files, without local paths (traces: ``$ZEUS_TRACE_DIR``)."""
    return (
        "python benchmarks/golden/run_original.py --traces $ZEUS_TRACE_DIR "
        f"--gpus {' '.join(gpus)} --seeds {' '.join(map(str, seeds))}"
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_grid(traces: Path, out: Path, gpus: list[str], seeds: list[int], jobs: int) -> None:
    """Run the whole grid and write the three golden files into ``out``."""
    files = ["summary_train.csv", *(f"summary_power_{g}.csv" for g in gpus)]
    for f in files:
        if not (traces / f).is_file():
            raise GoldenError(
                f"{traces}: no {f} (set --traces or ZEUS_TRACE_DIR to the published Zeus traces)"
            )
    original()  # one line now, not one per worker, when the original is not installed
    tasks = _tasks(traces, gpus, seeds)
    log.info("running the original simulator: %d tasks with %d process(es)", len(tasks), jobs)
    rows: list[tuple[Any, ...]] = []
    runs: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, (r, s) in enumerate(pool.map(_run_task, tasks), 1):
            rows.extend(r)
            runs.extend(s)
            log.info(
                "%d/%d %s %s seed %d",
                i,
                len(tasks),
                tasks[i - 1].gpu,
                tasks[i - 1].workload,
                tasks[i - 1].seed,
            )
    tries = pd.DataFrame(rows, columns=list(TRY_COLUMNS))
    tries = tries.astype(
        {"recurrence": "int32", "attempt": "int8", "batch_size": "int32", "seed": "int16"}
    ).sort_values(["gpu", "workload", "eta", "beta", "seed", "recurrence", "attempt"], kind="stable")
    run_table = pd.DataFrame(runs).sort_values(["gpu", "workload", "eta", "beta", "seed"], kind="stable")
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "original_tries.parquet.tmp"
    tries.to_parquet(tmp, index=False, compression="zstd", compression_level=19)
    tmp.replace(out / "original_tries.parquet")
    run_table.to_csv(out / "original_runs.csv", index=False)
    meta = {
        "label": LABEL,
        "simulator": "zeus._legacy.simulate.Simulator.simulate_one_job (PyPI zeus==0.16.0)",
        "packages": {p: metadata.version(p) for p in ("zeus", "numpy", "pandas", "scikit-learn", "pyarrow")},
        "python": platform.python_version(),
        "command": _command(gpus, seeds),
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "traces_sha256": {f: _sha256(traces / f) for f in files},
        "grid": {
            "gpus": gpus,
            "workloads": list(workloads()),
            "etas": list(ETAS),
            "betas": [str(b) for b in BETAS],
            "seeds": seeds,
            "reference_seeds_eta_0.5_beta_2": list(REFERENCE_SEEDS),
        },
        "tries": len(tries),
        "runs": len(run_table),
        "runs_with_error": int((run_table["error"].fillna("") != "").sum()),
    }
    (out / "metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
    log.info("wrote %d tries of %d runs to %s", len(tries), len(run_table), out)


def run_extra(kind: str, traces: Path, out: Path, gpus: list[str], jobs: int) -> None:
    """Run the arrivals or knobs grid (``original_arrivals.py``) and write its ``metadata_<kind>.json``."""
    files = ["summary_train.csv", *(f"summary_power_{g}.csv" for g in gpus)]
    for f in files:
        if not (traces / f).is_file():
            raise GoldenError(
                f"{traces}: no {f} (set --traces or ZEUS_TRACE_DIR to the published Zeus traces)"
            )
    original()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from original_arrivals import run_extra_grid

    log.info("running the original simulator: %s grid", kind)
    info = run_extra_grid(kind, traces, out, gpus, jobs, REPO)
    meta = {
        "label": LABEL,
        "packages": {p: metadata.version(p) for p in ("zeus", "numpy", "pandas", "scikit-learn", "pyarrow")},
        "python": platform.python_version(),
        "command": f"python benchmarks/golden/run_original.py --traces $ZEUS_TRACE_DIR --gpus {' '.join(gpus)} "
        f"--extra {kind}",
        "date_utc": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "traces_sha256": {f: _sha256(traces / f) for f in files},
        **info,
    }
    (out / f"metadata_{kind}.json").write_text(json.dumps(meta, indent=2) + "\n")
    log.info("wrote %d tries of %d runs (%s)", info["tries"], info["runs"], kind)


def main(argv: list[str] | None = None) -> int:
    """Command line: run the grid (default) and/or write the reference figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--traces", type=Path, default=os.environ.get("ZEUS_TRACE_DIR"), help="published Zeus traces"
    )
    p.add_argument(
        "--out", type=Path, default=REPO / "benchmarks" / "golden", help="folder of the golden files"
    )
    p.add_argument("--gpus", nargs="+", default=list(GPUS))
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--jobs", type=int, default=1, help="processes")
    p.add_argument("--skip-run", action="store_true", help="reuse the golden files, only write --reference")
    p.add_argument("--reference", type=Path, help="also write the reference figures (original_simulator.csv)")
    p.add_argument(
        "--extra",
        choices=("arrivals", "knobs"),
        action="append",
        default=[],
        help="run only this grid (repeatable): concurrent groups or optimizer knobs (original_arrivals.py)",
    )
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.traces is None:
            raise GoldenError("no traces: pass --traces or set ZEUS_TRACE_DIR")
        if args.jobs < 1:
            raise GoldenError(f"--jobs must be >= 1, got {args.jobs}")
        if args.extra:
            for kind in args.extra:
                run_extra(kind, args.traces, args.out, args.gpus, args.jobs)
        elif not args.skip_run:
            run_grid(args.traces, args.out, args.gpus, args.seeds, args.jobs)
        if args.reference is not None:
            write_reference(args.out, args.traces, args.reference)
    except GoldenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
