"""A stand-in for the ``pynvml`` module: same names, NVML units (mW, mJ), scriptable failures.

Used to run the real NVML backend code (unit conversion and error mapping included) on CPU-only
machines.
"""

from __future__ import annotations

import types
from typing import Any

NVML_SUCCESS = 0
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_GPU_IS_LOST = 15
NVML_FI_DEV_POWER_INSTANT = 186


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {
            2: "Invalid Argument",
            3: "Not Supported",
            4: "Insufficient Permissions",
            9: "Driver Not Loaded",
            12: "NVML Shared Library Not Found",
            15: "GPU is lost",
        }.get(self.value, "Unknown Error")


def make(
    n_gpus: int = 1,
    limit_mw: int = 700_000,
    range_mw: tuple[int, int] = (200_000, 700_000),
    energy_mj: int = 123_456_789,
    power_mw: int = 512_345,
    instant_mw: int | None = 498_765,
    init_error: int | None = None,
    energy_error: int | None = None,
    set_error: int | None = None,
) -> types.ModuleType:
    """A fake ``pynvml`` module; ``mod.set_calls`` lists (index, mW) of every setter call."""
    mod = types.ModuleType("fake_pynvml")
    for name, value in globals().items():
        if name.startswith("NVML_"):
            setattr(mod, name, value)
    mod.NVMLError = NVMLError
    mod.set_calls = []
    mod.limits = [limit_mw] * n_gpus
    mod.energy_mj = [energy_mj] * n_gpus

    def check(handle: int) -> int:
        return handle

    def nvmlInit() -> None:
        if init_error is not None:
            raise NVMLError(init_error)

    def nvmlDeviceGetHandleByIndex(i: int) -> int:
        if not 0 <= i < n_gpus:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return i

    def nvmlDeviceGetTotalEnergyConsumption(h: int) -> int:
        if energy_error is not None:
            raise NVMLError(energy_error)
        return mod.energy_mj[h]

    def nvmlDeviceSetPowerManagementLimit(h: int, mw: int) -> None:
        if set_error is not None:
            raise NVMLError(set_error)
        mod.set_calls.append((h, mw))
        mod.limits[h] = mw

    class _Value:
        def __init__(self, ret: int, mw: int) -> None:
            self.nvmlReturn = ret
            self.value = types.SimpleNamespace(uiVal=mw)

    def nvmlDeviceGetFieldValues(h: int, ids: list[int]) -> list[Any]:
        if instant_mw is None:
            return [_Value(NVML_ERROR_NOT_SUPPORTED, 0)]
        return [_Value(NVML_SUCCESS, instant_mw)]

    funcs = {
        "nvmlInit": nvmlInit,
        "nvmlDeviceGetCount": lambda: n_gpus,
        "nvmlDeviceGetHandleByIndex": nvmlDeviceGetHandleByIndex,
        "nvmlSystemGetDriverVersion": lambda: "580.159.04",
        "nvmlDeviceGetName": lambda h: b"NVIDIA H200",
        "nvmlDeviceGetUUID": lambda h: f"GPU-0000-{h}",
        "nvmlDeviceGetPowerManagementLimitConstraints": lambda h: range_mw,
        "nvmlDeviceGetPowerManagementDefaultLimit": lambda h: range_mw[1],
        "nvmlDeviceGetPowerManagementLimit": lambda h: mod.limits[check(h)],
        "nvmlDeviceSetPowerManagementLimit": nvmlDeviceSetPowerManagementLimit,
        "nvmlDeviceGetTotalEnergyConsumption": nvmlDeviceGetTotalEnergyConsumption,
        "nvmlDeviceGetFieldValues": nvmlDeviceGetFieldValues,
        "nvmlDeviceGetPowerUsage": lambda h: power_mw,
    }
    for name, fn in funcs.items():
        setattr(mod, name, fn)
    return mod
