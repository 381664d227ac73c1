"""Measure the GPU layer on a real GPU, in observe mode only (no setting is ever written).

Three measurements, ResNet-50 (torchvision) on synthetic ImageNet-shaped data:

1. Counter vs sampled power: energy from the NVML counter against energy integrated from
   instant power sampled at 10 Hz and 50 Hz, over consecutive steady training windows.
2. Monitor overhead: throughput of epochs with no monitor against epochs with one window per
   epoch and 10 Hz background sampling, interleaved A B B A.
3. The JIT profiler in observe mode at two batch sizes: throughput, average power and cost per
   sample at the current limit, and the time profiling took.

Also: cost of one counter read and one power read, and the counter's update period.

Usage (on the GPU machine)::

    PYTHONPATH=. python3 benchmarks/device/measure_monitor.py --out results/device
    # CPU smoke test of the script itself (fake GPU, tiny images):
    ZEUS_BENCH_FAKE_STATE=/tmp/f.json python3 benchmarks/device/measure_monitor.py --backend fake \
        --device cpu --image-size 32 --quick --out /tmp/m
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch
import torchvision

from zeus_bench.core.cost import Cost
from zeus_bench.device import get_backend
from zeus_bench.device.control import PowerLimitSession
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.device.nvml import forbid_power_limit_writes
from zeus_bench.online.profiler import JITPowerLimitProfiler, ProfilerConfig, ProfilerState

log = logging.getLogger("measure_monitor")


class Trainer:
    """ResNet-50, SGD, bf16 autocast on CUDA, a few fixed random batches rotated."""

    def __init__(self, batch_size: int, device: str, image_size: int) -> None:
        self.device = torch.device(device)
        self.batch_size = batch_size
        self.model = torchvision.models.resnet50(weights=None).to(
            self.device, memory_format=torch.channels_last
        )
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        gen = torch.Generator(device="cpu").manual_seed(0)
        self.batches = [
            (
                torch.randn(batch_size, 3, image_size, image_size, generator=gen).to(
                    self.device, memory_format=torch.channels_last
                ),
                torch.randint(0, 1000, (batch_size,), generator=gen).to(self.device),
            )
            for _ in range(4)
        ]
        self.i = 0
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def step(self) -> None:
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            loss = self.loss_fn(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def run_for(self, seconds: float) -> int:
        n, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            self.step()
            n += 1
        self.sync()
        return n

    def run_iters(self, n: int) -> float:
        self.sync()
        t0 = time.perf_counter()
        for _ in range(n):
            self.step()
        self.sync()
        return time.perf_counter() - t0


def nvml_costs(gpu, quick: bool) -> dict:
    n = 20 if quick else 200
    t0 = time.perf_counter()
    for _ in range(n):
        gpu.total_energy_j()
    counter_s = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n * 10):
        gpu.instant_power_w()
    power_s = (time.perf_counter() - t0) / (n * 10)
    # update period: times at which the counter's value changes
    changes, last, end = [], gpu.total_energy_j(), time.monotonic() + (0.5 if quick else 2.0)
    while time.monotonic() < end:
        e = gpu.total_energy_j()
        if e != last:
            changes.append(time.monotonic())
            last = e
    gaps = [b - a for a, b in itertools.pairwise(changes)]
    return {
        "counter_read_s": counter_s,
        "instant_power_read_s": power_s,
        "counter_update_period_s_median": statistics.median(gaps) if gaps else None,
        "counter_updates_seen": len(changes),
    }


def counter_vs_sampled(gpu, trainer: Trainer, window_s: float, n_windows: int, out: Path) -> list[dict]:
    trainer.run_for(3.0)  # steady state
    rows = []
    with (
        EnergyMonitor([gpu], sample_interval_s=0.1) as m10,
        EnergyMonitor([gpu], sample_interval_s=0.02) as m50,
    ):
        for w in range(n_windows):
            m10.begin_window("w")
            m50.begin_window("w")
            iters = trainer.run_for(window_s)
            a = m10.end_window("w")
            b = m50.end_window("w")
            s10 = m10.sampled_window_energy_j(a)[gpu.index]
            s50 = m50.sampled_window_energy_j(b)[gpu.index]
            rows.append(
                {
                    "window": w,
                    "batch_size": trainer.batch_size,
                    "iterations": iters,
                    "time_s": a.time_s,
                    "counter_energy_j": a.energy_j[gpu.index],
                    "sampled_10hz_energy_j": s10,
                    "sampled_50hz_energy_j": s50,
                    "rel_diff_10hz": s10 / a.energy_j[gpu.index] - 1.0,
                    "rel_diff_50hz": s50 / b.energy_j[gpu.index] - 1.0,
                    "avg_power_w": a.avg_power_w,
                }
            )
            log.info("window %d: %s", w, rows[-1])
        m50.stop_sampling()
        m50.write_power_timeline(
            out / "power_timeline.parquet", provenance={"what": "counter_vs_sampled, 50 Hz"}
        )
    return rows


def overhead(gpu, trainer: Trainer, epoch_s: float, pairs: int) -> tuple[list[dict], dict]:
    trainer.run_for(2.0)
    t = trainer.run_iters(10)
    iters = max(10, round(epoch_s * 10 / t))
    mon = EnergyMonitor([gpu], sample_interval_s=0.1)
    mon.stop_sampling()
    rows = []
    order = []
    for _ in range(pairs):
        order += ["none", "monitor", "monitor", "none"]
    for k, cond in enumerate(order):
        if cond == "none":
            dt = trainer.run_iters(iters)
        else:
            mon.start_sampling()
            trainer.sync()
            t0 = time.perf_counter()
            mon.begin_window(f"epoch{k}")
            for _ in range(iters):
                trainer.step()
            mon.end_window(f"epoch{k}")  # synchronises CUDA
            dt = time.perf_counter() - t0
            mon.stop_sampling()
        rows.append(
            {
                "epoch": k,
                "condition": cond,
                "iterations": iters,
                "time_s": dt,
                "samples_per_s": iters * trainer.batch_size / dt,
            }
        )
        log.info("overhead epoch %d %s: %.1f samples/s", k, cond, rows[-1]["samples_per_s"])
    mon.close()
    df = pd.DataFrame(rows)
    med = df.groupby("condition")["samples_per_s"].median()
    mean = df.groupby("condition")["samples_per_s"].mean()
    summary = {
        "iterations_per_epoch": iters,
        "epochs_per_condition": 2 * pairs,
        "median_samples_per_s_none": med["none"],
        "median_samples_per_s_monitor": med["monitor"],
        "overhead_median": 1.0 - med["monitor"] / med["none"],
        "overhead_mean": 1.0 - mean["monitor"] / mean["none"],
        "spread_none": float(df[df.condition == "none"].samples_per_s.std() / mean["none"]),
    }
    return rows, summary


def profile_observe(
    gpu, session, batch_size: int, device: str, image_size: int, cfg: ProfilerConfig
) -> tuple[list[dict], dict]:
    t0 = time.perf_counter()
    trainer = Trainer(batch_size, device, image_size)
    monitor = EnergyMonitor([gpu])
    prof = JITPowerLimitProfiler(session, monitor, "imagenet-resnet50-synthetic", cfg)
    t1 = time.perf_counter()
    prof.on_epoch_begin(batch_size)
    steps = 0
    while prof.state is not ProfilerState.DONE:
        prof.on_step_begin()
        trainer.step()
        prof.on_step_end(batch_size)
        steps += 1
    t2 = time.perf_counter()
    rows = prof.profile.rows(cfg.cost)
    summary = {
        "batch_size": batch_size,
        "setup_s": t1 - t0,
        "profiling_s": t2 - t1,
        "profiler_reported_s": prof.profile.profiling_time_s,
        "steps": steps,
        "chosen_power_limit_w": prof.chosen_power_limit_w,
    }
    del trainer
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return rows, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--backend", default="nvml")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--batch-sizes", type=int, nargs=2, default=[128, 256])
    ap.add_argument("--eta", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="seconds instead of minutes (smoke test)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    forbid_power_limit_writes()  # observe-only: any setter call raises
    args.out.mkdir(parents=True, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    q = args.quick
    backend = get_backend(args.backend)
    gpu = backend.gpu(args.gpu)
    results: dict = {
        "command": " ".join(sys.argv),
        "gpu_name": gpu.name(),
        "driver": backend.driver_version(),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "power_limit_range_w": gpu.power_limit_range_w(),
        "power_limit_w": gpu.power_limit_w(),
        "observe_mode": True,
    }
    if args.backend == "fake":
        gpu.set_load(1.0)
    t_start = time.perf_counter()
    with PowerLimitSession([gpu], observe=True, journal_dir=Path(tempfile.mkdtemp()) / "state") as session:
        results["nvml_costs"] = nvml_costs(gpu, q)
        log.info("nvml costs: %s", results["nvml_costs"])
        trainer = Trainer(args.batch_sizes[1], args.device, args.image_size)
        cvs = counter_vs_sampled(gpu, trainer, window_s=1.0 if q else 10.0, n_windows=3, out=args.out)
        pd.DataFrame(cvs).to_csv(args.out / "counter_vs_sampled.csv", index=False)
        results["counter_vs_sampled"] = {
            "windows": len(cvs),
            "max_abs_rel_diff_10hz": max(abs(r["rel_diff_10hz"]) for r in cvs),
            "max_abs_rel_diff_50hz": max(abs(r["rel_diff_50hz"]) for r in cvs),
            "mean_avg_power_w": statistics.mean(r["avg_power_w"] for r in cvs),
        }
        rows, summary = overhead(gpu, trainer, epoch_s=0.5 if q else 5.0, pairs=1 if q else 3)
        pd.DataFrame(rows).to_csv(args.out / "overhead.csv", index=False)
        results["overhead"] = summary
        if backend.device_count() > 1:  # all GPUs in one monitor while GPU 0 trains
            with EnergyMonitor(backend.gpus()) as mon:
                mon.begin_window("all")
                trainer.run_for(1.0 if q else 3.0)
                m = mon.end_window("all")
            results["multi_gpu_window"] = {
                "time_s": m.time_s,
                "energy_j": m.energy_j,
                "total_energy_j": m.total_energy_j,
            }
            log.info("multi-GPU window: %s", results["multi_gpu_window"])
        del trainer
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
        cfg = ProfilerConfig(
            cost=Cost(args.eta),
            warmup_iters=2 if q else 10,
            warmup_min_s=0.1 if q else 1.0,
            profile_iters=5 if q else 40,
            profile_min_s=0.5 if q else 5.0,
        )
        prof_rows, prof_summaries = [], []
        for bs in args.batch_sizes:
            rows, summary = profile_observe(gpu, session, bs, args.device, args.image_size, cfg)
            prof_rows += rows
            prof_summaries.append(summary)
            log.info("profile bs %d: %s %s", bs, rows, summary)
        pd.DataFrame(prof_rows).to_csv(args.out / "profile_observe.csv", index=False)
        results["profiler"] = {"config": cfg.__dict__, "runs": prof_summaries, "rows": prof_rows}
    results["total_s"] = time.perf_counter() - t_start
    results["power_limit_w_after"] = gpu.power_limit_w()
    (args.out / "device_results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(
        json.dumps(
            {k: results[k] for k in ("nvml_costs", "counter_vs_sampled", "overhead")}, indent=1, default=str
        )
    )
    for r in prof_rows:
        print(
            f"profile bs={r['batch_size']} limit={r['power_limit_w']:g} W: {r['samples_per_s']:.1f} samples/s, "
            f"{r['avg_power_w']:.1f} W, {r['cost_per_sample_j']:.4f} J/sample (eta {r['eta']})"
        )
    print("profiling time:", [(s["batch_size"], round(s["profiling_s"], 2)) for s in prof_summaries])
    return 0


if __name__ == "__main__":
    sys.exit(main())
