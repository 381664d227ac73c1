"""Energy measurement windows over one or several GPUs, and an optional power timeline.

:class:`EnergyMonitor` measures named windows that may nest and overlap. A window's energy is the
difference of each GPU's hardware energy counter at its two edges.

**Off the caller's thread.** One counter read blocks for about 4 ms on an H200. A window edge
therefore only takes the time and hands the read to the monitor's one counter thread
(:class:`~zeus_bench.device.counter.CounterLog`), which reads every counter once for all the
edges queued since its last read (NVML releases the GIL while it waits). The caller's cost per
window is a few tens of microseconds: :meth:`EnergyMonitor.end_window_deferred` returns a
:class:`PendingMeasurement` at once; :meth:`EnergyMonitor.end_window` waits for the end edge's
read (up to one read). When torch has been imported and CUDA is initialised, the current CUDA
device is synchronised at each edge so that queued kernels land in the right window.

**Following the counters** (``follow_counters=True``). The same thread then also records when
each counter moves, near the edges, and a window whose counters have moved past its end
(:meth:`PendingMeasurement.settled`) gets its energy interpolated between the counters' update
times (``energy_from`` "counter updates") instead of the edge reads, which lag by up to one
update. :meth:`EnergyMonitor.expect_edge` tells the thread an edge is near.

**Uncertainty.** The counter only moves every *update period* (about 0.1 s on an H200), so each
edge can miss up to one update's energy. The counter thread measures that period when the
monitor starts (it polls the counter until it has seen several updates) and every
:class:`Measurement` carries ``energy_uncertainty_j``: per GPU, one update period times the
window's power (the larger of its counter average and the instant power at its edges, so that a
window shorter than one update, whose counter may not have moved, is still covered).
``high_uncertainty`` flags windows whose relative uncertainty exceeds ``uncertainty_threshold``
(default 5 %, i.e. windows shorter than about 20 update periods), and ``below_counter_period``
those shorter than one period. (The uncertainty is kept for interpolated windows too.)

GPUs without a counter (pre-Volta) fall back to integrating sampled instant power; the monitor
then samples in a background thread (:mod:`zeus_bench.device.sampling`) even when no timeline was
asked for.

Several processes (DDP ranks): see :mod:`zeus_bench.device.ranks`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zeus_bench.device.base import GPU
from zeus_bench.device.counter import (
    COUNTER_UPDATE_PERIOD_S,
    PROBE_POLL_S,
    PROBE_TIMEOUT_S,
    PROBE_UPDATES,
    CounterLog,
    Edge,
)
from zeus_bench.device.errors import MeasurementWindowError
from zeus_bench.device.measurement import (
    FROM_COUNTER_UPDATES,
    FROM_EDGES,
    UNCERTAINTY_THRESHOLD,
    Measurement,
)
from zeus_bench.device.sampling import PowerSampler, integrate_power_j

log = logging.getLogger(__name__)

__all__ = [
    "COUNTER_UPDATE_PERIOD_S",
    "PROBE_POLL_S",
    "PROBE_TIMEOUT_S",
    "PROBE_UPDATES",
    "UNCERTAINTY_THRESHOLD",
    "EnergyMonitor",
    "Measurement",
    "PendingMeasurement",
    "integrate_power_j",
    "sync_cuda",
]


@dataclass
class _Window:
    start: Edge
    start_unix_s: float


def sync_cuda() -> None:
    """Synchronise the current CUDA device if torch is loaded and CUDA initialised (else nothing)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()


class PendingMeasurement:
    """A window that has ended and whose counters may still be being read.

    :meth:`result` waits for the reads (up to one counter read after the end edge) and returns
    the :class:`Measurement`; :meth:`done` says whether that would wait, and :meth:`settled`
    whether the counters have moved past the end (so that the energy is interpolated).
    """

    def __init__(self, monitor: EnergyMonitor, name: str, window: _Window, end: Edge) -> None:
        self._monitor = monitor
        self.name = name
        self._window = window
        self._end = end
        self._result: Measurement | None = None

    def done(self) -> bool:
        """Whether both edges have been read (so :meth:`result` returns at once)."""
        return self._window.start.done.is_set() and self._end.done.is_set()

    def settled(self) -> bool:
        """Whether every followed counter has moved past the end (True when not following)."""
        log_ = self._monitor.counter_log
        return log_ is None or not log_.follow or log_.passed(self._end.mono_s)

    def result(self) -> Measurement:
        """The measurement (waits for the counter reads; raises a read's error)."""
        if self._result is None:
            self._result = self._monitor._measure(self.name, self._window, self._end)
        return self._result


