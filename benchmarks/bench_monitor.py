"""Time a measurement window costs the caller's thread: begin_window + end_window_deferred.

Runs ``--windows`` windows back to back, each around ``--work-ms`` of (sleeping) work, first
with the counters read on the caller's thread (the old way: two blocking reads per window), then
with the counter thread (the default); ``--follow`` adds a third run whose counter thread also
follows the counters (``follow_counters=True``, as in a sweep; with windows this short it polls
all the time). All the deferred measurements are collected at the end and checked to hold
energy. The last line is the default mode's cost::

    python benchmarks/bench_monitor.py --backend fake --counter-latency-ms 5 --windows 200
    ...
    caller overhead per window: 0.05 ms

On a real GPU (``--backend nvml``) the counter's own latency applies and ``--counter-latency-ms``
is refused. Power limits are never written: the NVML setters are trapped.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time

from zeus_bench.core.errors import ZeusBenchError
from zeus_bench.device import get_backend
from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.monitor import EnergyMonitor, PendingMeasurement

log = logging.getLogger("bench_monitor")
MAX_WINDOWS = 100_000


def _run(
    gpu: GPU, windows: int, work_s: float, background: bool, follow: bool = False
) -> tuple[list[float], list[float]]:
    """Per-window caller cost (s) and the windows' energies (J)."""
    costs: list[float] = []
    pending: list[PendingMeasurement] = []
    with EnergyMonitor([gpu], sync_cuda=False, read_in_background=background, follow_counters=follow) as mon:
        mon.counter_update_period_s()  # let the start-up probe finish before timing
        for k in range(windows):
            t0 = time.perf_counter()
            mon.begin_window(f"w{k}")
            t1 = time.perf_counter()
            time.sleep(work_s)
            t2 = time.perf_counter()
            pending.append(mon.end_window_deferred(f"w{k}"))
            t3 = time.perf_counter()
            costs.append((t1 - t0) + (t3 - t2))
        energies = [p.result().total_energy_j for p in pending]
    return costs, energies


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("fake", "nvml"), default="fake")
    ap.add_argument("--gpu", type=int, default=0, help="GPU index (default 0)")
    ap.add_argument("--counter-latency-ms", type=float, default=None, help="fake GPU: ms per counter read")
    ap.add_argument("--windows", type=int, default=200, help="windows per mode (default 200)")
    ap.add_argument("--work-ms", type=float, default=10.0, help="work inside each window, ms (default 10)")
    ap.add_argument("--follow", action="store_true", help="also time a monitor that follows its counters")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if not 1 <= args.windows <= MAX_WINDOWS:
            raise ZeusBenchError(f"--windows must lie in 1..{MAX_WINDOWS}, got {args.windows}")
        if not 0 <= args.work_ms <= 10_000:
            raise ZeusBenchError(f"--work-ms must lie in 0..10000, got {args.work_ms}")
        if args.backend == "fake":
            latency_ms = 4.0 if args.counter_latency_ms is None else args.counter_latency_ms
            if not 0 <= latency_ms <= 1000:
                raise ZeusBenchError(f"--counter-latency-ms must lie in 0..1000, got {latency_ms}")
            fake = FakeBackend(state_path=None, n_gpus=1)
            fake.configure(counter_latency_s=latency_ms / 1000.0, load=1.0)
            backend: GPUBackend = fake
        else:
            if args.counter_latency_ms is not None:
                raise ZeusBenchError("--counter-latency-ms applies to --backend fake only")
            from zeus_bench.device.nvml import forbid_power_limit_writes

            backend = get_backend("nvml")
            forbid_power_limit_writes()
        gpu = backend.gpu(args.gpu)
        rows = []
        modes = [("reads on the caller's thread", False, False)]
        if args.follow:
            modes.append(("counter thread, following", True, True))
        modes.append(("reader thread (default)", True, False))
        for label, background, follow in modes:
            costs, energies = _run(gpu, args.windows, args.work_ms / 1000.0, background, follow)
            if min(energies) < 0:
                raise ZeusBenchError(f"{label}: a window read negative energy")
            rows.append(
                (label, statistics.mean(costs) * 1e3, statistics.median(costs) * 1e3, max(costs) * 1e3)
            )
    except ZeusBenchError as exc:
        print(f"bench_monitor: {exc}", file=sys.stderr)
        return 2
    print(f"{args.backend} GPU {args.gpu}, {args.windows} windows of {args.work_ms:g} ms work")
    print(f"{'mode':<30} {'mean ms':>8} {'median ms':>10} {'max ms':>8}")
    for label, mean, median, worst in rows:
        print(f"{label:<30} {mean:8.3f} {median:10.3f} {worst:8.3f}")
    print(f"caller overhead per window: {rows[-1][1]:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
