"""zeus-plus's optimizer, SafeHillClimb, on its own: its rules, budgets, drift and state round trips.

The simulator's adapters and zeus-plus's safety and gain on the traces: tests/sim/test_zeus_plus.py.
"""

from __future__ import annotations

import math

import pytest

from tests.optimizers.climb_toy import BS, run
from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.hill_climb import ClimbSettings, SafeHillClimb


def test_walks_down_a_unimodal_curve_and_stays() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, safety=0.02, horizon=50)
    opt.baseline_ratio = 1.1  # b0 at its maximum limit costs 10 % more than at its JIT limit
    seen = run(opt, cost, 40)
    assert opt.incumbent() == 64
    assert seen[-10:] == [64] * 10
    # 512 (twice as dear as b0) is stopped at its cap, never retried; 16 is never needed.
    assert seen.count(512) == 1 and 16 not in seen


def test_probe_stops_at_margin_over_incumbent() -> None:
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=1000)
    opt.observe(opt.predict(), 100.0, True, 10.0)
    assert opt.predict() == 128
    assert opt.stop_cost(math.inf) == pytest.approx(140.0)
    assert opt.stop_cost(120.0) == 120.0  # never above beta x best
    # Its first epoch (12 J) x the incumbent's 10 epochs > 100 J: a larger batch cannot win.
    assert opt.stop_cost(math.inf, 12.0) == 12.0


def test_probe_capped_by_the_allowance_over_the_horizon() -> None:
    """50 recurrences known: the 2 % allowance (2 J x 50) is all a first probe may spend."""
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=50)
    opt.observe(opt.predict(), 100.0, True, 10.0)
    # 1.02 x 50 x 100 J - 100 J spent - 49 x 100 J for this and the later recurrences.
    assert opt.budget(100.0) == pytest.approx(100.0)
    assert opt.predict() == 128 and opt.stop_cost(math.inf) == pytest.approx(100.0)


def test_larger_batch_that_cannot_win_stops_after_one_epoch() -> None:
    """A larger batch size whose first epoch times the incumbent's mean epochs passes the
    incumbent's mean cost by more than 2 standard deviations of its runs cannot win (a larger batch
    rarely needs fewer epochs): its probe stops after that epoch."""
    for runs, epoch, one_epoch in (
        ((100.0, 100.0), 10.1, True),  # no spread: 101 J > 100 J
        ((90.0, 110.0), 10.1, False),  # spread 14.1 J: 101 J is within 100 + 2 x 14.1 J
        ((90.0, 110.0), 13.0, True),  # 130 J is not
    ):
        # safety 0.5: funds aplenty (the b0 runs' spread lowers the baseline estimate).
        opt = SafeHillClimb([64, 128], 64, margin=0.4, safety=0.5, horizon=1000, noise_z=2.0)
        for c in runs:
            opt.observe(64, c, True, 10.0)
        assert opt.predict() == 128
        assert opt.stop_cost(math.inf, epoch) == (epoch if one_epoch else pytest.approx(140.0)), runs


def test_no_probe_beyond_a_dearer_batch_size() -> None:
    """Unimodal cost curve: 240 is dearer than the incumbent 256, so 128 (beyond it) is not probed,
    even where (as here) the curve is not unimodal; without pruning it is, and wins."""
    cost = {128: 0.7, 240: 1.0, 256: 0.8}
    pruned = run(SafeHillClimb([128, 240, 256], 240, horizon=1000), cost, 20)
    assert pruned[:2] == [240, 256] and 128 not in pruned
    full = SafeHillClimb([128, 240, 256], 240, horizon=1000, prune=False)
    assert 128 in run(full, cost, 20) and full.incumbent() == 128


def test_second_run_only_within_the_noise() -> None:
    """A probe whose one run is dearer than the incumbent by less than 2 standard deviations of the
    incumbent's runs gets a second run; one dearer by more does not."""
    for probe_cost, again in ((1.04, True), (1.06, False)):
        opt = SafeHillClimb([64, 128], 64, horizon=1000, noise_z=2.0)
        for c in (0.98, 1.02, 0.98, 1.02):  # the incumbent: mean 1.0, standard deviation 0.023
            opt.observe(64, c, True, 10.0)
        opt.tried.add(128)
        opt.observe(128, probe_cost, True, 10.0)
        assert (opt.predict() == 128) is again, probe_cost


def test_prior_first_and_ruled_out_never() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, horizon=50, prior_best=64, ruled_out=[512, 128])
    seen = run(opt, cost, 20)
    assert seen[:2] == [256, 64]
    assert 512 not in seen and 128 not in seen


