"""Time the original Zeus simulator on a few jobs (run by ``bench_simulate.py --peer``).

Runs in a side virtual environment with PyPI ``zeus==0.16.0`` (installed without its
dependencies) plus numpy, pandas and scikit-learn: ``make bench-peer`` builds it as
``.venv-peer/``. It imports the original's ``zeus._legacy.simulate.Simulator`` and calls
``simulate_one_job`` (the Zeus v0.3.0 trace-driven simulator); it does not copy it. Start-up (imports,
reading the CSV traces, building the simulator) is not timed: only ``simulate_one_job``.

Reads a JSON request on stdin::

    {"traces": DIR, "gpu": "v100", "eta": 0.5, "beta": 2.0,
     "jobs": [{"dataset": .., "network": .., "optimizer": .., "target_metric": ..,
               "max_epochs": .., "b0": .., "recurrences": .., "seed": ..}, ...]}

and prints one JSON object: ``{"seconds": [wall per job], "cpu_seconds": [CPU per job],
"zeus_version": ..}``. An optional ``"groups"`` list (each a job's fields, ``seed`` and the
group's ``start_time``, ``end_time``, ``runtime_ratio`` lists) times
``simulate_one_alibaba_group`` (optimizer built with ``concurrency=True``) per group, first.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from importlib import metadata
from pathlib import Path


def main() -> int:
    """Run the request from stdin; print the timings as JSON."""
    try:
        import pandas as pd
        from zeus._legacy.job import Job
        from zeus._legacy.policy.optimizer import JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer
        from zeus._legacy.simulate import Simulator
    except ImportError as exc:
        print(f"error: cannot import the original simulator ({exc}); use make bench-peer", file=sys.stderr)
        return 2
    request = json.load(sys.stdin)
    traces = Path(request["traces"])
    train = pd.read_csv(traces / "summary_train.csv")
    power = pd.read_csv(traces / f"summary_power_{request['gpu']}.csv")
    seconds, cpu_seconds = [], []
    for spec in request.get("groups", []):  # simulate_one_alibaba_group, concurrency=True
        job = Job(
            *(spec[k] for k in ("dataset", "network", "optimizer", "target_metric", "max_epochs", "b0"))
        )
        group_df = pd.DataFrame(
            {
                "group": "g",
                "dataset": spec["dataset"],
                **{k: spec[k] for k in ("start_time", "end_time", "runtime_ratio")},
            }
        )
        bso = PruningGTSBatchSizeOptimizer(concurrency=True, seed=spec["seed"], verbose=False)
        sim = Simulator(
            train, power, bso, JITPowerLimitOptimizer(verbose=False), seed=spec["seed"], verbose=False
        )
        with contextlib.redirect_stdout(io.StringIO()):
            start, cpu_start = time.perf_counter(), time.process_time()
            sim.simulate_one_alibaba_group(job, group_df, request["beta"], request["eta"])
            seconds.append(time.perf_counter() - start)
            cpu_seconds.append(time.process_time() - cpu_start)
    for spec in request["jobs"]:
        job = Job(
            spec["dataset"],
            spec["network"],
            spec["optimizer"],
            spec["target_metric"],
            spec["max_epochs"],
            spec["b0"],
        )
        sim = Simulator(
            train,
            power,
            PruningGTSBatchSizeOptimizer(seed=spec["seed"], verbose=False),
            JITPowerLimitOptimizer(verbose=False),
            seed=spec["seed"],
            verbose=False,
        )
        with contextlib.redirect_stdout(io.StringIO()):  # it prints zero-budget tries
            start, cpu_start = time.perf_counter(), time.process_time()
            sim.simulate_one_job(job, spec["recurrences"], request["beta"], request["eta"])
            seconds.append(time.perf_counter() - start)
            cpu_seconds.append(time.process_time() - cpu_start)
    print(
        json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "zeus_version": metadata.version("zeus")})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
