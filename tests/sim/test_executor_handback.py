"""The executor's hand-back of seeds under per-try noise (issue 36: a rule told from its slip).

A seed the array face reports ``gone`` is replayed from scratch by the scalar face, its
environment and noise generators put back at their start: its rows must be those of its replay
alone. Here the gone report is injected mid-replay (after noisy tries of those seeds, so their
noise generators have moved), for two seeds that are not the first ones (a generator taken by
position rather than by seed shows), and after tries of the other seeds too.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.executor import Run, execute
from zeus_bench.sim.policies import PolicyContext, get_policy, seed_zeus
from zeus_bench.sim.policies.base import scalar_face
from zeus_bench.sim.replay import JobModel
from zeus_bench.sim.rules import noise_generator, seed_generators

ZEUS = get_policy("zeus")
SPREAD = {b: [2.0 + (k * b) % 7 for k in range(1, 6)] for b in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)}
SEEDS = list(range(1, 13))
GONE = [3, 6]  # positions among the seeds


def _run(
    model: JobModel, array: bool, gone_at: int | None = None, handed: list[list[int]] | None = None
) -> tuple[list[str], list[float]]:
    gens = [seed_generators(s) for s in SEEDS]
    policies = [ZEUS(PolicyContext(model.job, model.cost, 1.5, 0, p)) for _, p in gens]
    face = ZEUS.batched(model, policies) if array else scalar_face(model, policies)
    if gone_at is not None:
        assert isinstance(face, seed_zeus.SeedZeus)
        real, calls = face.decide_arrays, [0]

        def decide(ids: np.ndarray, left: np.ndarray):  # type: ignore[no-untyped-def]
            calls[0] += 1
            if calls[0] == gone_at:
                face.again = list(GONE)  # the face reports them gone at this step
            return real(ids, left)

        face.decide_arrays = decide  # type: ignore[method-assign]
        fallback = face.fallback

        def recorded(ids):  # type: ignore[no-untyped-def]
            if handed is not None:
                handed.append(list(ids))
            return fallback(ids)

        face.fallback = recorded  # type: ignore[method-assign]
    run = Run(1.5, 30, noise=0.05)
    tries, least = execute(model, face, [e for e, _ in gens], run, [noise_generator(s) for s in SEEDS])
    return [repr(rows) for rows in tries], least.tolist()


def test_seeds_handed_back_mid_replay_under_noise_give_their_rows_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(seed_zeus.SeedZeus, "MIN_SEEDS", 1)  # the array face on these few seeds
    model = JobModel(toy_job(SPREAD), Cost(0.5))
    scalar = _run(model, False)
    for step in (12, 25):
        handed: list[list[int]] = []
        assert _run(model, True, gone_at=step, handed=handed) == scalar
        assert handed == [GONE]  # the scalar face replayed these two from their start
    assert _run(model, True) == scalar  # and without a hand-back


@pytest.mark.parametrize("seed", [0, 1, 7, 200, 2**40 + 3, 2**70 + 11])
def test_a_seeds_generators_are_default_rngs_of_it_however_often_asked(seed: int) -> None:
    """Both generators start as ``default_rng(seed)``; asked again (words kept per process) and after
    the first ones drew, still; a numpy integer seed is the same seed."""
    expect = np.random.default_rng(seed).bit_generator.state
    env, pol = seed_generators(seed)
    assert env.bit_generator.state == expect and pol.bit_generator.state == expect
    first = env.random(5)
    again = seed_generators(np.int64(seed) if seed < 2**63 else seed)
    assert all(g.bit_generator.state == expect for g in again)
    assert np.array_equal(again[0].random(5), first) and not np.array_equal(pol.random(5), env.random(5))
