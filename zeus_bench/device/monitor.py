"""Energy measurement windows over one or several GPUs, and an optional power timeline.

:class:`EnergyMonitor` reads each GPU's energy counter only at window edges (one read costs
about 4 ms on an H200), so a training loop pays nothing between edges. Windows are named and
independent: they may nest and overlap. When torch has been imported and CUDA is initialised,
the current CUDA device is synchronised at each edge so queued kernels land in the right window.

The counter updates about every :data:`COUNTER_UPDATE_PERIOD_S`; a window shorter than that is
flagged (``Measurement.below_counter_period``) since its energy can be off by a whole update.

GPUs without a counter (pre-Volta) fall back to integrating sampled instant power; the monitor
then samples in a background thread even when no timeline was asked for.

Several processes (DDP ranks): let each rank measure only its own GPU
(:func:`local_gpu_index`), then :func:`gather_measurement` sums the ranks' energy with each
physical GPU counted once.
"""

from __future__ import annotations

import contextlib
import logging
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

#: Update period of NVML's energy counter (seen on an H200; similar on other recent GPUs), s.
COUNTER_UPDATE_PERIOD_S = 0.1


@dataclass(frozen=True)
class Measurement:
    """Result of one measurement window.

    Attributes:
        name: Window name.
        time_s: Wall time between the edges, s.
        energy_j: Energy per GPU index, J.
        start_unix_s: Unix time of the window's start, s.
        below_counter_period: True when the window was shorter than the energy counter's
            update period (about 0.1 s): its energy is unreliable.
        sampled_gpus: GPU indices whose energy was integrated from sampled power (no counter).
    """

    name: str
    time_s: float
    energy_j: Mapping[int, float]
    start_unix_s: float = 0.0
    below_counter_period: bool = False
    sampled_gpus: tuple[int, ...] = field(default=())

    @property
    def total_energy_j(self) -> float:
        """Energy summed over the GPUs, J."""
        return float(sum(self.energy_j.values()))

    @property
    def avg_power_w(self) -> float:
        """Average power summed over the GPUs, W (0 for an empty window)."""
        return self.total_energy_j / self.time_s if self.time_s > 0 else 0.0


@dataclass
class _Window:
    start_mono_s: float
    start_unix_s: float
    energy_j: dict[int, float]


def sync_cuda() -> None:
    """Synchronise the current CUDA device if torch is loaded and CUDA initialised (else nothing)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()


class EnergyMonitor:
    """Measure energy and time of named windows on a set of GPUs.

    Args:
        gpus: The GPUs to measure (each measured by this process alone; see module notes).
        sync_cuda: Synchronise CUDA at window edges when torch is in use.
        sample_interval_s: Sample instant power every this many seconds into a timeline
            (None: no timeline, unless a GPU lacks an energy counter; then 0.1 s).
        clock: Monotonic time source, s (tests inject one).
    """

    def __init__(
        self,
        gpus: Sequence[GPU],
        sync_cuda: bool = True,
        sample_interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not gpus:
            raise MeasurementWindowError("EnergyMonitor needs at least one GPU")
        indices = [g.index for g in gpus]
        if len(set(indices)) != len(indices):
            raise MeasurementWindowError(f"EnergyMonitor: GPU listed twice in {indices}")
        self.gpus = list(gpus)
        self.sync_cuda = sync_cuda
        self.clock = clock
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
        if sample_interval_s is not None:
            self.start_sampling()

    # Windows ------------------------------------------------------------------------------
    def _edge(self) -> tuple[float, dict[int, float]]:
        if self.sync_cuda:
            sync_cuda()
        now = self.clock()
        energy: dict[int, float] = {}
        for g in self.gpus:
            if self._counter[g.index]:
                energy[g.index] = g.total_energy_j()
            else:
                self._record_sample(g.index, now, g.instant_power_w())
                energy[g.index] = 0.0
        return now, energy

    def begin_window(self, name: str) -> None:
        """Start the window ``name`` (names must be unique among open windows)."""
        if name in self._windows:
            raise MeasurementWindowError(f"measurement window {name!r} is already open")
        start, energy = self._edge()
        self._windows[name] = _Window(start, self._origin_unix_s + (start - self._origin_mono_s), energy)

    def end_window(self, name: str) -> Measurement:
        """End the window ``name`` and return its measurement."""
        window = self._windows.pop(name, None)
        if window is None:
            raise MeasurementWindowError(f"measurement window {name!r} was never begun (or already ended)")
        end, energy = self._edge()
        time_s = end - window.start_mono_s
        per_gpu: dict[int, float] = {}
        for g in self.gpus:
            if self._counter[g.index]:
                per_gpu[g.index] = energy[g.index] - window.energy_j[g.index]
            else:
                per_gpu[g.index] = self.sampled_energy_j(g.index, window.start_mono_s, end)
        short = time_s < COUNTER_UPDATE_PERIOD_S
        if short:
            log.debug("window %r lasted %.3f s, less than the counter update period", name, time_s)
        return Measurement(name, time_s, per_gpu, window.start_unix_s, short, self._sampled)

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
        """Stop sampling; open windows are dropped."""
        self.stop_sampling()
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
        A measurement whose ``energy_j`` is keyed by position in the sorted list of distinct
        (host, GPU index) pairs (equal to the GPU index on a single host with GPUs 0..n-1
        measured), time the longest of the parts.
    """
    parts = list(parts)
    if not parts:
        raise MeasurementWindowError("nothing to merge")
    seen: dict[tuple[str, int], float] = {}
    for host, m in parts:
        for idx, e in m.energy_j.items():
            seen.setdefault((host, idx), e)
    keys = sorted(seen)
    single_host = len({h for h, _ in keys}) == 1
    energy = {(k[1] if single_host else n): seen[k] for n, k in enumerate(keys)}
    first = parts[0][1]
    return Measurement(
        name=first.name,
        time_s=max(m.time_s for _, m in parts),
        energy_j=energy,
        start_unix_s=min(m.start_unix_s for _, m in parts),
        below_counter_period=any(m.below_counter_period for _, m in parts),
        sampled_gpus=tuple(sorted({i for _, m in parts for i in m.sampled_gpus})),
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
