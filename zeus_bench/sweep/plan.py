"""What one ``zeus-bench sweep`` measures: the plan, its checks, and what it produced.

A :class:`SweepPlan` is built from the command line (or by a caller) and checked once, before
any GPU is touched; everything downstream (:mod:`~zeus_bench.sweep.points`,
:mod:`~zeus_bench.sweep.writer`, the drivers :mod:`~zeus_bench.sweep.single` and
:mod:`~zeus_bench.sweep.ddp`) reads it and never changes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from zeus_bench.core.errors import ConfigError
from zeus_bench.sweep.measure import MeasureSettings


class BatchSizeDoesNotFitError(ConfigError):
    """A batch size ran out of GPU memory."""


class PowerLimitOutOfRangeForSweepError(ConfigError):
    """A requested power limit lies outside a GPU's settable range."""


@dataclass(frozen=True)
class SweepPlan:
    """What one ``zeus-bench sweep`` measures.

    Attributes:
        workload: Workload id (registry and workload entry point).
        batch_sizes: Global batch sizes, measured in ascending order.
        power_limits_w: Limits to set, W; ``None`` measures at the current limit (observe).
        gpu_indices: GPUs to train on (several: DistributedDataParallel, one process each).
        observe: Never write a power limit; measure at the limit in force.
        settings: Warm-up and measuring bounds of each point.
        tiny: Use the workload's tiny model (CPU tests).
        seed: Seed of the synthetic batches and of torch.
        stop_at_oom: End the sweep at the first batch size that does not fit instead of failing
            (one GPU only: see :meth:`__post_init__`).
        gpu_kind: Value of the trace's ``gpu`` column; derived from the GPU name when ``None``.
        backend: Device backend name (``nvml``, ``fake``); ``None``: ``ZEUS_BENCH_BACKEND`` or default.
        torch_device: ``auto`` (CUDA for a real backend, CPU for the fake), ``cpu`` or ``cuda``.
        workloads_file: YAML file of extra or overriding workloads (registry entries), or None.
    """

    workload: str
    batch_sizes: tuple[int, ...]
    power_limits_w: tuple[float, ...] | None = None
    gpu_indices: tuple[int, ...] = (0,)
    observe: bool = False
    settings: MeasureSettings = field(default_factory=MeasureSettings)
    tiny: bool = False
    seed: int = 0
    stop_at_oom: bool = False
    gpu_kind: str | None = None
    backend: str | None = None
    torch_device: str = "auto"
    workloads_file: Path | None = None

    def __post_init__(self) -> None:
        """Refuse empty or non-positive batch sizes, bad limits, duplicate GPUs, impossible options."""
        if not self.batch_sizes:
            raise ConfigError("no batch sizes to sweep")
        bad = [b for b in self.batch_sizes if int(b) != b or b < 1]
        if bad:
            raise ConfigError(f"batch sizes must be positive integers, got {bad[0]}")
        object.__setattr__(self, "batch_sizes", tuple(sorted(set(int(b) for b in self.batch_sizes))))
        if self.power_limits_w is not None:
            if self.observe:
                raise ConfigError(
                    "--observe measures at the current limit only; drop --power-limits (or give 'current')"
                )
            if not self.power_limits_w:
                raise ConfigError("no power limits to sweep")
            bad_w = [p for p in self.power_limits_w if not p > 0]
            if bad_w:
                raise ConfigError(f"power limits must be positive (W), got {bad_w[0]}")
        if not self.gpu_indices or len(set(self.gpu_indices)) != len(self.gpu_indices):
            raise ConfigError(f"--gpus must name distinct GPUs, got {list(self.gpu_indices)}")
        if self.torch_device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"--torch-device must be auto, cpu or cuda, got {self.torch_device!r}")
        if len(self.gpu_indices) > 1:
            for b in self.batch_sizes:
                if b % len(self.gpu_indices):
                    raise ConfigError(
                        f"batch size {b} does not split evenly over {len(self.gpu_indices)} GPUs"
                    )
            if self.stop_at_oom:
                # Under DDP an out-of-memory error hits one rank while the others wait in a
                # collective: there is no point at which every rank can agree to stop.
                raise ConfigError(
                    "--stop-at-oom works with one GPU only; sweep the batch sizes that fit on "
                    f"{len(self.gpu_indices)} GPUs, or find them with a one-GPU sweep first"
                )

    @property
    def measures_current_limit(self) -> bool:
        """True when no limit is set: observe mode or ``--power-limits current``."""
        return self.observe or self.power_limits_w is None

    @property
    def distributed(self) -> bool:
        """True when the plan trains on several GPUs (DistributedDataParallel)."""
        return len(self.gpu_indices) > 1

    def check_train_to_target(self) -> None:
        """Refuse options that ``--train-to-target`` would silently ignore.

        Training to the target runs on one GPU at the limit in force: it never sets a limit and
        has no DDP path, and it has no out-of-memory fallback.

        Raises:
            ConfigError: power limits, several GPUs or ``stop_at_oom`` were given.
        """
        if self.power_limits_w is not None:
            raise ConfigError(
                "--train-to-target trains at the limit in force; drop --power-limits "
                "(epochs to the target do not depend on the power limit)"
            )
        if self.distributed:
            raise ConfigError(f"--train-to-target trains on one GPU; --gpus names {len(self.gpu_indices)}")
        if self.stop_at_oom:
            raise ConfigError("--stop-at-oom applies to power sweeps, not to --train-to-target")


@dataclass
class SweepOutcome:
    """Result of a sweep: the table written and what was skipped."""

    table: pd.DataFrame
    path: Path
    measured: int
    reused: int
    skipped: list[dict[str, object]]


def parse_power_limits(text: str) -> tuple[float, ...] | None:
    """``current`` -> None; ``150,200,250`` -> (150.0, 200.0, 250.0)."""
    if text.strip().lower() == "current":
        return None
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ConfigError(
            f"--power-limits: expected 'current' or watts like 150,200,250, got {text!r}"
        ) from None
    if not values:
        raise ConfigError("--power-limits: empty list")
    return values