class EnergyMonitor:
    """Measure energy and time of named windows on a set of GPUs.

    Args:
        gpus: The GPUs to measure (each measured by this process alone; see module notes).
        sync_cuda: Synchronise CUDA at window edges when torch is in use.
        sample_interval_s: Sample instant power every this many seconds into a timeline
            (None: no timeline, unless a GPU lacks an energy counter; then 0.1 s).
        clock: Monotonic time source, s (tests inject one).
        read_in_background: Read counters on the counter thread (default). False reads them on
            the caller's thread at each edge (about 4 ms a read on an H200; tests with a manual
            clock use it).
        counter_update_period_s: The counters' update period, s; None measures it at start-up.
        uncertainty_threshold: Relative uncertainty above which a measurement is flagged.
        follow_counters: Follow the counters near edges and interpolate each window's energy
            between their updates (needs ``read_in_background``).
    """

    def __init__(
        self,
        gpus: Sequence[GPU],
        sync_cuda: bool = True,
        sample_interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        read_in_background: bool = True,
        counter_update_period_s: float | None = None,
        uncertainty_threshold: float = UNCERTAINTY_THRESHOLD,
        follow_counters: bool = False,
    ) -> None:
        if not gpus:
            raise MeasurementWindowError("EnergyMonitor needs at least one GPU")
        indices = [g.index for g in gpus]
        if len(set(indices)) != len(indices):
            raise MeasurementWindowError(f"EnergyMonitor: GPU listed twice in {indices}")
        if not (uncertainty_threshold > 0 and math.isfinite(uncertainty_threshold)):
            raise MeasurementWindowError(f"uncertainty_threshold must be > 0, got {uncertainty_threshold}")
        if follow_counters and not read_in_background:
            raise MeasurementWindowError("follow_counters needs read_in_background (one counter thread)")
        self.gpus = list(gpus)
        self.sync_cuda = sync_cuda
        self.clock = clock
        self.read_in_background = read_in_background
        self.uncertainty_threshold = float(uncertainty_threshold)
        self._windows: dict[str, _Window] = {}
        self._counter = {g.index: g.supports_energy_counter() for g in self.gpus}
        self._sampled = tuple(i for i, ok in self._counter.items() if not ok)
        if self._sampled and sample_interval_s is None:
            log.warning(
                "GPU(s) %s have no energy counter: integrating power sampled every 0.1 s", list(self._sampled)
            )
            sample_interval_s = COUNTER_UPDATE_PERIOD_S
        if sample_interval_s is not None and sample_interval_s <= 0:
            raise MeasurementWindowError(f"sample_interval_s must be > 0, got {sample_interval_s}")
        self.sample_interval_s = sample_interval_s
        self._origin_mono_s = clock()
        self._origin_unix_s = time.time()
        self._sampler = PowerSampler(self.gpus, clock, self._origin_mono_s, self._origin_unix_s)
        counted = [g for g in self.gpus if self._counter[g.index]]
        self._log = (
            CounterLog(counted, clock, counter_update_period_s, follow=follow_counters) if counted else None
        )
        if sample_interval_s is not None:
            self.start_sampling()

    @property
    def counter_log(self) -> CounterLog | None:
        """The one thread reading this monitor's energy counters (None: no GPU has a counter)."""
        return self._log

    @property
    def follows_counters(self) -> bool:
        """Whether windows get their energy interpolated between counter updates."""
        return self._log is not None and self._log.follow

    # Windows ------------------------------------------------------------------------------
    def _edge(self) -> Edge:
        if self.sync_cuda:
            sync_cuda()
        edge = Edge(self.clock())
        for index in self._sampled:
            gpu = next(g for g in self.gpus if g.index == index)
            self._sampler.record(index, edge.mono_s, gpu.instant_power_w())
        if self._log is None:
            edge.done.set()
        elif self.read_in_background:
            self._log.submit(edge)
        else:
            self._log.read([edge])
            edge.wait()
        return edge

    def begin_window(self, name: str) -> None:
        """Start the window ``name`` (names must be unique among open windows); does not block."""
        if name in self._windows:
            raise MeasurementWindowError(f"measurement window {name!r} is already open")
        edge = self._edge()
        self._windows[name] = _Window(edge, self._origin_unix_s + (edge.mono_s - self._origin_mono_s))

    def end_window_deferred(self, name: str) -> PendingMeasurement:
        """End the window ``name`` without waiting for its counter reads.

        Returns:
            A :class:`PendingMeasurement`; its ``result()`` gives the :class:`Measurement`.
        """
        window = self._windows.pop(name, None)
        if window is None:
            raise MeasurementWindowError(f"measurement window {name!r} was never begun (or already ended)")
        return PendingMeasurement(self, name, window, self._edge())

    def end_window(self, name: str) -> Measurement:
        """End the window ``name`` and return its measurement (waits for the end edge's read)."""
        return self.end_window_deferred(name).result()

    def expect_edge(self) -> None:
        """A window edge is near: follow the counters from now (nothing when not following)."""
        if self._log is not None:
            self._log.expect_edge()

    def flush(self) -> None:
        """Wait until the counter reads of every edge so far are done (tests; rarely needed)."""
        if self._log is not None and self.read_in_background:
            self._log.flush()

    def counter_update_period_s(self) -> float:
        """The counters' update period (largest over the GPUs), s; waits for the start-up probe."""
        if self._log is None:
            return float(self.sample_interval_s or COUNTER_UPDATE_PERIOD_S)
        return max(self._log.period().values())

    def _measure(self, name: str, window: _Window, end: Edge) -> Measurement:
        window.start.wait()
        end.wait()
        time_s = end.mono_s - window.start.mono_s
        periods = self._log.period() if self._log is not None else {}
        interpolated = self._interpolated(window.start.mono_s, end.mono_s)
        per_gpu: dict[int, float] = {}
        uncertainty: dict[int, float] = {}
        for g in self.gpus:
            i = g.index
            if self._counter[i]:
                per_gpu[i] = (interpolated or {}).get(i, end.energy_j[i] - window.start.energy_j[i])
                edge_power = max(window.start.power_w[i], end.power_w[i])
                period = periods[i]
            else:
                per_gpu[i] = self.sampled_energy_j(i, window.start.mono_s, end.mono_s)
                edge_power = 0.0
                period = float(self.sample_interval_s or COUNTER_UPDATE_PERIOD_S)
            power = max(per_gpu[i] / time_s if time_s > 0 else 0.0, edge_power)
            uncertainty[i] = period * power
        period = max([*periods.values(), *([self.sample_interval_s or 0.0] if self._sampled else [])])
        short = time_s < period
        if short:
            log.debug(
                "window %r lasted %.3f s, less than the counter update period %.3f s", name, time_s, period
            )
        return Measurement(
            name,
            time_s,
            per_gpu,
            window.start_unix_s,
            short,
            self._sampled,
            uncertainty,
            period,
            self.uncertainty_threshold,
            FROM_COUNTER_UPDATES if interpolated is not None else FROM_EDGES,
        )

    def _interpolated(self, start_mono_s: float, end_mono_s: float) -> dict[int, float] | None:
        """Counter energy per GPU interpolated between updates, when followed and positive."""
        if self._log is None or not self._log.follow or not self._log.passed(end_mono_s):
            return None
        energy = self._log.gpu_energy_between(start_mono_s, end_mono_s)
        if energy is None or not all(e > 0 and math.isfinite(e) for e in energy.values()):
            return None
        return energy

    @contextlib.contextmanager
    def window(self, name: str) -> Iterator[list[Measurement]]:
        """Context manager form: yields a list that holds the :class:`Measurement` afterwards."""
        out: list[Measurement] = []
        self.begin_window(name)
        try:
            yield out
        finally:
            out.append(self.end_window(name))

    def open_windows(self) -> list[str]:
        """Names of the windows begun and not yet ended."""
        return list(self._windows)

    # Sampling -----------------------------------------------------------------------------
    def _record_sample(self, index: int, mono_s: float, power_w: float) -> None:
        self._sampler.record(index, mono_s, power_w)

    def start_sampling(self) -> None:
        """Start the background power sampler (idempotent)."""
        if self.sample_interval_s is None:
            self.sample_interval_s = COUNTER_UPDATE_PERIOD_S
        self._sampler.start(self.sample_interval_s)

    def stop_sampling(self) -> None:
        """Stop the background sampler; the timeline so far is kept."""
        self._sampler.stop()

    def close(self) -> None:
        """Stop sampling and the counter thread (after its queued reads); open windows are dropped."""
        self.stop_sampling()
        if self._log is not None:
            self._log.close()
        self._windows.clear()

    def __enter__(self) -> EnergyMonitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sampled_energy_j(self, gpu_index: int, start_mono_s: float, end_mono_s: float) -> float:
        """Energy of one GPU between two monitor-clock times, integrated from sampled power, J.

        Trapezoids between samples; the power at the interval's ends is interpolated.
        """
        return self._sampler.energy_j(gpu_index, start_mono_s, end_mono_s)

    def sampled_window_energy_j(self, measurement: Measurement) -> dict[int, float]:
        """Energy of each GPU over a finished window of this monitor, from sampled power, J.

        Compares the counter (``measurement.energy_j``) with the timeline; needs sampling on.
        """
        start = self._origin_mono_s + (measurement.start_unix_s - self._origin_unix_s)
        return {g.index: self.sampled_energy_j(g.index, start, start + measurement.time_s) for g in self.gpus}

    def power_timeline(self) -> Any:
        """The samples so far as a ``power_timeline`` DataFrame (one row per GPU and sample)."""
        return self._sampler.timeline()

    def write_power_timeline(self, path: str | Path, provenance: Mapping[str, Any] | None = None) -> Path:
        """Write :meth:`power_timeline` as a Parquet ``power_timeline`` table (atomically)."""
        meta = {
            "gpu_names": {g.index: g.name() for g in self.gpus},
            "sample_interval_s": self.sample_interval_s,
        }
        return self._sampler.write(path, {**meta, **(provenance or {})})
