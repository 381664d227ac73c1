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
from zeus_bench.sim.replay import JobModel
from zeus_bench.sim.rules import KNOWN

NAMES = ["zeus-plus", "zeus-plus-safe"]
SEEDS = list(range(1, 21))


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
