"""Measurement of one sweep point, free of torch: warm-up, repeated energy windows, one trace row.

A *point* is one (batch size, power limit) of one workload on one set of GPUs. It is measured as

1. warm-up: at least ``warmup_iters`` iterations **and** ``warmup_s`` seconds (kernel autotuning,
   allocator growth, clocks ramping up stay out of the numbers), then on until the GPUs' SM clock
   and temperature are steady (:func:`is_steady`; at most ``warmup_max_s`` in all);
2. repeated :class:`~zeus_bench.device.monitor.EnergyMonitor` windows of at least ``window_s``
   seconds each, until energy per sample has a relative 95 % confidence half-width of at most
   ``rel_ci`` **and** at least ``min_windows`` windows, ``measure_iters`` iterations and
   ``measure_s`` seconds were measured; or until ``max_measure_s`` seconds were measured (the
   cap: the point is then flagged, ``ci_met`` false; the cap never cuts a point below
   ``min_windows`` windows). After each window the loss is read (the
   steps themselves never wait for the device) and the GPUs' SM clock and temperature are
   logged (NVML reads only; nothing is ever set).

From all windows together: ``samples_per_s = iterations * batch_size / time_s``,
``time_per_epoch_s = samples_per_epoch / samples_per_s`` (extrapolated to the real dataset's
epoch) and ``avg_power_w = energy_j / time_s`` with ``energy_j`` summed over the GPUs, read from
their energy counters. The confidence half-widths are Student-t intervals of the mean of the
per-window values (windows are back to back and of about equal length).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from zeus_bench.core.errors import ConfigError
from zeus_bench.core.faults import fault_point
from zeus_bench.device.measurement import FROM_EDGES
from zeus_bench.device.monitor import EnergyMonitor, PendingMeasurement
from zeus_bench.sweep.point import PointMeasurement, WindowRecord
from zeus_bench.sweep.stats import ci_halfwidth, relative_ci, t_quantile_975
from zeus_bench.sweep.steady import GPUState, is_steady, read_gpu_state

__all__ = [
    "EDGE_S",
    "GPUState",
    "MeasureSettings",
    "PointMeasurement",
    "WindowRecord",
    "ci_halfwidth",
    "is_steady",
    "measure_steps",
    "read_gpu_state",
    "relative_ci",
    "t_quantile_975",
]

log = logging.getLogger(__name__)


class _Monitor(Protocol):
    """What the measurement needs of an energy monitor."""

    def begin_window(self, name: str) -> None: ...

    def end_window(self, name: str) -> Any: ...


@dataclass(frozen=True)
class MeasureSettings:
    """How long each point is warmed up and measured (every lower bound must be met).

    Attributes:
        warmup_iters: Warm-up iterations, at least.
        warmup_s: Warm-up seconds, at least.
        measure_iters: Measured iterations over all windows, at least.
        measure_s: Measured seconds over all windows, at least.
        window_s: Seconds of each energy window, at least.
        min_windows: Windows, at least (3 or more gives a confidence interval).
        rel_ci: Target relative 95 % confidence half-width of energy per sample (0.01 = 1 %).
        max_measure_s: Cap on the measured seconds of one point; a point that reaches it
            without meeting ``rel_ci`` is flagged.
        warmup_max_s: Cap on the warm-up, which runs on past its minimum until the SM clock and
            temperature are steady.
        steady_s: Span over which SM clock and temperature must hold steady to end the
            warm-up (:func:`is_steady`); 0 ends it at its minimum.
        sync_every: Iterations between two "keep going?" decisions (each one waits for the
            device under DistributedDataParallel; a single process decides every iteration,
            which costs no wait).
    """

    warmup_iters: int = 5
    warmup_s: float = 2.0
    measure_iters: int = 20
    measure_s: float = 10.0
    window_s: float = 2.0
    min_windows: int = 3
    rel_ci: float = 0.01
    max_measure_s: float = 60.0
    warmup_max_s: float = 30.0
    steady_s: float = 2.0
    sync_every: int = 8

    def __post_init__(self) -> None:
        """Refuse negative or non-finite settings, an empty window and inconsistent caps."""
        for name in ("warmup_iters", "measure_iters"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        for name in ("warmup_s", "measure_s", "window_s", "max_measure_s", "warmup_max_s", "steady_s"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
        if self.measure_iters < 1:
            raise ConfigError("--measure-iters must be >= 1 (a window needs at least one iteration)")
        if self.min_windows < 1:
            raise ConfigError(f"--min-windows must be >= 1, got {self.min_windows}")
        if not (math.isfinite(self.rel_ci) and 0 < self.rel_ci < 1):
            raise ConfigError(f"--rel-ci must lie in (0, 1), e.g. 0.01 for 1 %, got {self.rel_ci}")
        if self.max_measure_s < self.measure_s:
            raise ConfigError(
                f"--max-measure-s ({self.max_measure_s:g}) must be >= --measure-s ({self.measure_s:g})"
            )
        if self.warmup_max_s < self.warmup_s:
            raise ConfigError(
                f"--warmup-max-s ({self.warmup_max_s:g}) must be >= --warmup-s ({self.warmup_s:g})"
            )
        if self.sync_every < 1:
            raise ConfigError(f"sync_every must be >= 1, got {self.sync_every}")


def _local(decision: bool) -> bool:
    return decision


def _read_loss(value: object) -> float | None:
    """The loss a step returned, as a float (waits for the device); None if it is not a number."""
    try:
        loss = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return loss if math.isfinite(loss) else None


def measure_steps(
    step: Callable[[], object],
    monitor: _Monitor,
    settings: MeasureSettings,
    window: str,
    agree: Callable[[bool], bool] = _local,
    clock: Callable[[], float] = time.monotonic,
    probe: Callable[[], GPUState] | None = None,
) -> PointMeasurement:
    """Warm up until steady, then measure ``step`` in energy windows until the confidence target.

    Where the monitor follows its counters (an :class:`~zeus_bench.device.monitor.EnergyMonitor`
    built with ``follow_counters=True``), each window's energy is the one the monitor
    interpolated at the counters' own update times (``energy_from`` "counter updates"): the
    measurement tells the monitor when an edge is near, and the steps go on after a window until
    every counter has moved past its end. Otherwise the monitor's edge reads are used. No thread
    is started here: the monitor's counter thread is the only one reading the counters.

    Args:
        step: Runs one training iteration and returns its loss (it may return before the device
            has finished: the monitor synchronises at window edges, and the loss is read once
            per window).
        monitor: Energy monitor over the GPUs the step uses.
        settings: Warm-up, window, confidence and cap settings.
        window: Name prefix of the monitor windows (``<window>-w<k>``).
        agree: Turns this process's "keep going" into the decision every process follows
            (identity for one process; a broadcast from rank 0 under DDP).
        clock: Monotonic clock for the bounds (the windows' own times come from the monitor).
        probe: Reads the GPUs' SM clock and temperature (default: from ``monitor.gpus``).

    Returns:
        Totals over the windows, each window, and the warm-up's length.

    Raises:
        RuntimeError: a window has a non-positive time or read no energy.
    """
    gpus = list(getattr(monitor, "gpus", []))
    if probe is None:

        def probe() -> GPUState:
            return read_gpu_state(gpus)

    if gpus and settings.steady_s > 0 and all(getattr(g, "steady_at_once", False) for g in gpus):
        # A model without thermal lag (the fake GPU): steady from its first step, no wait.
        settings = dataclasses.replace(settings, steady_s=0.0)
    follower = monitor if isinstance(monitor, EnergyMonitor) and monitor.follows_counters else None
    warm, warm_s, steady = _warm_up(step, settings, window, agree, clock, probe, follower)
    windows = _windows(step, monitor, settings, window, agree, clock, probe, follower)
    point = PointMeasurement(
        sum(w.iterations for w in windows),
        sum(w.time_s for w in windows),
        sum(w.energy_j for w in windows),
        warm,
        warm_s,
        tuple(windows),
        settings.rel_ci,
        steady,
    )
    if not point.ci_met:
        log.warning(
            "%s: energy per sample +-%.2f %% after %d windows and %.1f s (target %.2f %%): flagged",
            window,
            100 * point.energy_per_sample_rel_ci,
            len(windows),
            point.time_s,
            100 * settings.rel_ci,
        )
    return point


def _decide_every(settings: MeasureSettings, agree: Callable[[bool], bool]) -> int:
    """Iterations between decisions: every one for a single process (no wait), else ``sync_every``."""
    return settings.sync_every if agree is not _local else 1


def _warm_up(
    step: Callable[[], object],
    settings: MeasureSettings,
    window: str,
    agree: Callable[[bool], bool],
    clock: Callable[[], float],
    probe: Callable[[], GPUState],
    follower: EnergyMonitor | None = None,
) -> tuple[int, float, bool]:
    """Warm up to the minimum, then until SM clock and temperature hold steady (or the cap).

    A monitor that follows its counters is told that the first window's edge is near once the
    warm-up is within :data:`EDGE_S` of its minimum length.

    Returns:
        Iterations, seconds, and whether the state was steady at the end.
    """
    every = _decide_every(settings, agree)
    start = clock()
    warm = 0
    states: list[tuple[float, GPUState]] = [(0.0, probe())]
    last_probe = start

    def warming() -> bool:
        nonlocal last_probe
        now = clock()
        if now - last_probe >= 0.5:
            states.append((now - start, probe()))
            last_probe = now
        if follower is not None and now - start >= settings.warmup_s - EDGE_S:
            follower.expect_edge()
        if warm < settings.warmup_iters or now - start < settings.warmup_s:
            return True
        if settings.steady_s <= 0:
            return False
        return now - start < settings.warmup_max_s and not is_steady(states, settings.steady_s)

    while agree(warming()) if warm % every == 0 else True:
        step()
        warm += 1
        fault_point("warmup")
    warm_s = clock() - start
    steady = settings.steady_s <= 0 or warm_s < settings.warmup_max_s or is_steady(states, settings.steady_s)
    if not steady:
        log.warning("%s: SM clock or temperature still moving after %.0f s of warm-up", window, warm_s)
    return warm, warm_s, steady


#: Follow the counters from this long before a window's planned end, s (more than one update).
EDGE_S = 0.15


def _keep_busy(
    step: Callable[[], object],
    pending: PendingMeasurement | None,
    agree: Callable[[bool], bool],
    clock: Callable[[], float],
    every: int,
) -> None:
    """Keep the GPUs busy until every counter has moved past the window's end (at most 1 s).

    Only a deferred measurement (``pending``, the counters followed) waits; ranks agree every
    ``every`` steps.
    """
    deadline = clock() + 1.0
    filler = 0
    while (
        agree(pending is not None and not pending.settled() and clock() < deadline)
        if filler % every == 0
        else True
    ):
        step()
        filler += 1


def _checked(m: Any, name: str) -> tuple[float, float]:
    """``(time_s, energy_j)`` of window ``name``'s measurement ``m`` (what the monitor's window returned).

    Raises:
        RuntimeError: a time or an energy that is not positive and finite (a counter not moving).
    """
    time_s = float(m.time_s)
    energy_j = float(m.total_energy_j)
    if not (time_s > 0 and math.isfinite(time_s)):
        raise RuntimeError(f"measurement window {name!r} has a non-positive time ({time_s} s)")
    if not (energy_j > 0 and math.isfinite(energy_j)):
        raise RuntimeError(
            f"measurement window {name!r} read no energy ({energy_j} J); is the counter moving?"
        )
    return time_s, energy_j


def _needs_more(
    windows: list[WindowRecord], total_s: float, total_iters: int, settings: MeasureSettings
) -> bool:
    """Whether to measure another window after ``windows`` (``total_s`` and ``total_iters`` in all).

    At least ``min_windows`` windows in any case; past them, on until every bound and the
    confidence target are met, or the time cap.
    """
    rel = relative_ci([w.energy_j / w.iterations for w in windows])
    enough = (
        len(windows) >= settings.min_windows
        and total_s >= settings.measure_s
        and total_iters >= settings.measure_iters
    )
    return len(windows) < settings.min_windows or (
        not (enough and rel <= settings.rel_ci) and total_s < settings.max_measure_s
    )


def _windows(
    step: Callable[[], object],
    monitor: _Monitor,
    settings: MeasureSettings,
    window: str,
    agree: Callable[[bool], bool],
    clock: Callable[[], float],
    probe: Callable[[], GPUState],
    follower: EnergyMonitor | None,
) -> list[WindowRecord]:
    """Energy windows back to back until every bound and the confidence target are met, or the cap."""
    every = _decide_every(settings, agree)
    windows: list[WindowRecord] = []
    total_s = 0.0
    total_iters = 0
    while True:
        name = f"{window}-w{len(windows)}"
        monitor.begin_window(name)
        w_start = clock()
        done = 0
        result: object = None
        near = False
        while agree(done < 1 or clock() - w_start < settings.window_s) if done % every == 0 else True:
            result = step()
            done += 1
            fault_point("window")
            if follower is not None and not near and clock() - w_start >= settings.window_s - EDGE_S:
                follower.expect_edge()
                near = True
        loss = _read_loss(result)
        pending: PendingMeasurement | None = None
        if follower is not None:
            pending = follower.end_window_deferred(name)
        else:
            m = monitor.end_window(name)
        _keep_busy(step, pending, agree, clock, every)
        if pending is not None:
            m = pending.result()
        time_s, energy_j = _checked(m, name)
        source = str(getattr(m, "energy_from", FROM_EDGES))
        state = probe()
        windows.append(
            WindowRecord(
                done,
                time_s,
                energy_j,
                state.sm_clock_mhz,
                state.temperature_c,
                loss,
                source,
                float(getattr(m, "total_energy_uncertainty_j", math.nan)),
            )
        )
        total_s += time_s
        total_iters += done
        if not agree(_needs_more(windows, total_s, total_iters, settings)):
            return windows
