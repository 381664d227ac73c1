"""Hand-made simulation rows with known values, shaped like `zeus-bench simulate` output."""

from __future__ import annotations

import itertools

import pandas as pd

POLICIES = ["zeus", "baseline", "max-batch", "oracle", "grid-search", "bs-only", "pl-only"]
# Energy (J) and time (s) of one recurrence per policy; zeus improves after recurrence 5.
ENERGY = {
    "zeus": 60.0,
    "baseline": 100.0,
    "max-batch": 80.0,
    "oracle": 50.0,
    "grid-search": 70.0,
    "bs-only": 65.0,
    "pl-only": 90.0,
}
TIME = {
    "zeus": 12.0,
    "baseline": 10.0,
    "max-batch": 8.0,
    "oracle": 11.0,
    "grid-search": 12.0,
    "bs-only": 11.0,
    "pl-only": 10.5,
}


def make_sim(
    workloads=("cifar100", "librispeech"),
    seeds=(1, 2, 3),
    recurrences=20,
    eta=0.5,
    beta=2.0,
    gpu="v100",
    policies=POLICIES,
) -> pd.DataFrame:
    """One row per try. Seed s scales every energy by (1 + 0.01 * (s - 2)) except the baseline's."""
    rows = []
    for w, p, s, r in itertools.product(workloads, policies, seeds, range(1, recurrences + 1)):
        scale = 1.0 if p == "baseline" else 1.0 + 0.01 * (s - 2)
        energy, time = ENERGY[p] * scale, TIME[p]
        tries = [(energy, time, True)]
        if p == "zeus" and r <= 5:  # exploration: a failed try first, then a success
            tries = [(energy, time, False), (energy, time, True)]
        for a, (e, t, ok) in enumerate(tries, start=1):
            rows.append(
                {
                    "gpu": gpu,
                    "workload": w,
                    "policy": p,
                    "seed": s,
                    "eta": eta,
                    "beta": beta,
                    "recurrence": r,
                    "attempt": a,
                    "batch_size": 64 if p == "zeus" and r > 5 else 128,
                    "power_limit_w": 150.0 if p == "zeus" else 250.0,
                    "epochs": 5,
                    "energy_j": e,
                    "time_s": t,
                    "cost": eta * e + (1 - eta) * 250.0 * t,
                    "reached": ok,
                    "profiled": r == 1,
                    "window": 0,
                    # Expected figures of the policy's configuration: its unscaled energy and time.
                    "expected_energy_j": ENERGY[p],
                    "expected_time_s": TIME[p],
                    "expected_cost": eta * ENERGY[p] + (1 - eta) * 250.0 * TIME[p],
                }
            )
    return pd.DataFrame(rows)
