"""The DDP sweep path on one GPU (world size 1): what can be checked where two GPUs are not lent.

``zeus-bench sweep --gpus 0,1`` trains each workload under DistributedDataParallel, one process
per GPU (:func:`zeus_bench.sweep.ddp.sweep_ddp`). With one GPU the CLI takes the one-process
path, so this script calls ``sweep_ddp`` itself with a one-GPU plan: process spawning, NCCL
initialisation, the DDP wrapper over each model (unused parameters, bf16 autocast, channels
last), the ranks' stop decisions and the energy windows all run on the real device. It measures
each workload at the batch size of its DDP job in ``run_queue.py``, briefly (the numbers are
not a trace: the kind is ``<gpu>-ddp1-smoke``), and writes one JSON line per workload: whether it
ran, its samples/s and average power, and the error if any.

Usage (device, repository root; read-only: run it through ``observe_only.py``)::

    python3 benchmarks/h200/observe_only.py script benchmarks/h200/ddp_smoke.py --out-dir $OUT/ddp1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import time
import traceback
from pathlib import Path

from zeus_bench.sweep.ddp import sweep_ddp
from zeus_bench.sweep.measure import MeasureSettings
from zeus_bench.sweep.plan import SweepPlan
from zeus_bench.sweep.workload import load_workload
from zeus_bench.traces.workloads import get_workload

log = logging.getLogger("ddp_smoke")


def _ddp_jobs() -> dict[str, tuple[str, str]]:
    """``run_queue.DDP``: the DDP jobs of the H200 driver (one batch size per workload)."""
    path = Path(__file__).with_name("run_queue.py")
    spec = importlib.util.spec_from_file_location("run_queue", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.DDP)


def main() -> int:
    """Run each DDP job's workload with world size 1; exit 0 when every one ran."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out-dir", type=Path, required=True)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--measure-s", type=float, default=4.0, help="measured seconds per point (default 4)")
    p.add_argument("--backend", default="nvml", help="device backend (default nvml; fake: a local check)")
    p.add_argument("--tiny", action="store_true", help="tiny models (a local check on the CPU)")
    p.add_argument("--jobs", default=None, help="comma-separated DDP jobs (default: all of run_queue.DDP)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    settings = MeasureSettings(
        warmup_iters=3,
        warmup_s=2.0,
        measure_iters=3,
        measure_s=args.measure_s,
        window_s=2.0,
        min_windows=2,
        rel_ci=0.05,
        max_measure_s=args.measure_s + 2.0,
        warmup_max_s=10.0,
        steady_s=0.0,
    )
    failed = 0
    with (args.out_dir / "ddp_smoke.jsonl").open("w") as fh:
        jobs = _ddp_jobs()
        names = list(jobs) if args.jobs is None else [j for j in args.jobs.split(",") if j]
        for name in names:
            workload, size = jobs[name]
            plan = SweepPlan(
                workload=workload,
                batch_sizes=(int(size),),
                gpu_indices=(args.gpu,),
                observe=True,
                settings=settings,
                gpu_kind="h200-ddp1-smoke",
                backend=args.backend,
                tiny=args.tiny,
            )
            out = args.out_dir / f"{name}.parquet"
            row: dict[str, object] = {"job": name, "workload": workload, "batch_size": int(size)}
            start = time.monotonic()
            try:
                outcome = sweep_ddp(
                    plan, out, False, get_workload(workload), load_workload(workload, tiny=args.tiny)
                )
                point = outcome.table.iloc[0]
                row |= {
                    "ok": True,
                    "samples_per_s": float(point["samples_per_s"]),
                    "avg_power_w": float(point["avg_power_w"]),
                    "num_windows": int(point["num_windows"]),
                    "energy_per_sample_ci_rel": float(point["energy_per_sample_ci_rel"]),
                }
            except Exception as exc:  # a smoke test: record it and go on to the next workload
                failed += 1
                row |= {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                traceback.print_exc()
            row["seconds"] = round(time.monotonic() - start, 1)
            log.info("%s", row)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
