"""Real NVIDIA GPUs through NVML (the ``nvidia-ml-py`` package, module ``pynvml``).

This is the one place where NVML's units (mW, mJ) become W and J and where NVML's errors become
:mod:`zeus_bench.device.errors`. NVML indices are the driver's order, which ignores
``CUDA_VISIBLE_DEVICES``; :func:`zeus_bench.device.ranks.local_gpu_index` maps a CUDA device
to its NVML index.

Power: ``nvmlDeviceGetPowerUsage`` is a one-second average on Hopper, so instant power is read
from the field ``NVML_FI_DEV_POWER_INSTANT`` and falls back to ``GetPowerUsage`` where the field
is absent. Energy: ``nvmlDeviceGetTotalEnergyConsumption`` (Volta and newer; about 4 ms per read
on an H200, updated about every 100 ms).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.errors import (
    DeviceError,
    EnergyCounterUnsupportedError,
    NoSuchGPUError,
    NVMLUnavailableError,
    ObserveModeError,
    PermissionDeniedError,
    PowerLimitOutOfRangeError,
    UnsupportedError,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

CAP_SYS_ADMIN = 21
_PERMISSION_HINT = (
    "setting power limits needs CAP_SYS_ADMIN or root (e.g. sudo, or a container with "
    "--cap-add SYS_ADMIN); observe mode (--observe) measures at the current limit without setting"
)


def _mw_to_w(milliwatts: float) -> float:
    return float(milliwatts) / 1000.0


def _w_to_mw(watts: float) -> int:
    return round(float(watts) * 1000.0)


def _import_pynvml() -> ModuleType:
    try:
        import pynvml
    except ImportError:
        raise NVMLUnavailableError(
            "the NVML bindings are not installed: pip install nvidia-ml-py (or use --backend fake)"
        ) from None
    return pynvml


POWER_LIMIT_SETTERS = ("nvmlDeviceSetPowerManagementLimit", "nvmlDeviceSetPowerManagementLimit_v2")


def forbid_power_limit_writes(pynvml_module: ModuleType | None = None) -> Callable[[], None]:
    """Make every NVML power-limit setter raise, for runs that must never write a GPU setting.

    A belt-and-braces guard on shared or lent GPUs, on top of observe mode: any code path that
    tries to set a limit fails loudly instead. Returns a function that undoes the guard.

    Args:
        pynvml_module: The module to patch (default: the installed ``pynvml``).
    """
    nvml = pynvml_module if pynvml_module is not None else _import_pynvml()
    saved = {name: getattr(nvml, name) for name in POWER_LIMIT_SETTERS if hasattr(nvml, name)}

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise ObserveModeError("a power-limit setter was called while power-limit writes are forbidden")

    for name in saved:
        setattr(nvml, name, refuse)

    def undo() -> None:
        for name, fn in saved.items():
            setattr(nvml, name, fn)

    return undo


def has_cap_sys_admin() -> bool:
    """Whether this process runs as root or holds CAP_SYS_ADMIN in its effective set."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_SYS_ADMIN & 1)
    except OSError:
        pass
    return False


