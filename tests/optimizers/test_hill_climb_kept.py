"""zeus-plus's estimates kept between calls (issue 34): each as it would be found again from the runs.

``_add_cost`` brings the kept estimates up to date from the one batch size whose runs changed: its
entry of :meth:`run_summary`, the incumbent (from its mean and the incumbent's), and the largest
and smallest cost :meth:`spread_bounds` reads. Checked on random runs (ties, zeros, a window, the
default batch size without runs, a list replaced) against the same estimates found from scratch.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zeus_bench.optimizers.hill_climb import SafeHillClimb

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
