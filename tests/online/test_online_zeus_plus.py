"""zeus-plus online: the same SafeHillClimb through BatchSizeOptimizer, persisted between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zeus_bench.core.errors import ConfigError
from zeus_bench.online.optimizer import BatchSizeOptimizer
from zeus_bench.optimizers.hill_climb import SafeHillClimb

BS = [32, 64, 128, 256]


def cost_of(b: int) -> float:
    """A job whose cost falls towards 128 and rises after."""
    return {32: 300.0, 64: 150.0, 128: 100.0, 256: 400.0}[b]


def test_online_zeus_plus_walks_to_the_cheapest_and_resumes(tmp_path: Path) -> None:
    state = tmp_path / "job.json"
    seen = []
    for _ in range(40):
        opt = BatchSizeOptimizer(
            state, BS, 32, policy="zeus-plus", recurrences=50
        )  # a fresh process each run
        b = opt.next_batch_size()
        seen.append(b)
        c = cost_of(b)
        cap = opt.policy.stop_cost(float("inf"))
        reached = c <= cap
        opt.report(b, min(c, cap), reached, epochs=10)
    assert isinstance(opt.policy, SafeHillClimb)
    assert opt.best_batch_size() == 128
    assert seen[0] == 32 and seen[-5:] == [128] * 5
    assert json.loads(state.read_text())["job"]["policy"] == "zeus-plus"
    # 256 is clearly dearer than 128: probed at most once.
    assert seen.count(256) <= 1


def test_online_zeus_plus_stops_a_hopeless_larger_probe_after_one_epoch(tmp_path: Path) -> None:
    opt = BatchSizeOptimizer(tmp_path / "s.json", [64, 128], 64, policy="zeus-plus", recurrences=50)
    assert opt.next_batch_size() == 64
    opt.report(64, 100.0, True, epochs=10)
    assert opt.next_batch_size() == 128  # the probe
    # Its first epoch costs 12 J: x 10 epochs of the incumbent = 120 J > 100 J, it cannot win.
    assert opt.should_stop(12.0, epochs_done=1)
    assert not opt.should_stop(9.0, epochs_done=1)


def _cumulative_over_b0(
    tmp_path: Path, costs: dict[int, float], recurrences: int
) -> tuple[list[int], list[float]]:
    """40 recurrences of a job (10 epochs each, ``costs`` per batch size), the runs told or not.

    A run stopped after its first epoch is followed by another in the same recurrence, as a job
    must still reach its target. Returns the runs' batch sizes (negative: stopped) and, per
    recurrence, the cumulative cost over running b0 (32) throughout.
    """
    state = tmp_path / f"job-{recurrences}-{len(list(tmp_path.iterdir()))}.json"
    spent, seen, ratios = 0.0, [], []
    for t in range(1, 41):
        while True:
            opt = BatchSizeOptimizer(state, BS, 32, policy="zeus-plus", recurrences=recurrences)
            b = opt.next_batch_size()
            c = costs[b]
            if opt.should_stop(c / 10, epochs_done=1):
                opt.report(b, c / 10, False, early_stopped=True, epochs=1)
                spent += c / 10
                seen.append(-b)
                continue
            opt.report(b, c, True, epochs=10)
            spent += c
            seen.append(b)
            break
        ratios.append(spent / (t * costs[32]))
    return seen, ratios


def test_online_zeus_plus_untold_the_runs_explores_later_and_overruns_less(tmp_path: Path) -> None:
    # Larger is cheaper: told 40 runs it moves at once, untold (the anytime budget) only once its
    # savings fund the first epoch's scouting; both reach 128.
    cheaper = {32: 300.0, 64: 150.0, 128: 100.0, 256: 400.0}
    told, _ = _cumulative_over_b0(tmp_path, cheaper, 40)
    untold, _ = _cumulative_over_b0(tmp_path, cheaper, 0)
    assert told[1] == 64 and untold[:4] == [32] * 4
    assert told[-1] == untold[-1] == 128
    # Larger is dearer: the scouting epoch is all either spends, but untold spends it later, on a
    # larger cumulative cost (told: 1.075 at the second recurrence; untold: 1.025 at the sixth).
    dearer = {32: 100.0, 64: 150.0, 128: 200.0, 256: 400.0}
    _, told_r = _cumulative_over_b0(tmp_path, dearer, 40)
    _, untold_r = _cumulative_over_b0(tmp_path, dearer, 0)
    assert max(untold_r) < max(told_r)
    assert max(told_r) == pytest.approx(1.075) and max(untold_r) == pytest.approx(1.025)


def test_online_recurrences_are_checked_and_part_of_the_job(tmp_path: Path) -> None:
    for bad in (-1, 2.5, True, "10"):
        with pytest.raises(ConfigError, match="recurrences must be a whole number >= 0"):
            BatchSizeOptimizer(tmp_path / "x.json", BS, 32, policy="zeus-plus", recurrences=bad)  # type: ignore[arg-type]
    state = tmp_path / "s.json"
    opt = BatchSizeOptimizer(state, BS, 32, policy="zeus-plus", recurrences=10)
    opt.report(opt.next_batch_size(), 10.0, True)
    assert opt.policy.horizon == 10
    with pytest.raises(ConfigError, match="different recurrences"):
        BatchSizeOptimizer(state, BS, 32, policy="zeus-plus")
    # A state saved before the setting existed (no key) is a job whose number of runs is unknown.
    old = tmp_path / "old.json"
    BatchSizeOptimizer(old, BS, 32, policy="zeus-plus").report(32, 10.0, True)
    data = json.loads(old.read_text())
    del data["job"]["recurrences"]
    old.write_text(json.dumps(data))
    assert BatchSizeOptimizer(old, BS, 32, policy="zeus-plus").policy.horizon == 0


def test_online_policy_mismatch_and_unknown(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    opt = BatchSizeOptimizer(state, BS, 32, policy="zeus-plus")
    opt.report(opt.next_batch_size(), 10.0, True)
    with pytest.raises(ConfigError, match="different policy"):
        BatchSizeOptimizer(state, BS, 32, policy="zeus")
    with pytest.raises(ConfigError, match="unknown online policy"):
        BatchSizeOptimizer(tmp_path / "t.json", BS, 32, policy="zeus++")
