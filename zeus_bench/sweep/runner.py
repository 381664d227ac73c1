"""``zeus-bench sweep``: time per epoch and average power of a workload over (batch size, limit).

One process per workload: the model is built once and every point reuses it (a fresh optimiser
per batch size, since some optimisers scale with it). Points run in ascending batch size, each
over the requested power limits, or at the GPU's current limit in observe mode, where no limit is
ever written. After each point the whole table is rewritten atomically, so an interrupted sweep
leaves a valid trace of the points it finished; ``--resume`` measures only the missing ones.

A batch size that does not fit in GPU memory is a user error (one line, exit 2) unless
``stop_at_oom`` is set, in which case it and every larger batch size are recorded as skipped in
the provenance and the sweep ends normally. Power limits are restored by
:class:`~zeus_bench.device.control.PowerLimitSession` on exit, also on errors and interrupts.

Multi-GPU sweeps (DistributedDataParallel) are in :mod:`zeus_bench.sweep.ddp` and share the
point loop defined here.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gc
import logging
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from zeus_bench.errors import ConfigError, TraceFormatError
from zeus_bench.registry import WorkloadSpec, get_workload
from zeus_bench.store import read_table, write_table
from zeus_bench.sweep.measure import (
    MeasureSettings,
    PointMeasurement,
    gpu_kind_from_name,
    measure_steps,
    power_row,
)

if TYPE_CHECKING:
    import torch

    from zeus_bench.device.base import GPU, GPUBackend
    from zeus_bench.workload_api import TrainingWorkload

log = logging.getLogger(__name__)


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
        stop_at_oom: End the sweep at the first batch size that does not fit instead of failing.
        gpu_kind: Value of the trace's ``gpu`` column; derived from the GPU name when ``None``.
        backend: Device backend name (``nvml``, ``fake``); ``None``: ``ZEUS_BENCH_BACKEND`` or default.
        torch_device: ``auto`` (CUDA for a real backend, CPU for the fake), ``cpu`` or ``cuda``.
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

    def __post_init__(self) -> None:
        """Refuse empty or non-positive batch sizes, bad limits and duplicate GPUs."""
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

    @property
    def measures_current_limit(self) -> bool:
        """True when no limit is set: observe mode or ``--power-limits current``."""
        return self.observe or self.power_limits_w is None


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


def check_limits(gpus: Sequence[GPU], limits: Sequence[float]) -> None:
    """Raise :class:`PowerLimitOutOfRangeForSweepError` if a limit is outside a GPU's range."""
    for gpu in gpus:
        lo, hi = gpu.power_limit_range_w()
        for limit in limits:
            if not lo <= limit <= hi:
                raise PowerLimitOutOfRangeForSweepError(
                    f"power limit {limit:g} W is outside GPU {gpu.index}'s range [{lo:g}, {hi:g}] W ({gpu.name()})"
                )


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


def device_indices(backend: GPUBackend, ordinals: Sequence[int]) -> list[int]:
    """Backend (NVML) indices of CUDA ordinals: ``CUDA_VISIBLE_DEVICES`` renumbers only CUDA.

    ``--gpus`` names CUDA ordinals, as torch sees them (inside a SLURM job, the allocated GPUs
    from 0); the energy counters must be read from the same physical GPUs.
    """
    if backend.name == "fake":
        return list(ordinals)
    from zeus_bench.device.monitor import local_gpu_index

    return [local_gpu_index(backend, i) for i in ordinals]


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


def load_previous(path: Path, resume: bool, gpu_kind: str, spec: WorkloadSpec) -> pd.DataFrame | None:
    """Rows of an earlier run of this sweep to continue, or None.

    Raises:
        ConfigError: ``path`` exists and ``resume`` is off, or it holds another GPU or workload.
    """
    if not path.exists():
        return None
    if not resume:
        raise ConfigError(f"{path} exists; pass --resume to measure only its missing points, or remove it")
    try:
        df = read_table(path, "power")
    except TraceFormatError as exc:
        raise ConfigError(f"cannot resume: {exc}") from None
    other = df[(df["gpu"] != gpu_kind) | (df["dataset"] != spec.dataset) | (df["network"] != spec.network)]
    if not other.empty:
        row = other.iloc[0]
        raise ConfigError(
            f"cannot resume {path}: it holds {row['dataset']}/{row['network']} on {row['gpu']}, "
            f"this sweep is {spec.dataset}/{spec.network} on {gpu_kind}"
        )
    return df


