"""Measurement of one sweep point, free of torch: warm-up, one energy window, one trace row.

A *point* is one (batch size, power limit) of one workload on one set of GPUs. It is measured as

1. warm-up: at least ``warmup_iters`` iterations **and** ``warmup_s`` seconds (kernel autotuning,
   allocator growth, clocks ramping up stay out of the numbers);
2. one :class:`~zeus_bench.device.monitor.EnergyMonitor` window around at least
   ``measure_iters`` iterations **and** ``measure_s`` seconds of steady-state training.

From the window: ``samples_per_s = iterations * batch_size / time_s``, ``time_per_epoch_s =
samples_per_epoch / samples_per_s`` (extrapolated to the real dataset's epoch) and ``avg_power_w
= energy_j / time_s`` with ``energy_j`` summed over the GPUs, read from their energy counters.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from zeus_bench.errors import ConfigError
from zeus_bench.registry import WorkloadSpec


class _Monitor(Protocol):
    """What the measurement needs of an energy monitor."""

    def begin_window(self, name: str) -> None: ...

    def end_window(self, name: str) -> Any: ...


@dataclass(frozen=True)
class MeasureSettings:
    """How long each point is warmed up and measured (both bounds must be met)."""

    warmup_iters: int = 5
    warmup_s: float = 2.0
    measure_iters: int = 20
    measure_s: float = 10.0

    def __post_init__(self) -> None:
        """Refuse negative or non-finite settings and an empty measuring window."""
        for name in ("warmup_iters", "measure_iters"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        for name in ("warmup_s", "measure_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
        if self.measure_iters < 1:
            raise ConfigError("--measure-iters must be >= 1 (a window needs at least one iteration)")


@dataclass(frozen=True)
class PointMeasurement:
    """What one point's measuring window saw."""

    iterations: int
    time_s: float
    energy_j: float
    warmup_iterations: int
    warmup_time_s: float

    def samples_per_s(self, batch_size: int) -> float:
        """Training throughput over the window (samples/s)."""
        return self.iterations * batch_size / self.time_s

    @property
    def avg_power_w(self) -> float:
        """Average power over the window, summed over the GPUs (W)."""
        return self.energy_j / self.time_s


def _local(decision: bool) -> bool:
    return decision


def measure_steps(
    step: Callable[[], object],
    monitor: _Monitor,
    settings: MeasureSettings,
    window: str,
    agree: Callable[[bool], bool] = _local,
    clock: Callable[[], float] = time.monotonic,
) -> PointMeasurement:
    """Warm up, then measure ``step`` inside one energy window.

    Args:
        step: Runs one training iteration; must return only once the iteration's work is done
            (the workloads' ``train_step`` returns the loss as a float, which synchronises).
        monitor: Energy monitor over the GPUs the step uses.
        settings: Warm-up and measuring bounds.
        window: Name of the monitor window.
        agree: Turns this process's "keep going" into the decision every process follows
            (identity for one process; a broadcast from rank 0 under DDP).
        clock: Monotonic clock for the bounds (the window's own time comes from the monitor).

    Returns:
        Iterations, time and energy of the window, and the warm-up's length.
    """
    start = clock()
    warm = 0
    while agree(warm < settings.warmup_iters or clock() - start < settings.warmup_s):
        step()
        warm += 1
    warm_s = clock() - start
    monitor.begin_window(window)
    start = clock()
    done = 0
    while agree(done < settings.measure_iters or clock() - start < settings.measure_s):
        step()
        done += 1
    m = monitor.end_window(window)
    time_s = float(m.time_s)
    energy_j = float(m.total_energy_j)
    if not (time_s > 0 and math.isfinite(time_s)):
        raise RuntimeError(f"measurement window {window!r} has a non-positive time ({time_s} s)")
    if not (energy_j > 0 and math.isfinite(energy_j)):
        raise RuntimeError(
            f"measurement window {window!r} read no energy ({energy_j} J); is the counter moving?"
        )
    return PointMeasurement(done, time_s, energy_j, warm, warm_s)


def power_row(
    spec: WorkloadSpec,
    gpu_kind: str,
    batch_size: int,
    power_limit_w: float,
    samples_per_epoch: int,
    measurement: PointMeasurement,
    num_gpus: int,
    observe: bool,
) -> dict[str, object]:
    """One row of the ``power`` trace from a point's measurement."""
    sps = measurement.samples_per_s(batch_size)
    return {
        "gpu": gpu_kind,
        "dataset": spec.dataset,
        "network": spec.network,
        "optimizer": spec.optimizer,
        "batch_size": int(batch_size),
        "power_limit_w": float(power_limit_w),
        "time_per_epoch_s": samples_per_epoch / sps,
        "avg_power_w": measurement.avg_power_w,
        "num_gpus": int(num_gpus),
        "samples_per_s": sps,
        "measured_s": measurement.time_s,
        "observe_mode": bool(observe),
    }


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
