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

import bisect
import contextlib
import dataclasses
import logging
import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zeus_bench.errors import ConfigError
from zeus_bench.faults import fault_point
from zeus_bench.registry import WorkloadSpec

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


# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964


def t_quantile_975(dof: int) -> float:
    """The 0.975 quantile of Student's t with ``dof`` degrees of freedom (table, then expansion)."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {dof}")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def ci_halfwidth(values: Sequence[float]) -> float:
    """Half-width of the 95 % Student-t confidence interval of the mean of ``values`` (inf below 2)."""
    if len(values) < 2:
        return math.inf
    return t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def relative_ci(values: Sequence[float]) -> float:
    """:func:`ci_halfwidth` over the mean of ``values``."""
    mean = statistics.fmean(values) if values else 0.0
    return ci_halfwidth(values) / abs(mean) if mean else math.inf


@dataclass(frozen=True)
class GPUState:
    """SM clock and temperature of the GPUs at one moment (means over the GPUs; None: not read)."""

    sm_clock_mhz: float | None
    temperature_c: float | None


def read_gpu_state(gpus: Sequence[Any]) -> GPUState:
    """Mean SM clock and temperature of ``gpus`` (GPU objects of :mod:`zeus_bench.device`).

    A GPU that cannot report one (no such method, or it returns None) leaves it out.
    """
    clocks: list[float] = []
    temps: list[float] = []
    for gpu in gpus:
        for method, into in (("sm_clock_mhz", clocks), ("temperature_c", temps)):
            read = getattr(gpu, method, None)
            value = read() if read is not None else None
            if value is not None:
                into.append(float(value))
    return GPUState(statistics.fmean(clocks) if clocks else None, statistics.fmean(temps) if temps else None)


def is_steady(
    samples: Sequence[tuple[float, GPUState]],
    span_s: float = 2.0,
    max_temp_rise_c: float = 1.0,
    max_clock_spread: float = 0.02,
) -> bool:
    """Whether the GPU state sampled over the last ``span_s`` seconds is steady.

    Steady: the temperature rose by at most ``max_temp_rise_c`` over that span and the SM
    clock's range is at most ``max_clock_spread`` of its mean. A quantity never read counts as
    steady (fake GPUs, or drivers that do not report it); fewer samples than the span: not yet.
    """
    if not samples:
        return False
    now = samples[-1][0]
    recent = [st for t, st in samples if now - t <= span_s]
    if now - samples[0][0] < span_s or len(recent) < 2:
        return False
    temps = [st.temperature_c for st in recent if st.temperature_c is not None]
    clocks = [st.sm_clock_mhz for st in recent if st.sm_clock_mhz is not None]
    if temps and temps[-1] - temps[0] > max_temp_rise_c:
        return False
    return not (clocks and (max(clocks) - min(clocks)) > max_clock_spread * statistics.fmean(clocks))


class CounterTracker:
    """Follows the GPUs' energy counters in a thread and records when each one moves.

    NVML's energy counter advances in steps (about every 100 ms on an H200), so a value read
    at a window edge lags the true energy by up to one step: up to 5 % of a 2 s window. The
    tracker polls each counter (a read takes about 4 ms on an H200) and keeps every (time,
    value) at which it changed; :meth:`energy_between` interpolates linearly between those
    updates, which puts a window's edges within one read of where they are.

    Polling can be paused (:meth:`pause`, :meth:`activate`) while no window edge is near: on the
    H200 sweep of issue 15, continuous polling slowed host-bound training steps (ShuffleNetV2 at
    batch 1024: 34,126 samples/s against 47,965 without it). The first read after a pause only
    sets the reference value, so no update is ever dated by a read that came after a gap.
    """

    def __init__(
        self, gpus: Sequence[Any], clock: Callable[[], float] = time.monotonic, poll_s: float = 0.002
    ):
        """Track ``gpus`` (objects with ``total_energy_j``) on ``clock``; sleep ``poll_s`` between reads."""
        self.gpus = list(gpus)
        self.clock = clock
        self.poll_s = poll_s
        self._ticks: list[tuple[list[float], list[float]]] = [([], []) for _ in self.gpus]
        self._last: list[float | None] = [None] * len(self.gpus)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._active = threading.Event()
        self._active.set()
        self._thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        """Whether the counters are being polled."""
        return self._active.is_set()

    def pause(self) -> None:
        """Stop polling until :meth:`activate` (no window edge is near)."""
        self._active.clear()

    def activate(self) -> None:
        """Poll again; the first read after the pause only sets the reference values."""
        if not self._active.is_set():
            self._last = [None] * len(self.gpus)
            self._active.set()

    def poll(self) -> None:
        """Read every counter once and record those that moved since the last read."""
        for i, gpu in enumerate(self.gpus):
            value = float(gpu.total_energy_j())
            now = self.clock()
            if self._last[i] is not None and value != self._last[i]:
                with self._lock:
                    self._ticks[i][0].append(now)
                    self._ticks[i][1].append(value)
            self._last[i] = value

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._active.wait(0.05):
                continue
            try:
                self.poll()
            except Exception as exc:  # a failed read ends tracking; windows fall back to edge reads
                log.warning("energy counter tracking stopped: %s", exc)
                return
            self._stop.wait(self.poll_s)

    def __enter__(self) -> CounterTracker:
        self._thread = threading.Thread(target=self._run, name="zeus-bench-counter", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def passed(self, t: float) -> bool:
        """Whether every counter has moved after time ``t`` (so ``t`` can be interpolated)."""
        with self._lock:
            return all(times and times[-1] > t for times, _ in self._ticks)

    def energy_between(self, t0: float, t1: float) -> float | None:
        """Energy (J) summed over the GPUs between times ``t0`` and ``t1``; None if not bracketed."""
        total = 0.0
        with self._lock:
            for times, values in self._ticks:
                ends = [_interpolate(times, values, t) for t in (t0, t1)]
                if ends[0] is None or ends[1] is None:
                    return None
                total += ends[1] - ends[0]
        return total


def _interpolate(times: list[float], values: list[float], t: float) -> float | None:
    """Counter value at ``t`` from the updates around it (None outside the recorded span)."""
    k = bisect.bisect_right(times, t)
    if k == 0 or k == len(times):
        return None
    t_a, t_b = times[k - 1], times[k]
    return values[k - 1] + (values[k] - values[k - 1]) * (t - t_a) / (t_b - t_a)


@dataclass(frozen=True)
class WindowRecord:
    """One energy window of a point."""

    iterations: int
    time_s: float
    energy_j: float
    sm_clock_mhz: float | None = None
    temperature_c: float | None = None
    loss: float | None = None
    energy_from: str = "edges"
    #: +- J from the counter's update period (:attr:`Measurement.total_energy_uncertainty_j`).
    energy_uncertainty_j: float = math.nan

    def as_dict(self) -> dict[str, object]:
        """JSON-ready values, rounded for the provenance."""
        return {
            "iterations": self.iterations,
            "time_s": round(self.time_s, 4),
            "energy_j": round(self.energy_j, 3),
            "sm_clock_mhz": self.sm_clock_mhz,
            "temperature_c": self.temperature_c,
            "loss": self.loss,
            "energy_from": self.energy_from,
            "energy_uncertainty_j": _finite_or_none(round(self.energy_uncertainty_j, 3)),
        }


@dataclass(frozen=True)
class PointMeasurement:
    """What one point's measuring windows saw (totals over the windows, and each window)."""

    iterations: int
    time_s: float
    energy_j: float
    warmup_iterations: int
    warmup_time_s: float
    windows: tuple[WindowRecord, ...] = ()
    rel_ci_target: float = 0.01
    warmup_steady: bool = True

    def samples_per_s(self, batch_size: int) -> float:
        """Training throughput over the windows (samples/s)."""
        return self.iterations * batch_size / self.time_s

    @property
    def avg_power_w(self) -> float:
        """Average power over the windows, summed over the GPUs (W)."""
        return self.energy_j / self.time_s

    @property
    def num_windows(self) -> int:
        """Energy windows measured (1 for a measurement made of a single window)."""
        return max(1, len(self.windows))

    @property
    def energy_per_sample_rel_ci(self) -> float:
        """Relative 95 % half-width of energy per sample (per iteration: same batch), inf below 2 windows."""
        return relative_ci([w.energy_j / w.iterations for w in self.windows])

    @property
    def time_rel_ci(self) -> float:
        """Relative 95 % half-width of time per iteration (hence per epoch)."""
        return relative_ci([w.time_s / w.iterations for w in self.windows])

    @property
    def avg_power_uncertainty_w(self) -> float:
        """+- W of :attr:`avg_power_w` from the energy counter's update period.

        The windows' energy uncertainties in root-sum-square, over the measured time; nan when
        there are no window records or a window has no uncertainty.
        """
        if not self.windows:
            return math.nan
        return math.sqrt(sum(w.energy_uncertainty_j**2 for w in self.windows)) / self.time_s

    @property
    def avg_power_ci_w(self) -> float:
        """95 % half-width of the average power, W."""
        return ci_halfwidth([w.energy_j / w.time_s for w in self.windows])

    @property
    def ci_met(self) -> bool:
        """Whether energy per sample reached the target confidence."""
        return self.energy_per_sample_rel_ci <= self.rel_ci_target

    def provenance(self) -> dict[str, object]:
        """Warm-up, windows, SM clock and temperature of the point, for the trace's metadata."""
        return {
            "warmup_iterations": self.warmup_iterations,
            "warmup_s": round(self.warmup_time_s, 3),
            "warmup_steady": self.warmup_steady,
            "measured_iterations": self.iterations,
            "measured_s": round(self.time_s, 3),
            "energy_per_sample_rel_ci": _finite_or_none(self.energy_per_sample_rel_ci),
            "ci_met": self.ci_met,
            "windows": [w.as_dict() for w in self.windows],
        }


