"""One job's several sets of training paths (lanes) replayed in one executor walk, each seed's rows its own lane's.

:func:`~zeus_bench.sim.replay.replay_lanes` asks one face over every lane for a policy that reads
no paths (``reads_paths`` False), a face per lane for one that does; :func:`replay_many` of each
(lane, policy) alone is the reference, bit for bit: every registered policy on halves of other
splits and folds (other numbers of paths), on replicate traces, with a fold's own constants. A
path-reading policy declared blind gets wrong rows (the declaration is what keeps them right).
Classes of one face family (``zeus-plus``, a fold's variant of it, ``zeus-plus-safe``) share one
face, each seed with its own constants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from tests.sim.test_sim_blocks import NOISY, SPREAD
from zeus_bench.core.cost import Cost
from zeus_bench.optimizers.climb_arrays import QuietClimbs
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.policies.builtin import Oracle
from zeus_bench.sim.policies.seed_zeus_plus import ZeusPlusArrays
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, Lane, SeedTries, replay_lanes, replay_many
from zeus_bench.sim.rules import KNOWN, UNKNOWN, Horizon
from zeus_bench.studies.crossfit import replicate_job, split_job, variant
from zeus_bench.traces.jobs import JobTrace


def lane_rows_differ(
    lanes: list[Lane], beta: float, n: int, horizon: Horizon = KNOWN, noise: float = 0.0
) -> list[str]:
    """The (lane, policy) pairs whose rows from the one walk differ from their own walk's; asserts the shapes."""
    together = replay_lanes(lanes, beta, n, horizon, noise)
    assert [len(t) for t in together] == [len(lane.classes) for lane in lanes]
    differ = []
    for k, (lane, rows) in enumerate(zip(lanes, together, strict=True)):
        for cls, ours in zip(lane.classes, rows, strict=True):
            alone: SeedTries = replay_many(
                lane.model, cls, list(lane.seeds), beta, n, horizon=horizon, noise=noise
            )
            assert ours.seeds == alone.seeds == len(lane.seeds)
            same = np.array_equal(ours.seed, alone.seed) and all(
                ours.columns[c].dtype == v.dtype and ours.columns[c].tobytes() == v.tobytes()
                for c, v in alone.columns.items()
            )
            if not same:
                differ.append(f"lane {k} {cls.name}")
    return differ


def job_lanes(whole: JobTrace, classes: tuple[type[Policy], ...], eta: float = 0.5) -> list[Lane]:
    """Split 1's judged half (seeds 1-6), split 2's (3-8), split 1's tune half (other numbers of paths), a replicate."""
    cost = Cost(eta)
    judged = split_job(whole, "judge")
    return [
        Lane(JobModel(judged, cost), tuple(range(1, 7)), classes),
        Lane(JobModel(split_job(whole, "judge", 2), cost), tuple(range(3, 9)), classes),
        Lane(JobModel(split_job(whole, "tune"), cost), (2, 5), classes),
        Lane(JobModel(replicate_job(judged, 1, 1, 0), cost), (1,), classes),
    ]


def test_published_traces_every_policy_same_rows(zeus_traces: Path) -> None:
    from zeus_bench.sim.replay import default_recurrences
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    classes = tuple(get_policy(p) for p in POLICIES)
    tuned = variant(
        "zeus-plus", {"margin": 0.4, "up_first": True}
    )  # a fold's own constants, zeus-plus's face
    for workload in ts.workload_ids("v100")[:4]:
        whole = ts.job("v100", workload)
        lanes = job_lanes(whole, classes)
        lanes[2] = Lane(lanes[2].model, lanes[2].seeds, (*classes, tuned))
        assert lane_rows_differ(lanes, 2.0, default_recurrences(whole)) == [], workload
    whole = ts.job("a40", ts.workload_ids("a40")[0])  # the horizon not told, noisy tries
    assert lane_rows_differ(job_lanes(whole, classes, 0.3), 1.25, 40, UNKNOWN, 0.05) == []


@pytest.mark.parametrize("targets", [NOISY, SPREAD])
def test_toy_jobs_same_rows(targets: dict[int, list[float]]) -> None:
    whole = toy_job({b: [*t, *t] for b, t in targets.items()})  # every batch size splittable
    assert lane_rows_differ(job_lanes(whole, tuple(get_policy(p) for p in POLICIES)), 2.0, 30) == []


class BlindOracle(Oracle):
    """oracle declared blind to the paths it reads (the least expected cost of their mean epochs)."""

    name = "blind-oracle"

    reads_paths = False


