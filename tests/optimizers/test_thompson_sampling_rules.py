"""Thompson Sampling's draws over overlapping posteriors (optimizers/bandit.py after the redesign).

Seen failing against a fast-path bug: the approximate posterior of an arm built from the wrong
running sum (its spread lost), which made every prediction the cheapest mean's.
"""

from __future__ import annotations

import numpy as np

from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.optimizers.posterior import posterior


def test_overlapping_arms_are_both_sampled_as_their_posteriors_say() -> None:
    # 8 costs 10 +- 4, 16 costs 11 +- 4 (two observations each, never pruned): the posteriors
    # overlap, so Thompson Sampling picks the dearer arm a fair share of the time.
    opt = PruningThompsonSampling([8, 16], 8, np.random.default_rng(7), prune_rounds=0)
    for b, c in [(8, 6.0), (8, 14.0), (16, 7.0), (16, 15.0)]:
        opt.observe(b, c, True)
    picks = [opt.predict() for _ in range(400)]
    share = picks.count(16) / len(picks)
    # P(sample of 16 beats 8's): rewards -cost, posterior N(-mean, 4 / sqrt(2)) each
    (m8, s8), (m16, s16) = posterior([-6.0, -14.0]), posterior([-7.0, -15.0])
    from math import erf, sqrt

    p = 0.5 * (1 + erf((m16 - m8) / sqrt(2 * (s8**2 + s16**2))))
    assert abs(share - p) < 0.08, (share, p)
    assert 0.25 < share < 0.5