def test_drift_restarts_the_search() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, horizon=50)
    opt.baseline_ratio = 1.1
    run(opt, cost, 30)
    assert opt.incumbent() == 64 and opt.resets == 0
    cost[64] = 2.0  # the optimum's epochs double
    seen = run(opt, cost, 15)
    assert opt.resets == 1
    assert opt.incumbent() == 128 and seen[-5:] == [128] * 5


def test_state_round_trip_continues_identically() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    a = SafeHillClimb(BS, 256, horizon=50)
    run(a, cost, 3)
    b = SafeHillClimb.from_state_dict(a.state_dict())
    assert run(a, cost, 10) == run(b, cost, 10)
    with pytest.raises(ConfigError, match="state version"):
        SafeHillClimb.from_state_dict({**a.state_dict(), "version": 99})


def test_kept_estimates_follow_the_costs() -> None:
    """mean_cost, _spread and incumbent are kept between calls; every change of the costs renews them."""
    opt = SafeHillClimb(BS, 64, horizon=50, window=2)
    assert opt.incumbent() == 64 and opt.mean_cost(64) == math.inf
    opt.observe(64, 4.0, True, 10.0)
    opt.observe(64, 6.0, True, 10.0)
    assert opt.mean_cost(64) == 5.0 and opt._spread(64) == pytest.approx(math.sqrt(2.0))
    opt.observe(64, 2.0, True, 10.0)  # window 2: the runs 6 and 2
    assert opt.mean_cost(64) == 4.0 and opt._spread(64) == pytest.approx(math.sqrt(8.0))
    opt.observe(128, 3.0, True, 10.0)
    assert opt.incumbent() == 128
    opt.costs = {32: [1.0]}  # a new dict (as a drift restart or a restored state makes)
    assert opt.incumbent() == 32 and opt.mean_cost(128) == math.inf and opt._spread(64) == 0.0
    restored = SafeHillClimb.from_state_dict(opt.state_dict())
    assert restored.incumbent() == 32 and restored.mean_cost(32) == 1.0


def test_settings_object_and_keywords_are_one_configuration() -> None:
    """``settings=`` and the same fields as keywords build the same optimizer; a keyword overrides."""
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    settings = ClimbSettings(margin=0.4, horizon=50, noise_z=2.0, prune=False)
    by_object = SafeHillClimb(BS, 256, settings)
    by_keywords = SafeHillClimb(BS, 256, margin=0.4, horizon=50, noise_z=2.0, prune=False)
    assert run(by_object, cost, 30) == run(by_keywords, cost, 30)
    assert by_object.state_dict() == by_keywords.state_dict()
    assert (by_object.margin, by_object.horizon, by_object.prune) == (0.4, 50, False)
    over = SafeHillClimb(BS, 256, settings, margin=0.3)
    assert (over.margin, over.noise_z, over.settings.margin, settings.margin) == (0.3, 2.0, 0.3, 0.4)
    # The loan's default follows the horizon: lent with one, none without (the anytime budget).
    assert ClimbSettings(horizon=10).funds_rates() == (1.0, 0.0)
    assert ClimbSettings(horizon=0).funds_rates() == (0.0, 0.0)
    with pytest.raises(TypeError, match="margins"):
        SafeHillClimb(BS, 256, margins=0.3)
    with pytest.raises(ConfigError, match="margin"):
        ClimbSettings(margin=-0.1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"default_batch_size": 3}, "not among"),
        ({"margin": 0.0}, "margin"),
        ({"safety": -1.0}, "safety"),
        ({"window": -1}, "window"),
        ({"horizon": -1}, "horizon"),
        ({"loan": -1.0}, "loan"),
        ({"lookahead": math.nan}, "lookahead"),
        ({"noise_z": -1.0}, "noise_z"),
    ],
)
def test_bad_arguments(kwargs: dict[str, float], message: str) -> None:
    args: dict[str, object] = {"batch_sizes": BS, "default_batch_size": 64, **kwargs}
    with pytest.raises(ConfigError, match=message):
        SafeHillClimb(**args)  # type: ignore[arg-type]


def test_anytime_budget_never_overdrawn_where_b0_is_best() -> None:
    """Anytime budget (``horizon`` 0), b0 the cheapest: at every recurrence the cumulative cost
    stays within 1.02 x the baseline's so far (no loan: no epoch cost promises a saving)."""
    cost = {16: 3.0, 32: 1.6, 64: 1.05, 128: 1.0, 256: 1.2, 512: 4.0}
    opt = SafeHillClimb(BS, 128, safety=0.02, horizon=0)
    for t in range(1, 60):
        run(opt, cost, 1)
        assert opt.spent <= 1.02 * t * cost[128] + 1e-9, (t, opt.spent)
    assert opt.incumbent() == 128 and opt.probes > 0


