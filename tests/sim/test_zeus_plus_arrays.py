"""``zeus-plus`` and ``zeus-plus-safe``'s face over seeds on arrays gives each seed the rows of its scalar face, bit for bit.

The scalar face (one policy object per seed, asked in turn) is the reference; the array face
(:class:`~zeus_bench.sim.policies.seed_zeus_plus.ZeusPlusArrays`) is held to it on the published
traces' whole grid (both halves of the paths, several eta and beta, the horizon known and
unknown) and on toy jobs, with ``test_sim_array_faces.py``'s checks of the other faces.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from tests.sim import test_sim_array_faces as faces
from tests.sim.test_sim_array_faces import NOISY, _ctx, scalar
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import Policy, get_policy
from zeus_bench.sim.policies.seed_zeus_plus import ZeusPlusArrays
from zeus_bench.sim.policies.seeds import ScalarPolicies
from zeus_bench.sim.replay import JobModel, default_recurrences, replay_many
from zeus_bench.sim.rules import KNOWN

NAMES = ["zeus-plus", "zeus-plus-safe"]
SEEDS = list(range(1, 21))


@pytest.fixture(autouse=True)
def quiet_at_every_seed_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quiet seeds on arrays in faces of any size (by default from ZeusPlusArrays.MIN_QUIET_SEEDS)."""
    monkeypatch.setattr(ZeusPlusArrays, "MIN_QUIET_SEEDS", 1)


def test_quiet_seeds_need_a_face_of_min_quiet_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ZeusPlusArrays, "MIN_QUIET_SEEDS", 24)
    model = JobModel(toy_job(), Cost(0.5))
    cls = get_policy("zeus-plus")
    small = cls.batched(model, [cls(_ctx(model, s, 20)) for s in range(1, 24)])
    large = cls.batched(model, [cls(_ctx(model, s, 20)) for s in range(1, 25)])
    assert isinstance(small, ZeusPlusArrays) and small.quiet is None
    assert isinstance(large, ZeusPlusArrays) and large.quiet is not None


@pytest.mark.parametrize("name", NAMES)
def test_the_face_is_the_array_face(name: str) -> None:
    model = JobModel(toy_job(), Cost(0.5))
    cls = get_policy(name)
    assert isinstance(cls.batched(model, [cls(_ctx(model, s, 20)) for s in SEEDS]), ZeusPlusArrays)
    assert isinstance(scalar(cls).batched(model, [cls(_ctx(model, 1, 20))]), ScalarPolicies)


@pytest.mark.parametrize("name", NAMES)
def test_published_traces_same_rows(zeus_traces: Path, name: str) -> None:
    faces.test_published_traces_same_rows(zeus_traces, name)  # the other faces' grid


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("beta", [1.0, 1.25, 2.0, math.inf])
def test_toy_jobs_same_rows(name: str, beta: float) -> None:
    faces.test_toy_jobs_same_rows(name, beta)


def test_a_subclass_changing_a_rule_gets_the_scalar_face() -> None:
    model = JobModel(toy_job(), Cost(0.5))
    zp = get_policy("zeus-plus")
    tuned: type[Policy] = type("Tuned", (zp,), {"margin": 0.4})  # a constant: the face still applies
    assert isinstance(tuned.batched(model, [tuned(_ctx(model, s)) for s in SEEDS]), ZeusPlusArrays)
    changed: type[Policy] = type("Changed", (zp,), {"feed": lambda self, *a, **k: None})
    assert isinstance(changed.batched(model, [changed(_ctx(model, s)) for s in SEEDS]), ScalarPolicies)


def test_the_objects_end_as_the_scalar_faces_leave_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a replay on the array face, every seed's optimizer holds what the scalar face leaves it."""
    from zeus_bench.sim.policies import base, zeus_plus
    from zeus_bench.sim.replay import replay_many

    faces: list[object] = []

    def kept(face: type) -> type:
        class Kept(face):  # type: ignore[misc,valid-type]
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, **kwargs)
                faces.append(self)

        return Kept

    monkeypatch.setattr(zeus_plus, "ZeusPlusArrays", kept(ZeusPlusArrays))
    monkeypatch.setattr(base, "scalar_face", lambda m, p: kept(ScalarPolicies)(m, p, True))
    model = JobModel(toy_job(NOISY), Cost(0.5))
    cls = get_policy("zeus-plus")
    for c in (cls, scalar(cls)):
        replay_many(model, c, list(range(1, 9)), 2.0, 30, horizon=KNOWN)
    assert [type(f).__mro__[1] for f in faces] == [ZeusPlusArrays, ScalarPolicies]
    states = [[p.climber.state_dict() for p in getattr(f, "zp", None) or f.policies] for f in faces]  # type: ignore[attr-defined]
    assert states[0] == states[1]
    assert len(states[0]) == 8 and any(s["probes"] for s in states[0])
    assert np.isfinite([s["spent"] for s in states[0]]).all()


