from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from zeus_bench.cli.main import main
from zeus_bench.core.errors import ConfigError
from zeus_bench.device.control import PowerLimitSession, read_journal, restore_from_journal
from zeus_bench.device.errors import DeviceError, GPUBusyError, ObserveModeError, PermissionDeniedError
from zeus_bench.device.fake import FakeBackend


def test_restores_previous_limit_not_max(fake_backend, fake_env):
    gpu = fake_backend.gpu(0)
    gpu.set_power_limit_w(500.0)  # the "previous" limit an operator chose
    with PowerLimitSession([gpu], observe=False) as s:
        s.set_power_limit_w(0, 250.0)
        assert gpu.power_limit_w() == 250.0
        s.set_power_limit_w(0, 300.0)
        ((_path, entry),) = read_journal(fake_env / "state")
        assert entry.previous_power_limit_w == 500.0 and entry.pid == os.getpid()
    assert gpu.power_limit_w() == 500.0
    assert read_journal(fake_env / "state") == []


def test_restores_after_exception(fake_backend):
    gpus = fake_backend.gpus()
    with pytest.raises(RuntimeError, match="boom"), PowerLimitSession(gpus, observe=False) as s:
        s.set_power_limit_w(0, 220.0)
        s.set_power_limit_w(1, 330.0)
        raise RuntimeError("boom")
    assert [g.power_limit_w() for g in gpus] == [700.0, 700.0]


@pytest.mark.parametrize(
    ("signum", "exc"),
    [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, SystemExit), (signal.SIGHUP, SystemExit)],
)
def test_restores_on_signal(fake_backend, signum, exc):
    gpu = fake_backend.gpu(0)
    old = signal.getsignal(signum)
    with pytest.raises(exc), PowerLimitSession([gpu], observe=False) as s:
        s.set_power_limit_w(0, 240.0)
        os.kill(os.getpid(), signum)
        time.sleep(1.0)  # the handler raises before this ends
    assert gpu.power_limit_w() == 700.0
    assert signal.getsignal(signum) is old


_CHILD = """
import sys, time
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.control import PowerLimitSession
with PowerLimitSession(FakeBackend().gpus(), observe=False) as s:
    s.set_power_limit_w(0, 210.0)
    print("capped", flush=True)
    time.sleep(60)
"""


def _start_capped_child():
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "capped"
    return child


def test_sigterm_child_restores(fake_env):
    gpu = FakeBackend().gpu(0)
    child = _start_capped_child()
    assert gpu.power_limit_w() == 210.0
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=20) == 128 + signal.SIGTERM
    assert gpu.power_limit_w() == 700.0


def test_sigkill_then_gpu_restore(fake_env, capsys):
    gpu = FakeBackend().gpu(0)
    gpu.set_power_limit_w(600.0)
    child = _start_capped_child()
    # While the child lives: its lock blocks others, and restore leaves its entry alone.
    with pytest.raises(GPUBusyError, match="GPU 0 is in use by another zeus-bench run \\(pid"):
        PowerLimitSession([gpu], observe=False).__enter__()
    assert restore_from_journal(FakeBackend()) == []
    child.kill()
    child.wait(timeout=20)
    assert gpu.power_limit_w() == 210.0  # left capped by the hard kill
    assert main(["gpu", "restore", "--backend", "fake", "--dry-run"]) == 0
    assert "would restore GPU 0 (GPU-fake-0) to 600 W" in capsys.readouterr().out
    assert gpu.power_limit_w() == 210.0
    assert main(["gpu", "restore", "--backend", "fake"]) == 0
    assert "restored GPU 0 (GPU-fake-0) to 600 W" in capsys.readouterr().out
    assert gpu.power_limit_w() == 600.0
    assert main(["gpu", "restore", "--backend", "fake"]) == 0
    assert "nothing to restore" in capsys.readouterr().out


def test_next_session_restores_stale_journal_first(fake_env):
    gpu = FakeBackend().gpu(0)
    child = _start_capped_child()
    child.kill()
    child.wait(timeout=20)
    assert gpu.power_limit_w() == 210.0
    with PowerLimitSession([gpu], observe=False) as s:
        assert s.previous_limits_w == {0: 700.0}  # the true previous limit, not the capped one
        assert gpu.power_limit_w() == 700.0


