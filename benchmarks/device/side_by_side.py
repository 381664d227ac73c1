"""zeus-bench's EnergyMonitor against ZeusMonitor and CodeCarbon on one training loop (observe mode).

Part 1, side by side: ResNet-50 (bf16 autocast, channels-last, synthetic batches) in blocks of
``--windows`` windows of ``--iters`` iterations, one block per condition and round, conditions
rotated and reversed from round to round (none, zeus-bench, ZeusMonitor, CodeCarbon). At every
window edge each condition does the same: synchronise CUDA, read the NVML energy counter directly
(the ground truth), then call the monitor's edge (timed: the time taken from the training
thread). Throughput is taken over whole blocks, overheads included.

Part 2, short windows: a steady bf16 matmul load; windows of 10 ms to 1 s measured by
zeus-bench, each also read directly; the truth is the load's steady power (the counter over
long stretches before and after) times the window's time. Checks whether the reported
uncertainty covers each window's error.

Every NVML power-limit setter is trapped (``forbid_power_limit_writes``) before anything runs.
Raw rows go to ``--out`` as CSV and a JSON summary.

Usage (on the GPU machine)::

    PYTHONPATH=.:/tmp/site python3 benchmarks/device/side_by_side.py --out $OUT
    # CPU smoke test (fake GPU, no peers):
    python benchmarks/device/side_by_side.py --backend fake --device cpu --quick --out /tmp/sbs
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_monitor import Trainer

from zeus_bench.device import get_backend
from zeus_bench.device.base import GPU
from zeus_bench.device.monitor import EnergyMonitor, PendingMeasurement

log = logging.getLogger("side_by_side")


class Condition:
    """One monitor under test: ``begin(name)`` / ``end(name)`` and its energy per window (J)."""

    name = "none"

    def begin(self, name: str) -> None:
        """Window start."""

    def end(self, name: str) -> Callable[[], float] | None:
        """Window end; returns a function giving the window's GPU energy (J), or None."""
        return None

    def close(self) -> None:
        """Stop the monitor."""


class ZeusBench(Condition):
    name = "zeus-bench"

    def __init__(self, gpu: GPU) -> None:
        self.mon = EnergyMonitor([gpu], sample_interval_s=0.1)
        self.mon.counter_update_period_s()
        self.unc: dict[str, PendingMeasurement] = {}

    def begin(self, name: str) -> None:
        self.mon.begin_window(name)

    def end(self, name: str) -> Callable[[], float]:
        p = self.mon.end_window_deferred(name)
        self.unc[name] = p
        return lambda: p.result().total_energy_j

    def close(self) -> None:
        self.mon.close()


class Zeus(Condition):
    name = "ZeusMonitor"

    def __init__(self) -> None:
        from zeus.monitor import ZeusMonitor

        self.mon = ZeusMonitor(gpu_indices=[0], cpu_indices=[], approx_instant_energy=False)

    def begin(self, name: str) -> None:
        self.mon.begin_window(name)

    def end(self, name: str) -> Callable[[], float]:
        m = self.mon.end_window(name)
        return lambda: float(m.gpu_energy[0])


class CodeCarbon(Condition):
    name = "CodeCarbon"

    def __init__(self, workdir: Path) -> None:
        from codecarbon import OfflineEmissionsTracker

        self.tracker = OfflineEmissionsTracker(
            country_iso_code="USA",
            measure_power_secs=1,
            save_to_file=False,
            log_level="error",
            gpu_ids=[0],
            output_dir=str(workdir),
        )
        self.tracker.start()

    def begin(self, name: str) -> None:
        self.tracker.start_task(name)

    def end(self, name: str) -> Callable[[], float]:
        data = self.tracker.stop_task()
        return lambda: float(data.gpu_energy) * 3.6e6  # kWh -> J

    def close(self) -> None:
        self.tracker.stop()


def direct_reader(gpu: GPU) -> Callable[[], float]:
    """The counter, read directly and synchronously (the ground truth), J."""
    return gpu.total_energy_j


