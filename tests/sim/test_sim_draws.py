"""The replay's fast paths equal what they replace: NumPy's draws, sums and the exact posteriors."""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.optimizers.bandit import PruningThompsonSampling
from zeus_bench.optimizers.posterior import numpy_sum, sum_and_variance
from zeus_bench.optimizers.rng import MASK32, ChoiceDraws, PathDraws, rejected_words


def _position(rng: np.random.Generator) -> tuple[int, int, int]:
    s = rng.bit_generator.state
    return s["state"]["state"], s["has_uint32"], s["uinteger"] if s["has_uint32"] else 0


@pytest.mark.parametrize("seed", range(40))
def test_permutation_equals_choice_without_replacement(seed: int) -> None:
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    draws = ChoiceDraws(ours)
    for k in range(60):
        n = (1, 2, 3, 5, 6, 7, 10, 13, 15, 64)[(seed + k) % 10]
        if k % 3 == 2:
            draws.skip(n)
            theirs.choice(n, n, replace=False)
        else:
            assert draws.permutation(n) == theirs.choice(n, n, replace=False).tolist()
        if k % 5 == 0:  # whole-output draws interleave without touching the 32-bit buffer
            assert ours.standard_normal(n).tolist() == theirs.standard_normal(n).tolist()
    draws.sync()
    assert _position(ours) == _position(theirs)
    # After sync the generator is consistent for outside use, and the wrapper re-reads it.
    assert ours.choice(7, 7, replace=False).tolist() == theirs.choice(7, 7, replace=False).tolist()
    assert draws.permutation(9) == theirs.choice(9, 9, replace=False).tolist()


def test_permutation_through_rejections() -> None:
    # Large populations make Lemire's rejection branch likely (seed 29 takes it at n = 10000).
    for seed in (29, 3, 11):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        draws = ChoiceDraws(ours)
        assert draws.permutation(10_000) == theirs.choice(10_000, 10_000, replace=False).tolist()
        draws.skip(10_000)
        theirs.choice(10_000, 10_000, replace=False)
        draws.sync()
        assert _position(ours) == _position(theirs)


def test_permutation_starts_from_a_buffered_word() -> None:
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    ours.choice(2, 1, replace=False)  # leaves half an output in the 32-bit buffer
    theirs.choice(2, 1, replace=False)
    assert ours.bit_generator.state["has_uint32"] == 1
    assert ChoiceDraws(ours).permutation(6) == theirs.choice(6, 6, replace=False).tolist()


def test_other_bit_generators_use_numpy_itself() -> None:
    ours, theirs = np.random.Generator(np.random.MT19937(4)), np.random.Generator(np.random.MT19937(4))
    assert ChoiceDraws(ours).permutation(8) == theirs.choice(8, 8, replace=False).tolist()
    draw = PathDraws(np.random.Generator(np.random.MT19937(9)))
    other = np.random.Generator(np.random.MT19937(9))
    assert [draw(10) for _ in range(50)] == [int(other.integers(0, 10)) for _ in range(50)]


@pytest.mark.parametrize("seed", range(20))
def test_path_draws_equal_integers(seed: int) -> None:
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    draw = PathDraws(ours, block=7)  # small blocks: refills happen mid-sequence
    sizes = [1, 2, 4, 5, 10, 97, 2**31 + 5, 3 * 2**30, 2**32]  # the large ones reject often
    for k in range(400):
        n = sizes[(seed + k) % len(sizes)]
        assert draw(n) == int(theirs.integers(0, n)), (k, n)


def test_sums_and_variances_follow_numpys_order() -> None:
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 511, 1000, 4097]:
        # Rewards of a recurring job: negative costs spanning orders of magnitude.
        a = -rng.uniform(1e3, 1e9, n) * 10.0 ** rng.integers(-2, 3, n)
        x = a.tolist()
        assert numpy_sum(x) == float(a.sum()), n
        assert sum_and_variance(x) == (float(a.sum()), float(a.var())), n
    assert sum_and_variance([-5.0, -5.0, -5.0]) == (-15.0, 0.0)


@pytest.mark.parametrize("span", [*range(2, 70), 96, 1000, 4097])
def test_rejected_words_are_exactly_lemires(span: int) -> None:
    threshold = (1 << 32) % span
    words = rejected_words(span)
    assert all(((w * span) & MASK32) < threshold for w in words)
    assert len(set(words)) == len(words)
    # Complete: w -> w * span mod 2**32 hits each multiple of gcd(span, 2**32) gcd times, so
    # these are all the rejected words (skip's check for small n relies on it).
    g = span & -span
    assert len(words) == g * -(-threshold // g)


def _drive(opt: PruningThompsonSampling, costs: dict[int, list[float]], steps: int) -> list[int]:
    asked, seen = [], {b: 0 for b in costs}
    for _ in range(steps):
        b = opt.predict()
        asked.append(b)
        opt.observe(b, costs[b][seen[b] % len(costs[b])], True)
        seen[b] += 1
    return asked


@pytest.mark.parametrize("seed", range(12))
def test_certified_samples_decide_as_the_exact_posteriors(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(100 + seed)
    sizes = [8, 16, 32, 64, 128]
    # Costs close between arms (near-ties), repeated values (zero variance) and spread ones.
    costs = {b: (1e7 * (1 + 0.01 * rng.random(rng.integers(1, 6)))).tolist() for b in sizes}
    costs[16] = [costs[8][0]] * 3  # an arm with no variance, at another arm's first cost
    fast = PruningThompsonSampling(sizes, 32, np.random.default_rng(seed), prune_rounds=0)
    asked_fast = _drive(fast, costs, 300)
    exact = PruningThompsonSampling(sizes, 32, np.random.default_rng(seed), prune_rounds=0)
    monkeypatch.setattr(exact, "_sampled_arm", lambda arms, z: None)  # always the exact path
    assert _drive(exact, costs, 300) == asked_fast
    assert fast.state_dict() == exact.state_dict()


def test_near_tie_falls_back_to_the_exact_posteriors() -> None:
    opt = PruningThompsonSampling([8, 16], 8, np.random.default_rng(0), prune_rounds=0)
    for b in (8, 8, 16, 16):
        opt.observe(b, 5.0, True)  # identical arms: the samples tie exactly
    assert opt._sampled_arm([8, 16], [0.3, 0.3]) is None
    assert opt.predict() == 8  # exact path: equal samples, the first arm wins (argmax)
    opt.observe(16, 50.0, True)
    assert opt._sampled_arm([8, 16], [0.0, 0.0]) == 8
