"""The arrival replay over many groups: shared tries, dispatch by method, the generic loop's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim import grid
from zeus_bench.sim.policies import Outcome, get_policy
from zeus_bench.sim.replay import RUN_FIELDS, BanditKnobs, JobModel
from zeus_bench.sim.scenarios import arrivals, fastarrivals
from zeus_bench.sim.scenarios.arrivals import replay_group, replay_groups, synthetic_arrivals
from zeus_bench.store import Coded

TARGETS = {8: [2.0, 9.0], 16: [3.0, 4.0, 12.0], 32: [5.0], 64: [2.0, 3.0, 30.0]}


def _groups(seed: int, n: int = 12, jobs: int = 30, overlap: float = 0.8) -> list[tuple]:  # type: ignore[type-arg]
    table = synthetic_arrivals(
        ["toy"], n, jobs, np.random.default_rng(seed), overlap=overlap, ratio_sigma=1.0
    )
    out = []
    for name, g in table.groupby("group", observed=True, sort=True):
        out.append((str(name), *(g[c].to_numpy() for c in ("start_time", "end_time", "runtime_ratio"))))
    return out


@pytest.mark.parametrize(("seed", "beta"), [(1, 2.0), (5, 1.2), (9, 3.0)])
def test_shared_tries_give_the_generic_loops_rows_group_by_group(seed: int, beta: float) -> None:
    model = JobModel(toy_job(TARGETS, max_epochs=12), cost=Cost(0.5))
    groups = _groups(seed)
    zeus = get_policy("zeus")
    batched = list(replay_groups(model, zeus, seed, beta, groups))
    assert [name for name, _ in batched] == [g[0] for g in groups]
    generic = [arrivals._replay_generic(model, zeus, seed, beta, g[1:], 0, BanditKnobs()) for g in groups]
    assert [rows for _, rows in batched] == generic
    # Retries, zero budgets and early stops occur on this grid (else the shared outcomes are untested).
    assert any(r[1] > 1 for rows in generic for r in rows)
    assert any(not r[8] for rows in generic for r in rows)
    # One group at a time (a cold memo for the first, a warm one after) gives the same rows.
    assert [replay_group(model, zeus, seed, beta, *g[1:]) for g in reversed(groups)] == generic[::-1]
    # The memo is bounded: one outcome per (batch size, path, profiled, least cost so far).
    shared = fastarrivals.shared_tries(model, seed, beta)
    assert shared is not None
    outcomes = sum(len(memo) for memo in shared.by_cost.values())
    assert outcomes <= 2 * sum(len(t) for t in TARGETS.values()) * len(shared.by_cost)
    assert len(shared.entries) == outcomes + len(TARGETS)  # one per outcome, one missed row per batch size


def test_dispatch_is_by_method_not_by_class(monkeypatch: pytest.MonkeyPatch) -> None:
    fused: list[int] = []
    real = fastarrivals.SharedTries.replay

    def counting(self, *args):  # type: ignore[no-untyped-def]
        fused.append(1)
        return real(self, *args)

    monkeypatch.setattr(fastarrivals.SharedTries, "replay", counting)
    zeus = get_policy("zeus")

    class Renamed(zeus):  # type: ignore[misc,valid-type]
        name = "zeus-renamed"  # decides as zeus: the fused loop

    class Watching(zeus):  # type: ignore[misc,valid-type]
        def observe(self, outcome: Outcome) -> None:  # a decision method overridden: the generic loop
            super().observe(outcome)

    model = JobModel(toy_job(TARGETS, max_epochs=12), cost=Cost(0.5))
    starts, ends, ratios = _groups(3, n=1)[0][1:]
    g = (starts, ends, ratios)
    expected = replay_group(model, zeus, 3, 2.0, *g)
    assert len(fused) == 1
    assert replay_group(model, Renamed, 3, 2.0, *g) == expected and len(fused) == 2
    assert replay_group(model, Watching, 3, 2.0, *g) == expected and len(fused) == 2
    assert replay_group(model, zeus, 3, 2.0, starts, ends, ratios, window=3) != []
    assert len(fused) == 2  # a window: the generic loop


def _table(seed: int, n: int, jobs: int) -> pd.DataFrame:
    return synthetic_arrivals(["toy"], n, jobs, np.random.default_rng(seed), overlap=0.8, ratio_sigma=1.0)


@pytest.mark.parametrize("policy", ["zeus", "zeus-plus"])  # the fused loop's codes, the generic loop's rows
def test_arrival_tables_are_the_groups_rows_in_columns_whatever_the_chunks(policy: str) -> None:
    job = toy_job(TARGETS, max_epochs=12)
    # Groups long enough that zeus-plus leaves b0 (untold the number of recurrences it keeps to the
    # anytime budget, which pays probes only from savings made).
    table = _table(2, 9, 100)
    task = grid.Task(job, Cost(0.5), policy, (1.5, 2.0), (1, 7), 1, 0, table)
    cls = get_policy(policy)
    model = JobModel(job, Cost(0.5))
    expected = []
    for beta in task.betas:
        for seed in task.seeds:
            for name, rows in replay_groups(model, cls, seed, beta, arrivals.group_columns(table)):
                expected += [(seed, beta, name, *r) for r in rows]
    assert any(r[4] > 1 for r in expected) and any(not r[11] for r in expected)  # retries, early stops
    names = ["seed", "beta", "group", *RUN_FIELDS]
    for chunk_rows in (1, 40, 10**6):  # a chunk per group, chunks of several groups, one per (beta, seed)
        tables = list(grid.iter_task_tables(task, chunk_rows=chunk_rows))
        assert len(tables) >= 4 and all(t.rows > 0 for t in tables)
        assert chunk_rows > 1 or len(tables) == 4 * table["group"].nunique()
        frame = pd.concat([grid.as_frame(t) for t in tables], ignore_index=True)
        assert list(frame[names].itertuples(index=False, name=None)) == expected
        assert all(isinstance(t.columns["group"], Coded) for t in tables)


def test_group_columns_sort_a_table_not_in_group_and_start_order() -> None:
    table = _table(2, 5, 8)
    ordered = arrivals.group_columns(table)
    shuffled = arrivals.group_columns(table.sample(frac=1.0, random_state=1).reset_index(drop=True))
    assert [g[0] for g in shuffled] == [g[0] for g in ordered] == sorted(table["group"].unique().astype(str))
    for a, b in zip(ordered, shuffled, strict=True):
        for x, y in zip(a[1:], b[1:], strict=True):
            assert x.tobytes() == y.tobytes()
        assert np.all(np.diff(a[1]) >= 0)


def test_shared_columns_are_its_rows() -> None:
    model = JobModel(toy_job(TARGETS, max_epochs=12), cost=Cost(0.5))
    shared = fastarrivals.shared_tries(model, 5, 1.2)
    assert shared is not None
    for _, starts, ends, ratios in _groups(5):
        codes = shared.codes(5, starts, ends)
        rows = shared.rows(codes, ratios)
        arr = np.array(codes, dtype=np.int64)
        cols = shared.columns(arr, ratios[shared.submissions(arr) - 1])
        for k, name in enumerate(RUN_FIELDS):
            assert [r[k] for r in rows] == cols[name].tolist(), name
