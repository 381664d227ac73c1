"""The GPU layer: a small typed interface, an NVML backend, a fake backend, measurement, control.

Pick a backend with :func:`get_backend`: ``--backend fake|nvml`` on the command line, else the
environment variable ``ZEUS_BENCH_BACKEND``, else ``nvml``.

Measurement: :mod:`~zeus_bench.device.monitor` (windows, :class:`EnergyMonitor`) over
:mod:`~zeus_bench.device.counter` (the one thread per GPU set that reads the energy counters),
:mod:`~zeus_bench.device.measurement`, :mod:`~zeus_bench.device.sampling` (sampled power) and
:mod:`~zeus_bench.device.ranks` (DDP ranks). Control: :mod:`~zeus_bench.device.control` over
:mod:`~zeus_bench.device.journal`.
"""

from __future__ import annotations

import importlib
import os

from zeus_bench.core.errors import ConfigError
from zeus_bench.device.base import GPU, GPUBackend

BACKEND_ENV = "ZEUS_BENCH_BACKEND"
#: The one backend registry: name -> ``module:class``, imported only when chosen. The command
#: line's ``--backend`` choices, the environment variable and the sweep config all read it.
BACKEND_CLASSES: dict[str, str] = {
    "nvml": "zeus_bench.device.nvml:NVMLBackend",
    "fake": "zeus_bench.device.fake:FakeBackend",
}
BACKENDS: tuple[str, ...] = tuple(BACKEND_CLASSES)

__all__ = ["BACKENDS", "BACKEND_ENV", "GPU", "GPUBackend", "backend_name", "get_backend"]


def backend_name(name: str | None = None) -> str:
    """The backend chosen by ``name``, else ``$ZEUS_BENCH_BACKEND``, else ``nvml``."""
    chosen = (name or os.environ.get(BACKEND_ENV) or "nvml").strip().lower()
    if chosen not in BACKENDS:
        source = "--backend" if name else BACKEND_ENV
        raise ConfigError(
            f"unknown GPU backend {chosen!r} (from {source}); choose one of {', '.join(BACKENDS)}"
        )
    return chosen


def get_backend(name: str | None = None) -> GPUBackend:
    """Return a GPU backend.

    Args:
        name: ``nvml`` or ``fake``; None reads ``$ZEUS_BENCH_BACKEND`` (default ``nvml``).

    Raises:
        ConfigError: an unknown backend name.
        NVMLUnavailableError: ``nvml`` chosen but NVML or the driver is missing.
    """
    module, _, cls = BACKEND_CLASSES[backend_name(name)].partition(":")
    backend: GPUBackend = getattr(importlib.import_module(module), cls)()
    return backend
