"""``epoch_evidence``: a batch size dearer only by the epochs of its sampled paths bounds no search.

The job is V100 movielens-1m's tune half on one seed of the arena's fold 2 (issue 22): its 8192
drew a 7-epoch path twice, so it cost more than the incumbent 2048 although its epoch is cheaper;
without the rule the search never passes it and never reaches the optimum 16384.
"""

from __future__ import annotations

import math

import pytest

from zeus_bench.optimizers.hill_climb import SafeHillClimb

BS = [1024, 2048, 4096, 8192, 16384]
#: Cost of one epoch (J) at the JIT limit, per batch size (the trace's, rounded).
EPOCH = {1024: 2737.0, 2048: 1723.0, 4096: 1441.0, 8192: 1107.0, 16384: 1004.0}
#: Epochs to the target of the path each run draws (in turn).
PATHS = {1024: [6.0], 2048: [4.0], 4096: [7.0], 8192: [7.0], 16384: [4.0]}


def drive(opt: SafeHillClimb, n: int) -> list[int]:
    """n recurrences of the job; a run stops at the first epoch end past its cap. The batch sizes run."""
    seen, visits = [], dict.fromkeys(BS, 0)
    for _ in range(n):
        while True:
            b = opt.predict()
            seen.append(b)
            epochs = PATHS[b][visits[b] % len(PATHS[b])]
            visits[b] += 1
            cap = opt.stop_cost(math.inf, EPOCH[b])
            ran = min(epochs, max(1.0, math.ceil(cap / EPOCH[b]) if math.isfinite(cap) else epochs))
            reached = ran >= epochs
            opt.observe(b, ran * EPOCH[b], reached, ran)
            if reached:
                break
    return seen


@pytest.mark.parametrize("evidence", [False, True])
def test_a_batch_size_dearer_by_its_epochs_alone_does_not_end_the_search(evidence: bool) -> None:
    opt = SafeHillClimb(BS, 1024, horizon=100, epoch_evidence=evidence)
    seen = drive(opt, 40)
    assert 8192 in seen and opt.mean_cost(8192) > opt.mean_cost(2048)  # dearer than 2048, by its epochs
    assert EPOCH[8192] * 4.0 < opt.mean_cost(2048)  # ...its epoch at 2048's epochs is cheaper
    if evidence:
        assert 16384 in seen and opt.incumbent() == 16384 and seen[-5:] == [16384] * 5
    else:  # 16384 lies beyond 8192: pruned (unimodal curve), and 8192 hides its neighbours
        assert 16384 not in seen and opt.incumbent() == 2048


def test_a_batch_size_dearer_by_its_epoch_cost_still_bounds_the_search() -> None:
    # 8192's epoch made as dear as 2048's: it cannot win at 2048's epochs, so 16384 stays pruned.
    EPOCH[8192], before = 1800.0, EPOCH[8192]
    try:
        opt = SafeHillClimb(BS, 1024, horizon=100, epoch_evidence=True)
        seen = drive(opt, 40)
    finally:
        EPOCH[8192] = before
    assert 16384 not in seen and opt.incumbent() == 2048


def test_the_setting_is_saved_and_older_states_load_without_it() -> None:
    opt = SafeHillClimb(BS, 1024, epoch_evidence=True)
    state = opt.state_dict()
    assert SafeHillClimb.from_state_dict(state).epoch_evidence is True
    assert "epoch_evidence" in SafeHillClimb(BS, 1024).state_dict()  # on by default (the tune halves' pick)
    off = SafeHillClimb(BS, 1024, epoch_evidence=False).state_dict()
    assert "epoch_evidence" not in off  # off: the state saved as before the setting (byte for byte)
    assert SafeHillClimb.from_state_dict(off).epoch_evidence is False
    del state["epoch_evidence"]
    assert SafeHillClimb.from_state_dict(state).epoch_evidence is False  # as saved states before it ran