def test_observe_session_reports_stale_journal_without_writing(fake_env, caplog):
    gpu = FakeBackend().gpu(0)
    child = _start_capped_child()
    child.kill()
    child.wait(timeout=20)
    calls = gpu.setter_calls()
    with PowerLimitSession([gpu], observe=True):
        pass
    assert gpu.setter_calls() == calls
    assert "zeus-bench gpu restore" in caplog.text


def test_lock_blocks_second_controller_and_observer(fake_backend):
    gpu = fake_backend.gpu(0)
    with PowerLimitSession([gpu], observe=False):
        with pytest.raises(GPUBusyError, match="GPU 0 is in use"), PowerLimitSession([gpu], observe=False):
            pass
        with pytest.raises(GPUBusyError), PowerLimitSession([gpu], observe=True):
            pass
        with PowerLimitSession([fake_backend.gpu(1)], observe=False):  # another GPU is free
            pass
    with PowerLimitSession([gpu], observe=True), PowerLimitSession([gpu], observe=True):
        pass  # observers share


def test_observe_mode_never_calls_setter(fake_backend):
    gpu = fake_backend.gpu(0)
    gpu.set_power_limit_w(650.0)
    calls = gpu.setter_calls()
    with PowerLimitSession([gpu], observe=True) as s:
        s.set_power_limit_w(0, 650.0)  # the limit in force: a recorded no-op
        with pytest.raises(
            ObserveModeError,
            match="observe mode: GPU 0 runs at its current limit 650 W and cannot be set to 300 W",
        ):
            s.set_power_limit_w(0, 300.0)
        assert s.requests == [{"gpu_index": 0, "power_limit_w": 650.0, "applied": False}]
        assert s.provenance() == {
            "observe_mode": True,
            "previous_power_limits_w": {0: 650.0},
            "power_limits_w": {0: 650.0},
            "power_limit_requests": s.requests,
        }
    assert gpu.setter_calls() == calls
    assert gpu.power_limit_w() == 650.0


def test_session_misuse(fake_backend):
    s = PowerLimitSession([fake_backend.gpu(0)], observe=False)
    with pytest.raises(ConfigError, match="outside its 'with' block"):
        s.set_power_limit_w(0, 300)
    with s, pytest.raises(ConfigError, match="GPU 1 is not part of this session"):
        s.set_power_limit_w(1, 300)


def test_failed_restore_keeps_journal(fake_backend, fake_env):
    gpu = fake_backend.gpu(0)
    with (
        pytest.raises(DeviceError, match=r"could not restore.*zeus-bench gpu restore"),
        PowerLimitSession([gpu], observe=False) as s,
    ):
        s.set_power_limit_w(0, 300.0)
        fake_backend.configure(allow_set=False)
    assert len(read_journal(fake_env / "state")) == 1
    with pytest.raises(PermissionDeniedError):
        restore_from_journal(fake_backend)
    fake_backend.configure(allow_set=True)
    assert [e.previous_power_limit_w for e in restore_from_journal(fake_backend)] == [700.0]
    assert gpu.power_limit_w() == 700.0