@pytest.mark.parametrize("name", NAMES)
def test_quiet_seeds_take_most_decisions_and_wake_when_not_certain(
    zeus_traces: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the published V100 jobs most decisions are a quiet seed's, seeds wake, and the rows stay the scalar face's."""
    from zeus_bench.optimizers.climb_arrays import QuietClimbs
    from zeus_bench.traces.jobs import TraceSet

    seen = {"asked": 0, "sure": 0, "taken": 0, "observed": 0}
    idle, observe = QuietClimbs.idle, QuietClimbs.observe

    def counted_idle(self: QuietClimbs, rows: np.ndarray) -> np.ndarray:
        out = idle(self, rows)
        seen["asked"] += len(rows)
        seen["sure"] += int(out.sum())
        return out

    def counted_observe(self: QuietClimbs, rows: np.ndarray, *args: np.ndarray) -> np.ndarray:
        out = observe(self, rows, *args)
        seen["observed"] += len(rows)
        seen["taken"] += int(out.sum())
        return out

    monkeypatch.setattr(QuietClimbs, "idle", counted_idle)
    monkeypatch.setattr(QuietClimbs, "observe", counted_observe)
    ts = TraceSet(zeus_traces)
    rows = 0
    for workload in ts.workload_ids("v100"):
        job = ts.job("v100", workload)
        rows += faces.assert_same_rows(
            JobModel(job, Cost(0.5)), name, SEEDS, 2.0, default_recurrences(job), KNOWN
        )
    quiet = seen["sure"]
    assert quiet > 0.5 * rows  # most tries were decided on arrays
    assert seen["sure"] < seen["asked"] and seen["taken"] < seen["observed"]  # and some seeds woke


@pytest.mark.parametrize("name", NAMES)
def test_a_drift_wakes_quiet_seeds_as_the_scalar_face(zeus_traces: Path, name: str) -> None:
    """Under the study's drift scenarios (costs rising mid-replay) the rows are the scalar face's."""
    from zeus_bench.sim.scenarios.drift import Drift, scenario
    from zeus_bench.traces.jobs import TraceSet

    job = TraceSet(zeus_traces).job("v100", "cifar100")
    cost = Cost(0.5)
    model = JobModel(job, cost)
    n = 120
    cls = get_policy(name)
    for kind, factor in (("tilt", 3.0), ("step", 2.0), ("morph", 1.5)):
        drift = Drift(scenario(job, cost, kind, n // 2, factor, 20), job)
        arrays = replay_many(model, cls, SEEDS, 2.0, n, horizon=KNOWN, drift=drift)
        objects = replay_many(model, scalar(cls), SEEDS, 2.0, n, horizon=KNOWN, drift=drift)
        assert np.array_equal(arrays.seed, objects.seed)
        for col, ours in arrays.columns.items():
            assert ours.tobytes() == objects.columns[col].tobytes(), (kind, col)


@pytest.mark.parametrize("name", NAMES)
def test_warm_started_quiet_seeds_as_the_scalar_face(zeus_traces: Path, name: str) -> None:
    """With a prior from the V100 (its best batch size probed first, far ones ruled out), rows the scalar face's."""
    from zeus_bench.sim.scenarios.warmstart import bind_prior, prior_for
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    for workload in ("cifar100", "librispeech"):
        job = ts.job("a40", workload)
        cls = bind_prior(get_policy(name), prior_for(job, ts, "v100", Cost(0.5)))
        model, n = JobModel(job, Cost(0.5)), default_recurrences(job)
        arrays = replay_many(model, cls, SEEDS, 2.0, n, horizon=KNOWN)
        objects = replay_many(model, scalar(cls), SEEDS, 2.0, n, horizon=KNOWN)
        assert np.array_equal(arrays.seed, objects.seed)
        for col, ours in arrays.columns.items():
            assert ours.tobytes() == objects.columns[col].tobytes(), (workload, col)
