"""A fake GPU with a simple power and throughput model, for tests, CI and demos.

The model (all parameters in the state, defaults those of an H200 running a busy training job):

* The workload asks for ``demand_w = idle_w + load * (busy_w - idle_w)`` where ``load`` in [0, 1]
  is set by the caller (:meth:`FakeGPU.set_load`).
* The GPU draws ``draw_w = min(demand_w, power_limit_w)``; energy accrues at ``draw_w``.
* The energy counter can be made to behave like NVML's: ``counter_latency_s`` makes each read
  block that long (about 0.004 s on an H200) and ``counter_update_period_s`` makes its value move
  only at multiples of that period (about 0.1 s on an H200; 0 = continuous).
* Throughput relative to the uncapped GPU is
  ``((draw_w - idle_w) / (demand_w - idle_w)) ** throughput_exponent`` (1 when not capped), so
  capping saves power faster than it costs speed, as on real GPUs.
* Its speed is a model too, not the host's: uncapped, a batch of B samples trains at
  ``samples_per_s x B / (B + half_batch)`` samples per second (larger batches use the GPU better,
  approaching ``samples_per_s``), so a step lasts ``(B + half_batch) / samples_per_s`` divided by
  the relative throughput
  (:meth:`zeus_bench.device.fake_load.FakeLoad.paced` waits out the rest of the step after the
  host's computation), whatever else the host is doing. 0 paces by the host's time instead.
* SM clock and temperature follow the limit and draw at once: the fake GPU is steady from its
  first step (:attr:`FakeGPU.steady_at_once`), so a sweep needs no warm-up to a steady state.

State (limits, energy, load, the number of setter calls) lives in a JSON file named by
``ZEUS_BENCH_FAKE_STATE`` (or ``state_path``), guarded by an ``flock``, so separate processes share
one fake GPU as they would share a real one. Without a file the state lives in the process.
Energy is integrated in closed form from the clock, so no thread runs. The clock is the host's
monotonic one (the same in every process of one boot, and never stepped as the wall clock is
when it is set or synchronised: a step of the wall clock would have been energy drawn); a state
file from an earlier boot (or one written before the file recorded its boot) counts its energy
on from the first time it is opened.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import atomic_write_text, missing_parents, remove_created_folders
from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.errors import (
    DeviceError,
    EnergyCounterUnsupportedError,
    NoSuchGPUError,
    PermissionDeniedError,
    PowerLimitOutOfRangeError,
)

STATE_ENV = "ZEUS_BENCH_FAKE_STATE"
GPUS_ENV = "ZEUS_BENCH_FAKE_GPUS"


def _boot_id() -> str | None:
    """This boot's identity (Linux), to which the monotonic times of a state file belong."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


#: The boot whose monotonic clock a state file's ``energy_t`` values are on.
BOOT_ID = _boot_id()

#: Parameters of one fake GPU and their defaults (an H200-like card).
DEFAULT_GPU: dict[str, Any] = {
    "name": "Fake H200",
    "min_power_limit_w": 200.0,
    "max_power_limit_w": 700.0,
    "default_power_limit_w": 700.0,
    "power_limit_w": 700.0,
    "idle_w": 80.0,
    "busy_w": 600.0,
    "throughput_exponent": 0.4,
    "load": 0.0,
    "energy_j": 0.0,
    "energy_t": None,
    "energy_counter": True,
    "counter_latency_s": 0.0,
    "counter_update_period_s": 0.0,
    "samples_per_s": 1000.0,
    "half_batch": 32.0,
    "set_calls": 0,
}


def _may_set(state: dict[str, Any]) -> bool:
    """``allow_set``: True, False, or ``"root"`` (only root may set limits, as with NVML)."""
    if state["allow_set"] == "root":
        return os.geteuid() == 0
    return bool(state["allow_set"])


def _gpu_draw_w(g: dict[str, Any]) -> float:
    demand = g["idle_w"] + g["load"] * (g["busy_w"] - g["idle_w"])
    return float(min(demand, g["power_limit_w"]))