def test_corrupt_journal_is_a_user_error(fake_env, capsys):
    folder = fake_env / "state" / "journal"
    folder.mkdir(parents=True)
    (folder / "fake-GPU-fake-0.json").write_text(json.dumps({"nonsense": 1}))
    assert main(["gpu", "restore", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unreadable power-limit journal entry" in err


def test_gpu_info_cli(fake_env, capsys):
    FakeBackend(n_gpus=2)  # state is created on first use with 2 GPUs
    FakeBackend(n_gpus=2).gpu(1).set_power_limit_w(450)
    assert main(["gpu", "info", "--backend", "fake", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["power_limit_w"] for r in rows] == [700.0, 450.0]
    assert (
        rows[0]["min_power_limit_w"] == 200.0
        and rows[0]["energy_counter"] is True
        and rows[0]["may_set_limits"] is True
    )
    FakeBackend().configure(allow_set=False)
    assert main(["gpu", "info", "--backend", "fake"]) == 0
    out = capsys.readouterr().out
    assert "Fake H200" in out and "root or CAP_SYS_ADMIN" in out


def test_gpu_cli_bad_backend(capsys):
    assert main(["gpu", "info", "--backend", "cuda"]) == 2
    assert "invalid choice: 'cuda'" in capsys.readouterr().err


def test_gpu_cli_env_bad_backend(monkeypatch, capsys):
    monkeypatch.setenv("ZEUS_BENCH_BACKEND", "tpu")
    assert main(["gpu", "info"]) == 2
    assert "unknown GPU backend 'tpu'" in capsys.readouterr().err


def _journal_entry(folder, gpu, previous_w):
    folder.mkdir(parents=True, exist_ok=True)
    entry = {
        "backend": "fake",
        "gpu_index": gpu.index,
        "gpu_uuid": gpu.uuid(),
        "previous_power_limit_w": previous_w,
        "pid": 1,
        "host": "h",
        "started_utc": "2026-11-30T00:00:00+00:00",
    }
    (folder / f"fake-{gpu.uuid()}.json").write_text(json.dumps(entry))


def test_stale_recovery_with_corrupt_journal_restores_the_rest(fake_env, fake_backend):
    g0, g1 = fake_backend.gpus()
    g1.set_power_limit_w(300.0)  # left capped by a killed run whose entry is intact
    folder = fake_env / "state" / "journal"
    _journal_entry(folder, g1, 700.0)
    (folder / "fake-GPU-fake-0.json").write_text("{not json")
    with pytest.raises(
        ConfigError, match=r"fake-GPU-fake-0\.json: unreadable power-limit journal entry"
    ) as err:
        PowerLimitSession([g0, g1], observe=False).__enter__()
    assert "\n" not in str(err.value)
    assert g1.power_limit_w() == 700.0 and not (folder / "fake-GPU-fake-1.json").exists()
    g1.set_power_limit_w(300.0)
    _journal_entry(folder, g1, 700.0)
    with pytest.raises(ConfigError, match=r"fake-GPU-fake-0\.json"):
        restore_from_journal(fake_backend)
    assert g1.power_limit_w() == 700.0
    (folder / "fake-GPU-fake-0.json").unlink()
    with PowerLimitSession([g0, g1], observe=False):  # the locks were released
        pass


def test_journal_entry_removed_when_the_setter_raises(fake_env, fake_backend):
    gpu = fake_backend.gpu(0)
    fake_backend.configure(allow_set=False)
    with PowerLimitSession([gpu], observe=False) as s:
        with pytest.raises(PermissionDeniedError):
            s.set_power_limit_w(0, 300.0)
        assert read_journal(fake_env / "state") == [] and s.changed == set()
    fake_backend.configure(allow_set=True)
    with PowerLimitSession([gpu], observe=False) as s:
        s.set_power_limit_w(0, 300.0)
        with pytest.raises(Exception, match="outside its range"):
            s.set_power_limit_w(0, 10.0)  # an entry written by an earlier success stays
        assert len(read_journal(fake_env / "state")) == 1 and s.changed == {0}
    assert gpu.power_limit_w() == 700.0


@pytest.mark.parametrize("watts", [5000.0, 10.0])
def test_a_journal_entry_outside_the_range_names_its_file_and_is_kept(fake_env, capsys, watts):
    """A journalled limit the GPU cannot take: one line naming the journal file; nothing set, nothing deleted."""
    from zeus_bench.device.journal import JournalEntry

    gpu = FakeBackend().gpu(0)
    gpu.set_power_limit_w(300)
    calls = gpu.setter_calls()
    folder = fake_env / "state" / "journal"
    folder.mkdir(parents=True)
    path = folder / JournalEntry.file_name("fake", gpu.uuid())
    entry = {"backend": "fake", "gpu_index": 0, "gpu_uuid": gpu.uuid(), "previous_power_limit_w": watts,
             "pid": 1, "host": "h", "started_utc": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    path.write_text(json.dumps(entry))
    assert main(["gpu", "restore", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and f"{watts:g} W is outside" in err, err
    assert path.is_file() and gpu.setter_calls() == calls and gpu.power_limit_w() == 300.0


def test_a_corrupt_fake_state_leaves_no_file_behind(tmp_path, monkeypatch, capsys):
    state = tmp_path / "fake.json"
    state.write_text("garbage{")
    monkeypatch.setenv("ZEUS_BENCH_FAKE_STATE", str(state))
    monkeypatch.setenv("ZEUS_BENCH_STATE_DIR", str(tmp_path / "state"))
    assert main(["gpu", "info", "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(state) in err and "not valid JSON" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.json"] and state.read_text() == "garbage{"
