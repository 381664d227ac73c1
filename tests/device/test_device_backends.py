from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from fake_pynvml import (
    NVML_ERROR_LIBRARY_NOT_FOUND,
    NVML_ERROR_NO_PERMISSION,
    NVML_ERROR_NOT_SUPPORTED,
    make,
)

from zeus_bench.core.errors import ConfigError, ZeusBenchError
from zeus_bench.device import get_backend
from zeus_bench.device.errors import (
    EnergyCounterUnsupportedError,
    NoSuchGPUError,
    NVMLUnavailableError,
    PermissionDeniedError,
    PowerLimitOutOfRangeError,
)
from zeus_bench.device.fake import BOOT_ID, DEFAULT_GPU, FakeBackend
from zeus_bench.device.fake_load import ModelClock
from zeus_bench.device.nvml import NVMLBackend


# get_backend ------------------------------------------------------------------------------
def test_get_backend_by_name_and_env(fake_env, monkeypatch):
    assert get_backend("fake").name == "fake"
    monkeypatch.setenv("ZEUS_BENCH_BACKEND", "fake")
    assert get_backend().name == "fake"
    assert get_backend(None).name == "fake"


def test_get_backend_unknown(monkeypatch):
    with pytest.raises(ConfigError, match=r"unknown GPU backend 'cuda'.*nvml, fake"):
        get_backend("cuda")
    monkeypatch.setenv("ZEUS_BENCH_BACKEND", "rocm")
    with pytest.raises(ConfigError, match="ZEUS_BENCH_BACKEND"):
        get_backend()


# fake backend -----------------------------------------------------------------------------
def test_fake_model_power_and_throughput(fake_backend):
    gpu = fake_backend.gpu(0)
    assert gpu.instant_power_w() == 80.0  # idle
    gpu.set_load(1.0)
    assert gpu.instant_power_w() == 600.0  # uncapped busy draw
    assert gpu.relative_throughput() == 1.0
    gpu.set_power_limit_w(340.0)
    assert gpu.instant_power_w() == 340.0
    assert gpu.relative_throughput() == pytest.approx(0.5**0.4)
    assert gpu.step_time_s(1.0) == pytest.approx(0.5**-0.4)
    assert gpu.setter_calls() == 1


def test_fake_energy_integrates_with_clock(fake_env):
    now = [1000.0]
    b = FakeBackend(clock=lambda: now[0])
    gpu = b.gpu(0)
    e0 = gpu.total_energy_j()
    now[0] += 10.0
    assert gpu.total_energy_j() - e0 == pytest.approx(800.0)  # 80 W idle for 10 s
    gpu.set_load(1.0)
    now[0] += 2.0
    gpu.set_power_limit_w(300.0)
    now[0] += 1.0
    assert gpu.total_energy_j() - e0 == pytest.approx(800.0 + 1200.0 + 300.0)


def test_fake_energy_runs_on_the_monotonic_clock():
    # A CI run once saw a sweep point at 7,044 W on a 600 W fake: the host's wall clock had been
    # stepped while the counter integrated it (the monitor's windows are on the monotonic clock).
    # The fake's clock, and the speed model's clock, are the host's monotonic one.
    assert FakeBackend(state_path=None).clock is time.monotonic
    t0 = time.monotonic()
    assert t0 <= ModelClock()() <= time.monotonic()


@pytest.mark.parametrize("boot", ["an-earlier-boot", None, "absent"])
def test_fake_state_from_an_earlier_boot_counts_on_from_now(fake_env, boot):
    # Monotonic times of another boot (or of a file written before it named its boot) mean
    # nothing now: the energy so far is kept and counts on from the first open.
    state = {"version": 1, "allow_set": True, "gpus": [{**DEFAULT_GPU, "energy_j": 500.0, "energy_t": 1e12}]}
    if boot != "absent":
        state["boot"] = boot
    path = fake_env / "fake.json"
    path.write_text(json.dumps(state))
    t0 = time.monotonic()
    gpu = FakeBackend().gpu(0)
    e0 = gpu.total_energy_j()
    saved = json.loads(path.read_text())
    opened = saved["gpus"][0]["energy_t"]
    assert saved["boot"] == BOOT_ID and t0 <= opened <= time.monotonic()
    assert e0 == pytest.approx(500.0, abs=80.0 * (time.monotonic() - t0) + 1e-9)
    time.sleep(0.05)
    e1, t1 = gpu.total_energy_j(), time.monotonic()
    assert e1 - 500.0 == pytest.approx(
        80.0 * (t1 - opened), abs=80.0 * 0.01
    )  # idle draw since the first open
    if BOOT_ID is not None and boot is None:
        assert saved["boot"] != boot