def _finite_or_none(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


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

    Where the monitor's GPUs have energy counters (``monitor.gpus``), a :class:`CounterTracker`
    follows them for the whole point and each window's energy is interpolated at the counter's
    own update times (``energy_from`` "counter updates"); the steps go on after a window until
    every counter has moved past its end. Otherwise the monitor's edge reads are used.

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
    counters = bool(gpus) and all(g.supports_energy_counter() for g in gpus)
    tracker = CounterTracker(gpus, clock) if counters and clock is time.monotonic else None
    with tracker if tracker is not None else contextlib.nullcontext():
        warm, warm_s, steady = _warm_up(step, settings, window, agree, clock, probe)
        windows = _windows(step, monitor, settings, window, agree, clock, probe, tracker)
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
) -> tuple[int, float, bool]:
    """Warm up to the minimum, then until SM clock and temperature hold steady (or the cap).

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


EDGE_S = 0.15  # poll the counters from this long before a window's planned end (> one update)


def _poll_near_edges(tracker: CounterTracker, w_start: float, elapsed_s: float, window_s: float) -> None:
    """Pause polling once the counters moved past the window's start; resume near its end."""
    if elapsed_s >= window_s - EDGE_S:
        tracker.activate()
    elif tracker.active and tracker.passed(w_start):
        tracker.pause()


