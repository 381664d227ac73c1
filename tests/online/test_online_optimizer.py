from __future__ import annotations

import json
import math

import numpy as np
import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.online.optimizer import BatchSizeOptimizer, OptimizerSettings
from zeus_bench.optimizers.bandit import PruningThompsonSampling

BATCH_SIZES = [16, 32, 64, 128, 256]


def outcome(bs: int, rng: np.random.Generator) -> tuple[float, bool]:
    """A synthetic job: 64 is cheapest, 256 never reaches the target, costs are noisy."""
    base = {16: 900.0, 32: 700.0, 64: 500.0, 128: 650.0, 256: 1500.0}[bs]
    return base * rng.uniform(0.9, 1.1), bs != 256


def test_persisted_optimizer_resumes_exactly(tmp_path):
    """Twelve recurrences, each in a fresh object from the file, against one in-memory bandit."""
    path = tmp_path / "job.optimizer.json"
    reference = PruningThompsonSampling(BATCH_SIZES, 128, np.random.default_rng(7))
    env_a, env_b = np.random.default_rng(99), np.random.default_rng(99)
    chosen = []
    for _ in range(12):
        opt = BatchSizeOptimizer(path, BATCH_SIZES, 128, cost=Cost(0.5), beta=2.0, seed=7)
        bs = opt.next_batch_size()
        assert bs == reference.predict()
        cost, reached = outcome(bs, env_a)
        ref_cost, ref_reached = outcome(bs, env_b)
        opt.report(bs, cost, reached, energy_j=cost, time_s=1.0)
        reference.observe(bs, ref_cost, ref_reached)
        chosen.append(bs)
    final = BatchSizeOptimizer(path, BATCH_SIZES, 128, seed=7)
    assert final.policy.state_dict() == reference.state_dict()
    assert [r.batch_size for r in final.runs] == chosen
    assert final.best_batch_size() == reference.best_batch_size() == 64
    assert chosen[:4] == [128, 64, 32, 16]  # pruning goes down from the default first
    # a crash between predict and report: the next recurrence is asked the same
    again = BatchSizeOptimizer(path, BATCH_SIZES, 128, seed=7)
    assert again.next_batch_size() == BatchSizeOptimizer(path, BATCH_SIZES, 128, seed=7).next_batch_size()


def test_settings_object_and_keywords_are_one_job(tmp_path):
    """``settings=`` and its fields by name write the same state; a keyword overrides the object's."""
    settings = OptimizerSettings(cost=Cost(0.3), beta=3.0, seed=5, policy="zeus-plus", recurrences=20)
    by_object = BatchSizeOptimizer(tmp_path / "a.json", BATCH_SIZES, 64, settings)
    by_keywords = BatchSizeOptimizer(
        tmp_path / "b.json",
        BATCH_SIZES,
        64,
        cost=Cost(0.3),
        beta=3.0,
        seed=5,
        policy="zeus-plus",
        recurrences=20,
    )
    for opt in (by_object, by_keywords):
        opt.report(opt.next_batch_size(), 400.0, True)
    a, b = (json.loads((tmp_path / f"{x}.json").read_text()) for x in "ab")
    assert (a["job"], a["policy"]) == (b["job"], b["policy"])  # the runs differ by their clock only
    job = a["job"]
    assert (job["eta"], job["beta"], job["policy"], job["recurrences"], job["prune_rounds"]) == (
        0.3, 3.0, "zeus-plus", 20, 2
    )  # fmt: skip
    over = BatchSizeOptimizer(tmp_path / "c.json", BATCH_SIZES, 64, settings, seed=9, prune_rounds=3)
    assert (over.job["seed"], over.job["prune_rounds"], over.job["policy"]) == (9, 3, "zeus-plus")
    with pytest.raises(TypeError, match="polcy"):
        BatchSizeOptimizer(tmp_path / "d.json", BATCH_SIZES, 64, polcy="zeus")


def test_early_stop_threshold(tmp_path):
    opt = BatchSizeOptimizer(tmp_path / "s.json", BATCH_SIZES, 64, beta=2.0)
    assert opt.best_cost_j() == math.inf and not opt.should_stop(1e12)
    opt.report(64, 100.0, True)
    opt.report(32, 80.0, False)  # failed runs do not set the bar
    assert opt.best_cost_j() == 100.0
    assert not opt.should_stop(200.0)
    assert opt.should_stop(200.1)
    off = BatchSizeOptimizer(tmp_path / "s2.json", BATCH_SIZES, 64, beta=math.inf)
    off.report(64, 1.0, True)
    assert not off.should_stop(1e300)


def test_state_file_layout(tmp_path):
    path = tmp_path / "s.json"
    opt = BatchSizeOptimizer(path, BATCH_SIZES, 64)
    opt.report(64, 10.0, True, energy_j=8.0, time_s=2.0, epochs=3)
    data = json.loads(path.read_text())
    assert data["version"] == 1 and data["job"]["default_batch_size"] == 64
    assert data["runs"][0]["batch_size"] == 64 and data["runs"][0]["epochs"] == 3
    assert data["policy"]["history"] == [[64, 10.0, True]]


def test_mismatched_or_corrupt_state(tmp_path):
    path = tmp_path / "s.json"
    BatchSizeOptimizer(path, BATCH_SIZES, 64).report(64, 1.0, True)
    with pytest.raises(ConfigError, match=r"different batch_sizes, default_batch_size"):
        BatchSizeOptimizer(path, [8, 16], 16)
    with pytest.raises(ConfigError, match="different eta"):
        BatchSizeOptimizer(path, BATCH_SIZES, 64, cost=Cost(0.9))
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="corrupt batch-size optimizer state"):
        BatchSizeOptimizer(path, BATCH_SIZES, 64)
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(ConfigError, match="state version 99"):
        BatchSizeOptimizer(path, BATCH_SIZES, 64)


def test_invalid_arguments(tmp_path):
    with pytest.raises(ConfigError, match="eta"):
        BatchSizeOptimizer(tmp_path / "a.json", BATCH_SIZES, 64, cost=Cost(2))
    with pytest.raises(ConfigError, match="beta"):
        BatchSizeOptimizer(tmp_path / "a.json", BATCH_SIZES, 64, beta=0)
    with pytest.raises(ConfigError, match="default batch size 48"):
        BatchSizeOptimizer(tmp_path / "a.json", BATCH_SIZES, 48)
    with pytest.raises(ConfigError, match="batch size 7"):
        BatchSizeOptimizer(tmp_path / "a.json", BATCH_SIZES, 64).report(7, 1.0, True)


def _report_after_barrier(path: str, barrier, batch_size: int, cost: float) -> None:
    opt = BatchSizeOptimizer(path, [16, 32, 64], 32)  # both recurrences load the state first
    barrier.wait()
    opt.report(batch_size, cost, reached=True)


def test_two_recurrences_reporting_at_once_keep_both_runs(tmp_path):
    import multiprocessing as mp

    path = tmp_path / "job.optimizer.json"
    BatchSizeOptimizer(path, [16, 32, 64], 32).report(32, 100.0, reached=True)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [
        ctx.Process(target=_report_after_barrier, args=(str(path), barrier, bs, cost))
        for bs, cost in ((16, 90.0), (64, 110.0))
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    state = json.loads(path.read_text())
    assert sorted((r["batch_size"], r["cost_j"]) for r in state["runs"]) == [
        (16, 90.0),
        (32, 100.0),
        (64, 110.0),
    ]
    resumed = BatchSizeOptimizer(path, [16, 32, 64], 32)
    assert len(resumed.runs) == 3 and resumed.best_cost_j() == 90.0
