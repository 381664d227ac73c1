"""zeus-plus online: the same SafeHillClimb through BatchSizeOptimizer, persisted between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.online.optimizer import BatchSizeOptimizer
from zeus_bench.optimizers.hill_climb import SafeHillClimb

BS = [32, 64, 128, 256]


def cost_of(b: int) -> float:
    """A job whose cost falls towards 128 and rises after."""
    return {32: 300.0, 64: 150.0, 128: 100.0, 256: 400.0}[b]


def test_online_zeus_plus_walks_to_the_cheapest_and_resumes(tmp_path: Path) -> None:
    state = tmp_path / "job.json"
    seen = []
    for _ in range(40):
        opt = BatchSizeOptimizer(state, BS, 32, policy="zeus-plus")  # a fresh process each run
        b = opt.next_batch_size()
        seen.append(b)
        c = cost_of(b)
        cap = opt.policy.stop_cost(float("inf"))
        reached = c <= cap
        opt.report(b, min(c, cap), reached, epochs=10)
    assert isinstance(opt.policy, SafeHillClimb)
    assert opt.best_batch_size() == 128
    assert seen[0] == 32 and seen[-5:] == [128] * 5
    assert json.loads(state.read_text())["job"]["policy"] == "zeus-plus"
    # 256 is clearly dearer than 128: probed at most once.
    assert seen.count(256) <= 1


def test_online_zeus_plus_stops_a_hopeless_larger_probe_after_one_epoch(tmp_path: Path) -> None:
    opt = BatchSizeOptimizer(tmp_path / "s.json", [64, 128], 64, policy="zeus-plus")
    assert opt.next_batch_size() == 64
    opt.report(64, 100.0, True, epochs=10)
    assert opt.next_batch_size() == 128  # the probe
    # Its first epoch costs 12 J: x 10 epochs of the incumbent = 120 J > 100 J, it cannot win.
    assert opt.should_stop(12.0, epochs_done=1)
    assert not opt.should_stop(9.0, epochs_done=1)


def test_online_policy_mismatch_and_unknown(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    opt = BatchSizeOptimizer(state, BS, 32, policy="zeus-plus")
    opt.report(opt.next_batch_size(), 10.0, True)
    with pytest.raises(ConfigError, match="different policy"):
        BatchSizeOptimizer(state, BS, 32, policy="zeus")
    with pytest.raises(ConfigError, match="unknown online policy"):
        BatchSizeOptimizer(tmp_path / "t.json", BS, 32, policy="zeus++")
