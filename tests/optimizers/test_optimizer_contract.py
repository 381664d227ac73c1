"""The optimizer contract: OPTIMIZERS drives the online optimizer for every name through one set of calls."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.online import optimizer as online
from zeus_bench.online.optimizer import BatchSizeOptimizer
from zeus_bench.optimizers import OPTIMIZERS, Optimizer, SafeHillClimb, ZeusOptimizer
from zeus_bench.optimizers.bandit import PruningThompsonSampling

BS = [16, 32, 64, 128, 256]
B0 = 128
EPOCHS = 10
SEED = 5
#: A job's cost per epoch at each batch size (J); 16 never reaches the target.
EPOCH_COST = {16: 90.0, 32: 70.0, 64: 50.0, 128: 65.0, 256: 80.0}


def _contract_methods() -> list[str]:
    """The Protocol's public methods (classmethods included)."""
    return [
        n
        for n, v in vars(Optimizer).items()
        if not n.startswith("_") and (inspect.isfunction(v) or isinstance(v, classmethod))
    ]


def _same_default(a: object, b: object) -> bool:
    nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return nan or a == b


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_has_the_contracts_signatures(name: str) -> None:
    """Same methods, same parameters, kinds and defaults as the Protocol."""
    cls = OPTIMIZERS[name]
    methods = _contract_methods()
    assert set(methods) == {
        "for_job",
        "predict",
        "stop_cost",
        "observe",
        "best_batch_size",
        "state_dict",
        "from_state_dict",
    }
    for m in methods:
        want = inspect.signature(getattr(Optimizer, m)).parameters
        got = inspect.signature(getattr(cls, m)).parameters
        assert list(got) == list(want), (name, m)
        for k, p in want.items():
            assert got[k].kind == p.kind and _same_default(got[k].default, p.default), (name, m, k)


def _job(rng: np.random.Generator, batch_size: int) -> tuple[float, bool]:
    """One run's whole cost (noisy, J) and whether it reaches the target."""
    return EPOCH_COST[batch_size] * EPOCHS * float(rng.uniform(0.9, 1.1)), batch_size != 16


def _drive(opt: Optimizer, rng: np.random.Generator, best: list[float]) -> tuple[int, bool]:
    """One recurrence through the contract only; early stop checked after the first epoch."""
    b = opt.predict()
    total, reached = _job(rng, b)
    epoch = total / EPOCHS
    default = 2.0 * min(best) if best else math.inf
    cap = opt.stop_cost(default, epoch)
    if (cap < default and epoch + epoch > cap) or epoch > default:
        opt.observe(b, epoch, False, 1.0)
        return b, True
    opt.observe(b, total, reached, float(EPOCHS))
    if reached:
        best.append(total)
    return b, False


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_online_optimizer_is_the_registered_optimizer_driven_by_the_contract(
    name: str, tmp_path: Path
) -> None:
    """Twenty recurrences, each a fresh BatchSizeOptimizer from its state file, against the same
    OPTIMIZERS[name] driven in memory by the contract's calls: the same batch sizes, the same
    early stops, the same final state (told 50 recurrences, as zeus-plus assumed before the anytime default)."""
    state = tmp_path / "job.json"
    reference = OPTIMIZERS[name].for_job(BS, B0, seed=SEED, window=0, prune_rounds=2, recurrences=50)
    env_a, env_b = np.random.default_rng(1), np.random.default_rng(1)
    best: list[float] = []
    online_runs, reference_runs = [], []
    for _ in range(20):
        opt = BatchSizeOptimizer(
            state, BS, B0, seed=SEED, policy=name, recurrences=50
        )  # a fresh process each run
        assert type(opt.policy) is OPTIMIZERS[name]
        b = opt.next_batch_size()
        total, reached = _job(env_a, b)
        stop = opt.should_stop(total / EPOCHS, epochs_done=1)
        if stop:
            opt.report(b, total / EPOCHS, False, early_stopped=True, epochs=1)
        else:
            opt.report(b, total, reached, epochs=EPOCHS)
        online_runs.append((b, stop))
        reference_runs.append(_drive(reference, env_b, best))
    assert online_runs == reference_runs
    assert len({b for b, _ in online_runs}) >= 3  # both explore
    # zeus-plus stops its probe of 256 after one epoch (its cap); zeus stops only at beta x best.
    assert any(stop for _, stop in online_runs) == (name == "zeus-plus")
    final = BatchSizeOptimizer(state, BS, B0, seed=SEED, policy=name, recurrences=50)
    assert final.policy.state_dict() == reference.state_dict()
    assert final.best_batch_size() == reference.best_batch_size() == 64


def test_zeus_optimizer_is_the_bandit_draw_for_draw() -> None:
    """Under the contract the bandit predicts, stops and saves exactly as PruningThompsonSampling."""
    face = ZeusOptimizer.for_job(BS, B0, seed=SEED)
    bandit = PruningThompsonSampling(BS, B0, np.random.default_rng(SEED))
    env = np.random.default_rng(2)
    for _ in range(30):
        b = face.predict()
        assert b == bandit.predict()
        cost, reached = _job(env, b)
        assert face.stop_cost(123.0, cost / EPOCHS) == 123.0
        face.observe(b, cost, reached, float(EPOCHS), overhead=1.0)
        bandit.observe(b, cost, reached)
    assert face.state_dict() == bandit.state_dict()
    assert isinstance(ZeusOptimizer.from_state_dict(bandit.state_dict()), ZeusOptimizer)


def test_hill_climb_for_job_is_its_default_construction() -> None:
    opt = SafeHillClimb.for_job(BS, B0, seed=3, window=4, prune_rounds=7)
    assert opt.state_dict() == SafeHillClimb(BS, B0, window=4).state_dict()
    assert opt.horizon == 0  # the number of runs unknown: the anytime budget (the online default)
    assert SafeHillClimb.for_job(BS, B0, recurrences=30).horizon == 30


def test_online_names_are_the_registry_and_a_saved_unknown_name_is_refused(tmp_path: Path) -> None:
    assert online.POLICY_NAMES == tuple(OPTIMIZERS) == ("zeus", "zeus-plus")
    state = tmp_path / "s.json"
    BatchSizeOptimizer(state, BS, B0).report(B0, 10.0, True)
    state.write_text(state.read_text().replace('"policy": "zeus"', '"policy": "zeus-minus"'))
    with pytest.raises(ConfigError, match="unknown optimizer 'zeus-minus'"):
        BatchSizeOptimizer(state, BS, B0)