def _windows(
    step: Callable[[], object],
    monitor: _Monitor,
    settings: MeasureSettings,
    window: str,
    agree: Callable[[bool], bool],
    clock: Callable[[], float],
    probe: Callable[[], GPUState],
    tracker: CounterTracker | None,
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
        while agree(done < 1 or clock() - w_start < settings.window_s) if done % every == 0 else True:
            result = step()
            done += 1
            fault_point("window")
            if tracker is not None:
                _poll_near_edges(tracker, w_start, clock() - w_start, settings.window_s)
        loss = _read_loss(result)
        m = monitor.end_window(name)
        time_s = float(m.time_s)
        energy_j = float(m.total_energy_j)
        source = "edges"
        if not (time_s > 0 and math.isfinite(time_s)):
            raise RuntimeError(f"measurement window {name!r} has a non-positive time ({time_s} s)")
        # Keep the GPUs busy until every counter has moved past the window's end.
        deadline = clock() + 1.0
        filler = 0
        while (
            agree(tracker is not None and not tracker.passed(w_start + time_s) and clock() < deadline)
            if filler % every == 0
            else True
        ):
            step()
            filler += 1
        if tracker is not None:
            interpolated = tracker.energy_between(w_start, w_start + time_s)
            if interpolated is not None and interpolated > 0:
                energy_j, source = interpolated, "counter updates"
        if not (energy_j > 0 and math.isfinite(energy_j)):
            raise RuntimeError(
                f"measurement window {name!r} read no energy ({energy_j} J); is the counter moving?"
            )
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
        rel = relative_ci([w.energy_j / w.iterations for w in windows])
        enough = (
            len(windows) >= settings.min_windows
            and total_s >= settings.measure_s
            and total_iters >= settings.measure_iters
        )
        # At least min_windows windows in any case; past them, on until the target or the cap.
        more = len(windows) < settings.min_windows or (
            not (enough and rel <= settings.rel_ci) and total_s < settings.max_measure_s
        )
        if not agree(more):
            return windows


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
        "num_windows": measurement.num_windows,
        "time_per_epoch_ci_s": _finite_or_none(samples_per_epoch / sps * measurement.time_rel_ci),
        "avg_power_ci_w": _finite_or_none(measurement.avg_power_ci_w),
        "energy_per_sample_ci_rel": _finite_or_none(measurement.energy_per_sample_rel_ci),
        "ci_met": measurement.ci_met,
        "avg_power_uncertainty_w": _finite_or_none(measurement.avg_power_uncertainty_w),
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
