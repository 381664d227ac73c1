"""Simulator benchmark: the paper's grid (6 workloads x V100, A40 x 10 seeds x 7 policies).

Prints recurrences per second and the wall time of the grid in one process, against the paper's
simulator (about 14 ms per recurrence on a 2-core machine). Run by ``make bench``, not by tests.

    python benchmarks/bench_simulate.py [--traces DIR] [--repeat 3]

``--traces`` is a folder of imported Parquet traces; by default the published CSV traces
(``$ZEUS_TRACE_DIR`` or ``../shared/traces/zeus-nsdi23``) are imported to a temporary folder
first (not timed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

PAPER_S_PER_RECURRENCE = 0.014
TARGET_S = 10.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--traces", type=Path, default=None, help="imported Parquet traces (default: import the CSVs)"
    )
    parser.add_argument("--gpus", default="v100,a40")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best is reported")
    args = parser.parse_args()

    from zeus_bench.jobs import TraceSet
    from zeus_bench.sim.grid import plan, simulate
    from zeus_bench.sim.policies import POLICIES
    from zeus_bench.sim.summarize import summarize

    traces = args.traces
    tmp = None
    if traces is None:
        repo = Path(__file__).resolve().parents[1]
        csv_dir = Path(os.environ.get("ZEUS_TRACE_DIR", repo.parent / "shared" / "traces" / "zeus-nsdi23"))
        if not (csv_dir / "summary_train.csv").is_file():
            print(f"no traces at {csv_dir}: pass --traces or set ZEUS_TRACE_DIR", file=sys.stderr)
            return 2
        from zeus_bench.traces.zeus_csv import import_zeus

        tmp = tempfile.TemporaryDirectory()
        traces = Path(tmp.name)
        import_zeus(csv_dir, traces)

    gpus = args.gpus.split(",")
    policies = list(POLICIES)
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        ts = TraceSet(traces)  # trace loading and joining is part of the timed work
        tasks = [t for g in gpus for t in plan(ts, g, None, policies, range(1, 11), [0.5], [2.0])]
        runs = simulate(tasks)
        wall = time.perf_counter() - start
        best = min(best, wall)
    recurrences = sum(t.recurrences * t.units for t in tasks)
    t0 = time.perf_counter()
    summarize(runs)
    summarize_s = time.perf_counter() - t0
    paper_s = recurrences * PAPER_S_PER_RECURRENCE
    print(
        f"grid: {len({t.job.workload.id for t in tasks})} workloads x {len(gpus)} GPUs ({','.join(gpus)}) x 10 seeds x {len(policies)} policies, 1 process"
    )
    print(f"recurrences: {recurrences}  tries (rows): {len(runs)}")
    print(f"wall time (best of {args.repeat}): {best:.2f} s  (target < {TARGET_S:.0f} s)")
    print(f"recurrences per second: {recurrences / best:,.0f}")
    print(f"paper's simulator at 14 ms/recurrence: {paper_s:.0f} s -> speed-up {paper_s / best:.0f}x")
    print(f"summarize of the grid's runs: {summarize_s:.2f} s")
    if tmp is not None:
        tmp.cleanup()
    return 0 if best < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
