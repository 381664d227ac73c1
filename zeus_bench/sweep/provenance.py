"""What a sweep records about where and how it measured (the trace's provenance)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from zeus_bench.sweep.plan import SweepPlan

if TYPE_CHECKING:
    from zeus_bench.device.base import GPU, GPUBackend
    from zeus_bench.sweep.workload import TrainingWorkload

#: Environment variables that say which scheduler job measured, and on which GPUs.
_SCHEDULER_ENV = {
    "slurm_job_id": "SLURM_JOB_ID",
    "slurm_job_name": "SLURM_JOB_NAME",
    "slurm_partition": "SLURM_JOB_PARTITION",
    "slurm_nodelist": "SLURM_JOB_NODELIST",
    "cuda_visible_devices": "CUDA_VISIBLE_DEVICES",
}


def utc_now() -> str:
    """Current UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def software_provenance() -> dict[str, object]:
    """Versions of the software that measured: torch, CUDA, cuDNN, Python."""
    import torch

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": cudnn,
        "python": platform.python_version(),
    }


def scheduler_provenance() -> dict[str, str] | None:
    """The SLURM job (id, name, partition, node) and visible GPUs, or None outside SLURM."""
    if "SLURM_JOB_ID" not in os.environ:
        return None
    return {key: os.environ[env] for key, env in _SCHEDULER_ENV.items() if env in os.environ}


def base_sweep_provenance(
    plan: SweepPlan, backend: GPUBackend, gpus: Sequence[GPU], gpu_kind: str, workload: TrainingWorkload
) -> dict[str, Any]:
    """Provenance of a sweep: GPU, driver, software, scheduler job, mode and measuring settings."""
    lo, hi = gpus[0].power_limit_range_w()
    prov: dict[str, Any] = {
        "source": "zeus-bench sweep",
        "workload": plan.workload,
        "tiny": plan.tiny,
        "amp": bool(getattr(workload, "amp", False)),
        "samples_per_epoch": int(workload.samples_per_epoch),
        "gpu_kind": gpu_kind,
        "gpu_name": gpus[0].name(),
        "gpu_indices": list(plan.gpu_indices),
        "num_gpus": len(gpus),
        "backend": backend.name,
        "driver": backend.driver_version(),
        "power_limit_range_w": [lo, hi],
        "limit_at_start_w": [g.power_limit_w() for g in gpus],
        "mode": "observe" if plan.measures_current_limit else "set",
        **{k: v for k, v in asdict(plan.settings).items()},
        "seed": plan.seed,
        "started_utc": utc_now(),
        **software_provenance(),
    }
    scheduler = scheduler_provenance()
    if scheduler is not None:
        prov["scheduler"] = scheduler
    return prov
