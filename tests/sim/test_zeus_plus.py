"""zeus-plus: its optimizer's rules, its safety and gain on a small grid, state round trips."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from zeus_bench.errors import ConfigError
from zeus_bench.jobs import TraceSet
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.zeus_plus import SafeHillClimb
from zeus_bench.sim.replay import JobModel, default_recurrences, replay
from zeus_bench.sim.study import references

BS = [16, 32, 64, 128, 256, 512]


def run(opt: SafeHillClimb, cost: dict[int, float], n: int) -> list[int]:
    """Drive the optimizer for n recurrences on a noiseless job; returns the batch sizes run."""
    seen = []
    for _ in range(n):
        while True:
            b = opt.predict()
            seen.append(b)
            cap = opt.stop_cost(math.inf)
            reached = cost[b] <= cap
            opt.observe(b, min(cost[b], cap), reached, 10.0)
            if reached:
                break
    return seen


def test_registered_and_deterministic() -> None:
    assert "zeus-plus" in POLICIES and get_policy("zeus-plus").name == "zeus-plus"


def test_walks_down_a_unimodal_curve_and_stays() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, safety=0.02, horizon=50)
    opt.baseline_ratio = 1.1  # b0 at its maximum limit costs 10 % more than at its JIT limit
    seen = run(opt, cost, 40)
    assert opt.incumbent() == 64
    assert seen[-10:] == [64] * 10
    # 512 (twice as dear as b0) is stopped at its cap, never retried; 16 is never needed.
    assert seen.count(512) == 1 and 16 not in seen


def test_probe_stops_at_margin_over_incumbent() -> None:
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=50)
    opt.observe(opt.predict(), 100.0, True, 10.0)
    assert opt.predict() == 128
    assert opt.stop_cost(math.inf) == pytest.approx(140.0)
    assert opt.stop_cost(120.0) == 120.0  # never above beta x best
    # Its first epoch (12 J) x the incumbent's 10 epochs > 100 J: a larger batch cannot win.
    assert opt.stop_cost(math.inf, 12.0) == 12.0


def test_no_probe_without_budget() -> None:
    """No saving and no allowance: the optimizer never leaves b0."""
    opt = SafeHillClimb(BS, 64, safety=0.0, horizon=1)
    seen = run(opt, {b: 1.0 for b in BS}, 30)
    assert set(seen) == {64}


def test_prior_first_and_ruled_out_never() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, horizon=50, prior_best=64, ruled_out=[512, 128])
    seen = run(opt, cost, 20)
    assert seen[:2] == [256, 64]
    assert 512 not in seen and 128 not in seen


def test_drift_restarts_the_search() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    opt = SafeHillClimb(BS, 256, horizon=50)
    opt.baseline_ratio = 1.1
    run(opt, cost, 30)
    assert opt.incumbent() == 64 and opt.resets == 0
    cost[64] = 2.0  # the optimum's epochs double
    seen = run(opt, cost, 15)
    assert opt.resets == 1
    assert opt.incumbent() == 128 and seen[-5:] == [128] * 5


def test_state_round_trip_continues_identically() -> None:
    cost = {16: 3.0, 32: 1.6, 64: 1.0, 128: 1.3, 256: 2.0, 512: 4.0}
    a = SafeHillClimb(BS, 256, horizon=50)
    run(a, cost, 3)
    b = SafeHillClimb.from_state_dict(a.state_dict())
    assert run(a, cost, 10) == run(b, cost, 10)
    with pytest.raises(ConfigError, match="state version"):
        SafeHillClimb.from_state_dict({**a.state_dict(), "version": 99})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"default_batch_size": 3}, "not among"),
        ({"margin": 0.0}, "margin"),
        ({"safety": -1.0}, "safety"),
        ({"window": -1}, "window"),
        ({"horizon": 0}, "horizon"),
    ],
)
def test_bad_arguments(kwargs: dict[str, float], message: str) -> None:
    args: dict[str, object] = {"batch_sizes": BS, "default_batch_size": 64, **kwargs}
    with pytest.raises(ConfigError, match=message):
        SafeHillClimb(**args)  # type: ignore[arg-type]


GRID = [("v100", w) for w in ("imagenet", "squad", "sentiment140", "cifar100")] + [
    ("a40", w) for w in ("imagenet", "squad", "sentiment140")
]
SEEDS = range(1, 6)


def _totals(job_model: JobModel, policy: str) -> np.ndarray:
    n = default_recurrences(job_model.job)
    return np.array([sum(r[7] for r in replay(job_model, get_policy(policy), s, 2.0, n)) for s in SEEDS])


@pytest.mark.parametrize(("gpu", "workload"), GRID)
def test_safe_on_small_grid(zeus_traces: Path, gpu: str, workload: str) -> None:
    """Cumulative cost at most 1.02 x the baseline's (b0 at the max limit), mean over seeds 1-5."""
    job = TraceSet(zeus_traces).job(gpu, workload)
    model = JobModel(job, 0.5)
    n = default_recurrences(job)
    ratio = _totals(model, "zeus-plus") / (n * references(model).baseline)
    assert ratio.mean() <= 1.02, ratio


def test_less_regret_than_zeus_where_b0_is_far(zeus_traces: Path) -> None:
    """On the jobs whose optimum is far from b0 zeus-plus's regret is below Zeus's."""
    ts = TraceSet(zeus_traces)
    for gpu, workload in (("v100", "cifar100"), ("a40", "librispeech"), ("a40", "movielens-1m")):
        model = JobModel(ts.job(gpu, workload), 0.5)
        plus, zeus = _totals(model, "zeus-plus").mean(), _totals(model, "zeus").mean()
        assert plus < zeus, (gpu, workload, plus / zeus)


def test_study_agrees_with_the_summary(zeus_traces: Path) -> None:
    """The study's ratios and regret are the summary table's (one definition, zeus_bench.sim.metrics)."""
    from zeus_bench.sim.grid import plan, simulate
    from zeus_bench.sim.study import compare
    from zeus_bench.sim.summarize import summarize

    ts = TraceSet(zeus_traces)
    tasks = plan(
        ts,
        "a40",
        ["sentiment140"],
        ["zeus", "zeus-plus", "baseline", "max-batch", "oracle"],
        [1, 2],
        [0.5],
        [2.0],
    )
    summary = summarize(simulate(tasks)).set_index("policy")
    study, _ = compare({"a40": [ts.job("a40", "sentiment140")]}, [1, 2], 0.5, 2.0)
    for row in study.itertuples():
        for col in (
            "cost_ratio_vs_baseline_cum_mean",
            "cost_ratio_vs_max_batch_cum_mean",
            "regret_vs_oracle_cum_pct_mean",
        ):
            assert getattr(row, col) == pytest.approx(summary.loc[row.policy, col], rel=1e-9), (
                row.policy,
                col,
            )
