"""A noiseless toy job for SafeHillClimb's tests: the batch sizes and the loop that drives it."""

from __future__ import annotations

import math

from zeus_bench.optimizers.hill_climb import SafeHillClimb

BS = [16, 32, 64, 128, 256, 512]
#: A unimodal cost curve over BS (J a run), least at 64.
COST = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}


def run(opt: SafeHillClimb, cost: dict[int, float], n: int) -> list[int]:
    """Drive the optimizer for n recurrences on a noiseless job; returns the batch sizes run."""
    seen = []
    for _ in range(n):
        while True:
            b = opt.predict()
            seen.append(b)
            cap = opt.stop_cost(math.inf)
            reached = cost[b] <= cap
            opt.observe(b, min(cost[b], cap), reached, 10.0)
            if reached:
                break
    return seen