class NVMLBackend(GPUBackend):
    """All NVIDIA GPUs of this machine, through NVML (initialised once per backend)."""

    name = "nvml"

    def __init__(self, pynvml_module: ModuleType | None = None) -> None:
        """Initialise NVML.

        Args:
            pynvml_module: The ``pynvml`` module to use (tests inject a fake one).

        Raises:
            NVMLUnavailableError: no bindings, no library or no driver.
        """
        self.nvml = pynvml_module if pynvml_module is not None else _import_pynvml()
        self._lock = threading.Lock()
        try:
            self.nvml.nvmlInit()
        except self.nvml.NVMLError as exc:
            raise NVMLUnavailableError(
                f"NVML could not start ({exc}): is the NVIDIA driver installed and a GPU visible? "
                "(or use --backend fake)"
            ) from None

    def call(
        self,
        what: str,
        fn: Callable[..., T],
        *args: Any,
        index: int | None = None,
        unsupported: Callable[[str], DeviceError] = UnsupportedError,
    ) -> T:
        """Call an NVML function, translating its errors into the project's types.

        Every NVML call of this module goes through here (or :meth:`check` for a per-field
        return code); no method catches ``NVMLError`` itself.

        Args:
            what: What is being done, in words, for the message.
            fn: The ``pynvml`` function.
            *args: Its arguments.
            index: GPU index, for the message.
            unsupported: Error type for NVML's NOT_SUPPORTED (default :class:`UnsupportedError`).
        """
        try:
            return fn(*args)
        except self.nvml.NVMLError as exc:
            raise self.translate(exc, what, index, unsupported) from None

    def check(
        self,
        code: int,
        what: str,
        index: int | None = None,
        unsupported: Callable[[str], DeviceError] = UnsupportedError,
    ) -> None:
        """Raise the translated error of a non-success NVML return code (e.g. a field value's)."""
        if code != self.nvml.NVML_SUCCESS:
            raise self.translate(self.nvml.NVMLError(code), what, index, unsupported)

    def translate(
        self,
        exc: Exception,
        what: str,
        index: int | None = None,
        unsupported: Callable[[str], DeviceError] = UnsupportedError,
    ) -> DeviceError:
        """The project's exception for an ``NVMLError`` raised while trying to ``what``."""
        nvml = self.nvml
        where = f"GPU {index}: " if index is not None else ""
        code = getattr(exc, "value", None)
        if code == nvml.NVML_ERROR_NO_PERMISSION:
            return PermissionDeniedError(f"{where}no permission to {what}: {_PERMISSION_HINT}")
        if code == nvml.NVML_ERROR_NOT_SUPPORTED:
            return unsupported(f"{where}cannot {what}: not supported by this GPU or driver")
        if code in (nvml.NVML_ERROR_DRIVER_NOT_LOADED, nvml.NVML_ERROR_LIBRARY_NOT_FOUND):
            return NVMLUnavailableError(f"{where}cannot {what}: {exc} (is the NVIDIA driver loaded?)")
        if code == nvml.NVML_ERROR_GPU_IS_LOST:
            return DeviceError(f"{where}the GPU fell off the bus while trying to {what}; it needs a reset")
        return DeviceError(f"{where}cannot {what}: NVML error {code}: {exc}")

    def device_count(self) -> int:
        """Number of GPUs NVML sees."""
        return int(self.call("count GPUs", self.nvml.nvmlDeviceGetCount))

    def gpu(self, index: int) -> NVMLGPU:
        """The GPU at NVML index ``index``."""
        count = self.device_count()
        if not 0 <= index < count:
            raise NoSuchGPUError(
                f"no GPU at index {index}: NVML sees {count} GPU(s)" + (f" (0-{count - 1})" if count else "")
            )
        handle = self.call("open the GPU", self.nvml.nvmlDeviceGetHandleByIndex, index, index=index)
        return NVMLGPU(self, index, handle)

    def driver_version(self) -> str:
        """The NVIDIA driver's version."""
        version = self.call("read the driver version", self.nvml.nvmlSystemGetDriverVersion)
        return version.decode() if isinstance(version, bytes) else str(version)

    def may_set_power_limits(self) -> bool:
        """Root or CAP_SYS_ADMIN (what NVML's setter requires)."""
        return has_cap_sys_admin()


