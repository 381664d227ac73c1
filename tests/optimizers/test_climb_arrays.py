"""The quiet seeds' exact means on arrays: :func:`certified_round` is :func:`math.fsum`'s rounding where it says so.

``zeus-plus``'s quiet seeds (:mod:`zeus_bench.optimizers.climb_arrays`) keep the incumbent's runs'
sum as a float and the remainders TwoSum leaves, as :meth:`QuietClimbs.observe` adds a run; the
mean they take is certified to be the optimizer's own (``math.fsum`` of the runs over their number).
Costs from traces often have short mantissas, so the exact sum lands on a tie (half a spacing
from two floats) in about one step in twenty: the exact remainder decides those.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.climb_arrays import QuietClimbs, certified_round, two_sum
from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.optimizers.hill_climb_verdicts import Verdicts

SETTINGS = settings(max_examples=150, deadline=None)


def _running(values: list[float], start: int) -> tuple[list[float], list[bool]]:
    """Each prefix's rounded sum from ``start`` values on, as a quiet seed adds runs, and its certificate."""
    head = values[:start]
    hi = math.fsum(head)
    lo = math.fsum([*head, -hi])
    err = abs(math.fsum([*head, -hi, -lo])) * (1.0 + 2.0**-51)
    h, low, e = np.array([hi]), np.array([lo]), np.array([err])
    sums, certain = [], []
    for x in values[start:]:
        h, add = two_sum(h, np.array([x]))
        low, lost = two_sum(low, add)
        e = e + np.abs(lost)
        r, ok = certified_round(h, low, e)
        sums.append(float(r[0]))
        certain.append(bool(ok[0]))
    return sums, certain


costs = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)
short = st.integers(min_value=1, max_value=2**30).map(lambda k: k / 1024.0)  # few mantissa bits


@SETTINGS
@given(st.lists(costs | short, min_size=3, max_size=60), st.integers(min_value=1, max_value=2))
def test_a_certified_sum_is_fsums(values: list[float], start: int) -> None:
    sums, certain = _running(values, start)
    for k, (s, ok) in enumerate(zip(sums, certain, strict=True)):
        if ok:
            assert s == math.fsum(values[: start + k + 1])


def test_ties_of_short_mantissas_are_certified_and_rounded_to_even() -> None:
    # 2**53 + 1 and 2**53 + 3 are ties: fsum rounds them to even, and so must the quiet sum.
    values = [2.0**53, 1.0, 2.0, 1.0, 4.0, 3.0]
    sums, certain = _running(values, 1)
    assert all(certain)
    assert sums == [math.fsum(values[: k + 2]) for k in range(len(values) - 1)]
    assert sums[0] == 2.0**53  # 2**53 + 1: a tie, to even
    # Prices of a trace (J, two decimals) a hundred times: every step certified, every sum fsum's.
    rng = np.random.default_rng(7)
    prices = (rng.integers(1_000_000, 9_000_000, 100) / 100.0).tolist()
    sums, certain = _running(prices, 2)
    assert all(certain)
    assert sums == [math.fsum(prices[: k + 3]) for k in range(98)]


def test_an_inexact_remainder_at_a_tie_is_not_certified() -> None:
    # The remainder is half a spacing, but known only within 1e-30: the rounding is not decided.
    hi = np.array([2.0**53])
    lo = np.array([1.0])
    r, ok = certified_round(hi, lo, np.array([1e-30]))
    assert not ok[0]
    r, ok = certified_round(hi, lo, np.array([0.0]))
    assert ok[0] and r[0] == 2.0**53
    # Far from a tie, the same error is harmless.
    r, ok = certified_round(hi, np.array([0.25]), np.array([1e-30]))
    assert ok[0] and r[0] == 2.0**53
    # Just below a power of two the spacing is 1 (2 above it): 2**53 - 0.6 rounds to 2**53 - 1.
    r, ok = certified_round(np.array([2.0**53]), np.array([-0.6]), np.array([1e-30]))
    assert ok[0] and r[0] == 2.0**53 - 1.0