def _parse_state(path: Path, text: str) -> dict[str, Any]:
    """The fake GPUs' state read from ``path``, checked: corrupt or wrong-shape JSON is one line.

    Raises:
        ConfigError: not JSON, or not ``{"allow_set": bool, "gpus": [{field: value, ...}, ...]}``
            with a number for every numeric field (the message names the file and field).
    """
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path}: fake GPU state is not valid JSON ({exc}); delete it to start afresh"
        ) from None
    where = f"{path}: fake GPU state"
    if not isinstance(state, dict) or not isinstance(state.get("gpus"), list) or not state["gpus"]:
        raise ConfigError(
            f'{where} must be an object with a non-empty "gpus" list; delete it to start afresh'
        )
    if not (isinstance(state.get("allow_set"), bool) or state.get("allow_set") == "root"):
        raise ConfigError(f'{where}: "allow_set" must be true, false or "root"; delete it to start afresh')
    for i, g in enumerate(state["gpus"]):
        if not isinstance(g, dict):
            raise ConfigError(f"{where}: gpus[{i}] is not an object; delete it to start afresh")
        for key, default in DEFAULT_GPU.items():
            value = g.get(key, default)
            numeric = isinstance(default, int | float) and not isinstance(default, bool)
            if key not in g and key not in _OPTIONAL_FIELDS:
                raise ConfigError(f"{where}: gpus[{i}] has no {key!r}; delete it to start afresh")
            if numeric and (
                not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value)
            ):
                raise ConfigError(f"{where}: gpus[{i}].{key} must be a finite number, got {value!r}")
            if key == "energy_t" and value is not None and not isinstance(value, int | float):
                raise ConfigError(f"{where}: gpus[{i}].energy_t must be a number or null, got {value!r}")
    return state


#: Fields added after the first state files were written: absent ones take their default.
_OPTIONAL_FIELDS = frozenset(
    {"counter_latency_s", "counter_update_period_s", "samples_per_s", "energy_counter"}
)


