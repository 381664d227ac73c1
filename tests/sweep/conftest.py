"""Fixtures of the sweep tests: a fake GPU in a temporary state file and a tiny test workload."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.optional import require

torch = require("torch")

from zeus_bench.sweep.workload import TrainingWorkload  # noqa: E402

FAST = [
    *(
        "--warmup-iters",
        "1",
        "--warmup-s",
        "0",
        "--steady-s",
        "0",
        "--measure-iters",
        "3",
        "--measure-s",
        "0.25",
    ),
    *("--window-s", "0.05", "--min-windows", "3", "--max-measure-s", "2"),
]


class TinyWorkload(TrainingWorkload):
    """A linear classifier registered as ``cifar100``; OOMs above ``oom_above``, interrupts at ``interrupt_at``."""

    id = "cifar100"
    samples_per_epoch = 1000
    paper_batch_sizes = (4, 8)
    metric_name = "accuracy"
    metric_direction = "max"
    oom_above: int | None = None
    interrupt_at: int | None = None
    steps = 0

    def build_model(self):
        return torch.nn.Linear(8, 2)

    def build_optimizer(self, model, batch_size):
        return torch.optim.SGD(model.parameters(), lr=0.01 * batch_size)

    def synthetic_batches(self, batch_size, device, seed=0) -> Iterator:
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(batch_size, 8, generator=gen)
        y = (x[:, 0] > 0).long()
        while True:
            yield x.to(device), y.to(device)

    def real_loader(self, root, split, batch_size):
        data = torch.load(Path(root) / f"{split}.pt")
        x, y = data["x"], data["y"]
        return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, len(x), batch_size)]

    def train_step(self, model, optimizer, batch):
        x, y = batch
        if TinyWorkload.oom_above is not None and len(x) > TinyWorkload.oom_above:
            raise torch.OutOfMemoryError("CUDA out of memory (test)")
        if TinyWorkload.interrupt_at is not None and len(x) == TinyWorkload.interrupt_at:
            raise KeyboardInterrupt
        TinyWorkload.steps += 1
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    def evaluate(self, model, batches):
        right = total = 0
        for x, y in batches:
            right += int((model(x).argmax(1) == y).sum())
            total += len(y)
        return right / total


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh fake H200 (state file) and a private power-limit state directory."""
    state = tmp_path / "fake-gpu.json"
    monkeypatch.setenv("ZEUS_BENCH_FAKE_STATE", str(state))
    monkeypatch.setenv("ZEUS_BENCH_STATE_DIR", str(tmp_path / "zb-state"))
    monkeypatch.setenv("ZEUS_BENCH_BACKEND", "fake")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return state


@pytest.fixture
def tiny_workload(monkeypatch: pytest.MonkeyPatch) -> type[TinyWorkload]:
    """Make ``load_workload`` return :class:`TinyWorkload` for any id."""
    import zeus_bench.sweep.workload as api

    TinyWorkload.oom_above = None
    TinyWorkload.interrupt_at = None
    TinyWorkload.steps = 0
    monkeypatch.setattr(api, "load_workload", lambda workload_id, tiny=False: TinyWorkload(tiny=tiny))
    return TinyWorkload
