"""Write the saved optimizer states of tests/online/test_online_saved_states.py, and what follows them.

Run once with the code before the optimizers/ move (commit 0e72706), from the repository root:
``PYTHONPATH=. python tests/online/data/make_states.py tests/online/data``. For each online policy
it reports 4 recurrences of a synthetic job, saves the state file (``state-<policy>-v1.json``,
finish times zeroed), then runs 12 more recurrences and records their batch sizes, early stops,
best batch size and final optimizer state (``states-expected.json``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from zeus_bench.online.optimizer import BatchSizeOptimizer

BS = [16, 32, 64, 128, 256]
BASE = {16: 900.0, 32: 700.0, 64: 500.0, 128: 650.0, 256: 800.0}  # J a run; 16 never reaches


def step(opt: BatchSizeOptimizer, env: np.random.Generator) -> tuple[int, bool]:
    """One recurrence: predict, ask about an early stop half-way, report 10 epochs."""
    bs = opt.next_batch_size()
    cost = BASE[bs] * float(env.uniform(0.9, 1.1))
    stop = opt.should_stop(cost * 0.5, 5)
    opt.report(bs, cost, bs != 16, energy_j=cost, time_s=1.0, epochs=10)
    return bs, stop


def main(out: Path) -> None:
    """Write the states and the expected continuations into ``out``."""
    expected = {}
    for policy in ("zeus", "zeus-plus"):
        with tempfile.TemporaryDirectory() as tmp:
            state = Path(tmp) / "state.json"
            env = np.random.default_rng(3)
            for _ in range(4):
                step(BatchSizeOptimizer(state, BS, 128, seed=11, policy=policy), env)
            data = json.loads(state.read_text())
            for r in data["runs"]:
                r["finished_unix_s"] = 0.0
            text = json.dumps(data, indent=1) + "\n"
            (out / f"state-{policy}-v1.json").write_text(text)
            state.write_text(text)
            cont = [step(BatchSizeOptimizer(state, BS, 128, seed=11, policy=policy), env) for _ in range(12)]
            final = BatchSizeOptimizer(state, BS, 128, seed=11, policy=policy)
            expected[policy] = {
                "continuation": [[b, s] for b, s in cont],
                "best": final.best_batch_size(),
                "final_policy_state": final.policy.state_dict(),
            }
    (out / "states-expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
