"""Every built-in policy's face over seeds on arrays gives each seed the rows of its scalar face, bit for bit.

The scalar face (one policy object per seed, asked in turn: ``Policy.batched``'s default) is the
reference; the array faces (``seed_arms.ArmArrays`` of the bandit baselines and ``bo-ei``; ``bs-only`` on
Zeus's ``SeedZeus`` at its maximum limits; ``seed_simple``'s of pl-only, grid-search and the
fixed references) are held to it on the published traces' whole grid (both
halves of the paths, several eta and beta, the horizon known and unknown) and on toy jobs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import Policy, arm_faces, bo, get_policy, seed_simple, seed_zeus
from zeus_bench.sim.policies.seed_arms import ArmArrays
from zeus_bench.sim.policies.seeds import SeedArrays
from zeus_bench.sim.replay import JobModel, default_recurrences, replay_many
from zeus_bench.sim.rules import KNOWN, UNKNOWN, Horizon
from zeus_bench.studies.crossfit import split_job
from zeus_bench.traces.jobs import JobTrace

#: The policies with an array face, and the face each gets.
FACES: dict[str, type] = {
    "bs-only": seed_zeus.SeedZeus,
    "eps-greedy": arm_faces.EpsilonGreedyArrays,
    "ucb1": arm_faces.UCB1Arrays,
    "sw-ts": arm_faces.SlidingWindowTSArrays,
    "conservative-ucb": arm_faces.ConservativeUCBArrays,
    "bo-ei": bo.BayesOptEIArrays,
    "pl-only": seed_simple.JitB0Arrays,
    "grid-search": seed_simple.GridArrays,
    "baseline": seed_simple.FixedArrays,
    "max-batch": seed_simple.FixedArrays,
    "oracle": seed_simple.FixedArrays,
}
SEEDS = list(range(1, 21))


def scalar(cls: type[Policy]) -> type[Policy]:
    """``cls`` with the default face: one object per seed (the reference)."""
    return type(f"Scalar{cls.__name__}", (cls,), {"batched": classmethod(Policy.batched.__func__)})  # type: ignore[attr-defined]


def assert_same_rows(
    model: JobModel, name: str, seeds: list[int], beta: float, n: int, horizon: Horizon
) -> int:
    """The array face's rows equal the scalar face's, column by column; returns the rows."""
    cls = get_policy(name)
    arrays = replay_many(model, cls, seeds, beta, n, horizon=horizon)
    objects = replay_many(model, scalar(cls), seeds, beta, n, horizon=horizon)
    assert np.array_equal(arrays.seed, objects.seed)
    for col, ours in arrays.columns.items():
        theirs = objects.columns[col]
        assert ours.dtype == theirs.dtype, col
        # bit for bit: NaN equals NaN, -0.0 differs from 0.0
        assert ours.tobytes() == theirs.tobytes(), (name, col)
    return len(arrays.seed)


@pytest.fixture(autouse=True)
def every_seed_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seed_zeus.SeedZeus, "MIN_SEEDS", 1)


def _ctx(model: JobModel, seed: int, recurrences: int | None = None):  # type: ignore[no-untyped-def]
    from zeus_bench.sim.policies import PolicyContext

    return PolicyContext(model.job, model.cost, 2.0, 0, np.random.default_rng(seed), recurrences)


@pytest.mark.parametrize("name", list(FACES))
def test_the_face_is_the_array_face(name: str) -> None:
    model = JobModel(toy_job(), Cost(0.5))
    cls = get_policy(name)
    face = cls.batched(model, [cls(_ctx(model, s, 20)) for s in SEEDS])
    assert isinstance(face, FACES[name])
    assert callable(getattr(face, "decide_arrays", None))
    assert not isinstance(scalar(cls).batched(model, [cls(_ctx(model, 1, 20))]), FACES[name])


@pytest.mark.parametrize("name", list(FACES))
def test_published_traces_same_rows(zeus_traces: Path, name: str) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    rows = 0
    for gpu in ("v100", "a40"):
        for workload in ts.workload_ids(gpu):
            whole = ts.job(gpu, workload)
            n = default_recurrences(whole)
            for k, (job, eta, beta, horizon) in enumerate(
                (
                    (split_job(whole, "judge"), 0.5, 2.0, KNOWN),
                    (split_job(whole, "tune"), 0.3, 1.25, UNKNOWN),
                    (whole, 0.8, 3.0, KNOWN),
                )
            ):
                seeds = SEEDS if k == 0 else SEEDS[:8]
                rows += assert_same_rows(JobModel(job, Cost(eta)), name, seeds, beta, n, horizon)
    assert rows > 10_000


NOISY = {8: [6.0, 9.0, np.nan], 16: [4.0, 5.0, 7.0], 32: [5.0, 6.0], 64: [3.0, 4.0, 9.0, np.nan]}
SPREAD = {b: [2.0 + (k * b) % 7 for k in range(1, 6)] for b in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)}


@pytest.mark.parametrize("name", list(FACES))
@pytest.mark.parametrize("beta", [1.0, 1.25, 2.0, math.inf])
def test_toy_jobs_same_rows(name: str, beta: float) -> None:
    jobs: list[JobTrace] = [toy_job(), toy_job(NOISY), toy_job(SPREAD, b0=32)]
    for job in jobs:
        for n in (1, 3, 40):
            assert_same_rows(JobModel(job, Cost(0.5)), name, list(range(1, 13)), beta, n, KNOWN)


def test_a_subclass_changing_a_rule_gets_the_scalar_face() -> None:
    model = JobModel(toy_job(), Cost(0.5))
    ucb1 = get_policy("ucb1")
    tuned: type[Policy] = type("Tuned", (ucb1,), {"alpha": 0.1})  # a constant: the face still applies
    assert isinstance(tuned.batched(model, [tuned(_ctx(model, s)) for s in SEEDS]), ArmArrays)
    changed: type[Policy] = type("Changed", (ucb1,), {"choose": lambda self: self.b0})
    face: SeedArrays | object = changed.batched(model, [changed(_ctx(model, s)) for s in SEEDS])
    assert not isinstance(face, ArmArrays)
    bo = get_policy("bo-ei")
    other: type[Policy] = type("Other", (bo,), {"posterior": vars(bo)["posterior"]})
    assert not isinstance(other.batched(model, [other(_ctx(model, s)) for s in SEEDS]), ArmArrays)


def _policy_states(model: JobModel, cls: type[Policy], seeds: list[int], n: int) -> list[object]:
    """Each seed's policy generator state after a replay of ``n`` recurrences through ``cls``'s face."""
    from zeus_bench.sim.executor import Run, execute
    from zeus_bench.sim.policies import PolicyContext
    from zeus_bench.sim.rules import seed_generators

    generators = [seed_generators(seed) for seed in seeds]
    policies = [cls(PolicyContext(model.job, model.cost, 2.0, 0, pol, n)) for _, pol in generators]
    execute(model, cls.batched(model, policies), [env for env, _ in generators], Run(2.0, n))
    return [p.ctx.rng.bit_generator.state for p in policies]


@pytest.mark.parametrize("n", [1, 3, 40, 300])
def test_sw_ts_leaves_each_generator_where_its_scalar_face_does(n: int) -> None:
    # sw-ts's face draws each seed's normals ahead, in blocks (arm_faces.NormalsAhead); the end of
    # the walk puts every generator back where the draws taken leave it (no settle fails it, as
    # 300 recurrences take more than a block of draws, and fewer leave most of a block unread).
    model = JobModel(toy_job(NOISY), Cost(0.5))
    cls = get_policy("sw-ts")
    seeds = list(range(1, 13))
    ours = _policy_states(model, cls, seeds, n)
    face = cls.batched(model, [cls(_ctx(model, s, n)) for s in seeds])
    assert isinstance(face, arm_faces.SlidingWindowTSArrays)
    assert ours == _policy_states(model, scalar(cls), seeds, n)
