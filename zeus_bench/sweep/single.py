"""The single-process driver: one workload on one GPU, every point in turn.

Power limits are set through :class:`~zeus_bench.device.control.PowerLimitSession`, which puts
them back on exit, on errors and on SIGINT/SIGTERM (a SLURM job hitting its time limit or
cancelled with ``scancel`` gets SIGTERM first). A batch size that does not fit in GPU memory is
a user error (one line, exit 2) unless ``stop_at_oom`` is set, in which case it and every larger
batch size are recorded as skipped in the provenance and the sweep ends normally.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from zeus_bench.sweep.devices import (
    free_device_memory,
    gpu_kind_from_name,
    limit_setter,
    oom_errors,
    open_gpus,
    prepare_torch,
    resolve_torch_device,
)
from zeus_bench.sweep.plan import BatchSizeDoesNotFitError, SweepOutcome, SweepPlan
from zeus_bench.sweep.points import PointLoop, pending_points
from zeus_bench.sweep.provenance import base_sweep_provenance
from zeus_bench.sweep.writer import SweepWriter, load_previous, make_emit
from zeus_bench.traces.workloads import WorkloadSpec

if TYPE_CHECKING:
    import torch

    from zeus_bench.device.base import GPU
    from zeus_bench.device.monitor import EnergyMonitor
    from zeus_bench.sweep.workload import TrainingWorkload

log = logging.getLogger(__name__)


def sweep_single_process(
    plan: SweepPlan, out: Path, resume: bool, spec: WorkloadSpec, workload: TrainingWorkload
) -> SweepOutcome:
    """Run ``plan`` on its one GPU in this process and write ``out``."""
    from tqdm import tqdm

    from zeus_bench.device.control import PowerLimitSession
    from zeus_bench.device.fake_load import fake_load, model_clock

    backend, gpus = open_gpus(plan)
    gpu_kind = plan.gpu_kind or gpu_kind_from_name(gpus[0].name())
    previous = load_previous(out, resume, gpu_kind, spec)
    device = resolve_torch_device(plan.torch_device, backend.name, plan.gpu_indices[0])
    writer = SweepWriter(out, previous, base_sweep_provenance(plan, backend, gpus, gpu_kind, workload))
    emit = make_emit(
        writer, spec, gpu_kind, workload.samples_per_epoch, len(gpus), plan.measures_current_limit
    )
    prepare_torch(device, plan.seed)
    sweep_start = time.monotonic()
    measured = 0
    with PowerLimitSession(list(gpus), observe=plan.measures_current_limit) as session:
        limits = [gpus[0].power_limit_w()] if plan.power_limits_w is None else list(plan.power_limits_w)
        todo = pending_points(plan.batch_sizes, limits, writer.done())
        reused = len(plan.batch_sizes) * len(limits) - sum(len(ps) for _, ps in todo)
        if reused:
            log.info("resuming %s: %d point(s) already measured", writer.path, reused)
        model = workload.build_model().to(device)
        model.train()
        # Fake GPUs with a speed model: simulated time for the GPUs, the monitor and the bounds.
        clock = model_clock(backend, gpus)
        fake = fake_load(gpus, clock)
        monitor = _monitor(gpus, device, clock)
        loop = PointLoop(
            workload,
            model,
            device,
            plan,
            monitor,
            limit_setter(session, gpus, plan),
            agree=lambda d: d,
            barrier=lambda: None,
            fake=fake,
            clock=clock or time.monotonic,
        )
        total = sum(len(ps) for _, ps in todo)
        with contextlib.ExitStack() as stack:
            stack.enter_context(monitor)
            bar = stack.enter_context(
                tqdm(total=total, desc=f"sweep {plan.workload}", unit="point", disable=None)
            )
            if fake is not None:
                stack.enter_context(fake)
            for i, (batch_size, point_limits) in enumerate(todo):
                oom = False
                try:
                    loop.run_batch_size(batch_size, point_limits, emit)
                except oom_errors():
                    oom = True  # handled outside: the exception's frames still hold device memory
                if oom:
                    free_device_memory(device)
                    _out_of_memory(plan, writer, gpus[0].index, gpus[0].name(), [b for b, _ in todo[i:]])
                    break
                measured += len(point_limits)
                bar.update(len(point_limits))
                log.info("%s", progress_line(measured, total, time.monotonic() - sweep_start))
    writer.provenance["sweep_wall_s"] = round(time.monotonic() - sweep_start, 3)
    df = writer.write(complete=True)
    if df.empty:
        raise BatchSizeDoesNotFitError(
            f"no batch size of {plan.workload} fits on {gpus[0].name()}; nothing written"
        )
    return SweepOutcome(df, writer.path, measured, reused, writer.provenance["skipped"])


def _monitor(gpus: list[GPU], device: torch.device, clock: Callable[[], float] | None) -> EnergyMonitor:
    """The sweep's one counter thread for the GPU set (closed with the sweep).

    ``clock``: the fake GPUs' speed model's clock (None: the host's, real or fake GPUs).
    """
    from zeus_bench.device.fake_load import MODEL_COUNTER_PERIOD_S
    from zeus_bench.device.monitor import EnergyMonitor

    return EnergyMonitor(
        list(gpus),
        sync_cuda=device.type == "cuda",
        clock=clock or time.monotonic,
        # The model's counter is exact at every read (continuous): no period to probe,
        # and edges read at once (a reader thread would read after later steps moved it).
        counter_update_period_s=MODEL_COUNTER_PERIOD_S if clock else None,
        read_in_background=clock is None,
        # On the host's clock, the one counter thread also follows the counters near
        # edges and interpolates each window's energy between their updates.
        follow_counters=clock is None,
    )


def progress_line(done: int, total: int, elapsed_s: float) -> str:
    """``3/8 points measured in 41 s; ETA 68 s`` (the rest at the mean pace so far), for the logs."""
    eta = elapsed_s / done * (total - done) if done else float("nan")
    return f"{done}/{total} points measured in {elapsed_s:.0f} s; ETA {eta:.0f} s"


def _out_of_memory(plan: SweepPlan, writer: SweepWriter, index: int, name: str, rest: list[int]) -> None:
    """Record ``rest[0]`` (and with ``stop_at_oom`` every larger size) as skipped; else raise.

    Raises:
        BatchSizeDoesNotFitError: ``stop_at_oom`` is off (the points measured so far are kept).
    """
    batch_size = rest[0]
    if not plan.stop_at_oom:
        writer.skip(batch_size, "out of memory")
        writer.write(complete=False)
        raise BatchSizeDoesNotFitError(
            f"batch size {batch_size} of {plan.workload} does not fit in the memory of GPU "
            f"{index} ({name}); completed points are in {writer.path}"
        )
    for b in rest:
        writer.skip(
            b, "out of memory" if b == batch_size else f"larger than {batch_size}, which ran out of memory"
        )
    log.warning(
        "batch size %d does not fit on %s; stopping at it (%d larger skipped)",
        batch_size,
        name,
        len(rest) - 1,
    )
