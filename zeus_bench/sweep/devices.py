"""Which GPUs a sweep measures and which torch device it trains on.

``--gpus`` names CUDA ordinals, as torch sees them: inside a SLURM job that is the allocated
GPUs from 0 (SLURM sets ``CUDA_VISIBLE_DEVICES``). Energy counters and power limits live in the
backend's own numbering (NVML ignores ``CUDA_VISIBLE_DEVICES``), so every driver resolves the
ordinals to backend indices here, for the fake backend too, so that two SLURM jobs given
different GPUs also drive different fake GPUs.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from zeus_bench.core.errors import ConfigError
from zeus_bench.sweep.plan import PowerLimitOutOfRangeForSweepError, SweepPlan

if TYPE_CHECKING:
    import torch

    from zeus_bench.device.base import GPU, GPUBackend
    from zeus_bench.device.control import PowerLimitSession


def device_indices(backend: GPUBackend, ordinals: Sequence[int]) -> list[int]:
    """Backend indices of CUDA ordinals (``CUDA_VISIBLE_DEVICES`` renumbers only CUDA)."""
    from zeus_bench.device.ranks import local_gpu_index

    return [local_gpu_index(backend, i) for i in ordinals]


def open_gpus(plan: SweepPlan) -> tuple[GPUBackend, list[GPU]]:
    """The plan's backend and GPUs, with its power limits checked against their ranges.

    Raises:
        ConfigError: unknown backend, missing GPU, a limit outside a GPU's range.
    """
    from zeus_bench.device import get_backend

    backend = get_backend(plan.backend)
    gpus = backend.gpus(device_indices(backend, plan.gpu_indices))
    if plan.power_limits_w is not None:
        check_limits(gpus, plan.power_limits_w)
    return backend, gpus


def check_limits(gpus: Sequence[GPU], limits: Sequence[float]) -> None:
    """Raise :class:`PowerLimitOutOfRangeForSweepError` if a limit is outside a GPU's range."""
    for gpu in gpus:
        lo, hi = gpu.power_limit_range_w()
        for limit in limits:
            if not lo <= limit <= hi:
                raise PowerLimitOutOfRangeForSweepError(
                    f"power limit {limit:g} W is outside GPU {gpu.index}'s range [{lo:g}, {hi:g}] W ({gpu.name()})"
                )


def limit_setter(
    session: PowerLimitSession | None, gpus: Sequence[GPU], plan: SweepPlan
) -> Callable[[float], None] | None:
    """How a sweep sets every GPU's power limit through ``session``.

    None when there is no session (a rank other than 0) or the plan measures the current limit.
    """
    if session is None or plan.measures_current_limit:
        return None

    def set_limit(watts: float) -> None:
        for gpu in gpus:
            session.set_power_limit_w(gpu.index, watts)

    return set_limit


def resolve_torch_device(choice: str, backend_name: str, gpu_index: int) -> torch.device:
    """The torch device a GPU index trains on (CPU under the fake backend unless told otherwise)."""
    import torch

    if choice == "cpu" or (choice == "auto" and backend_name == "fake"):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ConfigError("CUDA is not available to torch; use --backend fake or --torch-device cpu")
    if gpu_index >= torch.cuda.device_count():
        raise ConfigError(
            f"GPU {gpu_index} is not visible to torch ({torch.cuda.device_count()} CUDA devices)"
        )
    return torch.device("cuda", gpu_index)


def prepare_torch(device: torch.device, seed: int) -> None:
    """Seed torch and make ``device`` the current CUDA device (autotuned convolutions)."""
    import torch

    torch.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True


def oom_errors() -> tuple[type[BaseException], ...]:
    """Exception types meaning "out of device memory"."""
    import torch

    return (torch.OutOfMemoryError,)


def free_device_memory(device: torch.device) -> None:
    """Return cached blocks after an out-of-memory error so smaller work can go on."""
    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


_VENDOR = re.compile(r"^(nvidia|tesla|geforce|quadro)\s+", re.IGNORECASE)


def gpu_kind_from_name(name: str) -> str:
    """Short GPU kind for the trace's ``gpu`` column: ``NVIDIA H200`` -> ``h200``.

    Vendor and product-line words are dropped, the rest is lower-cased and joined by ``-``
    (``Tesla V100-SXM2-32GB`` -> ``v100-sxm2-32gb``). Pass ``--gpu-kind`` to choose another.
    """
    rest = name.strip()
    while (m := _VENDOR.match(rest)) is not None:
        rest = rest[m.end() :]
    kind = re.sub(r"[^a-z0-9]+", "-", rest.lower()).strip("-")
    if not kind:
        raise ConfigError(f"cannot derive a GPU kind from the name {name!r}; pass --gpu-kind")
    return kind