def test_anytime_budget_caps_a_probe_and_retries_it() -> None:
    """A probe the budget cuts before it cost the incumbent's mean is inconclusive: not ruled out,
    tried again once the savings made pay for it, and then kept when it wins."""
    opt = SafeHillClimb([64, 128], 128, margin=0.4, horizon=0, loan=0.0, lookahead=0.0)
    opt.baseline_ratio = 1.5  # the JIT limit saves a third of b0's baseline cost each recurrence
    opt.observe(opt.predict(), 100.0, True, 10.0)
    assert opt.budget(100.0) == pytest.approx(1.02 * 2 * 150.0 - 100.0 - 100.0)
    assert opt.predict() == 64
    assert opt.stop_cost(math.inf) == pytest.approx(106.0)  # the budget, below 1.4 x 100
    opt.observe(64, 60.0, False, 6.0)  # cut at 60 J, below the incumbent's 100: inconclusive
    assert 64 not in opt.ruled_out and 64 not in opt.tried
    assert opt.predict() == 128  # not again this recurrence: 46 J left < 1.4 x 60 J
    opt.observe(128, 100.0, True, 10.0)
    # The JIT limit's savings grew the budget (1.02 x 150 - 100 J a recurrence): 1.02 x 3 x 150
    # - 260 spent - 100 in reserve = 99 J >= 1.4 x 60 J, so 64 is tried again, capped at 99 J.
    assert opt.predict() == 64 and opt.stop_cost(math.inf) == pytest.approx(99.0)
    opt.observe(64, 80.0, True, 8.0)
    assert opt.incumbent() == 64


def test_anytime_state_round_trip_and_version_1() -> None:
    a = SafeHillClimb(BS, 256, horizon=0, loan=2.0, lookahead=3.0)
    run(a, {b: 1.0 + abs(math.log2(b / 64)) for b in BS}, 5)
    b = SafeHillClimb.from_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict() and b.loan == 2.0 and b.lookahead == 3.0
    new_keys = ("loan", "lookahead", "epoch_costs", "short")
    old = {k: v for k, v in a.state_dict().items() if k not in new_keys}
    assert SafeHillClimb.from_state_dict({**old, "version": 1}).epoch_costs == {}
    # Version 2 (before pruning and the noise rule) did not prune.
    v2 = {k: v for k, v in a.state_dict().items() if k not in ("prune", "noise_z")}
    restored = SafeHillClimb.from_state_dict({**v2, "version": 2})
    assert restored.prune is False and restored.noise_z == 3.0 and a.prune is True


def _promising_but_failing(opt: SafeHillClimb, n: int) -> list[float]:
    """``n`` recurrences of a job whose b0 (128) needs 10 epochs of 10 J and whose 256 and 512
    promise a saving by their epoch cost (6 and 5 J) but never reach the target; as the replay,
    a run stops after the whole epochs its cap allows (none: it never ran). Per recurrence, the
    cumulative cost over the baseline's (b0 at 100 J, ``baseline_ratio`` 1)."""
    epoch = {64: 14.0, 128: 10.0, 256: 6.0, 512: 5.0}
    needed = {64: 10, 128: 10, 256: math.inf, 512: math.inf}
    ratios = []
    for t in range(1, n + 1):
        while True:
            b = opt.predict()
            cap = opt.stop_cost(math.inf, epoch[b])
            run_epochs = needed[b] if needed[b] * epoch[b] <= cap else math.floor(cap / epoch[b])
            reached = run_epochs == needed[b]
            opt.observe(b, run_epochs * epoch[b], reached, float(run_epochs))
            if reached:
                break
        ratios.append(opt.spent / (t * 100.0))
    return ratios


def test_anytime_default_pays_no_probe_before_it_is_earned() -> None:
    """The anytime budget's defaults (no loan, no lookahead): a probe whose epoch cost promises a
    saving is paid from the allowance and the savings made only, so a job that ends after any
    recurrence cost at most 1.02 x its baseline; lending against the promise (loan 1, the
    earlier default) overdraws it on the same job."""
    opt = SafeHillClimb([64, 128, 256, 512], 128, horizon=0)
    assert (opt.loan, opt.lookahead) == (0.0, 0.0)
    ratios = _promising_but_failing(opt, 40)
    assert max(ratios) <= 1.02 + 1e-12 and opt.probes > 0
    lending = _promising_but_failing(SafeHillClimb([64, 128, 256, 512], 128, horizon=0, loan=1.0), 40)
    assert max(lending) > 1.02
    # With a horizon the loan is the default (its recurrences repay it).
    assert SafeHillClimb([64, 128], 128, horizon=20).loan == 1.0
