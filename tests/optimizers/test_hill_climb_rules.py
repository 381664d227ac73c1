"""zeus-plus's hill-climb rules, pinned before SafeHillClimb moves (design §6.2: optimizers/hill_climb.py).

Each test here was seen failing against a single-point bug: a drift restart that keeps the
ruled-out list (or the capped set), a drift check that fires on noise.
"""

from __future__ import annotations

import pytest

from tests.optimizers.climb_toy import BS, COST, run
from zeus_bench.optimizers.hill_climb import SafeHillClimb

#: After the optimum (64) drifts, the largest size is the cheapest by far.
DRIFTED = {64: 2.0, 128: 2.5, 256: 2.6, 512: 1.1}


def test_drift_restart_forgets_what_a_prior_ruled_out() -> None:
    # 512 is ruled out by a prior; 64 is the optimum until it drifts, when 512 becomes the
    # cheapest: after the restart it must be probed and win.
    cost = dict(COST)
    opt = SafeHillClimb(BS, 256, horizon=50, ruled_out=[512])
    opt.baseline_ratio = 1.1
    before = run(opt, cost, 30)
    assert 512 not in before and opt.incumbent() == 64 and opt.resets == 0
    cost.update(DRIFTED)
    after = run(opt, cost, 20)
    assert opt.resets == 1 and 512 not in opt.ruled_out
    assert opt.incumbent() == 512 and after[-10:] == [512] * 10


def test_drift_restart_forgets_the_probes_that_failed_before() -> None:
    # Cold: the probe of 512 fails while 64 is the optimum; after 64 drifts it is tried again.
    cost = dict(COST)
    opt = SafeHillClimb(BS, 256, horizon=50)
    opt.baseline_ratio = 1.1
    before = run(opt, cost, 30)
    assert before.count(512) == 1 and 512 in opt.ruled_out and opt.incumbent() == 64
    cost.update(DRIFTED)
    after = run(opt, cost, 20)
    assert opt.resets == 1 and opt.incumbent() == 512 and after[-10:] == [512] * 10


def test_noise_within_the_rise_does_not_restart() -> None:
    # the optimum's cost rises by 30 % (under DRIFT_RISE = 40 %): no restart
    cost = dict(COST)
    opt = SafeHillClimb(BS, 256, horizon=50)
    opt.baseline_ratio = 1.1
    run(opt, cost, 30)
    cost[64] = 1.2
    run(opt, cost, 10)
    assert opt.resets == 0 and opt.incumbent() == 64


def test_promise_is_the_measured_saving_in_baseline_costs() -> None:
    # b0 = 128 ran once: 100 J in 10 epochs (the baseline's estimate, ratio 1); 64's first epoch
    # was measured at 6 J: at the incumbent's 10 epochs it promises 100 - 60 = 40 J a recurrence,
    # 0.4 baseline costs.
    opt = SafeHillClimb([64, 128], 128, horizon=0)
    opt.observe(128, 100.0, True, 10.0)
    assert opt.promise(64, 128) == 0.0  # unmeasured: no promise
    opt.epoch_costs[64] = 6.0
    assert opt.promise(64, 128) == pytest.approx(0.4)
    opt.baseline_ratio = 2.0  # the baseline costs twice the incumbent's mean
    assert opt.promise(64, 128) == pytest.approx(0.2)
    opt.epoch_costs[64] = 12.0  # dearer than the incumbent: no saving promised
    assert opt.promise(64, 128) == 0.0
