"""The multi-GPU driver: one process per GPU with DistributedDataParallel, energy summed over GPUs.

The parent checks everything a user can get wrong (limits, ``--out``, the GPUs) before it spawns
one worker per GPU. Every worker builds the model once, wraps it in DDP and trains on its share
of the global batch (``batch_size / num_gpus``); rank 0 owns the energy monitor over *all* the
GPUs (their counters are global, so one reader counts each GPU once), the power-limit session
and the output table. The loop's "keep going" decisions are rank 0's, broadcast to every rank,
so all ranks run the same number of iterations; window edges sit behind a barrier. On fake GPUs
every rank drives its own GPU's load and paces its own steps.

A user error or an out-of-memory error in any worker ends every worker (a rank left waiting in a
collective would wait forever) and becomes one line in the parent. ``--stop-at-oom`` is refused
with several GPUs (:class:`~zeus_bench.sweep.plan.SweepPlan`).

The trace's ``gpu`` column defaults to ``<kind>x<n>`` (``h200x2``) so multi-GPU rows never
collide with single-GPU rows of the same GPU kind; ``num_gpus`` holds ``n``.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeus_bench.core.errors import ConfigError, ZeusBenchError
from zeus_bench.device.measurement import Measurement
from zeus_bench.store import read_table
from zeus_bench.sweep.devices import (
    gpu_kind_from_name,
    limit_setter,
    oom_errors,
    open_gpus,
    prepare_torch,
    resolve_torch_device,
)
from zeus_bench.sweep.plan import BatchSizeDoesNotFitError, SweepOutcome, SweepPlan
from zeus_bench.sweep.points import PointLoop
from zeus_bench.sweep.provenance import base_sweep_provenance
from zeus_bench.sweep.writer import SweepWriter, load_previous, make_emit
from zeus_bench.traces.workloads import WorkloadSpec, get_workload

if TYPE_CHECKING:
    import torch

    from zeus_bench.sweep.point import PointMeasurement
    from zeus_bench.sweep.workload import TrainingWorkload

log = logging.getLogger(__name__)

_OOM = "oom:"


class _NoMonitor:
    """Stand-in monitor of ranks other than 0: they follow the window edges but read nothing."""

    def begin_window(self, name: str) -> None:
        """Nothing to read."""

    def end_window(self, name: str) -> Measurement:
        """A placeholder measurement (never written: only rank 0 emits rows)."""
        return Measurement(name, 1.0, {-1: 1.0})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sweep_ddp(
    plan: SweepPlan, out: Path, resume: bool, spec: WorkloadSpec, workload: TrainingWorkload
) -> SweepOutcome:
    """Run ``plan`` over ``plan.gpu_indices`` with DDP; rank 0 writes ``out``.

    Raises:
        ConfigError: mixed GPU kinds, a limit out of range, ``out`` exists without ``resume``,
            an error in a worker.
        BatchSizeDoesNotFitError: a batch size ran out of memory on some rank.
    """
    import torch.multiprocessing as mp

    backend, gpus = open_gpus(plan)
    names = {g.name() for g in gpus}
    if len(names) > 1:
        raise ConfigError(f"--gpus mixes GPU kinds ({', '.join(sorted(names))}); sweep each kind on its own")
    gpu_kind = plan.gpu_kind or f"{gpu_kind_from_name(gpus[0].name())}x{len(gpus)}"
    previous = load_previous(out, resume, gpu_kind, spec)
    for i in plan.gpu_indices:
        resolve_torch_device(plan.torch_device, backend.name, i)
    ctx = mp.get_context("spawn")
    errors = ctx.SimpleQueue()
    port = _free_port()
    before = 0 if previous is None else len(previous)
    try:
        mp.spawn(_worker, args=(plan, str(out), resume, gpu_kind, port, errors), nprocs=len(gpus), join=True)
    except Exception:
        if errors.empty():
            raise
        message = errors.get()
        if message.startswith(_OOM):
            raise BatchSizeDoesNotFitError(message.removeprefix(_OOM)) from None
        raise ConfigError(message) from None
    df = read_table(out, "power")
    meta = df.attrs.get("zeus_bench", {})
    return SweepOutcome(df, out, len(df) - before, before, list(meta.get("skipped", [])))


def _join_group(rank: int, plan: SweepPlan, port: int) -> tuple[Any, list[Any], torch.device]:
    """Open this rank's GPUs and torch device and join the process group (NCCL on CUDA, else gloo).

    Returns:
        ``(backend, gpus, device)``: the GPU backend, every GPU of the sweep and this rank's device.
    """
    import torch.distributed as dist

    world = len(plan.gpu_indices)
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_RANK=str(rank),
    )
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    backend, gpus = open_gpus(plan)
    device = resolve_torch_device(plan.torch_device, backend.name, plan.gpu_indices[rank])
    prepare_torch(device, plan.seed)
    dist.init_process_group(
        "nccl" if device.type == "cuda" else "gloo",
        rank=rank,
        world_size=world,
        device_id=device if device.type == "cuda" else None,
    )
    return backend, gpus, device


def _collectives(device: torch.device) -> tuple[Callable[[bool], bool], Callable[[], None]]:
    """``(agree, barrier)``: rank 0's decision broadcast to every rank, and a barrier after the device's work."""
    import torch
    import torch.distributed as dist

    flag = torch.zeros(1, dtype=torch.int32, device=device)

    def agree(decision: bool) -> bool:
        flag.fill_(int(decision))
        dist.broadcast(flag, src=0)
        return bool(flag.item())

    def barrier() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        dist.barrier()

    return agree, barrier


def _todo(
    plan: SweepPlan, current_w: float, writer: SweepWriter | None, device: torch.device
) -> list[list[float]]:
    """The limits still to measure at each batch size of the plan: rank 0's list (its table's), broadcast.

    The plan's limits, or ``current_w`` (the limit the GPUs have now) when the plan names none.
    """
    import torch
    import torch.distributed as dist

    limits = [current_w] if plan.power_limits_w is None else list(plan.power_limits_w)
    done = writer.done() if writer is not None else set()
    todo_flags = torch.tensor(
        [[int((b, float(p)) not in done) for p in limits] for b in plan.batch_sizes],
        dtype=torch.int32,
    ).to(device)
    dist.broadcast(todo_flags, src=0)
    return [[p for p, f in zip(limits, row, strict=True) if f] for row in todo_flags.cpu().tolist()]


def _leader_writer(
    plan: SweepPlan,
    out: Path,
    resume: bool,
    gpu_kind: str,
    spec: WorkloadSpec,
    workload: TrainingWorkload,
    backend: Any,
    gpus: list[Any],
) -> SweepWriter:
    """Rank 0's table writer: the previous rows (when resuming) and the provenance, DDP's included."""
    import torch.distributed as dist

    previous = load_previous(out, resume, gpu_kind, spec)
    prov = base_sweep_provenance(plan, backend, gpus, gpu_kind, workload)
    prov["distributed"] = {
        "strategy": "DistributedDataParallel",
        "world_size": len(plan.gpu_indices),
        "backend": dist.get_backend(),
    }
    return SweepWriter(out, previous, prov)


def _emit_rows(
    writer: SweepWriter | None, plan: SweepPlan, spec: WorkloadSpec, gpu_kind: str, workload: TrainingWorkload
) -> Callable[[int, float, PointMeasurement], None]:
    """Where a measured point goes: a row of rank 0's table; nowhere on the other ranks."""
    if writer is None:
        return lambda b, p, m: None
    return make_emit(
        writer, spec, gpu_kind, workload.samples_per_epoch, len(plan.gpu_indices), plan.measures_current_limit
    )