class FakeLoad:
    """Drives fake GPUs like a training job would: full load while sweeping, capped speed.

    Real GPUs draw power and slow down under a cap by themselves; the fake backend models both
    from a load the caller sets (:meth:`zeus_bench.device.fake.FakeGPU.set_load`). A sweep on
    fake GPUs sets the load to 1 for its duration and stretches each step by the fake GPU's
    relative throughput at the limit in force, so fake traces show the real trade-off.
    """

    def __init__(self, gpus: Sequence[Any]) -> None:
        """Wrap fake GPUs (objects with ``set_load`` and ``relative_throughput``)."""
        self.gpus = list(gpus)

    @staticmethod
    def wrap(gpus: Sequence[Any]) -> FakeLoad | None:
        """A :class:`FakeLoad` when every GPU is fake, else None."""
        if gpus and all(hasattr(g, "set_load") and hasattr(g, "relative_throughput") for g in gpus):
            return FakeLoad(gpus)
        return None

    def __enter__(self) -> FakeLoad:
        for g in self.gpus:
            g.set_load(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        for g in self.gpus:
            g.set_load(0.0)

    def slowdown(self) -> float:
        """Factor by which steps are stretched at the current limits (>= 1)."""
        return 1.0 / min(float(g.relative_throughput()) for g in self.gpus)


@dataclass
class PointLoop:
    """The state every process of a sweep shares while it walks the points.

    ``agree`` and ``barrier`` are identities for one process and collectives under DDP; only
    the leader (rank 0) owns the monitor and the power-limit session and writes the table.
    """

    workload: TrainingWorkload
    model: torch.nn.Module
    device: torch.device
    plan: SweepPlan
    monitor: Any
    set_limit: Callable[[float], None] | None
    agree: Callable[[bool], bool]
    barrier: Callable[[], None]
    world_size: int = 1
    leader: bool = True
    fake: FakeLoad | None = None

    def batches(self, batch_size: int) -> Iterator[Any]:
        """Endless synthetic batches of this process's share of ``batch_size``."""
        local = batch_size // self.world_size
        return iter(self.workload.synthetic_batches(local, self.device, seed=self.plan.seed))

    def run_batch_size(
        self, batch_size: int, limits: Sequence[float], emit: Callable[[int, float, PointMeasurement], None]
    ) -> None:
        """Measure every limit of one batch size; ``emit`` receives each measurement (leader)."""
        # Held in a dict so that the optimiser state and batches can be dropped before an
        # out-of-memory error propagates (the smaller batch sizes that follow need the memory).
        state: dict[str, Any] = {
            "opt": self.workload.build_optimizer(self.model, batch_size),
            "it": self.batches(batch_size),
            "slowdown": 1.0,  # fake GPUs only: capped throughput is emulated by sleeping
        }

        def step() -> object:
            if state["slowdown"] == 1.0:
                return self.workload.train_step_async(self.model, state["opt"], next(state["it"]))
            start = time.perf_counter()
            loss = self.workload.train_step(self.model, state["opt"], next(state["it"]))
            time.sleep((time.perf_counter() - start) * (state["slowdown"] - 1.0))
            return loss

        try:
            for limit in limits:
                if self.set_limit is not None:
                    self.set_limit(limit)
                state["slowdown"] = self.fake.slowdown() if self.fake is not None else 1.0
                self.barrier()
                m = measure_steps(
                    step, self.monitor, self.plan.settings, f"bs{batch_size}-pl{limit:g}", self.agree
                )
                if self.leader:
                    emit(batch_size, limit, m)
        finally:
            state.clear()
            self.model.zero_grad(set_to_none=True)


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


class SweepWriter:
    """Collects rows and provenance and rewrites the trace atomically after each point."""

    def __init__(self, path: Path, previous: pd.DataFrame | None, provenance: dict[str, Any]) -> None:
        """Start from ``previous`` rows (resume) and the sweep's provenance."""
        self.path = path
        self.rows: list[dict[str, object]] = []
        self.previous = previous
        self.provenance = provenance
        self.provenance.setdefault("points", [])
        self.provenance.setdefault("skipped", [])
        self.measuring_s = 0.0

    def done(self) -> set[tuple[int, float]]:
        """(batch size, limit) pairs already in the table."""
        if self.previous is None:
            return set()
        return {
            (int(b), float(p))
            for b, p in zip(self.previous["batch_size"], self.previous["power_limit_w"], strict=True)
        }

    def frame(self) -> pd.DataFrame:
        """All rows, previous then new, sorted by batch size and limit."""
        new = pd.DataFrame(self.rows)
        parts = [df for df in (self.previous, new) if df is not None and not df.empty]
        if not parts:
            return new
        df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        return df.sort_values(["batch_size", "power_limit_w"], kind="stable").reset_index(drop=True)

    def add(self, row: dict[str, object], point: dict[str, object], measuring_s: float) -> None:
        """Add one measured row and write the table."""
        self.rows.append(row)
        self.provenance["points"].append(point)
        self.measuring_s += measuring_s
        self.write(complete=False)

    def skip(self, batch_size: int, reason: str) -> None:
        """Record a batch size that was not measured."""
        self.provenance["skipped"].append({"batch_size": batch_size, "reason": reason})

    def write(self, complete: bool) -> pd.DataFrame:
        """Write the table (if it has rows) with up-to-date provenance; return it."""
        df = self.frame()
        self.provenance.update(
            complete=complete, finished_utc=utc_now(), measuring_s=round(self.measuring_s, 3)
        )
        if not df.empty:
            write_table(df, self.path, "power", provenance=self.provenance)
        return df


def make_emit(
    writer: SweepWriter,
    spec: WorkloadSpec,
    gpu_kind: str,
    samples_per_epoch: int,
    num_gpus: int,
    observe: bool,
) -> Callable[[int, float, PointMeasurement], None]:
    """The callback that turns a point's measurement into a row and writes it."""

    def emit(batch_size: int, limit: float, m: PointMeasurement) -> None:
        row = power_row(spec, gpu_kind, batch_size, limit, samples_per_epoch, m, num_gpus, observe)
        point = {
            "batch_size": batch_size,
            "power_limit_w": limit,
            **m.provenance(),
            "measured_utc": utc_now(),
        }
        log.info(
            "bs %d at %g W: %.1f samples/s, %.1f W, %.4g J/sample +-%.2f %% (%d iterations, %d windows, %.1f s)",
            batch_size,
            limit,
            row["samples_per_s"],
            row["avg_power_w"],
            m.avg_power_w / m.samples_per_s(batch_size),
            100 * m.energy_per_sample_rel_ci,
            m.iterations,
            m.num_windows,
            m.time_s,
        )
        writer.add(row, point, m.time_s)

    return emit


def base_sweep_provenance(
    plan: SweepPlan, backend: GPUBackend, gpus: Sequence[GPU], gpu_kind: str, workload: TrainingWorkload
) -> dict[str, Any]:
    """Provenance of a sweep: GPU, driver, software, mode and measuring settings."""
    lo, hi = gpus[0].power_limit_range_w()
    return {
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


def run_sweep(plan: SweepPlan, out: str | Path, resume: bool = False) -> SweepOutcome:
    """Run a sweep and write its trace to ``out`` (see the module docstring).

    Raises:
        UnknownWorkloadError: the workload is not registered or not installed.
        ConfigError: a limit is outside a GPU's range, a batch size does not fit, ``out`` exists
            without ``resume``.
    """
    out = Path(out)
    spec = get_workload(plan.workload)
    from zeus_bench.workload_api import load_workload

    workload = load_workload(plan.workload, tiny=plan.tiny)
    if len(plan.gpu_indices) > 1:
        from zeus_bench.sweep.ddp import run_ddp_sweep

        return run_ddp_sweep(plan, out, resume, spec, workload)

    from zeus_bench.device import get_backend

    backend = get_backend(plan.backend)
    gpus = backend.gpus(device_indices(backend, plan.gpu_indices))
    if plan.power_limits_w is not None:
        check_limits(gpus, plan.power_limits_w)
    gpu_kind = plan.gpu_kind or gpu_kind_from_name(gpus[0].name())
    previous = load_previous(out, resume, gpu_kind, spec)
    device = resolve_torch_device(plan.torch_device, backend.name, plan.gpu_indices[0])
    writer = SweepWriter(out, previous, base_sweep_provenance(plan, backend, gpus, gpu_kind, workload))
    emit = make_emit(
        writer, spec, gpu_kind, workload.samples_per_epoch, len(gpus), plan.measures_current_limit
    )
    return _sweep_one_process(plan, workload, gpus, device, writer, emit)


def _sweep_one_process(
    plan: SweepPlan,
    workload: TrainingWorkload,
    gpus: Sequence[GPU],
    device: torch.device,
    writer: SweepWriter,
    emit: Callable[[int, float, PointMeasurement], None],
) -> SweepOutcome:
    import torch
    from tqdm import tqdm

    from zeus_bench.device.control import PowerLimitSession
    from zeus_bench.device.monitor import EnergyMonitor

    torch.manual_seed(plan.seed)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True
    sweep_start = time.monotonic()
    with PowerLimitSession(list(gpus), observe=plan.measures_current_limit) as session:
        current = gpus[0].power_limit_w()
        limits = [current] if plan.power_limits_w is None else list(plan.power_limits_w)
        done = writer.done()
        todo = [(b, [p for p in limits if (b, float(p)) not in done]) for b in plan.batch_sizes]
        todo = [(b, ps) for b, ps in todo if ps]
        reused = len(plan.batch_sizes) * len(limits) - sum(len(ps) for _, ps in todo)
        if reused:
            log.info("resuming %s: %d point(s) already measured", writer.path, reused)
        set_limit: Callable[[float], None] | None = None
        if not plan.measures_current_limit:

            def set_limit(watts: float) -> None:
                for gpu in gpus:
                    session.set_power_limit_w(gpu.index, watts)

        model = workload.build_model().to(device)
        model.train()
        fake = FakeLoad.wrap(gpus)
        loop = PointLoop(
            workload,
            model,
            device,
            plan,
            EnergyMonitor(list(gpus), sync_cuda=device.type == "cuda"),
            set_limit,
            agree=lambda d: d,
            barrier=lambda: None,
            fake=fake,
        )
        measured = 0
        total = sum(len(ps) for _, ps in todo)
        with contextlib.ExitStack() as stack:
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
                    oom = True
                if oom:
                    free_device_memory(device)
                    name = gpus[0].name()
                    if not plan.stop_at_oom:
                        writer.skip(batch_size, "out of memory")
                        writer.write(complete=False)
                        raise BatchSizeDoesNotFitError(
                            f"batch size {batch_size} of {plan.workload} does not fit in the memory of GPU "
                            f"{gpus[0].index} ({name}); completed points are in {writer.path}"
                        )
                    for b, _ in todo[i:]:
                        writer.skip(
                            b,
                            "out of memory"
                            if b == batch_size
                            else f"larger than {batch_size}, which ran out of memory",
                        )
                    log.warning(
                        "batch size %d does not fit on %s; stopping at it (%d larger skipped)",
                        batch_size,
                        name,
                        len(todo) - i - 1,
                    )
                    break
                measured += len(point_limits)
                bar.update(len(point_limits))
    writer.provenance["sweep_wall_s"] = round(time.monotonic() - sweep_start, 3)
    df = writer.write(complete=True)
    if df.empty:
        raise BatchSizeDoesNotFitError(
            f"no batch size of {plan.workload} fits on {gpus[0].name()}; nothing written"
        )
    return SweepOutcome(df, writer.path, measured, reused, writer.provenance["skipped"])