class FakeGPU(GPU):
    """One GPU of a :class:`FakeBackend`; every read goes through the shared state."""

    backend_name = "fake"
    #: SM clock and temperature hold steady from the first step (the model has no thermal lag).
    steady_at_once = True

    def __init__(self, backend: FakeBackend, index: int) -> None:
        self._backend = backend
        self.index = index

    def _get(self) -> dict[str, Any]:
        with self._backend._state() as state:
            return dict(state["gpus"][self.index])

    def name(self) -> str:
        """Name of the fake card."""
        return str(self._get()["name"])

    def uuid(self) -> str:
        """``GPU-fake-<index>``."""
        return f"GPU-fake-{self.index}"

    def power_limit_range_w(self) -> tuple[float, float]:
        """(minimum, maximum) settable limit, W."""
        g = self._get()
        return float(g["min_power_limit_w"]), float(g["max_power_limit_w"])

    def default_power_limit_w(self) -> float:
        """Factory default limit, W."""
        return float(self._get()["default_power_limit_w"])

    def power_limit_w(self) -> float:
        """Limit in force, W."""
        return float(self._get()["power_limit_w"])

    def set_power_limit_w(self, watts: float) -> None:
        """Set the limit, checking range and permission as NVML would."""
        with self._backend._state(write=True) as state:
            if not _may_set(state):
                raise PermissionDeniedError(
                    f"GPU {self.index}: no permission to set the power limit (fake GPU configured "
                    "read-only); setting limits needs CAP_SYS_ADMIN or root, observe mode measures "
                    "without setting"
                )
            g = state["gpus"][self.index]
            lo, hi = g["min_power_limit_w"], g["max_power_limit_w"]
            if not lo <= watts <= hi:
                raise PowerLimitOutOfRangeError(
                    f"GPU {self.index}: power limit {watts:g} W outside its range {lo:g}-{hi:g} W"
                )
            self._backend._accrue(g)
            g["power_limit_w"] = float(watts)
            g["set_calls"] += 1

    def supports_energy_counter(self) -> bool:
        """Whether the fake has its counter (configurable to test the sampled fallback)."""
        return bool(self._get()["energy_counter"])

    def total_energy_j(self) -> float:
        """Energy since the state was created, J (exact integral of the model's draw).

        With ``counter_latency_s`` the read blocks that long first; with
        ``counter_update_period_s`` the value is the integral up to the last multiple of the
        period (or up to the last change of load or limit, if that came later).
        """
        latency = float(self._get().get("counter_latency_s", 0.0))
        if latency > 0:
            time.sleep(latency)
        with self._backend._state() as state:
            g = state["gpus"][self.index]
            if not g["energy_counter"]:
                raise EnergyCounterUnsupportedError(
                    f"GPU {self.index} ({g['name']}) has no energy counter (pre-Volta); "
                    "use sampled power instead"
                )
            now = self._backend.clock()
            period = float(g.get("counter_update_period_s", 0.0))
            if period > 0:
                now = max(math.floor(now / period) * period, g["energy_t"] or now)
            return float(g["energy_j"] + _gpu_draw_w(g) * max(0.0, now - (g["energy_t"] or now)))

    def instant_power_w(self) -> float:
        """Power drawn now, W."""
        return _gpu_draw_w(self._get())

    # Model controls (not part of the GPU interface).
    def set_load(self, load: float) -> None:
        """Set the workload's utilisation in [0, 1]; energy so far accrues at the old draw."""
        if not 0.0 <= load <= 1.0:
            raise ValueError(f"load must lie in [0, 1], got {load}")
        with self._backend._state(write=True) as state:
            g = state["gpus"][self.index]
            self._backend._accrue(g)
            g["load"] = float(load)

    def relative_throughput(self) -> float:
        """Throughput relative to the uncapped GPU at the current load and limit, in (0, 1]."""
        g = self._get()
        demand = g["idle_w"] + g["load"] * (g["busy_w"] - g["idle_w"])
        draw = _gpu_draw_w(g)
        if draw >= demand or demand <= g["idle_w"]:
            return 1.0
        return float(((draw - g["idle_w"]) / (demand - g["idle_w"])) ** g["throughput_exponent"])

    def sm_clock_mhz(self) -> float | None:
        """A Hopper-like SM clock, MHz: 1980 scaled by the relative throughput at the limit."""
        return round(1980.0 * self.relative_throughput(), 1)

    def temperature_c(self) -> float | None:
        """A temperature that follows the draw: 30 C plus 0.05 C per W (steady at once)."""
        return round(30.0 + 0.05 * _gpu_draw_w(self._get()), 1)

    def model_samples_per_s(self, batch_size: float | None = None) -> float:
        """Uncapped speed of the model at ``batch_size`` (None: its peak), samples/s (0: no model)."""
        g = self._get()
        peak = float(g.get("samples_per_s", 0.0))
        if batch_size is None or peak <= 0:
            return peak
        return peak * batch_size / (batch_size + float(g.get("half_batch", 0.0)))

    def step_time_s(self, uncapped_step_time_s: float) -> float:
        """Time one step takes at the current limit, given its uncapped time."""
        return uncapped_step_time_s / self.relative_throughput()

    def setter_calls(self) -> int:
        """How many times :meth:`set_power_limit_w` succeeded on this fake GPU (for tests)."""
        return int(self._get()["set_calls"])


