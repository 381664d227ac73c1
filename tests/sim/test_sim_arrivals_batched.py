"""The arrival replay over many groups: shared tries, dispatch by method, the generic loop's rows."""

from __future__ import annotations

import numpy as np
import pytest
from sim_toy import toy_job

from zeus_bench.sim import arrivals, fastarrivals
from zeus_bench.sim.arrivals import replay_group, replay_groups, synthetic_arrivals
from zeus_bench.sim.policies import Outcome, get_policy
from zeus_bench.sim.replay import BanditKnobs, JobModel

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
    model = JobModel(toy_job(TARGETS, max_epochs=12), eta=0.5)
    groups = _groups(seed)
    zeus = get_policy("zeus")
    batched = list(replay_groups(model, zeus, seed, beta, groups))
    assert [name for name, _ in batched] == [g[0] for g in groups]
    generic = [
        arrivals._replay_generic(model, zeus, seed, beta, g[1], g[2], g[3], 0, BanditKnobs()) for g in groups
    ]
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

    model = JobModel(toy_job(TARGETS, max_epochs=12), eta=0.5)
    starts, ends, ratios = _groups(3, n=1)[0][1:]
    g = (starts, ends, ratios)
    expected = replay_group(model, zeus, 3, 2.0, *g)
    assert len(fused) == 1
    assert replay_group(model, Renamed, 3, 2.0, *g) == expected and len(fused) == 2
    assert replay_group(model, Watching, 3, 2.0, *g) == expected and len(fused) == 2
    assert replay_group(model, zeus, 3, 2.0, starts, ends, ratios, window=3) != []
    assert len(fused) == 2  # a window: the generic loop
