"""zeus-plus's spread bounds (issue 34): the rules decided from them answer as the spread itself would.

:meth:`~zeus_bench.optimizers.hill_climb_estimates.ClimbEstimates.spread_bounds` bounds the
incumbent's standard deviation from running sums (Welford's, kept after the spread was computed) or
from its largest deviation, so that a decision needs the spread itself only when its bounds
disagree. Checked here: the bounds hold the spread on costs of every shape (constant, near-constant,
noisy, drifting, heavy-tailed); the bounds are tight where the running sums are kept; and the noise
rule (``_dearer``) decided through the bounds answers as the rule on the spread itself, on thresholds
placed just either side of the exact answer.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.optimizers.hill_climb_estimates import SPREAD_SLACK
from zeus_bench.optimizers.hill_climb_verdicts import Verdicts

COSTS = st.lists(
    st.one_of(
        st.floats(min_value=1.0, max_value=1e7, allow_nan=False),
        st.sampled_from([1000.0, 1000.0000000001, 999.9999999999]),  # constant and near-constant runs
    ),
    min_size=2,
    max_size=60,
)


def _with_runs(first: list[float], later: list[float]) -> SafeHillClimb:
    """b0 = 64 observed ``first`` (its spread then computed: the running sums start), then ``later``."""
    opt = SafeHillClimb([64, 128], 64, horizon=1000)
    for cost in first:
        opt.observe(64, cost, True, 10.0)
    opt._spread(64)
    for cost in later:
        opt.observe(64, cost, True, 10.0)
    return opt


@settings(max_examples=300, deadline=None)
@given(first=COSTS, later=st.lists(st.floats(min_value=1.0, max_value=1e7, allow_nan=False), max_size=80))
def test_bounds_hold_the_spread(first: list[float], later: list[float]) -> None:
    opt = _with_runs(first, later)
    if opt.resets:
        return  # drift dropped runs: another list, covered by the next test
    bounds = opt.spread_bounds(64)
    assert bounds is not None
    lo, hi = bounds
    assert 0.0 <= lo <= opt._spread(64) <= hi
    assert opt.spread_bounds(64) == (opt._spread(64), opt._spread(64))  # computed: it is its own bound


def test_running_sums_bound_tightly_and_follow_new_lists() -> None:
    first = [100.0 + 7.0 * math.sin(i) for i in range(40)]
    opt = _with_runs(first, [103.0, 96.5, 101.25])
    lo, hi = opt.spread_bounds(64) or (math.nan, math.nan)
    sd = opt._spread(64)
    assert lo <= sd <= hi
    assert hi - lo <= 2.0 * SPREAD_SLACK * sd * (1.0 + 1e-9)
    # A new list (drift, a restored state) has no running sums: only the largest deviation bounds it.
    opt.costs = {64: list(opt.costs[64])}
    lo, hi = opt.spread_bounds(64) or (math.nan, math.nan)
    assert lo == 0.0
    assert hi >= opt._spread(64)
    assert SafeHillClimb([64], 64, window=3).spread_bounds(64) is None  # a window: never bounded


@settings(max_examples=200, deadline=None)
@given(first=COSTS, later=st.lists(st.floats(min_value=1.0, max_value=1e7, allow_nan=False), max_size=40))
def test_noise_rule_through_the_bounds_answers_as_on_the_spread(
    first: list[float], later: list[float]
) -> None:
    probe = _with_runs(first, later)
    if probe.resets:
        return
    m_inc, sd = probe.mean_cost(64), probe._spread(64)
    threshold = m_inc + probe.noise_z * sd / math.sqrt(1)
    for cost in (threshold, math.nextafter(threshold, math.inf), math.nextafter(threshold, -math.inf)):
        opt = _with_runs(first, later)
        opt.tried.add(128)
        opt.observe(128, cost, True, 10.0)
        if opt.incumbent() != 64:
            continue
        view = Verdicts(opt, 64)
        assert view.bounds is not None  # the spread was not computed: decided through the bounds
        assert view.dearer(128) is (cost > threshold)