class NVMLGPU(GPU):
    """One GPU behind NVML; values converted to W and J here, once."""

    backend_name = "nvml"

    def __init__(self, backend: NVMLBackend, index: int, handle: Any) -> None:
        self._b = backend
        self._nvml = backend.nvml
        self.index = index
        self.handle = handle
        self._energy_supported: bool | None = None
        self._instant_field: bool | None = None

    def _call(
        self,
        what: str,
        fn: Callable[..., T],
        *args: Any,
        unsupported: Callable[[str], DeviceError] = UnsupportedError,
    ) -> T:
        return self._b.call(what, fn, self.handle, *args, index=self.index, unsupported=unsupported)

    def name(self) -> str:
        """The card's name."""
        name = self._call("read the name", self._nvml.nvmlDeviceGetName)
        return name.decode() if isinstance(name, bytes) else str(name)

    def uuid(self) -> str:
        """The card's UUID (``GPU-...``)."""
        uuid = self._call("read the UUID", self._nvml.nvmlDeviceGetUUID)
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid)

    def power_limit_range_w(self) -> tuple[float, float]:
        """(min, max) settable limit, W."""
        lo, hi = self._call(
            "read the power limit range", self._nvml.nvmlDeviceGetPowerManagementLimitConstraints
        )
        return _mw_to_w(lo), _mw_to_w(hi)

    def default_power_limit_w(self) -> float:
        """Factory default limit, W."""
        return _mw_to_w(
            self._call("read the default power limit", self._nvml.nvmlDeviceGetPowerManagementDefaultLimit)
        )

    def power_limit_w(self) -> float:
        """Limit in force, W."""
        return _mw_to_w(self._call("read the power limit", self._nvml.nvmlDeviceGetPowerManagementLimit))

    def set_power_limit_w(self, watts: float) -> None:
        """Set the limit after checking the range (NVML's own range error is vague)."""
        lo, hi = self.power_limit_range_w()
        if not lo <= watts <= hi:
            raise PowerLimitOutOfRangeError(
                f"GPU {self.index}: power limit {watts:g} W outside its range {lo:g}-{hi:g} W"
            )
        self._call(
            "set the power limit",
            self._nvml.nvmlDeviceSetPowerManagementLimit,
            _w_to_mw(watts),
            unsupported=lambda _msg: PermissionDeniedError(
                f"GPU {self.index}: this GPU or driver does not allow setting the power limit"
            ),
        )
        log.info("GPU %d: power limit set to %g W", self.index, watts)

    def supports_energy_counter(self) -> bool:
        """Whether the total-energy counter answers (NOT_SUPPORTED: no; other errors raise)."""
        if self._energy_supported is None:
            try:
                self._read_energy_mj("check the energy counter")
            except EnergyCounterUnsupportedError:
                self._energy_supported = False
            else:
                self._energy_supported = True
        return self._energy_supported

    def _read_energy_mj(self, what: str) -> float:
        def unsupported(_msg: str) -> DeviceError:
            return EnergyCounterUnsupportedError(
                f"GPU {self.index} has no energy counter (pre-Volta); use sampled power instead"
            )

        return float(
            self._call(what, self._nvml.nvmlDeviceGetTotalEnergyConsumption, unsupported=unsupported)
        )

    def total_energy_j(self) -> float:
        """Energy counter, J (NVML counts mJ)."""
        try:
            return self._read_energy_mj("read the energy counter") / 1000.0
        except EnergyCounterUnsupportedError:
            self._energy_supported = False
            raise

    def instant_power_w(self) -> float:
        """Instant power, W: ``NVML_FI_DEV_POWER_INSTANT`` where present, else ``GetPowerUsage``.

        The field is given up for good only when NVML says it is not supported; any other error
        falls back to ``GetPowerUsage`` for that one read.
        """
        nvml = self._nvml
        field = getattr(nvml, "NVML_FI_DEV_POWER_INSTANT", None)
        if self._instant_field is not False and field is not None:
            what = "read the instant power"
            try:
                value = self._call(what, nvml.nvmlDeviceGetFieldValues, [field])[0]
                self._b.check(value.nvmlReturn, what, self.index)
                self._instant_field = True
                return _mw_to_w(value.value.uiVal)
            except UnsupportedError:
                log.info(
                    "GPU %d: no instant power field; sampling nvmlDeviceGetPowerUsage (1 s average on Hopper)",
                    self.index,
                )
                self._instant_field = False
            except DeviceError as exc:
                log.debug(
                    "GPU %d: instant power field failed this once (%s); using GetPowerUsage", self.index, exc
                )
        return _mw_to_w(self._call("read the power draw", nvml.nvmlDeviceGetPowerUsage))

    def sm_clock_mhz(self) -> float | None:
        """Current SM clock, MHz (``nvmlDeviceGetClockInfo``; None if the driver refuses)."""
        try:
            return float(
                self._call("read the SM clock", self._nvml.nvmlDeviceGetClockInfo, self._nvml.NVML_CLOCK_SM)
            )
        except DeviceError:
            return None

    def temperature_c(self) -> float | None:
        """GPU core temperature, degrees C (``nvmlDeviceGetTemperature``; None if refused)."""
        try:
            return float(
                self._call(
                    "read the temperature",
                    self._nvml.nvmlDeviceGetTemperature,
                    self._nvml.NVML_TEMPERATURE_GPU,
                )
            )
        except DeviceError:
            return None