def side_by_side(args: argparse.Namespace, gpu: GPU, out: Path) -> list[dict[str, Any]]:
    trainer = Trainer(args.batch_size, args.device, args.image_size)
    trainer.run_for(args.warmup_s)
    direct = direct_reader(gpu)
    makers: dict[str, Callable[[], Condition]] = {"none": Condition, "zeus-bench": lambda: ZeusBench(gpu)}
    if not args.no_peers:
        makers["ZeusMonitor"] = Zeus
        makers["CodeCarbon"] = lambda: CodeCarbon(out)
    names = list(makers)
    rows: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        order = names[rnd % len(names) :] + names[: rnd % len(names)]
        if rnd % 2:
            order = order[::-1]
        for cname in order:
            try:
                cond = makers[cname]()
            except Exception as exc:  # a peer that cannot start is reported, not fatal
                log.error("%s could not start: %s", cname, exc)
                rows.append({"round": rnd, "condition": cname, "error": str(exc)})
                continue
            trainer.run_iters(3)
            energies: list[tuple[int, float, float, float, Callable[[], float] | None, float]] = []
            trainer.sync()
            block0 = time.perf_counter()
            for w in range(args.windows):
                name = f"r{rnd}w{w}"
                trainer.sync()
                e0 = direct()
                t0 = time.perf_counter()
                cond.begin(name)
                t1 = time.perf_counter()
                for _ in range(args.iters):
                    trainer.step()
                trainer.sync()
                e1 = direct()
                t2 = time.perf_counter()
                get = cond.end(name)
                t3 = time.perf_counter()
                energies.append((w, (t1 - t0) + (t3 - t2), e1 - e0, t3 - t0, get, t2 - t1))
            trainer.sync()
            block_s = time.perf_counter() - block0
            cond.close()
            for w, cost, truth, _span, get, work_s in energies:
                monitor_j = get() if get is not None else math.nan
                row = {
                    "round": rnd,
                    "condition": cname,
                    "window": w,
                    "caller_ms": cost * 1e3,
                    "window_work_s": work_s,
                    "counter_j": truth,
                    "monitor_j": monitor_j,
                    "diff_j": monitor_j - truth,
                    "block_s": block_s,
                    "block_samples_per_s": args.windows * args.iters * args.batch_size / block_s,
                }
                if isinstance(cond, ZeusBench):
                    m = cond.unc[f"r{rnd}w{w}"].result()
                    row["uncertainty_j"] = m.total_energy_uncertainty_j
                    row["high_uncertainty"] = m.high_uncertainty
                rows.append(row)
            log.info("round %d %-12s %.1f samples/s", rnd, cname, rows[-1].get("block_samples_per_s", 0))
    return rows


def _matmul_load(device: str, n: int) -> tuple[Callable[[int], None], float]:
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)

    def run(k: int) -> None:
        for _ in range(k):
            torch.mm(a, b)

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    run(20)
    sync()
    t0 = time.perf_counter()
    run(100)
    sync()
    return run, (time.perf_counter() - t0) / 100


def short_windows(args: argparse.Namespace, gpu: GPU) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    run, per_mm = _matmul_load(args.device, args.matmul_n)
    direct = direct_reader(gpu)

    def sync() -> None:
        if args.device == "cuda":
            torch.cuda.synchronize()

    def steady_power(seconds: float) -> float:
        k = max(1, int(seconds / per_mm))
        sync()
        e0, t0 = direct(), time.perf_counter()
        run(k)
        sync()
        e1, t1 = direct(), time.perf_counter()
        return (e1 - e0) / (t1 - t0)

    steady_power(2.0)  # warm up
    p_before = steady_power(args.steady_s)
    rows: list[dict[str, Any]] = []
    lengths = [0.01, 0.03, 0.1, 0.3, 1.0]
    reps = {0.01: 30, 0.03: 20, 0.1: 15, 0.3: 10, 1.0: 6} if not args.quick else dict.fromkeys(lengths, 2)
    with EnergyMonitor([gpu]) as mon:
        period = mon.counter_update_period_s()
        for length in lengths:
            k = max(1, round(length / per_mm))
            for rep in range(reps[length]):
                run(max(1, int(0.05 / per_mm)))  # keep the GPU busy between windows
                sync()
                d0 = direct()
                mon.begin_window("w")
                run(k)
                pending = mon.end_window_deferred("w")  # synchronises CUDA first
                d1 = direct()
                m = pending.result()
                rows.append(
                    {
                        "length_s": length,
                        "rep": rep,
                        "time_s": m.time_s,
                        "monitor_j": m.total_energy_j,
                        "direct_j": d1 - d0,
                        "uncertainty_j": m.total_energy_uncertainty_j,
                        "high_uncertainty": m.high_uncertainty,
                        "below_counter_period": m.below_counter_period,
                    }
                )
    p_after = steady_power(args.steady_s)
    power = (p_before + p_after) / 2
    for r in rows:
        r["truth_j"] = power * r["time_s"]
        r["error_j"] = r["monitor_j"] - r["truth_j"]
        r["covered"] = abs(r["error_j"]) <= r["uncertainty_j"]
        r["direct_covered"] = abs(r["direct_j"] - r["truth_j"]) <= r["uncertainty_j"]
    meta = {
        "matmul_n": args.matmul_n,
        "matmul_s": per_mm,
        "steady_power_before_w": p_before,
        "steady_power_after_w": p_after,
        "counter_update_period_s": period,
    }
    return rows, meta


