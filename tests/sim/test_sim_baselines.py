"""The standard bandit baselines (eps-greedy, ucb1, sw-ts, conservative-ucb, bo-ei) on toy jobs whose answer is known.

Toy jobs (``sim_toy``): every batch size's epoch costs 200 J at the JIT limit (200 W), so a
recurrence costs 200 J x its epochs; b0 = 32 needs 5 epochs (1000 J, the baseline's cost).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.baselines import ConservativeUCB, sliding_window
from zeus_bench.sim.policies.bo import expected_improvement, gp_posterior
from zeus_bench.sim.replay import JobModel, replay

BASELINES = ("eps-greedy", "ucb1", "sw-ts", "conservative-ucb", "bo-ei")
# 64 is clearly best (2 epochs against b0's 5); 8 and 128 never converge.
CLEAR = {8: [np.nan], 16: [6.0], 32: [5.0], 64: [2.0], 128: [np.nan]}
BASE = 1000.0  # b0 at the maximum limit: 5 epochs x 200 J


def _generous(alpha: float) -> type[ConservativeUCB]:
    return type(f"ConservativeUCB{alpha}", (ConservativeUCB,), {"alpha": alpha, "name": f"cucb-{alpha}"})


def _cumulative(rows: list, n: int) -> np.ndarray:
    per = np.zeros(n)
    for r in rows:
        per[r[0] - 1] += r[7]
    return np.cumsum(per)


@pytest.mark.parametrize("name", BASELINES)
def test_converges_to_the_clearly_best_batch_size(name: str) -> None:
    model = JobModel(toy_job(CLEAR), cost=Cost(0.5))
    cls = _generous(0.5) if name == "conservative-ucb" else get_policy(name)
    for seed in range(1, 6):
        rows = replay(model, cls, seed, beta=2.0, recurrences=100)
        last = [r[2] for r in rows if r[0] > 80 and r[8]]
        assert len(last) == 20
        assert np.mean([b == 64 for b in last]) >= 0.9, (name, seed, last)
        # Over the last 20 recurrences it pays near the oracle's 400 J per recurrence (b0: 1000 J;
        # sw-ts keeps sampling the never-converging sizes now and then, within 1.25 x).
        assert sum(r[7] for r in rows if r[0] > 80) <= 1.25 * 20 * 400.0


def test_the_first_try_is_b0_and_ucb1_then_tries_every_batch_size_nearest_b0_first() -> None:
    rows = replay(JobModel(toy_job(CLEAR), cost=Cost(0.5)), get_policy("ucb1"), 1, beta=2.0, recurrences=10)
    assert rows[0][2] == 32 and rows[0][9]  # b0, profiled
    firsts = list(dict.fromkeys(r[2] for r in rows))
    assert firsts == [32, 64, 16, 128, 8]
    assert all(r[9] == (i == firsts.index(r[2])) for i, r in enumerate(rows[:5]))  # JIT once each


# b0 = 32 (5 epochs); 64 is better (3 epochs); 8, 16 and 128 never converge: exploring is risky.
RISKY = {8: [np.nan], 16: [np.nan], 32: [5.0], 64: [3.0], 128: [np.nan]}


@pytest.mark.parametrize("alpha", [0.02, 0.1, 0.3])
def test_conservative_ucb_never_exceeds_its_budget(alpha: float) -> None:
    model = JobModel(toy_job(RISKY), cost=Cost(0.5))
    n = 120
    bound = (1.0 + alpha) * BASE * np.arange(1, n + 1)
    for seed in range(1, 4):
        rows = replay(model, _generous(alpha), seed, beta=2.0, recurrences=n)
        assert (_cumulative(rows, n) <= bound + 1e-9).all()
        if alpha >= 0.1:  # the budget is not "never explore": it finds 64 and stays there
            assert [r[2] for r in rows if r[0] > n - 10] == [64] * 10


def test_ucb1_breaks_the_same_budget() -> None:
    """The budget check above can fail: UCB1 explores the never-converging sizes at once."""
    model = JobModel(toy_job(RISKY), cost=Cost(0.5))
    rows = replay(model, get_policy("ucb1"), 1, beta=2.0, recurrences=120)
    bound = 1.1 * BASE * np.arange(1, 121)
    assert (_cumulative(rows, 120) > bound).any()


# 64 (2 epochs) is best until recurrence 100; from 101 its paths need 3.5 epochs and 16 (3) wins.
SHIFT = {16: [3.0], 32: [5.0], 64: [2.0]}


def _step(recurrence: int, bs_index: int) -> float:
    return 1.75 if bs_index == 2 and recurrence > 100 else 1.0


def _share(rows: list, b: int, lo: int, hi: int) -> float:
    picks = [r[2] for r in rows if lo <= r[0] <= hi and r[8]]
    return float(np.mean([p == b for p in picks]))


def test_sw_ts_adapts_after_a_step_change_and_an_unbounded_window_does_not() -> None:
    model = JobModel(toy_job(SHIFT, max_epochs=20), cost=Cost(0.5))
    sw = get_policy("sw-ts")
    assert sliding_window(200) == math.ceil(2 * math.sqrt(200 * math.log(200)))  # 66 tries
    windowed, unbounded, before = [], [], []
    for seed in range(1, 6):
        rows = replay(model, sw, seed, beta=2.0, recurrences=200, drift=_step)
        before.append(_share(rows, 64, 71, 100))
        windowed.append(_share(rows, 16, 151, 200))
        rows = replay(model, sw, seed, beta=2.0, recurrences=200, window=100_000, drift=_step)
        unbounded.append(_share(rows, 16, 151, 200))
    assert np.mean(before) >= 0.8
    assert np.mean(windowed) >= 0.7
    assert np.mean(unbounded) <= 0.3


def test_gp_posterior_interpolates_and_expected_improvement_is_the_closed_form() -> None:
    x = np.array([0.0, 1.0, 2.0])
    y = np.array([1.0, 0.5, 1.0])
    mean, std, _ = gp_posterior(x, y, np.full(3, 1e-8), x, 1.0)
    np.testing.assert_allclose(mean, y, atol=1e-5)
    assert (std < 1e-3).all()
    far_mean, far_std, _ = gp_posterior(x, y, np.full(3, 1e-8), np.array([40.0]), 1.0)
    assert far_mean[0] == pytest.approx(y.mean()) and far_std[0] == pytest.approx(0.5)
    # EI at the incumbent with std 1 and no margin: phi(0) = 1/sqrt(2 pi).
    ei = expected_improvement(np.array([0.5, 0.5, 2.0]), np.array([1.0, 0.0, 1e-3]), 0.5, xi=0.0)
    np.testing.assert_allclose(ei, [1 / math.sqrt(2 * math.pi), 0.0, 0.0], atol=1e-12)


def test_bo_ei_picks_the_length_scale_of_largest_likelihood() -> None:
    x = np.linspace(0.0, 6.0, 7)
    smooth = 1.0 + 0.3 * np.sin(x / 3.0)
    noise = np.full(7, 1e-4)
    liks = {length: gp_posterior(x, smooth, noise, x, length)[2] for length in (0.5, 4.0)}
    assert liks[4.0] > liks[0.5]
    rough = 1.0 + 0.3 * (-1.0) ** np.arange(7)
    liks = {length: gp_posterior(x, rough, noise, x, length)[2] for length in (0.5, 4.0)}
    assert liks[0.5] > liks[4.0]


def test_eps_greedy_explores_less_as_it_learns() -> None:
    model = JobModel(toy_job(CLEAR), cost=Cost(0.5))
    early, late = [], []
    for seed in range(1, 11):
        rows = replay(model, get_policy("eps-greedy"), seed, beta=2.0, recurrences=100)
        early.append(np.mean([r[2] != 64 for r in rows if 2 <= r[0] <= 20]))
        late.append(np.mean([r[2] != 64 for r in rows if r[0] > 80]))
    assert np.mean(early) > 0.2 > np.mean(late)