def _worker(
    rank: int, plan: SweepPlan, out: str, resume: bool, gpu_kind: str, port: int, errors: Any
) -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from zeus_bench.device.control import PowerLimitSession
    from zeus_bench.device.fake_load import fake_load
    from zeus_bench.device.monitor import EnergyMonitor
    from zeus_bench.sweep.workload import load_workload

    world = len(plan.gpu_indices)
    backend, gpus, device = _join_group(rank, plan, port)
    batch_size = None
    try:
        workload = load_workload(plan.workload, tiny=plan.tiny)
        spec = get_workload(plan.workload, plan.workloads_file)
        model = workload.build_model().to(device)
        model.train()
        ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        leader = rank == 0
        writer = (
            _leader_writer(plan, Path(out), resume, gpu_kind, spec, workload, backend, gpus)
            if leader
            else None
        )
        session = PowerLimitSession(gpus, observe=plan.measures_current_limit) if leader else None
        monitor: EnergyMonitor | None = None
        try:
            if session is not None:
                session.__enter__()
            todo = _todo(plan, gpus[0].power_limit_w(), writer, device)
            fake = fake_load([gpus[rank]])
            # The leader's one counter thread for the GPU set (closed below).
            monitor = (
                EnergyMonitor(gpus, sync_cuda=device.type == "cuda", follow_counters=True) if leader else None
            )
            agree, barrier = _collectives(device)
            loop = PointLoop(
                workload,
                ddp,
                device,
                plan,
                monitor if monitor is not None else _NoMonitor(),
                limit_setter(session, gpus, plan),
                agree,
                barrier,
                world_size=world,
                leader=leader,
                fake=fake,
            )
            emit = _emit_rows(writer, plan, spec, gpu_kind, workload)
            if fake is not None:
                fake.__enter__()
            try:
                for b, point_limits in zip(plan.batch_sizes, todo, strict=True):
                    if point_limits:
                        batch_size = b
                        loop.run_batch_size(b, point_limits, emit)
            finally:
                if fake is not None:
                    fake.__exit__(None, None, None)
            if writer is not None:
                writer.write(complete=True)
        finally:
            if monitor is not None:
                monitor.close()
            if session is not None:
                session.__exit__(None, None, None)
    except ZeusBenchError as exc:
        errors.put(f"rank {rank}: {exc}")
        raise SystemExit(1) from None  # ends the other ranks, which may wait in a collective
    except oom_errors():
        errors.put(
            f"{_OOM}batch size {batch_size} of {plan.workload} does not fit in the memory of "
            f"{world} GPUs (rank {rank} ran out); completed points are in {out}"
        )
        raise SystemExit(1) from None
    finally:
        dist.destroy_process_group()