class FakeBackend(GPUBackend):
    """A set of fake GPUs sharing one state (file or memory).

    Args:
        state_path: JSON state file; defaults to ``$ZEUS_BENCH_FAKE_STATE``; None keeps the
            state in this process.
        n_gpus: Number of GPUs when the state is created (default ``$ZEUS_BENCH_FAKE_GPUS`` or 1).
        clock: Time source in seconds (``time.monotonic``: shared between the processes of one
            boot).
        allow_set: Whether setting limits is permitted, when the state is created.
    """

    name = "fake"

    def __init__(
        self,
        state_path: str | Path | None = None,
        n_gpus: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        allow_set: bool = True,
    ) -> None:
        env_path = os.environ.get(STATE_ENV)
        self.state_path = Path(state_path) if state_path else (Path(env_path) if env_path else None)
        self.clock = clock
        self._n_gpus = n_gpus if n_gpus is not None else int(os.environ.get(GPUS_ENV, "1"))
        self._allow_set = allow_set
        self._memory: dict[str, Any] | None = None
        self._mutex = threading.RLock()

    def _new_state(self) -> dict[str, Any]:
        now = self.clock()
        gpus = [{**DEFAULT_GPU, "energy_t": now} for _ in range(self._n_gpus)]
        return {"version": 1, "boot": BOOT_ID, "allow_set": self._allow_set, "gpus": gpus}

    def _rebase(self, state: dict[str, Any]) -> None:
        """A state from an earlier boot: its clock times mean nothing now; energy counts on from now."""
        now = self.clock()
        for g in state["gpus"]:
            g["energy_t"] = now
        state["boot"] = BOOT_ID

    def _accrue(self, g: dict[str, Any]) -> None:
        """Move the accrued energy into ``energy_j`` before the draw changes."""
        now = self.clock()
        g["energy_j"] += _gpu_draw_w(g) * max(0.0, now - (g["energy_t"] or now))
        g["energy_t"] = now

    @contextlib.contextmanager
    def _state(self, write: bool = False) -> Iterator[dict[str, Any]]:
        with self._mutex:
            if self.state_path is None:
                if self._memory is None:
                    self._memory = self._new_state()
                yield self._memory
                return
            created = missing_parents(self.state_path.absolute())
            lock = self.state_path.with_name(self.state_path.name + ".lock")
            lock_existed = lock.exists()
            with self._locked(fcntl.LOCK_EX if write else fcntl.LOCK_SH):
                try:
                    text = self.state_path.read_text() if self.state_path.exists() else ""
                except PermissionError as exc:
                    raise self._access_error(exc) from None
                try:
                    state = _parse_state(self.state_path, text) if text.strip() else None
                except BaseException:  # a corrupt state file: leave nothing of this call behind
                    if not lock_existed:
                        lock.unlink(missing_ok=True)
                    remove_created_folders(created)
                    raise
                stale = state is not None and state.get("boot") != BOOT_ID
                if not (stale and not write):
                    fresh = state is None
                    if state is None:
                        state = self._new_state()
                    elif stale:
                        self._rebase(state)
                    yield state
                    if write or fresh or stale:
                        try:
                            atomic_write_text(self.state_path, json.dumps(state, indent=1))
                        except PermissionError as exc:
                            raise self._access_error(exc) from None
                    return
            # From an earlier boot, read under a shared lock: rebase it under the exclusive one.
            with self._state(write=True) as state:
                yield state

    @contextlib.contextmanager
    def _locked(self, how: int) -> Iterator[None]:
        """Hold the state file's ``flock`` (``<state>.lock``, created if missing).

        A lock file another user created (the daemon, as root) may be read-only to this process:
        ``flock`` works on a read-only descriptor, so it is opened read-only then.
        """
        assert self.state_path is not None
        lock = self.state_path.with_name(self.state_path.name + ".lock")
        try:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            except PermissionError:
                fd = os.open(lock, os.O_RDONLY)
        except PermissionError as exc:
            raise self._access_error(exc) from None
        try:
            fcntl.flock(fd, how)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _access_error(self, exc: PermissionError) -> DeviceError:
        """One line: this process may not use the shared state file, and what to do."""
        folder = self.state_path.parent if self.state_path is not None else Path.cwd()
        return DeviceError(
            f"{self.state_path}: permission denied to uid {os.getuid()} ({exc.filename}); every process that shares a fake "
            f"GPU (the daemon and its clients) needs to read and write its folder {folder} "
            "(docs/power-limits.md, 'Rehearse the daemon on the fake GPU')"
        )

    def configure(self, index: int | None = None, **fields: Any) -> None:
        """Change model parameters of one GPU (or all), or ``allow_set`` (tests and demos).

        ``allow_set="root"`` lets only root set limits, as NVML does (tests of ``zeus-bench gpud``).
        """
        with self._state(write=True) as state:
            if "allow_set" in fields:
                value = fields.pop("allow_set")
                state["allow_set"] = "root" if value == "root" else bool(value)
            targets = state["gpus"] if index is None else [state["gpus"][index]]
            for g in targets:
                unknown = set(fields) - set(DEFAULT_GPU)
                if unknown:
                    raise KeyError(f"unknown fake GPU field(s): {sorted(unknown)}")
                self._accrue(g)
                g.update(fields)

    def device_count(self) -> int:
        """Number of fake GPUs."""
        with self._state() as state:
            return len(state["gpus"])

    def gpu(self, index: int) -> FakeGPU:
        """The fake GPU at ``index``."""
        count = self.device_count()
        if not 0 <= index < count:
            raise NoSuchGPUError(
                f"no GPU at index {index}: the fake backend has {count} GPU(s) (0-{count - 1})"
            )
        return FakeGPU(self, index)

    def driver_version(self) -> str:
        """``fake``."""
        return "fake"

    def may_set_power_limits(self) -> bool:
        """Whether the fake state permits setting limits."""
        with self._state() as state:
            return _may_set(state)