def test_a_path_reading_policy_declared_blind_gets_another_lanes_rows() -> None:
    # An epoch costs the same at every batch size: lane 0's oracle is 64 (3.5 epochs), lane 1's 16.
    lane0 = toy_job({16: [4.0, 5.0], 32: [5.0, 6.0], 64: [3.0, 4.0]})
    lane1 = toy_job({16: [4.0, 5.0], 32: [5.0, 6.0], 64: [8.0, 9.0]})
    cost = Cost(0.5)
    lanes = [Lane(JobModel(job, cost), (1, 2), (get_policy("oracle"), BlindOracle)) for job in (lane0, lane1)]
    assert lane_rows_differ(lanes, 2.0, 10) == ["lane 1 blind-oracle"]


class ZeusPlusOwnStop(ZeusPlus):
    """zeus-plus with a rule of its own (no early stop above its bound): a face family of its own."""

    name = "zeus-plus-own-stop"

    def stop_cost(self, default: float, epoch_cost: float = float("nan")) -> float:
        return 2.0 * default


def test_a_face_family_shares_one_face(monkeypatch: pytest.MonkeyPatch) -> None:
    zeus_plus, safe = get_policy("zeus-plus"), get_policy("zeus-plus-safe")
    tuned = variant("zeus-plus", {"margin": 0.4, "up_first": True})
    assert zeus_plus.face_family() is safe.face_family() is tuned.face_family() is ZeusPlus
    assert ZeusPlusOwnStop.face_family() is ZeusPlusOwnStop
    assert get_policy("zeus").face_family() is get_policy("zeus")
    faces: list[list[type]] = []  # each ZeusPlusArrays made: its seeds' classes
    quiet: list[int] = []
    made, entered = ZeusPlusArrays.__init__, QuietClimbs.enter

    def spy(self: ZeusPlusArrays, model: JobModel, policies: Any) -> None:
        faces.append([type(p) for p in policies])
        made(self, model, policies)

    def enter(self: QuietClimbs, i: int, cl: Any, beta: float) -> None:
        quiet.append(i)
        entered(self, i, cl, beta)

    monkeypatch.setattr(ZeusPlusArrays, "__init__", spy)
    monkeypatch.setattr(QuietClimbs, "enter", enter)
    whole = toy_job({b: [*t, *t] for b, t in NOISY.items()})
    lanes = job_lanes(whole, (zeus_plus, tuned, safe, ZeusPlusOwnStop))  # 15 seeds each
    replay_lanes(lanes, 2.0, 40)
    # one face of 45 seeds (quiet seeds on arrays from 24: each class's 15 alone would not)
    assert [len(f) for f in faces] == [45] and set(faces[0]) == {zeus_plus, tuned, safe}
    assert quiet and max(quiet) >= 30  # zeus-plus-safe's seeds (the last 15) turned quiet too
    faces.clear()
    assert lane_rows_differ(lanes, 2.0, 40) == []  # each seed's rows its class's alone


def test_lanes_of_another_job_are_refused() -> None:
    cost = Cost(0.5)
    zeus = (get_policy("zeus"),)
    other = toy_job(SPREAD)
    with pytest.raises(ValueError, match="lanes differ in more than their training paths"):
        replay_lanes(
            [Lane(JobModel(toy_job(NOISY), cost), (1,), zeus), Lane(JobModel(other, cost), (1,), zeus)],
            2.0,
            5,
        )
    longer = toy_job(NOISY, max_epochs=12)  # the same configurations, more epochs allowed
    with pytest.raises(ValueError, match="lanes differ"):
        replay_lanes(
            [Lane(JobModel(toy_job(NOISY), cost), (1,), zeus), Lane(JobModel(longer, cost), (1,), zeus)],
            2.0,
            5,
        )


def test_lanes_at_other_places_in_time_are_refused() -> None:
    from tests.helpers.cost_terms import KwhTerm

    cost = Cost(0.5, (KwhTerm(5.0),))  # a priced term: each recurrence's place in time is kept
    zeus = (get_policy("zeus"),)
    job = toy_job(NOISY)
    same = [Lane(JobModel(job, cost, [0.0, 0.0, 60.0, 120.0]), (k,), zeus) for k in (1, 2)]
    assert [len(r) for r in replay_lanes(same, 2.0, 3)] == [1, 1]
    later = [same[0], Lane(JobModel(job, cost, [0.0, 0.0, 60.0, 180.0]), (2,), zeus)]
    with pytest.raises(ValueError, match="lanes differ in more than their training paths"):
        replay_lanes(later, 2.0, 3)


def test_no_lane_no_rows() -> None:
    assert replay_lanes([], 2.0, 5) == []


def test_seed_range_renumbers_a_block_of_seeds() -> None:
    model = JobModel(toy_job(NOISY), Cost(0.5))
    tries = replay_many(model, get_policy("zeus"), [4, 5, 6, 7], 2.0, 6)
    middle = tries.seed_range(1, 3)
    assert middle.seeds == 2
    assert middle == [tries[1], tries[2]]
    assert tries.seed_range(4, 4).seeds == 0 and len(tries.seed_range(4, 4).seed) == 0
