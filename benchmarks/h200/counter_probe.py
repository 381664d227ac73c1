"""How NVML's energy counter behaves under full load, and whether counter power can top the limit.

Runs bf16 matrix products on one GPU for ``--seconds`` while a thread reads the energy counter
as fast as NVML answers and, between reads, the 1 s-averaged power (``nvmlDeviceGetPowerUsage``).
Reports the counter's update period and step, the power from the counter over 1 s spans
aligned with its updates (interpolated) and over the whole run, against the power limit and the
enforced limit. Read-only: run it through ``observe_only.py``.

Usage: python3 benchmarks/h200/observe_only.py script benchmarks/h200/counter_probe.py --gpu 0 --out probe.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import pynvml
import torch


def main() -> int:
    """Load the GPU, follow its counter, print and write the summary."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(args.gpu)
    limit_w = pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000
    enforced_w = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
    dev = torch.device("cuda", args.gpu)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    stop = threading.Event()
    ticks: list[tuple[float, float]] = []
    usage: list[float] = []

    def follow() -> None:
        last = None
        while not stop.is_set():
            e = pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000
            now = time.monotonic()
            if last is not None and e != last:
                ticks.append((now, e))
            last = e
            usage.append(pynvml.nvmlDeviceGetPowerUsage(h) / 1000)

    for _ in range(20):  # warm up the GPU before following
        a @ b
    torch.cuda.synchronize(dev)
    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize(dev)
    stop.set()
    thread.join()
    periods = [t2 - t1 for (t1, _), (t2, _) in itertools.pairwise(ticks)]
    steps = [e2 - e1 for (_, e1), (_, e2) in itertools.pairwise(ticks)]
    spans = []  # power over ~1 s spans between updates
    i = 0
    while i < len(ticks) - 1:
        j = i
        while j < len(ticks) - 1 and ticks[j][0] - ticks[i][0] < 1.0:
            j += 1
        spans.append((ticks[j][1] - ticks[i][1]) / (ticks[j][0] - ticks[i][0]))
        i = j
    whole = (ticks[-1][1] - ticks[0][1]) / (ticks[-1][0] - ticks[0][0])
    summary = {
        "gpu": args.gpu,
        "name": pynvml.nvmlDeviceGetName(h),
        "power_limit_w": limit_w,
        "enforced_power_limit_w": enforced_w,
        "counter_updates": len(ticks),
        "update_period_ms_median": 1e3 * statistics.median(periods),
        "update_period_ms_min_max": [1e3 * min(periods), 1e3 * max(periods)],
        "update_step_j_median": statistics.median(steps),
        "counter_power_w_whole_run": whole,
        "counter_power_w_1s_spans": [round(s, 2) for s in spans],
        "power_usage_w_mean": statistics.fmean(usage),
        "power_usage_w_max": max(usage),
        "spans_above_limit": sum(s > limit_w for s in spans),
    }
    print(json.dumps(summary, indent=1))
    args.out.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
