"""Errors of the GPU layer, each with a message a user can act on.

NVML failures are translated into these types once, in :mod:`zeus_bench.device.nvml`; the fake
backend raises the same types so that tests exercise the same handling.
"""

from __future__ import annotations

from zeus_bench.core.errors import ZeusBenchError


class DeviceError(ZeusBenchError):
    """Base class of the GPU layer's errors."""


class NVMLUnavailableError(DeviceError):
    """The NVML library or the NVIDIA driver is missing or failed to initialise."""


class NoSuchGPUError(DeviceError):
    """No GPU at the requested index."""


class UnsupportedError(DeviceError):
    """The GPU or its driver does not support the operation (NVML's NOT_SUPPORTED)."""


class EnergyCounterUnsupportedError(UnsupportedError):
    """The GPU has no energy counter (pre-Volta); energy must come from sampled power."""


class PermissionDeniedError(DeviceError):
    """This process may not change the GPU's settings (needs root or CAP_SYS_ADMIN)."""


class PowerLimitOutOfRangeError(DeviceError):
    """A requested power limit lies outside the GPU's settable range."""


class GPUBusyError(DeviceError):
    """Another run holds the lock of this GPU."""


class ObserveModeError(DeviceError):
    """A power limit other than the one in force was requested in observe mode."""


class MeasurementWindowError(DeviceError):
    """A measurement window was begun twice or ended without being begun."""
