"""Properties of the arrival replay (Hypothesis) on the hand-made toy job.

A table's row order does not change the result (submissions are replayed in start order per
group), and groups are independent (a group's rows do not depend on the other groups).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.grid import Task, run_task
from zeus_bench.sim.scenarios.arrivals import ARRIVAL_COLUMNS, validate_arrivals

SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def arrival_tables(draw: st.DrawFn) -> pd.DataFrame:
    """One to three groups of one to six submissions, start times distinct within a group."""
    rows = []
    for g in range(draw(st.integers(1, 3))):
        starts = draw(st.lists(st.integers(0, 200), min_size=1, max_size=6, unique=True))
        for s in starts:
            length = draw(st.integers(1, 40))
            ratio = draw(st.sampled_from([0.5, 1.0, 2.0]))
            rows.append((f"g{g}", float(s), float(s + length), "toy", ratio))
    return pd.DataFrame(rows, columns=list(ARRIVAL_COLUMNS))


def _runs(table: pd.DataFrame, policy: str = "zeus-plus", seed: int = 1) -> pd.DataFrame:
    task = Task(toy_job(), Cost(1.0), policy, (2.0,), (seed,), 1, 0, validate_arrivals(table))
    out = run_task(task)
    return out.sort_values(["group", "recurrence", "attempt"]).reset_index(drop=True)


@SETTINGS
@given(arrival_tables(), st.randoms(use_true_random=False), st.sampled_from(["zeus", "zeus-plus"]))
def test_row_order_of_the_table_does_not_change_the_result(table, rnd, policy) -> None:
    order = list(range(len(table)))
    rnd.shuffle(order)
    shuffled = table.iloc[order].reset_index(drop=True)
    pd.testing.assert_frame_equal(_runs(table, policy), _runs(shuffled, policy))


@SETTINGS
@given(arrival_tables(), st.sampled_from(["zeus", "zeus-plus"]))
def test_groups_are_independent(table, policy) -> None:
    together = _runs(table, policy)
    assert set(together["group"]) == set(table["group"])
    for group, rows in table.groupby("group"):
        alone = _runs(rows, policy)
        mine = together[together["group"] == group].reset_index(drop=True)
        pd.testing.assert_frame_equal(alone, mine)
        assert sorted(set(alone["recurrence"])) == list(range(1, len(rows) + 1))
        assert np.all(alone["cost"].to_numpy() >= 0)
