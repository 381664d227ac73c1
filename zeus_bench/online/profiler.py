"""Just-in-time power-limit profiler: a state machine driven by training-loop callbacks.

During the first epoch at a batch size it has not seen, the profiler tries power limits from the
maximum down in ``step_w`` steps. At each limit it warms up, then measures throughput and
average power over at least ``profile_iters`` iterations *and* at least ``profile_min_s``
seconds (fast GPUs run 40 iterations in about a second, too short for the energy counter).
It then picks the limit of least cost per sample (:class:`~zeus_bench.optimizers.jit.MinCostPerSample`,
built on :meth:`zeus_bench.core.cost.Cost.zeus_cost`; how it differs from the simulator's choice:
:mod:`zeus_bench.optimizers.jit`), sets it and caches the profile per
(workload, GPU, batch size) in a JSON file (:class:`ProfileCache`).

States and transitions::

    READY --epoch_begin(bs), cached--------------------------> DONE  (cached optimum set)
    READY --epoch_begin(bs), not cached, set limits[0]-------> WARM_UP
    WARM_UP --step_end, >= warmup_iters and >= warmup_min_s--> PROFILING  (window opened)
    PROFILING --step_end, >= profile_iters and >= profile_min_s--> (window closed)
        more limits: set next ----> WARM_UP
        none left: choose, set ---> DONE  (profile cached)
    WARM_UP/PROFILING --epoch_end--> DONE  (choose among limits measured so far; none: keep)
    DONE --epoch_begin(new bs)--> READY --> ...

**Observe mode** (the :class:`~zeus_bench.device.control.PowerLimitSession` is observing): the
profiler cannot try other limits. It measures at the limit in force only, marks the profile
``observe_mode=True``, and never calls a setter. An observe-mode profile is reused only by
observe-mode runs.
"""

from __future__ import annotations

import enum
import fcntl
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zeus_bench.core.cost import DEFAULT_COST, Cost, max_power_w
from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import atomic_write_text
from zeus_bench.device.control import PowerLimitSession
from zeus_bench.device.monitor import EnergyMonitor
from zeus_bench.optimizers.jit import LimitMeasurement, MinCostPerSample, OptimumStrategy

__all__ = [
    "JITPowerLimitProfiler",
    "LimitMeasurement",
    "MinCostPerSample",
    "OptimumStrategy",
    "PowerProfile",
    "ProfileCache",
    "ProfilerConfig",
    "ProfilerState",
]

log = logging.getLogger(__name__)

_WINDOW = "zeus_bench.jit_profile"


class ProfilerState(enum.Enum):
    """States of :class:`JITPowerLimitProfiler`."""

    READY = "ready"
    WARM_UP = "warm-up"
    PROFILING = "profiling"
    DONE = "done"


@dataclass(frozen=True)
class ProfilerConfig:
    """Settings of the JIT profiler.

    Attributes:
        cost: The cost whose least per sample is chosen (:class:`~zeus_bench.core.cost.Cost`).
        step_w: Step between tried limits, W (from the maximum down to the minimum).
        power_limits_w: Explicit limits to try instead (any order; tried from the highest).
        warmup_iters: Iterations to skip after each limit change.
        warmup_min_s: ... and at least this many seconds.
        profile_iters: Iterations to measure at each limit, at least.
        profile_min_s: ... and at least this many seconds (the energy counter updates every
            ~0.1 s, so a few seconds keep its error around a per cent).
    """

    cost: Cost = DEFAULT_COST
    step_w: float = 25.0
    power_limits_w: tuple[float, ...] | None = None
    warmup_iters: int = 10
    warmup_min_s: float = 1.0
    profile_iters: int = 40
    profile_min_s: float = 5.0

    def __post_init__(self) -> None:
        if self.step_w <= 0:
            raise ConfigError(f"power-limit step must be > 0 W, got {self.step_w}")
        if self.warmup_iters < 0 or self.profile_iters < 1:
            raise ConfigError("warmup_iters must be >= 0 and profile_iters >= 1")
        if self.warmup_min_s < 0 or self.profile_min_s < 0:
            raise ConfigError("warmup_min_s and profile_min_s must be >= 0")

    def limits_w(self, min_w: float, max_w: float) -> list[float]:
        """Limits to try, highest first, within [min_w, max_w]."""
        if self.power_limits_w is not None:
            bad = [w for w in self.power_limits_w if not min_w <= w <= max_w]
            if bad:
                raise ConfigError(f"power limit(s) {bad} W outside the GPU range {min_w:g}-{max_w:g} W")
            return sorted(set(self.power_limits_w), reverse=True)
        out, w = [], max_w
        while w >= min_w - 1e-9:
            out.append(round(w, 3))
            w -= self.step_w
        return out


