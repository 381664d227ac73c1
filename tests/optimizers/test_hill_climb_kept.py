"""zeus-plus's estimates kept between calls (issue 34): each as it would be found again from the runs.

``_add_cost`` brings the kept estimates up to date from the one batch size whose runs changed: its
entry of :meth:`run_summary`, the incumbent (from its mean and the incumbent's), and the largest
and smallest cost :meth:`spread_bounds` reads; the drift rule, which the least cost decides alone
when the latest runs do not rise past 1.4 x it. Checked on random runs (ties, zeros, a window, the
default batch size without runs, a list replaced) against the same estimates found from scratch.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.hill_climb import SafeHillClimb
from zeus_bench.optimizers.hill_climb_estimates import (
    DRIFT_RISE,
    DRIFT_RUNS,
    DRIFT_Z,
    KEPT_FROM,
    kept_mean,
    mean_of,
)

BS = [16, 32, 64, 128, 256]
RUNS = st.lists(
    st.tuples(st.sampled_from(BS), st.sampled_from([0.0, 5.0, 10.0, 10.0, 12.5]) | st.floats(0.0, 50.0)),
    max_size=40,
)


def _fresh(opt: SafeHillClimb) -> SafeHillClimb:
    """The same runs in a new optimizer (nothing kept)."""
    new = SafeHillClimb(BS, opt.default_batch_size, window=opt.window)
    new.costs = {b: list(c) for b, c in opt.costs.items()}
    return new


@settings(max_examples=600, deadline=None)
@given(runs=RUNS, window=st.sampled_from([0, 0, 3]), b0=st.sampled_from(BS), ask=st.integers(1, 4))
def test_kept_estimates_are_those_found_again(
    runs: list[tuple[int, float]], window: int, b0: int, ask: int
) -> None:
    opt = SafeHillClimb(BS, b0, window=window)
    for i, (b, cost) in enumerate(runs):
        if i % ask == 0:  # asked now and then, as a replay does between runs
            opt.run_summary(), opt.incumbent(), [opt.spread_bounds(x) for x in opt.costs]
        opt._add_cost(b, cost)
        again = _fresh(opt)
        assert opt.incumbent() == again.incumbent()
        assert list(opt.run_summary().items()) == list(again.run_summary().items())
        for x, c in opt.costs.items():
            kept = opt._extremes.get(x)
            if kept is not None and kept[0] is c and kept[1] == len(c):
                assert kept[2:] == (max(c), min(c))


def test_a_replaced_list_is_summed_again() -> None:
    opt = SafeHillClimb(BS, 64)
    for cost in (10.0, 20.0, 30.0):
        opt._add_cost(64, cost)
    assert opt.spread_bounds(64) is not None and opt.run_summary() == {64: (3, 20.0)}
    opt.costs = {64: [1.0, 2.0], 32: [0.5]}
    assert opt.run_summary() == {64: (2, 1.5), 32: (1, 0.5)} and opt.incumbent() == 32
    lo, hi = opt.spread_bounds(64) or (0.0, 0.0)
    assert lo == 0.0 and 0.5 * (2.0**0.5) <= hi < 0.71  # from the new list's max and min


@settings(max_examples=600, deadline=None)
@given(
    values=st.lists(
        st.sampled_from([0.0, 1.0, 0.1, 1e16, -1e16, 3.0, 1e-300])
        | st.floats(-1e6, 1e6)
        | st.floats(0.0, 1e300),
        min_size=1,
        max_size=160,
    )
)
def test_kept_means_are_fsums_means(values: list[float]) -> None:
    """The kept exact partial sums give :func:`mean_of`'s float bit for bit, the list grown one run at a time."""
    kept: dict[object, tuple[list[float], int, list[float]]] = {}
    xs: list[float] = []
    for x in values:
        xs.append(x)
        assert kept_mean(kept, 0, xs).hex() == mean_of(xs).hex()
    assert kept_mean(kept, 0, list(xs)).hex() == mean_of(xs).hex()  # another list: summed again


def test_kept_means_leave_infinities_to_fsum() -> None:
    kept: dict[object, tuple[list[float], int, list[float]]] = {}
    xs = [1.0] * KEPT_FROM + [1.7e308, 1.7e308]
    try:
        mean_of(xs)
    except OverflowError:
        with pytest.raises(OverflowError):
            kept_mean(kept, 0, xs)
    assert kept_mean(kept, 1, [1.0] * KEPT_FROM + [math.inf]) == math.inf and 1 not in kept


def _drift_as_stated(costs: list[float]) -> bool:
    """The drift rule on one batch size's runs as it reads: the last 4 against the mean and spread of the rest."""
    if len(costs) <= DRIFT_RUNS + 1:
        return False
    before, m1 = costs[:-DRIFT_RUNS], mean_of(costs[-DRIFT_RUNS:])
    m0 = mean_of(before)
    if m1 <= (1.0 + DRIFT_RISE) * m0:
        return False
    sd = math.sqrt(mean_of([(x - m0) ** 2 for x in before]))
    return m1 - m0 > DRIFT_Z * sd / math.sqrt(DRIFT_RUNS)


@settings(max_examples=800, deadline=None)
@given(
    level=st.sampled_from([1.0, 100.0, 1e-3, 1e6]),
    steps=st.lists(
        st.sampled_from([1.0, 1.0, 1.05, 0.97, 1.4, 1.4000000000000001, 1.3999999999999999, 2.0, 0.0])
        | st.floats(0.0, 3.0),
        min_size=6,
        max_size=30,
    ),
)
def test_drift_with_the_least_run_kept_answers_as_the_rule(level: float, steps: list[float]) -> None:
    """Runs near 1.4 x the least one (where the kept least cost decides alone) restart as the rule says."""
    opt = SafeHillClimb([64, 128], 64)
    for i, step in enumerate(steps):
        opt._add_cost(64, level * step)
        runs = list(opt.costs[64])
        opt._check_drift(64)
        assert (opt.resets == 1) is _drift_as_stated(runs), i
        if opt.resets:
            assert opt.costs[64] == runs[-DRIFT_RUNS:]
            return


def test_drift_at_the_rise_itself() -> None:
    """Level earlier runs, then 4 runs at 1.4 x their cost and one ulp either side: drift just above it."""
    for level in (1.0, 3.0, 1e-3, 123456.789):
        rise = (1.0 + DRIFT_RISE) * level
        for last, drifts in (
            (math.nextafter(rise, math.inf), True),
            (rise, False),
            (math.nextafter(rise, 0.0), False),
        ):
            opt = SafeHillClimb([64, 128], 64)
            for cost in [level] * 3 + [last] * DRIFT_RUNS:
                opt._add_cost(64, cost)
                opt._check_drift(64)
            assert opt.resets == int(drifts), (level, last)
