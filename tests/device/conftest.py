from __future__ import annotations

from pathlib import Path

import pytest

from zeus_bench.device.fake import FakeBackend


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh fake-GPU state file and state directory, exported through the environment."""
    monkeypatch.setenv("ZEUS_BENCH_FAKE_STATE", str(tmp_path / "fake.json"))
    monkeypatch.setenv("ZEUS_BENCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("ZEUS_BENCH_BACKEND", raising=False)
    monkeypatch.delenv("ZEUS_BENCH_FAKE_GPUS", raising=False)
    return tmp_path


@pytest.fixture
def fake_backend(fake_env: Path) -> FakeBackend:
    return FakeBackend(n_gpus=2)