@dataclass(frozen=True)
class PowerProfile:
    """The outcome of profiling one (workload, GPU, batch size)."""

    workload: str
    gpu_name: str
    num_gpus: int
    batch_size: int
    max_power_w: float
    measurements: tuple[LimitMeasurement, ...]
    observe_mode: bool
    profiling_time_s: float = 0.0
    created_unix_s: float = field(default_factory=time.time)

    def optimum_w(self, cost: Cost, strategy: OptimumStrategy | None = None) -> float:
        """The chosen limit for ``cost``, W."""
        return (strategy or MinCostPerSample()).choose(self.measurements, cost, self.max_power_w)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form."""
        d = asdict(self)
        d["measurements"] = [asdict(m) for m in self.measurements]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PowerProfile:
        """Inverse of :meth:`to_dict`."""
        return cls(**{**d, "measurements": tuple(LimitMeasurement(**m) for m in d["measurements"])})

    def rows(self, cost: Cost) -> list[dict[str, Any]]:
        """One dict per measured limit with throughput, average power and cost per sample."""
        return [
            {
                "workload": self.workload,
                "gpu": self.gpu_name,
                "batch_size": self.batch_size,
                "power_limit_w": m.power_limit_w,
                "iterations": m.iterations,
                "time_s": m.time_s,
                "energy_j": m.energy_j,
                "samples_per_s": m.throughput_sps,
                "avg_power_w": m.avg_power_w,
                "cost_per_sample_j": m.cost_per_sample_j(cost, self.max_power_w),
                "eta": cost.eta,
                "observe_mode": self.observe_mode,
                "below_counter_period": m.below_counter_period,
            }
            for m in self.measurements
        ]


class ProfileCache:
    """Power profiles per (workload, GPU, batch size) in one JSON file (locked, atomic)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @staticmethod
    def key(workload: str, gpu_name: str, num_gpus: int, batch_size: int) -> str:
        """Cache key."""
        return f"{workload}|{gpu_name}|x{num_gpus}|{batch_size}"

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text())
        except ValueError as exc:
            raise ConfigError(f"{self.path}: corrupt power-profile cache ({exc}); delete it") from None
        return data if isinstance(data, dict) else {}

    def get(self, workload: str, gpu_name: str, num_gpus: int, batch_size: int) -> PowerProfile | None:
        """The cached profile, or None."""
        d = self._load().get(self.key(workload, gpu_name, num_gpus, batch_size))
        return PowerProfile.from_dict(d) if d else None

    def put(self, profile: PowerProfile) -> None:
        """Store a profile (replacing any older one of the same key)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            data = self._load()
            data[self.key(profile.workload, profile.gpu_name, profile.num_gpus, profile.batch_size)] = (
                profile.to_dict()
            )
            atomic_write_text(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")


class JITPowerLimitProfiler:
    """Profile power limits during the first epoch of each new batch size (see module notes).

    Args:
        session: The open power-limit session over the job's GPUs (observe or not).
        monitor: Energy monitor over the same GPUs.
        workload: Workload id (cache key).
        config: Profiler settings.
        cache: Where profiles persist (None: in memory only).
        strategy: How the optimum is chosen.
        clock: Monotonic clock, s.
    """

    def __init__(
        self,
        session: PowerLimitSession,
        monitor: EnergyMonitor,
        workload: str,
        config: ProfilerConfig | None = None,
        cache: ProfileCache | None = None,
        strategy: OptimumStrategy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.monitor = monitor
        self.workload = workload
        self.config = config or ProfilerConfig()
        self.cache = cache
        self.strategy = strategy or MinCostPerSample()
        self.clock = clock
        gpus = list(session.gpus.values())
        self.gpu_indices = sorted(session.gpus)
        self.gpu_name = gpus[0].name()
        lo, hi = gpus[0].power_limit_range_w()
        self.range_w = (lo, hi)
        self.max_power_w = max_power_w(hi, len(gpus))
        self.state = ProfilerState.READY
        self.batch_size: int | None = None
        self.profile: PowerProfile | None = None
        self.profiles: dict[int, PowerProfile] = {}
        self._queue: list[float] = []
        self._done: list[LimitMeasurement] = []
        self._limit_w = 0.0
        self._iters = 0
        self._samples = 0
        self._phase_start = 0.0
        self._started = 0.0

    @property
    def observe(self) -> bool:
        """Whether the session is observing (no setter is ever called)."""
        return self.session.observe

    def _current_limit_w(self) -> float:
        return self.session.power_limit_w(self.gpu_indices[0])

    def _apply(self, watts: float) -> None:
        if self.observe:
            return
        for i in self.gpu_indices:
            self.session.set_power_limit_w(i, watts)

    def _enter_warmup(self, watts: float) -> None:
        self._apply(watts)
        self._limit_w = watts
        self._iters = self._samples = 0
        self._phase_start = self.clock()
        self.state = ProfilerState.WARM_UP

    # Callbacks ----------------------------------------------------------------------------
    def on_epoch_begin(self, batch_size: int) -> None:
        """Start of an epoch at ``batch_size``: profile if new, else apply the known optimum."""
        if self.state in (ProfilerState.WARM_UP, ProfilerState.PROFILING):
            return  # still profiling from the previous epoch's start
        if batch_size == self.batch_size and self.state is ProfilerState.DONE:
            return
        self.batch_size = int(batch_size)
        self.state = ProfilerState.READY
        cached = self.profiles.get(self.batch_size) or (
            self.cache.get(self.workload, self.gpu_name, len(self.gpu_indices), self.batch_size)
            if self.cache
            else None
        )
        if cached is not None and (self.observe or not cached.observe_mode):
            self.profile = cached
            self._apply(cached.optimum_w(self.config.cost, self.strategy))
            self.state = ProfilerState.DONE
            log.info("batch size %d: cached power profile, limit %g W", batch_size, self._chosen_w())
            return
        lo, hi = self.range_w
        self._queue = [self._current_limit_w()] if self.observe else self.config.limits_w(lo, hi)
        self._done = []
        self._started = self.clock()
        log.info(
            "batch size %d: profiling power limits %s W%s",
            batch_size,
            self._queue,
            " (observe mode: the current limit only)" if self.observe else "",
        )
        self._enter_warmup(self._queue.pop(0))

    def on_step_begin(self) -> None:
        """Start of a training step (nothing to do; present for symmetry with frameworks)."""

    def on_step_end(self, samples: int) -> None:
        """End of a training step that processed ``samples`` samples."""
        cfg = self.config
        if self.state is ProfilerState.WARM_UP:
            self._iters += 1
            if self._iters >= cfg.warmup_iters and self.clock() - self._phase_start >= cfg.warmup_min_s:
                self.monitor.begin_window(_WINDOW)
                self._iters = self._samples = 0
                self._phase_start = self.clock()
                self.state = ProfilerState.PROFILING
        elif self.state is ProfilerState.PROFILING:
            self._iters += 1
            self._samples += int(samples)
            if self._iters >= cfg.profile_iters and self.clock() - self._phase_start >= cfg.profile_min_s:
                self._close_limit()
                if self._queue:
                    self._enter_warmup(self._queue.pop(0))
                else:
                    self._finish()

    def on_epoch_end(self) -> None:
        """End of the epoch: an unfinished profile is completed with the limits measured so far."""
        if self.state is ProfilerState.PROFILING and self._iters > 0:
            self._close_limit()
        elif self.state is ProfilerState.PROFILING:
            self.monitor.end_window(_WINDOW)
        if self.state in (ProfilerState.WARM_UP, ProfilerState.PROFILING):
            if self._queue:
                log.warning(
                    "epoch ended before limits %s W were profiled; choosing among those measured", self._queue
                )
            self._queue = []
            self._finish()

    def _close_limit(self) -> None:
        m = self.monitor.end_window(_WINDOW)
        self._done.append(
            LimitMeasurement(
                power_limit_w=self._limit_w,
                iterations=self._iters,
                samples=self._samples,
                time_s=m.time_s,
                energy_j=m.total_energy_j,
                below_counter_period=m.below_counter_period,
            )
        )
        log.info(
            "limit %g W: %.1f samples/s, %.1f W",
            self._limit_w,
            self._done[-1].throughput_sps,
            self._done[-1].avg_power_w,
        )

    def _finish(self) -> None:
        assert self.batch_size is not None
        if not self._done:
            self.state = ProfilerState.DONE
            self.profile = None
            return
        profile = PowerProfile(
            workload=self.workload,
            gpu_name=self.gpu_name,
            num_gpus=len(self.gpu_indices),
            batch_size=self.batch_size,
            max_power_w=self.max_power_w,
            measurements=tuple(self._done),
            observe_mode=self.observe,
            profiling_time_s=self.clock() - self._started,
        )
        self.profile = profile
        self.profiles[self.batch_size] = profile
        if self.cache is not None:
            self.cache.put(profile)
        self._apply(profile.optimum_w(self.config.cost, self.strategy))
        self.state = ProfilerState.DONE
        log.info("batch size %d: power limit %g W chosen", self.batch_size, self._chosen_w())

    def _chosen_w(self) -> float:
        assert self.profile is not None
        return self.profile.optimum_w(self.config.cost, self.strategy)

    @property
    def chosen_power_limit_w(self) -> float | None:
        """The limit chosen for the current batch size (None before profiling ends)."""
        if self.state is not ProfilerState.DONE or self.profile is None:
            return None
        return self._chosen_w()
