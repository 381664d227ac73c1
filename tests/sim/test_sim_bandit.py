"""The batch-size optimizer: pruning order, Thompson Sampling, window, exact save/restore."""

from __future__ import annotations

import json

import numpy as np
import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.bandit import PruningThompsonSampling

BS = [8, 16, 32, 64, 128]


def drive(opt: PruningThompsonSampling, outcome: dict[int, tuple[float, bool]], n: int) -> list[int]:
    asked = []
    for _ in range(n):
        b = opt.predict()
        asked.append(b)
        cost, reached = outcome[b]
        opt.observe(b, cost, reached)
    return asked


def test_pruning_order_two_rounds() -> None:
    # 8 fails, 128 fails; 32 is cheapest. Round 1 from b0=64: down 64, 32, 16, 8(fail); up 128(fail).
    # Round 2 from 32 over the good {16, 32, 64}: down 32, 16; up 64. Then bandit arms {16, 32, 64}.
    outcome = {8: (5.0, False), 16: (3.0, True), 32: (1.0, True), 64: (2.0, True), 128: (9.0, False)}
    opt = PruningThompsonSampling(BS, 64, np.random.default_rng(0))
    asked = drive(opt, outcome, 8)
    assert asked == [64, 32, 16, 8, 128, 32, 16, 64]
    assert not opt.pruning
    assert opt.arms == [16, 32, 64]
    assert opt.best_batch_size() == 32


def test_failure_ends_direction_not_round() -> None:
    # 32 fails: the downward direction stops there (16, 8 never tried), upward goes on.
    outcome = {8: (1.0, True), 16: (1.0, True), 32: (5.0, False), 64: (2.0, True), 128: (3.0, True)}
    opt = PruningThompsonSampling(BS, 64, np.random.default_rng(0), prune_rounds=1)
    asked = drive(opt, outcome, 3)
    assert asked == [64, 32, 128]
    assert opt.arms == [64, 128]


def test_thompson_explores_each_arm_twice_then_exploits() -> None:
    outcome = {b: (float(b), True) for b in BS}
    opt = PruningThompsonSampling(BS, 8, np.random.default_rng(3), prune_rounds=0)
    asked = drive(opt, outcome, 10)
    assert sorted(asked) == sorted(BS * 2)
    # Zero variance: every sample is its mean, the cheapest arm always wins.
    assert drive(opt, outcome, 5) == [8] * 5
    assert opt.best_batch_size() == 8


def test_window_forgets_old_costs() -> None:
    opt = PruningThompsonSampling([8, 16], 8, np.random.default_rng(0), prune_rounds=0, window=2)
    for b, c in [(8, 1.0), (8, 1.0), (16, 2.0), (16, 2.0)]:
        opt.observe(b, c, True)
    assert opt.best_batch_size() == 8
    opt.observe(8, 10.0, True)
    opt.observe(8, 10.0, True)  # drift: 8 became expensive; window 2 sees only the new costs
    assert opt.best_batch_size() == 16
    assert opt.predict() == 16
    unbounded = PruningThompsonSampling([8, 16], 8, np.random.default_rng(0), prune_rounds=0)
    for b, c in [(8, 1.0), (8, 1.0), (16, 2.0), (16, 2.0), (8, 2.5), (8, 2.5)]:
        unbounded.observe(b, c, True)
    assert unbounded.best_batch_size() == 8  # mean 1.75 < 2.0


def test_unexpected_observation_is_not_fed_to_pruning() -> None:
    opt = PruningThompsonSampling(BS, 64, np.random.default_rng(0))
    assert opt.predict() == 64
    opt.observe(128, 1.0, True)  # a concurrent job's result: kept, not fed to pruning
    assert opt.predict() == 64
    assert opt.history == [(128, 1.0, True)]


@pytest.mark.parametrize("window", [0, 3])
@pytest.mark.parametrize("cut", [0, 2, 6, 9, 20])
def test_restore_continues_exactly(window: int, cut: int) -> None:
    def step(opt: PruningThompsonSampling, k: int) -> tuple[int, float, bool]:
        b = opt.predict()
        c = float(b) / 10 + float(np.sin(k * 7.3 + b))
        reached = b != 8 or k > 10
        opt.observe(b, c, reached)
        return b, c, reached

    a = PruningThompsonSampling(BS, 32, np.random.default_rng(7), window=window)
    for k in range(cut):
        step(a, k)
    saved = json.loads(json.dumps(a.state_dict()))
    b = PruningThompsonSampling.from_state_dict(saved)
    tail_a = [step(a, k) for k in range(cut, cut + 40)]
    tail_b = [step(b, k) for k in range(cut, cut + 40)]
    assert tail_a == tail_b
    assert a.best_batch_size() == b.best_batch_size()
    assert a.state_dict() == b.state_dict()


def test_same_seed_same_choices_different_seeds_differ() -> None:
    def run(seed: int) -> list[int]:
        opt = PruningThompsonSampling(BS, 32, np.random.default_rng(seed), prune_rounds=0)
        noise = np.random.default_rng(100)
        out = []
        for _ in range(60):
            b = opt.predict()
            out.append(b)
            opt.observe(b, 1.0 + noise.normal(), True)
        return out

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="default batch size 7"):
        PruningThompsonSampling(BS, 7, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="at least one"):
        PruningThompsonSampling([], 7, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="window"):
        PruningThompsonSampling(BS, 8, np.random.default_rng(0), window=-1)
    opt = PruningThompsonSampling(BS, 8, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="batch size 9"):
        opt.observe(9, 1.0, True)
    with pytest.raises(ConfigError, match="version"):
        PruningThompsonSampling.from_state_dict({"version": 99})


def test_a_round_with_no_good_batch_size_keeps_the_cheapest_known() -> None:
    # Round 1 from b0 = 32: 32, 16, 8 reach (16 cheapest), 64 and 128 too; round 2 from 16:
    # every try is early-stopped (not reached). The paper's code raises (no arm); the optimizer
    # keeps 16, the cheapest batch size that has reached the target, as its only arm.
    opt = PruningThompsonSampling(BS, 32, np.random.default_rng(0))
    round1 = {8: (3.0, True), 16: (1.0, True), 32: (2.0, True), 64: (4.0, True), 128: (5.0, True)}
    assert drive(opt, round1, 5) == [32, 16, 8, 64, 128]
    early_stopped = {b: (0.5, False) for b in BS}
    assert drive(opt, early_stopped, 2) == [16, 32]  # down from 16 fails; up from 32 fails
    assert not opt.pruning
    assert opt.arms == [16]
    assert drive(opt, early_stopped, 3) == [16, 16, 16]
    assert opt.best_batch_size() == 16
