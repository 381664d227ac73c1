"""Sampled instant power: the monitor's optional timeline, and the energy of GPUs without a counter.

:class:`PowerSampler` reads each GPU's instant power every ``interval_s`` in a thread of its own
(``zeus-bench-power-sampler``; it never reads an energy counter) and keeps the samples.
:func:`integrate_power_j` turns them into energy between two times.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zeus_bench.device.base import GPU

log = logging.getLogger(__name__)


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


class PowerSampler:
    """Instant power of a GPU set, sampled in a background thread.

    Args:
        gpus: The GPUs to sample.
        clock: Monotonic time source, s (the monitor's).
        origin_mono_s: Clock time of the timeline's zero, s.
        origin_unix_s: Unix time at ``origin_mono_s``, s.
    """

    def __init__(
        self, gpus: Sequence[GPU], clock: Callable[[], float], origin_mono_s: float, origin_unix_s: float
    ) -> None:
        self.gpus = list(gpus)
        self.clock = clock
        self.origin_mono_s = origin_mono_s
        self.origin_unix_s = origin_unix_s
        self._samples: dict[int, list[tuple[float, float]]] = {g.index: [] for g in self.gpus}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, index: int, mono_s: float, power_w: float) -> None:
        """Keep one sample of GPU ``index``."""
        with self._lock:
            self._samples[index].append((mono_s, power_w))

    def _loop(self, interval_s: float) -> None:
        next_t = self.clock()
        while not self._stop.is_set():
            for g in self.gpus:
                try:
                    self.record(g.index, self.clock(), g.instant_power_w())
                except Exception:  # a failed read must not kill the sampler
                    log.exception("power sample of GPU %d failed", g.index)
            next_t += interval_s
            self._stop.wait(max(0.0, next_t - self.clock()))

    def start(self, interval_s: float) -> None:
        """Sample every ``interval_s`` seconds from now (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, args=(interval_s,), name="zeus-bench-power-sampler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling; the samples so far are kept."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None

    def energy_j(self, gpu_index: int, start_mono_s: float, end_mono_s: float) -> float:
        """Energy of one GPU between two clock times, integrated from its samples, J."""
        with self._lock:
            samples = np.array(self._samples[gpu_index], dtype=float).reshape(-1, 2)
        return integrate_power_j(samples[:, 0], samples[:, 1], start_mono_s, end_mono_s)

    def timeline(self) -> Any:
        """The samples so far as a ``power_timeline`` DataFrame (one row per GPU and sample)."""
        import pandas as pd

        rows: list[tuple[int, str, float, float, float]] = []
        with self._lock:
            for g in self.gpus:
                uuid = g.uuid()
                rows += [
                    (
                        g.index,
                        uuid,
                        t - self.origin_mono_s,
                        self.origin_unix_s + (t - self.origin_mono_s),
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

    def write(self, path: str | Path, meta: Mapping[str, Any]) -> Path:
        """Write :meth:`timeline` as a Parquet ``power_timeline`` table (atomically)."""
        from zeus_bench.device import schema  # noqa: F401  (registers the kind)
        from zeus_bench.store import write_table

        return write_table(self.timeline(), path, "power_timeline", provenance=dict(meta))
