"""Several processes (DDP ranks): which GPU is this rank's, and one measurement from all ranks.

Let each rank measure only its own GPU (:func:`local_gpu_index`); :func:`gather_measurement`
then sums the ranks' energy with each physical GPU counted once (:func:`merge_measurements`).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterable
from typing import Any

from zeus_bench.device.base import GPUBackend
from zeus_bench.device.errors import MeasurementWindowError, NoSuchGPUError
from zeus_bench.device.measurement import FROM_EDGES, Measurement


def local_gpu_index(backend: GPUBackend, cuda_device: int | None = None) -> int:
    """NVML index of this process's CUDA device.

    Args:
        backend: The GPU backend (to match UUIDs).
        cuda_device: CUDA device ordinal; default ``$LOCAL_RANK`` or 0.

    ``CUDA_VISIBLE_DEVICES`` (indices or ``GPU-`` UUIDs) renumbers CUDA devices; NVML does not.
    """
    ordinal = cuda_device if cuda_device is not None else int(os.environ.get("LOCAL_RANK", "0"))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return ordinal
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if ordinal >= len(entries):
        raise NoSuchGPUError(f"CUDA device {ordinal} is not among CUDA_VISIBLE_DEVICES={visible}")
    entry = entries[ordinal]
    if entry.isdigit():
        return int(entry)
    for i in range(backend.device_count()):
        if backend.gpu(i).uuid().startswith(entry):
            return i
    raise NoSuchGPUError(f"CUDA_VISIBLE_DEVICES entry {entry!r} matches no GPU that NVML sees")


def merge_measurements(parts: Iterable[tuple[str, Measurement]]) -> Measurement:
    """Merge per-process measurements of one window, counting each physical GPU once.

    Args:
        parts: ``(host, measurement)`` pairs, one per process. A GPU (host, index) reported by
            several processes is counted once (the first report).

    Returns:
        A measurement whose ``energy_j`` (and ``energy_uncertainty_j``) is keyed by position in the sorted list of distinct
        (host, GPU index) pairs (equal to the GPU index on a single host with GPUs 0..n-1
        measured), time the longest of the parts.
    """
    parts = list(parts)
    if not parts:
        raise MeasurementWindowError("nothing to merge")
    seen: dict[tuple[str, int], tuple[float, float]] = {}
    for host, m in parts:
        for idx, e in m.energy_j.items():
            seen.setdefault((host, idx), (e, m.energy_uncertainty_j.get(idx, 0.0)))
    keys = sorted(seen)
    single_host = len({h for h, _ in keys}) == 1
    energy = {(k[1] if single_host else n): seen[k][0] for n, k in enumerate(keys)}
    uncertainty = {(k[1] if single_host else n): seen[k][1] for n, k in enumerate(keys)}
    first = parts[0][1]
    return Measurement(
        name=first.name,
        time_s=max(m.time_s for _, m in parts),
        energy_j=energy,
        start_unix_s=min(m.start_unix_s for _, m in parts),
        below_counter_period=any(m.below_counter_period for _, m in parts),
        sampled_gpus=tuple(sorted({i for _, m in parts for i in m.sampled_gpus})),
        energy_uncertainty_j=uncertainty,
        counter_update_period_s=max(m.counter_update_period_s for _, m in parts),
        uncertainty_threshold=first.uncertainty_threshold,
        energy_from=_common_source(m.energy_from for _, m in parts),
    )


def _common_source(sources: Iterable[str]) -> str:
    """The parts' ``energy_from`` when they agree, else ``"edges"`` (the coarser one)."""
    distinct = set(sources)
    return distinct.pop() if len(distinct) == 1 else FROM_EDGES


def gather_measurement(measurement: Measurement) -> Measurement:
    """All-gather a window's measurement over ``torch.distributed`` ranks and merge it.

    Each rank should measure its own GPU; a GPU measured by several ranks on one host is counted
    once. Without an initialised process group, returns ``measurement`` unchanged.
    """
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return measurement
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, (socket.gethostname(), measurement))
    return merge_measurements(gathered)
