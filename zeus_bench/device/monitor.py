"""Energy measurement windows over one or several GPUs, and an optional power timeline.

:class:`EnergyMonitor` measures named windows that may nest and overlap. A window's energy is the
difference of each GPU's hardware energy counter at its two edges.

**Off the caller's thread.** One counter read blocks for about 4 ms on an H200. A window edge
therefore only takes the time and hands the read to a reader thread, which reads every counter
once for all the edges queued since its last read (NVML releases the GIL while it waits). The
caller's cost per window is a few tens of microseconds: :meth:`EnergyMonitor.end_window_deferred`
returns a :class:`PendingMeasurement` at once; :meth:`EnergyMonitor.end_window` waits for the
end edge's read (up to one read). When torch has been imported and CUDA is initialised, the
current CUDA device is synchronised at each edge so that queued kernels land in the right window.

**Uncertainty.** The counter only moves every *update period* (about 0.1 s on an H200), so each
edge can miss up to one update's energy. The reader thread measures that period when the monitor
starts (it polls the counter until it has seen several updates) and every :class:`Measurement`
carries ``energy_uncertainty_j``: per GPU, one update period times the window's power (the larger
of its counter average and the instant power at its edges, so that a window shorter than one
update, whose counter may not have moved, is still covered). ``high_uncertainty`` flags windows
whose relative uncertainty exceeds ``uncertainty_threshold`` (default 5 %, i.e. windows shorter
than about 20 update periods), and ``below_counter_period`` those shorter than one period.

GPUs without a counter (pre-Volta) fall back to integrating sampled instant power; the monitor
then samples in a background thread even when no timeline was asked for.

Several processes (DDP ranks): let each rank measure only its own GPU
(:func:`local_gpu_index`), then :func:`gather_measurement` sums the ranks' energy with each
physical GPU counted once.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.errors import MeasurementWindowError

log = logging.getLogger(__name__)

#: Counter update period assumed where none could be measured (seen on an H200), s.
COUNTER_UPDATE_PERIOD_S = 0.1
#: Relative energy uncertainty above which a measurement is flagged (``high_uncertainty``).
UNCERTAINTY_THRESHOLD = 0.05
#: Counter updates the start-up probe waits for before it computes the update period.
PROBE_UPDATES = 6
#: The probe gives up after this long (then assumes :data:`COUNTER_UPDATE_PERIOD_S`), s.
PROBE_TIMEOUT_S = 3.0
#: Pause between the probe's counter reads, s (on top of the read itself).
PROBE_POLL_S = 0.002


@dataclass(frozen=True)
class Measurement:
    """Result of one measurement window.

    Attributes:
        name: Window name.
        time_s: Wall time between the edges, s.
        energy_j: Energy per GPU index, J.
        start_unix_s: Unix time of the window's start, s.
        below_counter_period: True when the window was shorter than the energy counter's
            measured update period: its energy may be off by a whole update.
        sampled_gpus: GPU indices whose energy was integrated from sampled power (no counter).
        energy_uncertainty_j: Per GPU index, +- J: one counter update period (the sampling
            interval for sampled GPUs) times the window's power.
        counter_update_period_s: The update period behind the uncertainty (the largest over
            the GPUs), s.
        uncertainty_threshold: Relative uncertainty above which :attr:`high_uncertainty` is set.
    """

    name: str
    time_s: float
    energy_j: Mapping[int, float]
    start_unix_s: float = 0.0
    below_counter_period: bool = False
    sampled_gpus: tuple[int, ...] = field(default=())
    energy_uncertainty_j: Mapping[int, float] = field(default_factory=dict)
    counter_update_period_s: float = COUNTER_UPDATE_PERIOD_S
    uncertainty_threshold: float = UNCERTAINTY_THRESHOLD

    @property
    def total_energy_j(self) -> float:
        """Energy summed over the GPUs, J."""
        return float(sum(self.energy_j.values()))

    @property
    def avg_power_w(self) -> float:
        """Average power summed over the GPUs, W (0 for an empty window)."""
        return self.total_energy_j / self.time_s if self.time_s > 0 else 0.0

    @property
    def total_energy_uncertainty_j(self) -> float:
        """Uncertainty of :attr:`total_energy_j`, +- J (the GPUs' uncertainties added)."""
        return float(sum(self.energy_uncertainty_j.values()))

    @property
    def relative_uncertainty(self) -> float:
        """:attr:`total_energy_uncertainty_j` over :attr:`total_energy_j` (``inf`` if no energy)."""
        unc = self.total_energy_uncertainty_j
        if self.total_energy_j > 0:
            return unc / self.total_energy_j
        return math.inf if unc > 0 else 0.0

    @property
    def high_uncertainty(self) -> bool:
        """Whether :attr:`relative_uncertainty` exceeds :attr:`uncertainty_threshold`."""
        return self.relative_uncertainty > self.uncertainty_threshold


class _Edge:
    """One window edge: the caller's time, and the counters once the reader has read them."""

    __slots__ = ("done", "energy_j", "error", "mono_s", "power_w")

    def __init__(self, mono_s: float) -> None:
        self.mono_s = mono_s
        self.energy_j: dict[int, float] = {}
        self.power_w: dict[int, float] = {}
        self.error: BaseException | None = None
        self.done = threading.Event()

    def wait(self) -> None:
        self.done.wait()
        if self.error is not None:
            raise self.error


class _CounterReader:
    """A thread that reads the energy counters for queued edges and measures the update period.

    Every read serves all the edges queued before it started. Until the period is known the
    thread also polls the counters on its own (the probe) and notes when each value changes.
    """

    def __init__(self, gpus: Sequence[GPU], clock: Callable[[], float], period_s: float | None) -> None:
        self.gpus = list(gpus)
        self.clock = clock
        self._cond = threading.Condition()
        self._pending: list[_Edge] = []
        self._stop = False
        self.period_s: dict[int, float] = {}
        self.period_measured = False
        self._period_ready = threading.Event()
        self._changes: dict[int, list[float]] = {g.index: [] for g in self.gpus}
        self._last: dict[int, tuple[float, float]] = {}
        self._probe_errors = 0
        if period_s is not None:
            if not period_s > 0:
                raise MeasurementWindowError(f"counter_update_period_s must be > 0, got {period_s}")
            self.period_s = {g.index: float(period_s) for g in self.gpus}
            self._period_ready.set()
        self._probe_deadline = time.monotonic() + PROBE_TIMEOUT_S  # real time, whatever the clock
        self._thread = threading.Thread(target=self._run, name="zeus-bench-counter-reader", daemon=True)
        self._thread.start()

    # Edges ------------------------------------------------------------------------------
    def submit(self, edge: _Edge) -> None:
        with self._cond:
            if self._stop:
                raise MeasurementWindowError("the energy monitor is closed")
            self._pending.append(edge)
            self._cond.notify()

    def read(self, edges: Sequence[_Edge]) -> tuple[float, dict[int, float]] | None:
        """Read every counter (and instant power when there are edges) for ``edges``."""
        start = self.clock()
        try:
            energy = {g.index: g.total_energy_j() for g in self.gpus}
            power = {g.index: g.instant_power_w() for g in self.gpus} if edges else {}
        except Exception as exc:  # handed to whoever waits for these edges
            for edge in edges:
                edge.error = exc
                edge.done.set()
            if not edges:
                raise
            return None
        mid = (start + self.clock()) / 2.0
        for edge in edges:
            edge.energy_j, edge.power_w = energy, power
            edge.done.set()
        return mid, energy

    # Update period ----------------------------------------------------------------------
    def period(self) -> dict[int, float]:
        """Update period per GPU, s (waits for the probe, at most :data:`PROBE_TIMEOUT_S`)."""
        if not self._period_ready.wait(PROBE_TIMEOUT_S + 5.0):  # the reader thread is gone
            return {g.index: COUNTER_UPDATE_PERIOD_S for g in self.gpus}
        return self.period_s

    def _observe(self, mid: float, energy: dict[int, float]) -> None:
        for index, value in energy.items():
            previous = self._last.get(index)
            if previous is not None and value != previous[1]:
                self._changes[index].append((previous[0] + mid) / 2.0)
            self._last[index] = (mid, value)
        enough = all(len(c) >= PROBE_UPDATES for c in self._changes.values())
        if enough or time.monotonic() > self._probe_deadline:
            self._finish_probe()

    def _finish_probe(self) -> None:
        if self._period_ready.is_set():
            return
        for index, changes in self._changes.items():
            if len(changes) >= 3:
                self.period_s[index] = (changes[-1] - changes[0]) / (len(changes) - 1)
            else:
                log.warning(
                    "GPU %d: energy counter seen changing %d time(s) in %.1f s; assuming it updates "
                    "every %g s",
                    index,
                    len(changes),
                    PROBE_TIMEOUT_S,
                    COUNTER_UPDATE_PERIOD_S,
                )
                self.period_s[index] = COUNTER_UPDATE_PERIOD_S
        self.period_measured = all(len(c) >= 3 for c in self._changes.values())
        log.debug("energy counter update period(s): %s s", self.period_s)
        self._period_ready.set()

    # Thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            probing = not self._period_ready.is_set()
            with self._cond:
                self._cond.wait_for(
                    lambda: bool(self._pending) or self._stop, PROBE_POLL_S if probing else None
                )
                batch, self._pending = self._pending, []
                if self._stop and not batch:
                    break
            try:
                result = self.read(batch)
            except Exception as exc:
                self._probe_errors += 1
                log.debug("energy counter probe read failed: %s", exc)
                if self._probe_errors > 3:
                    self._finish_probe()
                continue
            if probing and result is not None:
                self._observe(*result)
        self._finish_probe()

    def flush(self) -> None:
        """Wait until every edge submitted so far has been read."""
        edge = _Edge(self.clock())
        self.submit(edge)
        edge.done.wait()

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._thread.join()


@dataclass
class _Window:
    start: _Edge
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
    the :class:`Measurement`; :meth:`done` says whether that would wait.
    """

    def __init__(self, monitor: EnergyMonitor, name: str, window: _Window, end: _Edge) -> None:
        self._monitor = monitor
        self.name = name
        self._window = window
        self._end = end
        self._result: Measurement | None = None

    def done(self) -> bool:
        """Whether both edges have been read (so :meth:`result` returns at once)."""
        return self._window.start.done.is_set() and self._end.done.is_set()

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
        read_in_background: Read counters on the reader thread (default). False reads them on
            the caller's thread at each edge (about 4 ms a read on an H200; tests with a manual
            clock use it).
        counter_update_period_s: The counters' update period, s; None measures it at start-up.
        uncertainty_threshold: Relative uncertainty above which a measurement is flagged.
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
    ) -> None:
        if not gpus:
            raise MeasurementWindowError("EnergyMonitor needs at least one GPU")
        indices = [g.index for g in gpus]
        if len(set(indices)) != len(indices):
            raise MeasurementWindowError(f"EnergyMonitor: GPU listed twice in {indices}")
        if not (uncertainty_threshold > 0 and math.isfinite(uncertainty_threshold)):
            raise MeasurementWindowError(f"uncertainty_threshold must be > 0, got {uncertainty_threshold}")
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
        self._samples: dict[int, list[tuple[float, float]]] = {g.index: [] for g in self.gpus}
        self._samples_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        counted = [g for g in self.gpus if self._counter[g.index]]
        self._reader = _CounterReader(counted, clock, counter_update_period_s) if counted else None
        if sample_interval_s is not None:
            self.start_sampling()

    # Windows ------------------------------------------------------------------------------
    def _edge(self) -> _Edge:
        if self.sync_cuda:
            sync_cuda()
        edge = _Edge(self.clock())
        for index in self._sampled:
            gpu = next(g for g in self.gpus if g.index == index)
            self._record_sample(index, edge.mono_s, gpu.instant_power_w())
        if self._reader is None:
            edge.done.set()
        elif self.read_in_background:
            self._reader.submit(edge)
        else:
            self._reader.read([edge])
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

    def flush(self) -> None:
        """Wait until the counter reads of every edge so far are done (tests; rarely needed)."""
        if self._reader is not None and self.read_in_background:
            self._reader.flush()

    def counter_update_period_s(self) -> float:
        """The counters' update period (largest over the GPUs), s; waits for the start-up probe."""
        if self._reader is None:
            return float(self.sample_interval_s or COUNTER_UPDATE_PERIOD_S)
        return max(self._reader.period().values())

    def _measure(self, name: str, window: _Window, end: _Edge) -> Measurement:
        window.start.wait()
        end.wait()
        time_s = end.mono_s - window.start.mono_s
        periods = self._reader.period() if self._reader is not None else {}
        per_gpu: dict[int, float] = {}
        uncertainty: dict[int, float] = {}
        for g in self.gpus:
            i = g.index
            if self._counter[i]:
                per_gpu[i] = end.energy_j[i] - window.start.energy_j[i]
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
        )

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
        with self._samples_lock:
            self._samples[index].append((mono_s, power_w))

    def _sample_loop(self) -> None:
        assert self.sample_interval_s is not None
        next_t = self.clock()
        while not self._stop.is_set():
            for g in self.gpus:
                try:
                    self._record_sample(g.index, self.clock(), g.instant_power_w())
                except Exception:  # a failed read must not kill the sampler
                    log.exception("power sample of GPU %d failed", g.index)
            next_t += self.sample_interval_s
            self._stop.wait(max(0.0, next_t - self.clock()))

    def start_sampling(self) -> None:
        """Start the background power sampler (idempotent)."""
        if self._thread is not None:
            return
        if self.sample_interval_s is None:
            self.sample_interval_s = COUNTER_UPDATE_PERIOD_S
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._sample_loop, name="zeus-bench-power-sampler", daemon=True
        )
        self._thread.start()

    def stop_sampling(self) -> None:
        """Stop the background sampler; the timeline so far is kept."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None

    def close(self) -> None:
        """Stop sampling and the counter reader (after its queued reads); open windows are dropped."""
        self.stop_sampling()
        if self._reader is not None:
            self._reader.close()
        self._windows.clear()

    def __enter__(self) -> EnergyMonitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sampled_energy_j(self, gpu_index: int, start_mono_s: float, end_mono_s: float) -> float:
        """Energy of one GPU between two monitor-clock times, integrated from sampled power, J.

        Trapezoids between samples; the power at the interval's ends is interpolated.
        """
        with self._samples_lock:
            samples = np.array(self._samples[gpu_index], dtype=float).reshape(-1, 2)
        return integrate_power_j(samples[:, 0], samples[:, 1], start_mono_s, end_mono_s)

    def sampled_window_energy_j(self, measurement: Measurement) -> dict[int, float]:
        """Energy of each GPU over a finished window of this monitor, from sampled power, J.

        Compares the counter (``measurement.energy_j``) with the timeline; needs sampling on.
        """
        start = self._origin_mono_s + (measurement.start_unix_s - self._origin_unix_s)
        return {g.index: self.sampled_energy_j(g.index, start, start + measurement.time_s) for g in self.gpus}

    def power_timeline(self) -> Any:
        """The samples so far as a ``power_timeline`` DataFrame (one row per GPU and sample)."""
        import pandas as pd

        rows: list[tuple[int, str, float, float, float]] = []
        with self._samples_lock:
            for g in self.gpus:
                uuid = g.uuid()
                rows += [
                    (
                        g.index,
                        uuid,
                        t - self._origin_mono_s,
                        self._origin_unix_s + (t - self._origin_mono_s),
                        p,
                    )
                    for t, p in self._samples[g.index]
                ]
        cols = ["gpu_index", "gpu_uuid", "time_s", "unix_time_s", "power_w"]
        return (
            pd.DataFrame(rows, columns=cols)
            .sort_values(["gpu_index", "time_s"], kind="stable")
            .reset_index(drop=True)
        )

    def write_power_timeline(self, path: str | Path, provenance: Mapping[str, Any] | None = None) -> Path:
        """Write :meth:`power_timeline` as a Parquet ``power_timeline`` table (atomically)."""
        from zeus_bench.device import schema  # noqa: F401  (registers the kind)
        from zeus_bench.store import write_table

        meta = {
            "gpu_names": {g.index: g.name() for g in self.gpus},
            "sample_interval_s": self.sample_interval_s,
        }
        return write_table(
            self.power_timeline(), path, "power_timeline", provenance={**meta, **(provenance or {})}
        )


def integrate_power_j(times_s: np.ndarray, power_w: np.ndarray, start_s: float, end_s: float) -> float:
    """Integrate piecewise-linear power over ``[start_s, end_s]``, J.

    Args:
        times_s: Sample times, s (any order).
        power_w: Power at those times, W.
        start_s: Interval start, s.
        end_s: Interval end, s.

    Returns:
        The energy; 0 when fewer than one sample exists. Outside the sampled span the nearest
        sample's power is held.
    """
    if len(times_s) == 0 or end_s <= start_s:
        return 0.0
    order = np.argsort(times_s, kind="stable")
    t, p = np.asarray(times_s, float)[order], np.asarray(power_w, float)[order]
    inside = (t > start_s) & (t < end_s)
    grid = np.concatenate([[start_s], t[inside], [end_s]])
    values = np.interp(grid, t, p)
    return float(np.sum((values[1:] + values[:-1]) * np.diff(grid)) / 2.0)


# Several processes ------------------------------------------------------------------------
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
        from zeus_bench.device.errors import NoSuchGPUError

        raise NoSuchGPUError(f"CUDA device {ordinal} is not among CUDA_VISIBLE_DEVICES={visible}")
    entry = entries[ordinal]
    if entry.isdigit():
        return int(entry)
    for i in range(backend.device_count()):
        if backend.gpu(i).uuid().startswith(entry):
            return i
    from zeus_bench.device.errors import NoSuchGPUError

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
    )


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
