"""zeus-plus's noise rule with several runs on each side (issue 36: a rule told from its slip).

A batch size ``c`` counts as dearer than the incumbent when its mean cost exceeds the incumbent's
by more than ``noise_z`` standard deviations of the incumbent's runs (sample deviation, n - 1)
over the square root of ``c``'s own number of runs. The existing tests give ``c`` one run, where
the square root is 1; here ``c`` has two or four runs and the incumbent four, with means chosen
between the rule's threshold and each slip's (no square root, the incumbent's count, n - 1 for
``c``, population deviation, ``c``'s own spread).
"""

from __future__ import annotations

import math

import pytest

from zeus_bench.optimizers.hill_climb import SafeHillClimb

INCUMBENT = (0.9, 1.1, 0.9, 1.1)  # mean 1.0, sample standard deviation 0.11547
SD = math.sqrt(4 * 0.01 / 3)


def _opt(runs: tuple[float, ...]) -> SafeHillClimb:
    opt = SafeHillClimb([64, 128], 64, horizon=1000, noise_z=2.0)
    for cost in INCUMBENT:
        opt.observe(64, cost, True, 10.0)
    opt.tried.add(128)
    for cost in runs:
        opt.observe(128, cost, True, 10.0)
    assert opt.incumbent() == 64
    return opt


@pytest.mark.parametrize(
    ("runs", "dearer"),
    [
        # Two runs, mean 1.15: threshold 1 + 2 x 0.11547 / sqrt(2) = 1.1633: not dearer. (The
        # incumbent's count, sqrt(4): 1.1155; a population deviation 0.1: 1.1414; 128's own
        # spread 0.0566: 1.08 -- each would call it dearer.)
        ((1.11, 1.19), False),
        # Four runs, mean 1.13: threshold 1 + 2 x 0.11547 / 2 = 1.1155: dearer. (No square root:
        # 1.2309; sqrt(n - 1) = sqrt(3): 1.1333 -- each would not.)
        ((1.08, 1.18, 1.08, 1.18), True),
    ],
)
def test_dearer_beyond_the_incumbents_noise_over_the_root_of_its_own_runs(
    runs: tuple[float, ...], dearer: bool
) -> None:
    opt = _opt(runs)
    threshold = 1.0 + 2.0 * SD / math.sqrt(len(runs))
    assert (sum(runs) / len(runs) > threshold) is dearer  # the data sit on the intended side
    assert opt._dearer(128, 64) is dearer


def test_the_spread_is_the_sample_deviation_of_the_incumbents_runs() -> None:
    opt = _opt((1.2,))
    assert opt._spread(64) == pytest.approx(SD)
    assert opt._spread(128) == 0.0  # one run: no spread