def test_a_woken_optimizer_holds_what_its_own_steps_would_have() -> None:
    """Quiet steps on arrays, then wake: the optimizer's state is that of the same calls made on it."""

    def optimizer() -> SafeHillClimb:
        cl = SafeHillClimb([8, 16, 32, 64], 16, horizon=50)
        for b, c, e in (
            (16, 100.0, 4.0),
            (32, 180.0, 5.0),
            (16, 104.0, 4.5),
            (8, 160.0, 4.0),
            (16, 98.5, 4.0),
        ):
            cl.predict()
            cl.probe = b if b != cl.incumbent() else None
            cl.stop_cost(math.inf, c / e)
            cl.observe(b, c, True, e)
        return cl

    steps = [(101.25, 4.0, 25.5), (99.75, 4.25, 23.0), (100.5, 4.0, math.nan)]
    quiet, alone = optimizer(), optimizer()
    assert QuietClimbs.eligible(quiet) and quiet.incumbent() == 16
    q = QuietClimbs(quiet.batch_sizes, 1)
    q.enter(0, quiet, 2.0)
    rows = np.array([0])
    for cost, epochs, epoch_cost in steps:
        assert q.idle(rows)[0] and alone.predict() == 16
        bound = q.stop_cost(rows, np.array([150.0]), np.array([epoch_cost]))[0]
        assert (
            bound
            == max(150.0, 2.0 * alone.mean_cost(16))
            == alone.stop_cost(max(150.0, 2.0 * alone.mean_cost(16)), epoch_cost)
        )
        taken = q.observe(rows, np.array([1]), np.array([cost]), np.array([True]), np.array([epochs]))
        assert taken[0]
        alone.observe(16, cost, True, epochs)
        assert q.mean[0] == alone.mean_cost(16)
    q.wake(0, quiet)
    assert not q.quiet[0]
    assert quiet.state_dict() == alone.state_dict()
    assert quiet.epoch_costs[16] == 23.0  # the last measured epoch cost (the NaN one is not kept)
    assert quiet.predict() == alone.predict()


def test_a_seed_waiting_for_funds_stays_quiet_until_its_object_would_probe() -> None:
    """Anytime budget, incumbent b0: probes are due but unpaid; quiet until the funds pay, as the object says."""

    def optimizer() -> SafeHillClimb:
        cl = SafeHillClimb([8, 16, 32], 16, horizon=0, safety=0.02)
        for c in (100.0, 102.0, 99.0):
            assert cl.predict() == 16
            cl.stop_cost(math.inf, 25.0)
            cl.observe(16, c, True, 4.0)
        return cl

    quiet, alone = optimizer(), optimizer()
    assert QuietClimbs.eligible(quiet) and Verdicts(alone, 16).candidates()  # probes due, not paid
    q = QuietClimbs(quiet.batch_sizes, 1)
    q.enter(0, quiet, 2.0)
    assert q.funded[0] and q.at_b0[0]
    waited = len(_quiet_while_sure(q, alone, 16, 1, np.random.default_rng(3), 1.0, 200))
    assert waited >= 10  # quiet while the funds grew
    assert alone.probe is not None  # then the object probes, and the seed had woken for it
    q.wake(0, quiet)
    quiet.predict()
    assert quiet.state_dict() == alone.state_dict() and quiet.probe == alone.probe


