"""States saved by the online optimizer before the optimizers/ move load and continue identically.

The files in data/ were written by data/make_states.py with the code of commit 0e72706 (the bandit
and the hill climb then under zeus_bench.sim.policies, chosen by isinstance); the same script
rerun on that commit reproduces them byte for byte.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from zeus_bench.online.optimizer import BatchSizeOptimizer
from zeus_bench.optimizers import OPTIMIZERS

DATA = Path(__file__).parent / "data"
BS = [16, 32, 64, 128, 256]
BASE = {16: 900.0, 32: 700.0, 64: 500.0, 128: 650.0, 256: 800.0}  # as data/make_states.py


@pytest.mark.parametrize("policy", ["zeus", "zeus-plus"])
def test_saved_state_continues_as_before(policy: str, tmp_path: Path) -> None:
    expected = json.loads((DATA / "states-expected.json").read_text())[policy]
    state = tmp_path / "state.json"
    shutil.copy(DATA / f"state-{policy}-v1.json", state)
    env = np.random.default_rng(3)
    for _ in range(4):  # the environment's draws of the 4 saved recurrences
        env.uniform(0.9, 1.1)
    seen = []
    for _ in range(12):
        opt = BatchSizeOptimizer(state, BS, 128, seed=11, policy=policy)
        assert type(opt.policy) is OPTIMIZERS[policy]
        bs = opt.next_batch_size()
        cost = BASE[bs] * float(env.uniform(0.9, 1.1))
        stop = opt.should_stop(cost * 0.5, 5)
        opt.report(bs, cost, bs != 16, energy_j=cost, time_s=1.0, epochs=10)
        seen.append([bs, stop])
    assert seen == expected["continuation"]
    final = BatchSizeOptimizer(state, BS, 128, seed=11, policy=policy)
    assert final.best_batch_size() == expected["best"]
    assert json.loads(json.dumps(final.policy.state_dict())) == expected["final_policy_state"]


def test_state_written_before_zeus_plus_existed_loads_as_zeus(tmp_path: Path) -> None:
    data = json.loads((DATA / "state-zeus-v1.json").read_text())
    del data["job"]["policy"]
    state = tmp_path / "state.json"
    state.write_text(json.dumps(data))
    opt = BatchSizeOptimizer(state, BS, 128, seed=11)
    assert type(opt.policy) is OPTIMIZERS["zeus"]
    first = json.loads((DATA / "states-expected.json").read_text())["zeus"]["continuation"][0][0]
    assert opt.next_batch_size() == first