def nvml_costs(gpu: GPU) -> dict[str, Any]:
    n = 50
    t0 = time.perf_counter()
    for _ in range(n):
        gpu.total_energy_j()
    counter_s = (time.perf_counter() - t0) / n
    changes, last, end = [], gpu.total_energy_j(), time.monotonic() + 1.5
    while time.monotonic() < end:
        e = gpu.total_energy_j()
        if e != last:
            changes.append(time.monotonic())
            last = e
    gaps = [b - a for a, b in itertools.pairwise(changes)]
    return {
        "counter_read_idle_s": counter_s,
        "counter_update_gap_median_s": statistics.median(gaps) if gaps else None,
        "counter_update_gaps_s": gaps,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--backend", default="nvml", choices=("nvml", "fake"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--iters", type=int, default=50, help="iterations per window (default 50)")
    ap.add_argument("--windows", type=int, default=4, help="windows per block (default 4)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup-s", type=float, default=5.0)
    ap.add_argument("--matmul-n", type=int, default=8192)
    ap.add_argument("--steady-s", type=float, default=4.0)
    ap.add_argument("--no-peers", action="store_true", help="skip ZeusMonitor and CodeCarbon")
    ap.add_argument("--skip-side-by-side", action="store_true")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a CPU smoke test")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.quick:
        args.batch_size, args.image_size, args.iters, args.windows, args.rounds = 2, 32, 2, 2, 2
        args.warmup_s, args.matmul_n, args.steady_s = 0.2, 256, 0.3
    from zeus_bench.device.nvml import forbid_power_limit_writes

    try:
        forbid_power_limit_writes()  # trap every NVML setter, for ZeusMonitor and CodeCarbon too
    except Exception as exc:
        if args.backend == "nvml":
            raise
        log.info("no pynvml to trap (%s); fake backend", exc)
    args.out.mkdir(parents=True, exist_ok=True)
    backend = get_backend(args.backend)
    gpu = backend.gpu(0)
    if args.backend == "fake":
        backend.configure(counter_latency_s=0.004, counter_update_period_s=0.1, load=1.0)  # type: ignore[attr-defined]
    summary: dict[str, Any] = {
        "gpu": gpu.name(),
        "power_limit_w": gpu.power_limit_w(),
        "torch": torch.__version__,
    }
    summary["nvml"] = nvml_costs(gpu)
    for pkg in ("zeus", "codecarbon"):
        try:
            summary[f"{pkg}_version"] = __import__(pkg).__version__
        except Exception as exc:
            summary[f"{pkg}_version"] = f"unavailable: {exc}"
    if not args.skip_side_by_side:
        rows = side_by_side(args, gpu, args.out)
        pd.DataFrame(rows).to_csv(args.out / "side_by_side.csv", index=False)
    short, meta = short_windows(args, gpu)
    summary["short_windows"] = meta
    pd.DataFrame(short).to_csv(args.out / "short_windows.csv", index=False)
    summary["power_limit_w_after"] = gpu.power_limit_w()
    (args.out / "side_by_side.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
