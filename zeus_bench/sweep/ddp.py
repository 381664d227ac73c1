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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeus_bench.core.errors import ConfigError, ZeusBenchError
from zeus_bench.device.measurement import Measurement
from zeus_bench.store import read_table
from zeus_bench.sweep.devices import (
    gpu_kind_from_name,
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


def _worker(
    rank: int, plan: SweepPlan, out: str, resume: bool, gpu_kind: str, port: int, errors: Any
) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from zeus_bench.device.control import PowerLimitSession
    from zeus_bench.device.fake_load import fake_load
    from zeus_bench.device.monitor import EnergyMonitor
    from zeus_bench.sweep.workload import load_workload

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
    batch_size = None
    try:
        workload = load_workload(plan.workload, tiny=plan.tiny)
        spec = get_workload(plan.workload, plan.workloads_file)
        model = workload.build_model().to(device)
        model.train()
        ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        flag = torch.zeros(1, dtype=torch.int32, device=device)

        def agree(decision: bool) -> bool:
            flag.fill_(int(decision))
            dist.broadcast(flag, src=0)
            return bool(flag.item())

        def barrier() -> None:
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            dist.barrier()

        leader = rank == 0
        writer = None
        if leader:
            previous = load_previous(Path(out), resume, gpu_kind, spec)
            prov = base_sweep_provenance(plan, backend, gpus, gpu_kind, workload)
            prov["distributed"] = {
                "strategy": "DistributedDataParallel",
                "world_size": world,
                "backend": dist.get_backend(),
            }
            writer = SweepWriter(Path(out), previous, prov)
        session = PowerLimitSession(gpus, observe=plan.measures_current_limit) if leader else None
        monitor: EnergyMonitor | None = None
        try:
            if session is not None:
                session.__enter__()
            current = gpus[0].power_limit_w()
            limits = [current] if plan.power_limits_w is None else list(plan.power_limits_w)
            done = writer.done() if writer is not None else set()
            todo_flags = torch.tensor(
                [[int((b, float(p)) not in done) for p in limits] for b in plan.batch_sizes],
                dtype=torch.int32,
            ).to(device)
            dist.broadcast(todo_flags, src=0)
            fake = fake_load([gpus[rank]])
            set_limit = None
            if session is not None and not plan.measures_current_limit:

                def set_limit(watts: float) -> None:
                    for g in gpus:
                        session.set_power_limit_w(g.index, watts)

            # The leader's one counter thread for the GPU set (closed below).
            monitor = (
                EnergyMonitor(gpus, sync_cuda=device.type == "cuda", follow_counters=True) if leader else None
            )
            loop = PointLoop(
                workload,
                ddp,
                device,
                plan,
                monitor if monitor is not None else _NoMonitor(),
                set_limit,
                agree,
                barrier,
                world_size=world,
                leader=leader,
                fake=fake,
            )
            emit = (
                make_emit(
                    writer, spec, gpu_kind, workload.samples_per_epoch, world, plan.measures_current_limit
                )
                if writer is not None
                else (lambda b, p, m: None)
            )
            if fake is not None:
                fake.__enter__()
            try:
                flags = todo_flags.cpu().tolist()
                for b, row in zip(plan.batch_sizes, flags, strict=True):
                    point_limits = [p for p, f in zip(limits, row, strict=True) if f]
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
