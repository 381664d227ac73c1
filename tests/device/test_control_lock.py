"""The power-limit journal and lock rules, pinned before control.py moves.

Each test here was seen failing against a single-point bug: ``gpu restore`` taking the GPU lock
shared (so it changes a limit under an observer), a journal entry kept after a restore.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zeus_bench.cli.main import main
from zeus_bench.device.control import PowerLimitSession, read_journal, restore_from_journal
from zeus_bench.device.errors import GPUBusyError
from zeus_bench.device.fake import FakeBackend


def _stale_entry(backend: FakeBackend, state: Path, previous_w: float, capped_w: float) -> Path:
    """A journal entry as a killed run leaves it: the GPU capped, the entry naming its old limit."""
    gpu = backend.gpu(0)
    gpu.set_power_limit_w(previous_w)
    with PowerLimitSession([gpu], observe=False) as s:
        s.set_power_limit_w(0, capped_w)
        ((path, _),) = read_journal(state)
        text = path.read_text()
    assert gpu.power_limit_w() == previous_w and not path.exists()
    gpu.set_power_limit_w(capped_w)
    path.write_text(text)
    return path


def test_restore_waits_for_an_observer_of_the_gpu(fake_backend: FakeBackend, fake_env: Path, capsys) -> None:
    state = fake_env / "state"
    path = _stale_entry(fake_backend, state, 500.0, 250.0)
    gpu = fake_backend.gpu(0)
    calls = gpu.setter_calls()
    with PowerLimitSession([gpu], observe=True):
        # the observer holds the lock shared: restoring must take it exclusive, so it backs off
        assert restore_from_journal(fake_backend, state) == []
        assert main(["gpu", "restore", "--backend", "fake"]) == 0
        assert gpu.power_limit_w() == 250.0 and gpu.setter_calls() == calls
        assert path.exists()
        # and a controller cannot start on it either
        with pytest.raises(GPUBusyError):
            PowerLimitSession([gpu], observe=False).__enter__()
    capsys.readouterr()
    (entry,) = restore_from_journal(fake_backend, state)
    assert entry.previous_power_limit_w == 500.0
    assert gpu.power_limit_w() == 500.0 and not path.exists()
    assert read_journal(state) == []
    assert restore_from_journal(fake_backend, state) == []  # idempotent: nothing left


def test_dry_run_restores_nothing_and_keeps_the_entry(fake_backend: FakeBackend, fake_env: Path) -> None:
    state = fake_env / "state"
    path = _stale_entry(fake_backend, state, 450.0, 200.0)
    gpu = fake_backend.gpu(0)
    calls = gpu.setter_calls()
    (entry,) = restore_from_journal(fake_backend, state, dry_run=True)
    assert entry.previous_power_limit_w == 450.0
    assert gpu.power_limit_w() == 200.0 and gpu.setter_calls() == calls and path.exists()


def test_restore_leaves_a_limit_already_back_untouched(fake_backend: FakeBackend, fake_env: Path) -> None:
    state = fake_env / "state"
    path = _stale_entry(fake_backend, state, 450.0, 200.0)
    gpu = fake_backend.gpu(0)
    gpu.set_power_limit_w(450.0)  # someone already put it back
    calls = gpu.setter_calls()
    (entry,) = restore_from_journal(fake_backend, state)
    assert entry.previous_power_limit_w == 450.0
    assert gpu.setter_calls() == calls and not path.exists()


def test_default_state_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from zeus_bench.device.control import STATE_DIR_ENV, default_state_dir

    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "explicit"))
    assert default_state_dir() == tmp_path / "explicit"
    monkeypatch.delenv(STATE_DIR_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == tmp_path / "xdg" / "zeus-bench"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir() == tmp_path / "home" / ".local" / "state" / "zeus-bench"
