"""zeus-plus: its optimizer's rules, its safety and gain on a small grid, state round trips."""

from __future__ import annotations

import math
import shutil
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
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=1000)
    opt.observe(opt.predict(), 100.0, True, 10.0)
    assert opt.predict() == 128
    assert opt.stop_cost(math.inf) == pytest.approx(140.0)
    assert opt.stop_cost(120.0) == 120.0  # never above beta x best
    # Its first epoch (12 J) x the incumbent's 10 epochs > 100 J: a larger batch cannot win.
    assert opt.stop_cost(math.inf, 12.0) == 12.0


def test_probe_capped_by_the_allowance_over_the_horizon() -> None:
    """50 recurrences known: the 2 % allowance (2 J x 50) is all a first probe may spend."""
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=50)
    opt.observe(opt.predict(), 100.0, True, 10.0)
    # 1.02 x 50 x 100 J - 100 J spent - 49 x 100 J for this and the later recurrences.
    assert opt.budget(100.0) == pytest.approx(100.0)
    assert opt.predict() == 128 and opt.stop_cost(math.inf) == pytest.approx(100.0)


def test_larger_batch_without_a_cheaper_epoch_stops_after_one() -> None:
    """A larger batch size whose epoch costs no less than the incumbent's cannot win (it rarely
    needs fewer epochs): its probe stops after its first epoch, even if the incumbent's mean cost
    (here inflated by a profiling run) leaves room."""
    opt = SafeHillClimb([64, 128], 64, margin=0.4, horizon=1000)
    assert opt.stop_cost(math.inf, 8.0) == math.inf  # b0's run; its epoch costs 8 J
    opt.observe(64, 100.0, True, 10.0)
    assert opt.predict() == 128
    assert opt.stop_cost(math.inf, 8.0) == 8.0
    assert opt.stop_cost(math.inf, 7.9) == pytest.approx(140.0)


def test_no_probe_beyond_a_dearer_batch_size() -> None:
    """Unimodal cost curve: 240 is dearer than the incumbent 256, so 128 (beyond it) is not probed,
    even where (as here) the curve is not unimodal; without pruning it is, and wins."""
    cost = {128: 0.7, 240: 1.0, 256: 0.8}
    pruned = run(SafeHillClimb([128, 240, 256], 240, horizon=1000), cost, 20)
    assert pruned[:2] == [240, 256] and 128 not in pruned
    full = SafeHillClimb([128, 240, 256], 240, horizon=1000, prune=False)
    assert 128 in run(full, cost, 20) and full.incumbent() == 128


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
        ({"horizon": -1}, "horizon"),
        ({"loan": -1.0}, "loan"),
        ({"lookahead": math.nan}, "lookahead"),
    ],
)
def test_bad_arguments(kwargs: dict[str, float], message: str) -> None:
    args: dict[str, object] = {"batch_sizes": BS, "default_batch_size": 64, **kwargs}
    with pytest.raises(ConfigError, match=message):
        SafeHillClimb(**args)  # type: ignore[arg-type]


def test_anytime_budget_never_overdrawn_where_b0_is_best() -> None:
    """Anytime budget (``horizon`` 0), b0 the cheapest: at every recurrence the cumulative cost
    stays within 1.02 x the baseline's so far (no loan: no epoch cost promises a saving)."""
    cost = {16: 3.0, 32: 1.6, 64: 1.05, 128: 1.0, 256: 1.2, 512: 4.0}
    opt = SafeHillClimb(BS, 128, safety=0.02, horizon=0)
    for t in range(1, 60):
        run(opt, cost, 1)
        assert opt.spent <= 1.02 * t * cost[128] + 1e-9, (t, opt.spent)
    assert opt.incumbent() == 128 and opt.probes > 0


