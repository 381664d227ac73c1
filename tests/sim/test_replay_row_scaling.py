"""A row's runtime ratio (arrival tables) scales every measured and expected figure, nothing else.

The rule lives in the replay's row emission (sim/executor.py: try_row and missed_row; sim/env.py after the
redesign). Replaying the same group with every ratio doubled must double energy, time and cost,
and their expected values, and leave every decision and epoch count as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import RUN_FIELDS, JobModel
from zeus_bench.sim.scenarios.arrivals import replay_group

SCALED = ("energy_j", "time_s", "cost", "expected_energy_j", "expected_time_s", "expected_cost")


def _rows(
    ratio: float, policy: str, targets: dict[int, list[float]] | None = None
) -> list[dict[str, object]]:
    starts, ends = np.array([0.0, 5.0, 20.0, 40.0]), np.array([10.0, 15.0, 30.0, 50.0])
    rows = replay_group(
        JobModel(toy_job(targets), cost=Cost(1.0)),
        get_policy(policy),
        1,
        2.0,
        starts,
        ends,
        np.full(4, ratio),
    )
    return [dict(zip(RUN_FIELDS, r, strict=True)) for r in rows]


@pytest.mark.parametrize("policy", ["zeus", "zeus-plus", "baseline"])
@pytest.mark.parametrize("ratio", [0.5, 3.0])
def test_ratio_scales_energy_time_cost_and_their_expectations(policy: str, ratio: float) -> None:
    one, scaled = _rows(1.0, policy), _rows(ratio, policy)
    assert len(one) == len(scaled) > 0
    for a, b in zip(one, scaled, strict=True):
        for f in RUN_FIELDS:
            if f in SCALED:
                assert b[f] == pytest.approx(a[f] * ratio, rel=1e-12, nan_ok=True), f
            else:
                assert b[f] == a[f], f
    assert any(r["expected_time_s"] != r["expected_energy_j"] for r in one)  # distinct columns checked
