"""A job's policies in one executor walk (``zeus_bench.sim.grid``): each task's table, in the tasks' order, as its own walk gives it.

``plan`` lists a job's policies one after the other; ``iter_simulate_tables`` replays those that
differ in their policy alone (one beta, one group of seeds, the paper's window and knobs, no
arrivals, drift or prior) in one walk (``replay_policies``), and every other task alone
(``iter_task_tables``, the reference).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zeus_bench.sim.grid as grid_mod
from tests.helpers.cost_terms import KwhTerm
from zeus_bench.core.cost import Cost
from zeus_bench.sim.grid import Grid, ReplayOptions, Task, iter_simulate_tables, iter_task_tables, plan
from zeus_bench.store import ColumnTable
from zeus_bench.traces.jobs import TraceSet


def _columns_equal(a: ColumnTable, b: ColumnTable) -> bool:
    if a.rows != b.rows or list(a.columns) != list(b.columns):
        return False
    for name, x in a.columns.items():
        y = b.columns[name]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            xa, ya = np.asarray(x), np.asarray(y)
            if xa.dtype != ya.dtype or xa.tobytes() != ya.tobytes():
                return False
        elif x != y:
            return False
    return True


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The numbers of policies of each shared walk, as they happen."""
    walks: list[int] = []
    real = grid_mod.replay_policies

    def spied(model: Any, classes: Sequence[Any], *a: Any, **k: Any) -> Any:
        walks.append(len(classes))
        return real(model, classes, *a, **k)

    monkeypatch.setattr(grid_mod, "replay_policies", spied)
    return walks


def _same_as_alone(
    tasks: list[Task], monkeypatch: pytest.MonkeyPatch, chunk_rows: int = grid_mod.CHUNK_ROWS
) -> list[int]:
    walks = _walks(monkeypatch)
    together = list(iter_simulate_tables(tasks, chunk_rows=chunk_rows))
    shared = list(walks)
    alone = [t for task in tasks for t in iter_task_tables(task, chunk_rows=chunk_rows)]
    assert len(together) == len(alone)
    assert all(_columns_equal(a, b) for a, b in zip(together, alone, strict=True))
    return shared


POLICIES = ["zeus", "baseline", "grid-search", "zeus-plus", "bo-ei", "oracle"]


def test_a_jobs_policies_walk_together_each_tasks_table_its_own(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = TraceSet(zeus_traces)
    grid = Grid(["squad", "movielens-1m"], POLICIES, [1, 2, 3], [Cost(0.5), Cost(0.2)], [2.0])
    tasks = plan(ts, "v100", grid, ReplayOptions(12))
    assert _same_as_alone(tasks, monkeypatch) == [6, 6, 6, 6]  # a walk per (workload, cost)
    # told nothing, noisy tries, a priced term (each recurrence's place in time)
    priced = Cost(0.5, (KwhTerm(5.0),))
    tasks = plan(
        ts,
        "a40",
        Grid(["squad"], POLICIES, [4, 5], [priced], [1.5]),
        ReplayOptions(9, horizon="unknown", noise=0.03),
    )
    assert _same_as_alone(tasks, monkeypatch) == [6]


def test_tasks_that_cannot_share_a_walk_replay_alone(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ts = TraceSet(zeus_traces)
    two_betas = plan(ts, "v100", Grid(["squad"], POLICIES, [1, 2], [Cost(0.5)], [2.0, 3.0]), ReplayOptions(8))
    assert _same_as_alone(two_betas, monkeypatch) == []
    window = plan(
        ts, "v100", Grid(["squad"], POLICIES, [1, 2], [Cost(0.5)], [2.0]), ReplayOptions(8, window=4)
    )
    assert _same_as_alone(window, monkeypatch) == []
    # seeds beyond one walk's rows (chunk_rows / recurrences): a task's walks of seeds each
    many = plan(
        ts, "v100", Grid(["squad"], POLICIES, list(range(1, 6)), [Cost(0.5)], [2.0]), ReplayOptions(8)
    )
    assert _same_as_alone(many, monkeypatch, chunk_rows=16) == []


def test_a_shared_walk_holds_about_one_tables_rows(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3 seeds x 8 recurrences = 24 rows a task: 40 rows a table let one task walk at a time, 72 three
    ts = TraceSet(zeus_traces)
    tasks = plan(ts, "v100", Grid(["squad"], POLICIES, [1, 2, 3], [Cost(0.5)], [2.0]), ReplayOptions(8))
    assert _same_as_alone(tasks, monkeypatch, chunk_rows=40) == []
    assert _same_as_alone(tasks, monkeypatch, chunk_rows=72) == [3, 3]
