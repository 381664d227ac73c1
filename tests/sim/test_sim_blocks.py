"""Several policies replayed in one executor walk give each policy the rows of its own walk, bit for bit.

:func:`~zeus_bench.sim.replay.replay_policies` asks every policy's face over seeds as one
(:class:`~zeus_bench.sim.blocks.Blocks`); :func:`~zeus_bench.sim.replay.replay_many` of each
policy alone is the reference: the arena's replays (every registered policy, the references too)
on the published traces and on toy jobs, the horizon known and not, with per-try noise, and with
seeds that Zeus's face leaves to the scalar fallback.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.optimizers import streams
from zeus_bench.sim import blocks
from zeus_bench.sim.policies import POLICIES, get_policy, seed_zeus
from zeus_bench.sim.replay import JobModel, SeedTries, default_recurrences, replay_many, replay_policies
from zeus_bench.sim.rules import KNOWN, UNKNOWN, Horizon
from zeus_bench.studies.crossfit import split_job

NOISY = {8: [6.0, 9.0, np.nan], 16: [4.0, 5.0, 7.0], 32: [5.0, 6.0], 64: [3.0, 4.0, 9.0, np.nan]}
SPREAD = {b: [2.0 + (k * b) % 7 for k in range(1, 6)] for b in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)}


def assert_blocks_same_rows(
    model: JobModel,
    names: list[str],
    seeds: list[int],
    beta: float,
    n: int,
    horizon: Horizon = KNOWN,
    noise: float = 0.0,
) -> int:
    """Each policy's rows from the one walk equal its own walk's, column by column; returns the rows."""
    classes = [get_policy(p) for p in names]
    together = replay_policies(model, classes, seeds, beta, n, horizon=horizon, noise=noise)
    assert len(together) == len(classes)
    rows = 0
    for name, cls, ours in zip(names, classes, together, strict=True):
        alone: SeedTries = replay_many(model, cls, seeds, beta, n, horizon=horizon, noise=noise)
        assert ours.seeds == alone.seeds == len(seeds)
        assert np.array_equal(ours.seed, alone.seed), name
        assert set(ours.columns) == set(alone.columns)
        for col, theirs in alone.columns.items():
            assert ours.columns[col].dtype == theirs.dtype, (name, col)
            assert ours.columns[col].tobytes() == theirs.tobytes(), (name, col)  # NaN and -0.0 too
        rows += len(alone.seed)
    return rows


def test_published_traces_every_policy_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    names = list(POLICIES)
    rows = 0
    for workload in ts.workload_ids("v100"):  # the arena's case: the judged half, Zeus's face on arrays
        whole = ts.job("v100", workload)
        model = JobModel(split_job(whole, "judge"), Cost(0.5))
        rows += assert_blocks_same_rows(model, names, list(range(1, 18)), 2.0, default_recurrences(whole))
    for workload in ts.workload_ids("a40")[:3]:  # the horizon not told, noisy tries
        whole = ts.job("a40", workload)
        model = JobModel(split_job(whole, "tune"), Cost(0.3))
        rows += assert_blocks_same_rows(
            model, names, list(range(3, 9)), 1.25, default_recurrences(whole), UNKNOWN, 0.05
        )
    assert rows > 50_000


def test_seeds_a_face_leaves_are_replayed_inside_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Zeus's face leaves every seed (a rejectable visiting-order word in each): the walk's fallback replays them."""
    fell_back: list[list[int]] = []
    real = blocks.Blocks.fallback

    def counted(self: blocks.Blocks, ids: list[int]) -> blocks.Blocks:
        fell_back.append(list(ids))
        return real(self, ids)

    monkeypatch.setattr(blocks.Blocks, "fallback", counted)
    monkeypatch.setattr(seed_zeus.SeedZeus, "MIN_SEEDS", 1)
    monkeypatch.setattr(streams, "holds_word", lambda raw, words: np.ones(raw.shape, dtype=bool))
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    assert_blocks_same_rows(model, ["ucb1", "zeus", "bs-only", "baseline"], list(range(1, 9)), 2.0, 50)
    # zeus's and bs-only's blocks are seeds 8-15 and 16-23 of the walk: some of them went
    assert len(fell_back) == 1 and len(fell_back[0]) >= 3
    assert all(8 <= i < 24 for i in fell_back[0])


@pytest.mark.parametrize("beta", [1.0, 2.0, math.inf])
def test_toy_jobs_same_rows(beta: float) -> None:
    names = list(POLICIES)
    for job in (toy_job(), toy_job(NOISY)):
        for n in (1, 40):
            assert assert_blocks_same_rows(JobModel(job, Cost(0.5)), names, list(range(1, 7)), beta, n) > 0


def test_one_policy_and_no_seed() -> None:
    model = JobModel(toy_job(), Cost(0.5))
    assert_blocks_same_rows(model, ["ucb1"], [4, 5, 6], 2.0, 10)
    empty = replay_policies(model, [get_policy("zeus"), get_policy("baseline")], [], 2.0, 10)
    assert [t.seeds for t in empty] == [0, 0]
    assert [len(t.seed) for t in empty] == [0, 0]