def test_turning_quiet_again_reads_the_batch_sizes_that_ran_since() -> None:
    """The incumbent moves 16 -> 32 -> 16 without a probe: 32's runs since are read again, not kept."""

    cl = SafeHillClimb([16, 32], 16, horizon=50)
    for b, c in ((16, 100.0), (32, 101.0), (16, 100.0), (32, 101.0)):
        cl.probe = None if b == 16 else b
        cl.stop_cost(math.inf, 25.0)
        cl.observe(b, c, True, 4.0)
    cl.probe = None
    assert cl.incumbent() == 16 and QuietClimbs.eligible(cl)
    q = QuietClimbs(cl.batch_sizes, 1)
    q.enter(0, cl, 2.0)
    assert (q.runs[0].tolist(), q.means[0, 1]) == ([2, 2], 101.0)
    q.wake(0, cl)
    cl.observe(16, 104.0, True, 4.0)  # 16's mean 101.33: 32 is the incumbent
    assert cl.incumbent() == 32
    cl.observe(32, 110.0, True, 4.0)  # 32's mean 104: 16 again, no probe made
    assert cl.incumbent() == 16 and cl.probes == 2
    q.enter(0, cl, 2.0)
    assert q.runs[0].tolist() == [3, 3] and q.means[0, 1] == cl.mean_cost(32)


def test_a_batch_size_no_rule_would_probe_next_does_not_wake_a_quiet_seed() -> None:
    """Probes are drawn from the neighbours of the incumbent and of batch sizes that may be near (and the prior's best).

    b0 = 64 of nine batch sizes, anytime budget: its neighbours 32 and 128 are measured (the
    expected run 95, within reach) and wait for funds; 4, 8, 16, 256, 512 and 1024 are open and
    unmeasured (one epoch, 25 or more, would measure them) but no rule draws them next. The seed
    stays quiet while the object runs its incumbent, past the funds for one epoch, and wakes when
    the object probes; its state is then the object's.
    """

    def optimizer() -> SafeHillClimb:
        cl = SafeHillClimb([4, 8, 16, 32, 64, 128, 256, 512, 1024], 64, horizon=0, safety=0.02)
        for c in (100.0, 102.0, 99.0):
            assert cl.predict() == 64
            cl.stop_cost(math.inf, 25.0)
            cl.observe(64, c, True, 4.0)
        cl.epoch_costs[32] = cl.epoch_costs[128] = 23.75  # (as a profile of them would leave)
        return cl

    quiet, alone = optimizer(), optimizer()
    assert QuietClimbs.eligible(quiet) and set(Verdicts(alone, 64).candidates()) == {32, 128}
    q = QuietClimbs(quiet.batch_sizes, 1)
    q.enter(0, quiet, 2.0)
    budgets = _quiet_while_sure(q, alone, 64, 4, np.random.default_rng(5), 2.0, 400)
    funds_for_an_epoch = next((k for k, x in enumerate(budgets) if x >= 25.0), None)  # enough to measure 256
    assert funds_for_an_epoch is not None and len(budgets) > funds_for_an_epoch + 20  # quiet well past it
    assert alone.probe in (32, 128)  # and woke for the object's probe
    q.wake(0, quiet)
    quiet.predict()
    assert quiet.state_dict() == alone.state_dict() and quiet.probe == alone.probe


def _quiet_while_sure(
    q: QuietClimbs, alone: SafeHillClimb, b0: int, col: int, rng: np.random.Generator, sd: float, most: int
) -> list[float]:
    """Seed 0's quiet steps at its incumbent ``b0`` (column ``col``) while :meth:`QuietClimbs.idle` is sure, at most ``most``.

    ``alone``, the same optimizer, takes each step itself and must run its incumbent too. Each run
    costs about 100 (normal, ``sd``) over 4 epochs. Returns ``alone``'s budget before each step taken.
    """
    rows, budgets = np.array([0]), []
    for _ in range(most):
        idle = q.idle(rows)[0]
        b = alone.predict()
        if not idle:
            break
        assert b == b0 and alone.probe is None  # the object runs its incumbent too
        budgets.append(alone.budget(alone.mean_cost(b0)))
        cost = float(np.round(100.0 + rng.normal(0.0, sd), 2))
        q.stop_cost(rows, np.array([math.inf]), np.array([25.0]))
        alone.stop_cost(max(math.inf, 2.0 * alone.mean_cost(b0)), 25.0)
        assert q.observe(rows, np.array([col]), np.array([cost]), np.array([True]), np.array([4.0]))[0]
        alone.observe(b0, cost, True, 4.0)
    return budgets
