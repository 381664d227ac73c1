"""The small typed interface behind which every GPU backend sits (units in method names).

Implementations: ``nvml`` (real GPUs through ``nvidia-ml-py``) and ``fake`` (a power and
throughput model for tests and demos). Vendor errors are translated once, inside the
implementations, into :mod:`zeus_bench.device.errors`.
"""

from __future__ import annotations

import abc


class GPU(abc.ABC):
    """One GPU as zeus-bench sees it. All values in W, J and s."""

    index: int

    @abc.abstractmethod
    def name(self) -> str:
        """Marketing name, e.g. ``NVIDIA H200``."""

    @abc.abstractmethod
    def uuid(self) -> str:
        """Stable identifier of the physical GPU (keys journals and locks; indices can change)."""

    @abc.abstractmethod
    def power_limit_range_w(self) -> tuple[float, float]:
        """(minimum, maximum) settable power limit, W."""

    @abc.abstractmethod
    def default_power_limit_w(self) -> float:
        """Factory default power limit, W."""

    @abc.abstractmethod
    def power_limit_w(self) -> float:
        """Power limit in force now, W."""

    @abc.abstractmethod
    def set_power_limit_w(self, watts: float) -> None:
        """Set the power limit (needs root or CAP_SYS_ADMIN on real GPUs).

        Raises:
            PowerLimitOutOfRangeError: ``watts`` is outside :meth:`power_limit_range_w`.
            PermissionDeniedError: this process may not set limits.
        """

    @abc.abstractmethod
    def supports_energy_counter(self) -> bool:
        """Whether :meth:`total_energy_j` is a hardware counter (Volta and newer)."""

    @abc.abstractmethod
    def total_energy_j(self) -> float:
        """Monotonic energy counter since an arbitrary origin, J (about 4 ms per read on H200)."""

    @abc.abstractmethod
    def instant_power_w(self) -> float:
        """Instantaneous power draw, W (cheap; use for sampling)."""

    def sm_clock_mhz(self) -> float | None:
        """Current SM (graphics) clock, MHz; None where the backend cannot read it. Read only."""
        return None

    def temperature_c(self) -> float | None:
        """Current GPU core temperature, degrees C; None where the backend cannot read it. Read only."""
        return None


class GPUBackend(abc.ABC):
    """Discovers GPUs and reports system facts."""

    name: str

    @abc.abstractmethod
    def device_count(self) -> int:
        """Number of GPUs visible."""

    @abc.abstractmethod
    def gpu(self, index: int) -> GPU:
        """The GPU at ``index``; raises ``NoSuchGPUError`` if there is none."""

    @abc.abstractmethod
    def driver_version(self) -> str:
        """Driver version string."""

    @abc.abstractmethod
    def may_set_power_limits(self) -> bool:
        """Whether this process is allowed to set power limits (root or CAP_SYS_ADMIN on NVML)."""

    def gpus(self, indices: list[int] | None = None) -> list[GPU]:
        """The GPUs at ``indices`` (all when None)."""
        if indices is None:
            indices = list(range(self.device_count()))
        return [self.gpu(i) for i in indices]