def test_fake_state_shared_between_processes(fake_env):
    gpu = FakeBackend().gpu(0)
    gpu.set_power_limit_w(450.0)
    code = "from zeus_bench.device.fake import FakeBackend; g = FakeBackend().gpu(0); print(g.power_limit_w()); g.set_power_limit_w(275)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "450.0"
    assert gpu.power_limit_w() == 275.0


def test_fake_errors(fake_backend):
    with pytest.raises(NoSuchGPUError, match="no GPU at index 5: the fake backend has 2"):
        fake_backend.gpu(5)
    gpu = fake_backend.gpu(1)
    with pytest.raises(PowerLimitOutOfRangeError, match="150 W outside its range 200-700 W"):
        gpu.set_power_limit_w(150)
    fake_backend.configure(allow_set=False)
    assert not fake_backend.may_set_power_limits()
    with pytest.raises(PermissionDeniedError, match=r"CAP_SYS_ADMIN or root.*observe mode"):
        gpu.set_power_limit_w(300)
    fake_backend.configure(1, energy_counter=False)
    assert not gpu.supports_energy_counter()
    with pytest.raises(EnergyCounterUnsupportedError, match="pre-Volta"):
        gpu.total_energy_j()
    assert gpu.setter_calls() == 0


def test_fake_bad_load(fake_backend):
    with pytest.raises(ValueError, match="load"):
        fake_backend.gpu(0).set_load(1.5)


# NVML backend on a fake pynvml ------------------------------------------------------------
def test_nvml_units_converted_once():
    nvml = make(n_gpus=2, limit_mw=650_000, energy_mj=5_000_250)
    b = NVMLBackend(nvml)
    assert b.device_count() == 2
    assert b.driver_version() == "580.159.04"
    g = b.gpu(1)
    assert g.name() == "NVIDIA H200"
    assert g.uuid() == "GPU-0000-1"
    assert g.power_limit_range_w() == (200.0, 700.0)
    assert g.default_power_limit_w() == 700.0
    assert g.power_limit_w() == 650.0
    assert g.total_energy_j() == pytest.approx(5000.25)
    assert g.supports_energy_counter()
    assert g.instant_power_w() == pytest.approx(498.765)  # the instant field, not GetPowerUsage
    g.set_power_limit_w(312.5)
    assert nvml.set_calls == [(1, 312_500)]
    assert g.power_limit_w() == 312.5


def test_forbid_power_limit_writes_blocks_setter_until_undone():
    from zeus_bench.device.errors import ObserveModeError
    from zeus_bench.device.nvml import forbid_power_limit_writes

    nvml = make()
    g = NVMLBackend(nvml).gpu(0)
    undo = forbid_power_limit_writes(nvml)
    with pytest.raises(ObserveModeError, match="power-limit writes are forbidden"):
        g.set_power_limit_w(300.0)
    assert nvml.set_calls == []
    undo()
    g.set_power_limit_w(300.0)
    assert nvml.set_calls == [(0, 300_000)]


def test_nvml_instant_power_falls_back_to_power_usage():
    g = NVMLBackend(make(instant_mw=None, power_mw=401_000)).gpu(0)
    assert g.instant_power_w() == pytest.approx(401.0)
    assert g.instant_power_w() == pytest.approx(401.0)


def test_nvml_missing_library():
    with pytest.raises(NVMLUnavailableError, match=r"driver installed.*--backend fake"):
        NVMLBackend(make(init_error=NVML_ERROR_LIBRARY_NOT_FOUND))


def test_nvml_no_such_gpu():
    with pytest.raises(NoSuchGPUError, match="no GPU at index 3: NVML sees 2 GPU\\(s\\) \\(0-1\\)"):
        NVMLBackend(make(n_gpus=2)).gpu(3)


def test_nvml_energy_counter_unsupported():
    g = NVMLBackend(make(energy_error=NVML_ERROR_NOT_SUPPORTED)).gpu(0)
    assert not g.supports_energy_counter()
    with pytest.raises(EnergyCounterUnsupportedError, match=r"pre-Volta.*sampled power"):
        g.total_energy_j()