def test_anytime_budget_caps_a_probe_and_retries_it() -> None:
    """A probe the budget cuts before it cost the incumbent's mean is inconclusive: not ruled out,
    tried again once the savings made pay for it, and then kept when it wins."""
    opt = SafeHillClimb([64, 128], 128, margin=0.4, horizon=0, loan=0.0, lookahead=0.0)
    opt.baseline_ratio = 1.5  # the JIT limit saves a third of b0's baseline cost each recurrence
    opt.observe(opt.predict(), 100.0, True, 10.0)
    assert opt.budget(100.0) == pytest.approx(1.02 * 2 * 150.0 - 100.0 - 100.0)
    assert opt.predict() == 64
    assert opt.stop_cost(math.inf) == pytest.approx(106.0)  # the budget, below 1.4 x 100
    opt.observe(64, 60.0, False, 6.0)  # cut at 60 J, below the incumbent's 100: inconclusive
    assert 64 not in opt.ruled_out and 64 not in opt.tried
    assert opt.predict() == 128  # not again this recurrence: 46 J left < 1.4 x 60 J
    opt.observe(128, 100.0, True, 10.0)
    # The JIT limit's savings grew the budget (1.02 x 150 - 100 J a recurrence): 1.02 x 3 x 150
    # - 260 spent - 100 in reserve = 99 J >= 1.4 x 60 J, so 64 is tried again, capped at 99 J.
    assert opt.predict() == 64 and opt.stop_cost(math.inf) == pytest.approx(99.0)
    opt.observe(64, 80.0, True, 8.0)
    assert opt.incumbent() == 64


def test_anytime_state_round_trip_and_version_1() -> None:
    a = SafeHillClimb(BS, 256, horizon=0, loan=2.0, lookahead=3.0)
    run(a, {b: 1.0 + abs(math.log2(b / 64)) for b in BS}, 5)
    b = SafeHillClimb.from_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict() and b.loan == 2.0 and b.lookahead == 3.0
    new_keys = ("loan", "lookahead", "epoch_costs", "short")
    old = {k: v for k, v in a.state_dict().items() if k not in new_keys}
    assert SafeHillClimb.from_state_dict({**old, "version": 1}).epoch_costs == {}


GRID = [("v100", w) for w in ("imagenet", "squad", "sentiment140", "cifar100")] + [
    ("a40", w) for w in ("imagenet", "squad", "sentiment140")
]
SEEDS = range(1, 6)


def _totals(job_model: JobModel, policy: str, seeds: range = SEEDS) -> np.ndarray:
    n = default_recurrences(job_model.job)
    return np.array([sum(r[7] for r in replay(job_model, get_policy(policy), s, 2.0, n)) for s in seeds])


@pytest.mark.parametrize(("gpu", "workload"), GRID)
def test_safe_on_small_grid(zeus_traces: Path, gpu: str, workload: str) -> None:
    """Cumulative cost at most 1.02 x the baseline's (b0 at the max limit), mean over seeds 1-5."""
    job = TraceSet(zeus_traces).job(gpu, workload)
    model = JobModel(job, 0.5)
    n = default_recurrences(job)
    for policy in ("zeus-plus", "zeus-plus-safe"):
        ratio = _totals(model, policy) / (n * references(model).baseline)
        assert ratio.mean() <= 1.02, (policy, ratio)


@pytest.fixture(scope="module")
def h200_traces(zeus_traces: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H200 projection as the workflow builds it: the Zeus train trace + the measured power."""
    power = Path(__file__).resolve().parents[2] / "results" / "traces" / "h200" / "power-h200.parquet"
    if not power.is_file():
        pytest.skip(f"no measured H200 power profile at {power}")
    out = tmp_path_factory.mktemp("h200-traces")
    shutil.copy(zeus_traces / "train.parquet", out)
    shutil.copy(power, out)
    return out


@pytest.mark.parametrize("workload", ["imagenet", "sentiment140", "librispeech"])
def test_safe_variant_safe_on_h200(h200_traces: Path, workload: str) -> None:
    """zeus-plus-safe (anytime budget) stays within 1.02 x the baseline on short H200 jobs
    (8-24 recurrences, b0 near the optimum), where the projected budget of zeus-plus does not
    (mean over seeds 1-20: these jobs are short, so 5 seeds are too few)."""
    model = JobModel(TraceSet(h200_traces).job("h200", workload), 0.5)
    n = default_recurrences(model.job)
    ratio = _totals(model, "zeus-plus-safe", range(1, 21)) / (n * references(model).baseline)
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
