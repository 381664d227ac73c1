"""Several drift hooks in one executor walk (the study's drift experiment), each seed's rows its own hook's.

:func:`~zeus_bench.sim.replay.replay_drifts` replays each (policy, window) under each drift hook
with one face per run over every hook's seeds and a hook per seed
(:class:`~zeus_bench.sim.executor.SeedDrifts`). :func:`replay_many` of each (run, hook) alone
is the reference, bit for bit: every registered policy and Zeus's window on the published
traces' scenarios, seeds enough that Zeus's array face takes over in the one walk, and seeds
handed back to the scalar face mid-walk. A walk whose seeds read another seed's hook gets other rows.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from tests.sim.test_sim_blocks import SPREAD
from zeus_bench.core.cost import Cost
from zeus_bench.sim.executor import DriftHook, Run, SeedDrifts, execute
from zeus_bench.sim.policies import POLICIES, Policy, PolicyContext, get_policy, seed_zeus
from zeus_bench.sim.replay import JobModel, SeedTries, default_recurrences, replay_drifts, replay_many
from zeus_bench.sim.rules import seed_generators
from zeus_bench.sim.scenarios.drift import Drift, scenario

ZEUS = get_policy("zeus")


def same(a: SeedTries, b: SeedTries) -> bool:
    """Whether two replays' rows are the same, bit for bit (dtypes too)."""
    return (
        a.seeds == b.seeds
        and np.array_equal(a.seed, b.seed)
        and all(
            a.columns[c].dtype == v.dtype and a.columns[c].tobytes() == v.tobytes()
            for c, v in b.columns.items()
        )
    )


def differ(
    model: JobModel,
    runs: list[tuple[type[Policy], int]],
    seeds: list[int],
    drifts: list[DriftHook | None],
    n: int,
) -> list[str]:
    """The (run, hook) pairs whose rows in the one walk differ from their own replay's."""
    together = replay_drifts(model, runs, seeds, drifts, 2.0, n)
    assert [len(t) for t in together] == [len(drifts)] * len(runs)
    out = []
    for (cls, window), rows in zip(runs, together, strict=True):
        for g, (drift, ours) in enumerate(zip(drifts, rows, strict=True)):
            alone = replay_many(model, cls, seeds, 2.0, n, window=window, drift=drift)
            if not same(ours, alone):
                out.append(f"{cls.name} window {window} hook {g}")
    return out


def test_published_traces_every_policy_under_every_hook_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    cost = Cost(0.5)
    runs = [(get_policy(p), 0) for p in POLICIES] + [(ZEUS, 10), (get_policy("sw-ts"), 10)]
    for gpu, workload in [("v100", w) for w in ts.workload_ids("v100")[:2]] + [
        ("a40", ts.workload_ids("a40")[0])
    ]:
        job = ts.job(gpu, workload)
        n = default_recurrences(job)
        drifts: list[DriftHook | None] = [
            Drift(scenario(job, cost, kind, n // 2, factor, 20), job)
            for kind, factor in itertools.product(("step", "tilt"), (1.5, 2.0))
        ]
        drifts.append(None)  # a run without drift beside them
        # 6 seeds x 5 hooks: Zeus's array face in the one walk, its scalar face alone
        assert differ(JobModel(job, cost), runs, list(range(1, 7)), drifts, n) == [], (gpu, workload)


def test_the_hooks_table_holds_each_hooks_own_floats() -> None:
    calls: list[tuple[int, int]] = []

    def hook(r: int, b: int) -> float:
        calls.append((r, b))
        return 1.0 + r / 7.0 + b / 3.0

    table = SeedDrifts.of([None, hook], [1, 0, 1], 5, 4)
    assert table.factors.shape == (2, 6, 4)
    assert (table.factors[0] == 1.0).all()
    assert sorted(calls) == [(r, b) for r in range(1, 6) for b in range(4)]  # each asked once
    assert all(table.factors[1, r, b] == hook(r, b) for r in range(1, 6) for b in range(4))
    assert table.group.tolist() == [1, 0, 1]
    assert table.subset([2, 1]).group.tolist() == [1, 0]


def _toy_walk(
    drifts: SeedDrifts, seeds: list[int], gone_at: int | None, handed: list[list[int]]
) -> SeedTries:
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    gens = [seed_generators(s) for s in seeds]
    policies = [ZEUS(PolicyContext(model.job, model.cost, 2.0, 0, p, 40)) for _, p in gens]
    face = ZEUS.batched(model, policies)
    assert isinstance(face, seed_zeus.SeedZeus)
    if gone_at is not None:
        real, calls = face.decide_arrays, [0]

        def decide(ids: np.ndarray, left: np.ndarray):  # type: ignore[no-untyped-def]
            calls[0] += 1
            if calls[0] == gone_at:
                face.again = [3, 17]  # seeds of hooks 0 and 1, handed back mid-walk
            return real(ids, left)

        face.decide_arrays = decide  # type: ignore[method-assign]
        fallback = face.fallback

        def recorded(ids):  # type: ignore[no-untyped-def]
            handed.append(list(ids))
            return fallback(ids)

        face.fallback = recorded  # type: ignore[method-assign]
    return execute(model, face, [e for e, _ in gens], Run(2.0, 40, drifts))[0]


@pytest.mark.parametrize("gone_at", [None, 12])
def test_toy_seeds_keep_their_own_hook_and_a_shared_hook_shows(gone_at: int | None) -> None:
    model = JobModel(toy_job(SPREAD), Cost(0.5))

    def rise(r: int, b: int) -> float:
        return 1.0 if r < 15 else 1.0 + 0.4 * (b % 3)

    def fall(r: int, b: int) -> float:
        return 1.0 if r < 10 else 0.6 + 0.1 * b

    hooks: list[DriftHook | None] = [rise, fall]
    seeds = list(range(1, 11)) * 2  # seed s under each hook: 20 seeds, the array face
    group = [0] * 10 + [1] * 10
    handed: list[list[int]] = []
    ours = _toy_walk(SeedDrifts.of(hooks, group, 40, len(model.job.batch_sizes)), seeds, gone_at, handed)
    assert handed == ([] if gone_at is None else [[3, 17]])
    for g, hook in enumerate(hooks):
        alone = replay_many(model, ZEUS, seeds[:10], 2.0, 40, drift=hook)
        assert same(ours.seed_range(10 * g, 10 * g + 10), alone), g
    shared = _toy_walk(SeedDrifts.of(hooks, [0] * 20, 40, len(model.job.batch_sizes)), seeds, gone_at, [])
    assert not same(shared.seed_range(10, 20), replay_many(model, ZEUS, seeds[:10], 2.0, 40, drift=fall))