def test_nvml_permission_denied_message():
    nvml = make(set_error=NVML_ERROR_NO_PERMISSION)
    g = NVMLBackend(nvml).gpu(0)
    with pytest.raises(PermissionDeniedError, match=r"CAP_SYS_ADMIN or root.*observe mode"):
        g.set_power_limit_w(300)


def test_nvml_out_of_range_never_calls_setter():
    nvml = make()
    g = NVMLBackend(nvml).gpu(0)
    with pytest.raises(PowerLimitOutOfRangeError, match="800 W outside its range 200-700 W"):
        g.set_power_limit_w(800)
    assert nvml.set_calls == []


def test_all_device_errors_are_user_errors():
    for exc in (
        NVMLUnavailableError,
        NoSuchGPUError,
        EnergyCounterUnsupportedError,
        PermissionDeniedError,
        PowerLimitOutOfRangeError,
    ):
        assert issubclass(exc, ZeusBenchError)


@pytest.mark.gpu
def test_nvml_real_gpu_reads():
    b = get_backend("nvml")
    g = b.gpu(0)
    lo, hi = g.power_limit_range_w()
    assert 0 < lo <= g.power_limit_w() <= hi
    assert g.instant_power_w() > 0
    if g.supports_energy_counter():
        assert g.total_energy_j() > 0


def test_nvml_other_errors_are_translated():
    from fake_pynvml import NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_GPU_IS_LOST

    from zeus_bench.device.errors import DeviceError

    g = NVMLBackend(make(energy_error=NVML_ERROR_GPU_IS_LOST)).gpu(0)
    with pytest.raises(
        DeviceError, match="GPU 0: the GPU fell off the bus while trying to read the energy counter"
    ):
        g.total_energy_j()
    g = NVMLBackend(make(set_error=NVML_ERROR_NOT_SUPPORTED)).gpu(0)
    with pytest.raises(PermissionDeniedError, match="does not allow setting the power limit"):
        g.set_power_limit_w(300)
    g = NVMLBackend(make(set_error=NVML_ERROR_DRIVER_NOT_LOADED)).gpu(0)
    with pytest.raises(NVMLUnavailableError, match="cannot set the power limit: Driver Not Loaded"):
        g.set_power_limit_w(300)


def _flaky(fn, failures: list[int]):
    """``fn``, failing with the listed NVML error codes on its first calls."""
    from fake_pynvml import NVMLError

    def call(*args):
        if failures:
            raise NVMLError(failures.pop(0))
        return fn(*args)

    return call


def test_nvml_transient_error_does_not_drop_instant_power_for_good():
    nvml = make(instant_mw=498_765, power_mw=512_345)
    nvml.nvmlDeviceGetFieldValues = _flaky(nvml.nvmlDeviceGetFieldValues, [999])
    g = NVMLBackend(nvml).gpu(0)
    assert g.instant_power_w() == pytest.approx(512.345)  # this read falls back to GetPowerUsage
    assert g.instant_power_w() == pytest.approx(498.765)  # the next reads the instant field again


def test_nvml_transient_counter_error_is_not_unsupported():
    from zeus_bench.device.errors import DeviceError

    nvml = make(energy_mj=1_000)
    nvml.nvmlDeviceGetTotalEnergyConsumption = _flaky(nvml.nvmlDeviceGetTotalEnergyConsumption, [999])
    g = NVMLBackend(nvml).gpu(0)
    with pytest.raises(DeviceError, match="GPU 0: cannot check the energy counter: NVML error 999"):
        g.supports_energy_counter()
    assert g.supports_energy_counter() and g.total_energy_j() == 1.0


def test_every_nvml_call_goes_through_one_translation():
    from fake_pynvml import NVML_ERROR_GPU_IS_LOST

    from zeus_bench.device.errors import DeviceError

    nvml = make()
    b = NVMLBackend(nvml)
    g = b.gpu(0)
    for name in dir(nvml):
        if name.startswith("nvmlDevice"):
            setattr(nvml, name, _flaky(getattr(nvml, name), [NVML_ERROR_GPU_IS_LOST] * 100))
    for method, args in (
        ("name", ()),
        ("uuid", ()),
        ("power_limit_range_w", ()),
        ("default_power_limit_w", ()),
        ("power_limit_w", ()),
        ("supports_energy_counter", ()),
        ("total_energy_j", ()),
        ("instant_power_w", ()),
    ):
        with pytest.raises(DeviceError, match="GPU 0: the GPU fell off the bus"):
            getattr(g, method)(*args)
