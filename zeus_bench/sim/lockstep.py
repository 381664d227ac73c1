"""The ``zeus`` policy's replay of many seeds at once: the rows of :func:`replay.replay`, in columns.

Every try of every seed is one step of NumPy array operations over the seeds, in lockstep (the
seeds' timelines are independent: a step is simply the next try of each):

* first pruning (:func:`_prune`): the batch-size optimizer's pruning draws nothing, so each
  seed's next batch size follows from its own outcomes, kept as arrays (round, candidates,
  directions, good batch sizes, the round's best);
* then Thompson Sampling (:func:`_run`), from a :class:`Handover` per seed (a seed whose first
  prediction would still explore an arm is replayed by the generic loop instead, seed by seed);
* the draws come from each seed's generators' raw 64-bit outputs, fetched in blocks: the visiting
  order's words (:class:`~zeus_bench.optimizers.rng.ChoiceDraws` skips ``n - 1`` whole outputs) and
  one normal draw per arm, each from one output as NumPy's ziggurat takes it
  (:func:`~zeus_bench.optimizers.rng.fast_normals`); a draw that needs more outputs (about 0.7% of
  them) is resolved from them when the ziggurat's wedge test is decided beyond doubt, else made
  by NumPy itself on a generator moved to that output (which tells how many it took);
* the winner is the arm of largest sample from the certified approximate posteriors (as the
  scalar loop decides); a near-tie is decided from the exact posteriors of the arm's rewards;
* the path, budget, cost (with a batch size's profiling first epoch) and observation are the
  scalar loop's arithmetic, element by element (IEEE operations give the same doubles in NumPy
  and in Python);
* a rejected Lemire word is redrawn as NumPy does; a visiting order whose words include a
  rejectable one (about one try in a billion) makes that seed replay again in the generic loop.

The environment's rules (path draw, budget, penalty, JIT first epoch, cost) are
:mod:`zeus_bench.sim.env`'s, called on arrays over the seeds.

The rows are therefore the same as :func:`replay.replay`'s, seed by seed; the tests compare them
(``tests/sim/test_sim_lockstep.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.optimizers.bandit import MIN_OBSERVATIONS, PRUNE_ROUNDS
from zeus_bench.optimizers.posterior import (
    add_reward,
    approx_from_sums,
    largest_sample,
    posterior,
    running_sums,
)
from zeus_bench.optimizers.rng import (
    MASK32,
    REJECT_SET_MAX_N,
    normal_tables,
    rejectable_words,
    strip_densities,
)
from zeus_bench.optimizers.streams import PolicyStreams
from zeus_bench.sim.env import (
    draw_paths,
    early_stop_budget,
    recurrence_step,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.model import first_recurrence_error
from zeus_bench.sim.rules import seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel, Row

#: The try fields (RUN_FIELDS order) as the lockstep's columns hold them.
Columns = dict[str, np.ndarray]
#: One lockstep step's rows: seed positions, recurrence, attempt, batch-size index, epochs, energy,
#: time, cost, reached, ran, whether written, and profiled (None: none was).
Step = tuple[Any, ...]

_U32 = np.uint64(MASK32)
_SHIFT32 = np.uint64(32)
HANDOVER_OUTPUTS = 64  # environment outputs fetched per seed for its pruning


@dataclass
class Handover:
    """A seed at the end of its pruning, where its Thompson Sampling steps start (:func:`_run`).

    The recurrence bookkeeping, the arms (batch-size indices) with their running sums and
    rewards, the environment's words fetched but not used, and both generators (their raw
    outputs not yet taken; the optimizer holds no buffered 32-bit word).
    """

    recurrence: int
    attempt: int
    total: float
    ran: bool
    min_cost: float
    arms: list[int]
    sums: list[list[float]]
    rewards: list[list[float]]
    env_words: list[int]
    env_rng: np.random.Generator
    pol_rng: np.random.Generator
    pol_state: Any  # the policy generator's state here (before any output is fetched ahead)


class _Seeds(PolicyStreams):
    """Per-seed state of the steady seeds, one array row (or element) per seed."""

    def __init__(
        self, model: JobModel, beta: float, recurrences: int, handovers: list[Handover], ids: list[int]
    ) -> None:
        configs = model.at_jit_limits()
        assert configs is not None
        tables = normal_tables()
        assert tables is not None
        self.widths, self.thresholds = tables
        self.recurrences = recurrences
        self.beta = beta
        a = len(handovers)
        self.ids = np.array(ids, dtype=np.int64)  # each row's position among the seeds replayed
        self.live = np.ones(a, dtype=bool)  # False: finished or left, kept until the next compaction
        self.handovers = handovers
        n_arms = np.array([len(h.arms) for h in handovers], dtype=np.int64)
        width = int(n_arms.max())
        self.n_arms = n_arms
        self.cols = np.arange(width)
        valid = self.cols[None, :] < n_arms[:, None]
        self.valid = valid
        self.arm = np.zeros((a, width), dtype=np.intp)
        sums = np.zeros((4, a, width))
        sums[0] = 1.0  # padding: harmless values (its samples are forced to -inf)
        for i, h in enumerate(handovers):
            self.arm[i, : len(h.arms)] = h.arms
            for j, s in enumerate(h.sums):
                sums[:, i, j] = s
        self.sums = sums
        mean, std, c0, c1 = approx_from_sums(*sums)
        self.mean = np.where(valid, mean, -math.inf)
        self.std = np.where(valid, std, 0.0)
        self.c0 = np.where(valid, c0, 0.0).max(axis=1)  # bounds over the arms (as large as needed)
        self.c1 = np.where(valid, c1, 0.0).max(axis=1)
        self.rec = np.array([h.recurrence for h in handovers], dtype=np.int64)
        self.att = np.array([h.attempt for h in handovers], dtype=np.int64)
        self.total = np.array([h.total for h in handovers])
        self.ran = np.array([h.ran for h in handovers], dtype=bool)
        self.min_cost = np.array([h.min_cost for h in handovers])
        # Policy outputs: raw, the normal each makes alone, whether it does, rejectable words.
        self.pol_pos = np.zeros(a, dtype=np.int64)
        self.twins: dict[int, list[Any]] = {}  # seed id -> [PCG64, Generator, output position]
        self.made: dict[tuple[int, int], tuple[float, int]] = {}  # NumPy's draws at (seed id, output)
        self.pol_base = 0  # outputs dropped before column 0
        self.densities = strip_densities(self.widths)
        self.pol_raw = np.zeros((a, 0), dtype=np.uint64)
        self.rejectable = {
            n: np.array(sorted(rejectable_words(n)), dtype=np.uint64)
            for n in set(n_arms.tolist())
            if rejectable_words(n)
        }
        # Environment words: the handed-over rest of the fetched block, then further outputs.
        self.env_pos = np.zeros(a, dtype=np.int64)
        self.env_len = np.array([len(h.env_words) for h in handovers], dtype=np.int64)
        self.env = np.zeros((a, int(self.env_len.max())), dtype=np.uint64)
        for i, h in enumerate(handovers):
            self.env[i, : len(h.env_words)] = h.env_words
        self.log: list[tuple[np.ndarray, ...]] = []  # per step: ids, arm column, cost (exact fallback)

    # ------------------------------------------------------------------------- the environment
    def _remaining(self) -> np.ndarray:
        return np.maximum(self.recurrences - self.rec + 1, 1)

    def refill_env(self) -> None:
        """Fetch more environment outputs when a seed could run out of words this step."""
        short = self.env_pos + 4 > self.env_len
        if not short.any():
            return
        outputs = int(self._remaining().max() * 0.75) + 32
        fresh = np.stack([h.env_rng.bit_generator.random_raw(outputs) for h in self.handovers])
        words = np.empty((len(fresh), 2 * outputs), dtype=np.uint64)
        words[:, 0::2] = fresh & _U32
        words[:, 1::2] = fresh >> _SHIFT32
        wide = np.zeros((len(fresh), int(self.env_len.max()) + 2 * outputs), dtype=np.uint64)
        wide[:, : self.env.shape[1]] = self.env
        rows = np.arange(len(fresh))[:, None]
        wide[rows, self.env_len[:, None] + np.arange(2 * outputs)[None, :]] = words
        self.env = wide
        self.env_len = self.env_len + 2 * outputs

    # ---------------------------------------------------------------------------- the decision
    def rewards(self, i: int, k: int) -> list[float]:
        """Every reward so far of arm column ``k`` of seed row ``i`` (exact posteriors' input)."""
        seed_id = self.ids[i]
        out = list(self.handovers[i].rewards[k])
        if self.log:
            ids, arm, cost = (np.concatenate([step[f] for step in self.log]) for f in range(3))
            out.extend((-cost[(ids == seed_id) & (arm == k)]).tolist())
        return out

    def exact_winner(self, i: int, z: list[float]) -> int:
        """Arm column of seed row ``i``'s largest sample from the exact posteriors (a near-tie)."""
        n = int(self.n_arms[i])
        return largest_sample([posterior(self.rewards(i, k)) for k in range(n)], z)

    # ---------------------------------------------------------------------------- compaction
    def keep(self, rows: np.ndarray) -> None:
        """Keep only the seed rows ``rows`` (the others finished or left)."""
        for name in (
            "ids", "live", "n_arms", "valid", "arm", "mean", "std", "c0", "c1", "rec", "att", "total", "ran",
            "min_cost", "pol_pos", "pol_raw", "z", "slow", "slow_cum", "reject_cum", "res_val", "res_next",
            "env_pos", "env_len", "env",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name)[rows])
        self.sums = self.sums[:, rows]
        self.handovers = [self.handovers[i] for i in rows.tolist()]


def replay_zeus_seeds(
    model: JobModel,
    seeds: list[int],
    beta: float,
    recurrences: int,
    one_seed: Callable[[int], list[Row]] | None = None,
) -> tuple[np.ndarray, Columns] | None:
    """The rows of ``replay(model, Zeus, seed, beta, recurrences)`` for every seed, as columns.

    A seed the lockstep cannot replay (an arm still to explore after pruning, more arms than the
    listed rejectable words cover, more path draws than fetched, a rejectable visiting-order
    word) is replayed by ``one_seed`` (the generic loop, seed by seed), its lockstep rows dropped.

    Returns:
        ``(seed, columns)``: the seed of each row and one array per try field (RUN_FIELDS), rows
        seed by seed in ``seeds`` order, each seed's in its replay's order; None when this path
        does not apply (a JIT limit unmeasured, NumPy's normal draws not the ones measured, or a
        seed left over without ``one_seed``).

    Raises:
        ConfigError: a try of the first recurrence does not reach the target.
    """
    if model.at_jit_limits() is None or normal_tables() is None:
        return None
    steps: list[Step] = []
    with np.errstate(all="ignore"):  # inf and NaN are handled as the scalar loop does
        handovers, handed, again = _prune(model, seeds, beta, recurrences, steps)
    pruned = len(steps)
    redo: list[int] = []
    if handovers:
        with np.errstate(all="ignore"):
            redo = _run(model, _Seeds(model, beta, recurrences, handovers, handed), steps)
    left = sorted(set(again) | set(redo))
    if left and one_seed is None:
        return None
    prefix = {pos: one_seed(seeds[pos]) for pos in left}  # type: ignore[misc]
    return _assemble(model, seeds, prefix, steps, pruned, set(left), set(redo))


def _prune(
    model: JobModel, seeds: list[int], beta: float, recurrences: int, steps: list[Step]
) -> tuple[list[Handover], list[int], list[int]]:
    """Every seed's pruning in lockstep, from its first try to its Thompson Sampling's first.

    The batch-size optimizer's pruning (:class:`~zeus_bench.sim.policies.PruningThompsonSampling`)
    draws nothing: each seed's next batch size follows from its own outcomes. Per seed: the
    round, its candidates, the default, how far each direction has gone, the good batch sizes
    and the round's best. The tries are the steady steps' (with the profiling first epoch of a
    batch size's first try). Appends the rows to ``steps``.

    Returns:
        The :class:`Handover` of each seed whose pruning ended with every arm observed at least
        twice (so that its first prediction only draws, as a steady one), their positions among
        ``seeds``, and the positions of the seeds to prune in the scalar loop instead (an arm seen
        once, or more path draws than fetched).

    Raises:
        ConfigError: a try of the first recurrence does not reach the target.
    """
    configs = model.at_jit_limits()
    assert configs is not None
    n_b = len(configs)
    epoch_cost, e_ep, t_ep, prof_e, prof_t = (np.array([c[k] for c in configs]) for k in (2, 3, 4, 5, 6))
    n_paths = np.array([c[1] for c in configs], dtype=np.uint64)
    paths = np.full((n_b, int(n_paths.max())), math.inf)
    for k, c in enumerate(configs):
        paths[k, : c[1]] = c[0]
    eta = model.eta
    max_power_w = model.max_power_w
    max_epochs = float(model.max_epochs)
    inf = math.inf
    generators = [seed_generators(seed) for seed in seeds]
    raw = np.stack([env.bit_generator.random_raw(HANDOVER_OUTPUTS) for env, _ in generators])
    words = np.empty((len(seeds), 2 * HANDOVER_OUTPUTS), dtype=np.uint64)
    words[:, 0::2], words[:, 1::2] = raw & _U32, raw >> _SHIFT32  # low word, then high word
    a = len(seeds)
    ids = np.arange(a)
    env_pos = np.zeros(a, dtype=np.int64)
    env_len = np.full(a, 2 * HANDOVER_OUTPUTS, dtype=np.int64)
    rec = np.ones(a, dtype=np.int64)
    att = np.ones(a, dtype=np.int64)
    total: np.ndarray = np.zeros(a)
    ran = np.zeros(a, dtype=bool)
    min_cost: np.ndarray = np.full(a, inf)
    cols = np.arange(n_b)
    b0 = model.bs_index[int(model.job.b0)]
    rounds = np.zeros(a, dtype=np.int64)
    candidates = np.ones((a, n_b), dtype=bool)
    down = np.full(a, b0)  # next down: the largest candidate <= this (none: the direction is over)
    up = np.full(a, b0 + 1)  # next up: the smallest candidate >= this
    good = np.zeros((a, n_b), dtype=bool)
    best = np.full(a, b0)
    best_cost: np.ndarray = np.full(a, inf)
    profiled_bs = np.zeros((a, n_b), dtype=bool)
    history: list[list[tuple[int, float]]] = [[] for _ in seeds]
    handovers: list[Handover] = []
    handed: list[int] = []
    again: list[int] = []
    while len(ids):
        rows = np.arange(len(ids))
        # --- pruning's batch size: down from the default while they reach, then up
        downward = candidates & (cols[None, :] <= down[:, None])
        in_down = downward.any(axis=1)
        bi = np.where(
            in_down,
            n_b - 1 - downward[:, ::-1].argmax(axis=1),
            (candidates & (cols[None, :] >= up[:, None])).argmax(axis=1),
        )
        # --- the try (as in _run, with the profiling first epoch of a batch size's first try)
        index, env_pos, short = draw_paths(
            words, env_pos, env_len, n_paths[bi], ~np.zeros(len(ids), dtype=bool)
        )
        target = paths[bi, index]
        budget = early_stop_budget(stop_bound(beta, min_cost), epoch_cost[bi], max_epochs)
        epochs, reached = try_epochs(target, budget)
        profiled = ~profiled_bs[rows, bi]
        energy, time = try_energy_time(epochs, e_ep[bi], t_ep[bi], profiled, prof_e[bi], prof_t[bi])
        cost = try_cost(energy, time, eta, max_power_w, budget, zero_budget_cost(min_cost, beta))
        profiled_bs[rows, bi] = True
        for i, b, c in zip(ids.tolist(), bi.tolist(), cost.tolist(), strict=True):
            history[i].append((b, c))
        # --- pruning's observation (PruningThompsonSampling._prune_observe)
        good[rows, bi] |= reached
        better = reached & (cost < best_cost)
        best = np.where(better, bi, best)
        best_cost = np.where(better, cost, best_cost)
        down = np.where(in_down, np.where(reached, bi - 1, -1), down)
        up = np.where(in_down, up, np.where(reached, bi + 1, n_b))
        left_to_try = candidates & ((cols[None, :] <= down[:, None]) | (cols[None, :] >= up[:, None]))
        over = np.count_nonzero(left_to_try, axis=1) == 0
        if over.any():  # the round ends: the good ones (else the best so far) are the candidates
            rounds = rounds + over
            any_good = np.count_nonzero(good, axis=1) > 0
            kept = np.where(any_good[:, None], good, cols[None, :] == best[:, None])
            candidates = np.where(over[:, None], kept, candidates)
            down = np.where(over, best, down)
            up = np.where(over, best + 1, up)
            good = np.where(over[:, None], False, good)
            best_cost = np.where(over, inf, best_cost)
        # --- the rows and the recurrence bookkeeping
        rec_before, att_before = rec, att
        rec, att, total, ran, min_cost, ran_try, emit = _bookkeeping(
            model, (rec, att, total, ran, min_cost), bi, epochs, cost, reached, ~short
        )
        steps.append((ids, rec_before, att_before, bi, epochs, energy, time, cost, reached, ran_try, emit,
                      profiled & ran_try))  # fmt: skip
        finished = rec > recurrences
        pruned = (rounds >= PRUNE_ROUNDS) & ~finished & ~short
        again.extend(ids[short].tolist())
        for i in np.flatnonzero(pruned).tolist():
            pos = int(ids[i])
            arms = np.flatnonzero(candidates[i]).tolist()
            rewards = [[-c for b, c in history[pos] if b == arm] for arm in arms]
            if min(map(len, rewards)) < MIN_OBSERVATIONS or len(arms) > REJECT_SET_MAX_N:
                again.append(pos)  # its first prediction explores: the scalar loop prunes it
                continue
            sums = []
            for r in rewards:
                sums.append(running_sums(r))  # in the rewards' order, as the optimizer's are made
            env, pol = generators[pos]
            state = (int(rec[i]), int(att[i]), float(total[i]), bool(ran[i]), float(min_cost[i]))
            left = words[i, env_pos[i] : env_len[i]].tolist()
            handovers.append(Handover(*state, arms, sums, rewards, left, env, pol, pol.bit_generator.state))
            handed.append(pos)
        keep = ~(finished | pruned | short)
        if not keep.all():
            kept_rows = np.flatnonzero(keep)
            ids, env_pos, env_len, words = (
                ids[kept_rows],
                env_pos[kept_rows],
                env_len[kept_rows],
                words[kept_rows],
            )
            rec, att, total, ran, min_cost = (v[kept_rows] for v in (rec, att, total, ran, min_cost))
            rounds, candidates, down, up = (v[kept_rows] for v in (rounds, candidates, down, up))
            good, best, best_cost, profiled_bs = (v[kept_rows] for v in (good, best, best_cost, profiled_bs))
    return handovers, handed, again


def _run(model: JobModel, st: _Seeds, steps: list[Step]) -> list[int]:
    """Run the steady seeds to their last recurrence; returns the positions of the seeds to replay again."""
    configs = model.at_jit_limits()
    assert configs is not None
    epoch_cost, e_ep, t_ep = (np.array([c[k] for c in configs]) for k in (2, 3, 4))
    n_paths = np.array([c[1] for c in configs], dtype=np.uint64)
    paths = np.full((len(configs), int(n_paths.max())), math.inf)
    for k, c in enumerate(configs):
        paths[k, : c[1]] = c[0]
    eta = model.eta
    max_power_w = model.max_power_w
    max_epochs = float(model.max_epochs)
    beta = st.beta
    recurrences = st.recurrences
    left: list[int] = []
    inf = math.inf
    while True:
        a = len(st.ids)
        rows = np.arange(a)
        n = st.n_arms
        st.refill_policy(2 * n + 8)
        st.refill_env()
        # --- the prediction: visiting-order words, then one normal per arm
        first = st.pol_pos + n - 1  # first normal's output
        gone = st.reject_cum[rows, first] != st.reject_cum[rows, st.pol_pos]
        take = np.minimum(first[:, None] + st.cols[None, :], st.pol_raw.shape[1] - 1)
        z = st.z[rows[:, None], take]
        st.pol_pos = first + n
        slow = np.flatnonzero(st.slow_cum[rows, first + n] != st.slow_cum[rows, first])
        if len(slow):
            z[slow], st.pol_pos[slow], ok = st.slow_draws(slow, first[slow])
            gone[slow[~ok]] = True
        gone &= st.live
        samples = st.mean + st.std * z
        win = samples.argmax(axis=1)
        best = samples[rows, win]
        samples[rows, win] = -inf
        bound = st.c0 + st.c1 * np.where(st.valid, np.abs(z), 0.0).max(axis=1)
        certain = (best - bound > samples.max(axis=1) + bound) | (n == 1)
        win = np.where(n == 1, 0, win)
        for i in np.flatnonzero(~certain & st.live & ~gone).tolist():
            win[i] = st.exact_winner(i, z[i, : n[i]].tolist())
        bi = st.arm[rows, win]
        # --- the path (Lemire's method on the environment's words)
        span = n_paths[bi]
        index, st.env_pos, short = draw_paths(st.env, st.env_pos, st.env_len, span, st.live)
        gone |= short
        target = paths[bi, index]
        # --- the budget, the try and its cost (Runner.run_try at the JIT limit)
        min_cost = st.min_cost
        budget = early_stop_budget(stop_bound(beta, min_cost), epoch_cost[bi], max_epochs)
        epochs, reached = try_epochs(target, budget)
        energy, time = try_energy_time(epochs, e_ep[bi], t_ep[bi], False, 0.0, 0.0)
        cost = try_cost(energy, time, eta, max_power_w, budget, zero_budget_cost(min_cost, beta))
        # --- the observation: the arm's running sums and approximate posterior
        count, total_reward, squares, magnitudes = st.sums[:, rows, win]
        arm_sums = add_reward(count, total_reward, squares, magnitudes, -cost)
        st.sums[:, rows, win] = arm_sums
        mean, std, c0, c1 = approx_from_sums(*arm_sums)
        st.mean[rows, win] = mean
        st.std[rows, win] = std
        st.c0 = np.maximum(st.c0, c0)
        st.c1 = np.maximum(st.c1, c1)
        st.log.append((st.ids, win, cost))
        # --- the rows and the recurrence bookkeeping
        valid = st.live & ~gone
        rec_before, att_before = st.rec, st.att
        st.rec, st.att, st.total, st.ran, st.min_cost, ran_try, emit = _bookkeeping(
            model, (st.rec, st.att, st.total, st.ran, st.min_cost), bi, epochs, cost, reached, valid
        )
        steps.append(
            (st.ids, rec_before, att_before, bi, epochs, energy, time, cost, reached, ran_try, emit, None)
        )
        if gone.any():
            left.extend(st.ids[gone].tolist())
        # Finished (or left) seeds run on, their rows unwritten, until a quarter of them can go.
        st.live &= (st.rec <= recurrences) & ~gone
        live = int(st.live.sum())
        if live == 0:
            break
        if live <= 3 * a // 4:
            st.keep(np.flatnonzero(st.live))
    return left


def _bookkeeping(
    model: JobModel,
    state: tuple[np.ndarray, ...],
    bi: np.ndarray,
    epochs: np.ndarray,
    cost: np.ndarray,
    reached: np.ndarray,
    valid: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """:func:`~zeus_bench.sim.env.recurrence_step` over the seeds; the first recurrence's failure raised.

    Returns the new state (recurrence, attempt, cost so far, a try ran, least cost), then
    whether each try ran and whether it is a row.

    Raises:
        ConfigError: a valid try of the first recurrence ran and did not reach the target.
    """
    rec, att, total, ran, min_cost = state
    *new, ran_try, emit, failed, _ = recurrence_step(
        rec, att, total, ran, min_cost, epochs, cost, reached, valid
    )
    if failed.any():
        raise first_recurrence_error(model, int(model.job.batch_sizes[bi[int(np.flatnonzero(failed)[0])]]))
    return (*new, ran_try, emit)


def _assemble(
    model: JobModel,
    seeds: list[int],
    prefix: dict[int, list[Row]],
    steps: list[Step],
    pruned: int,
    drop_pruning: set[int],
    drop_steady: set[int],
) -> tuple[np.ndarray, Columns]:
    """Every seed's rows in order: scalar rows, then lockstep rows (pruning's, then the steady ones).

    ``steps[:pruned]`` are pruning's; the lockstep rows of seeds in ``drop_pruning`` (pruning's)
    and ``drop_steady`` (the steady ones) are replaced by their scalar rows in ``prefix``.
    """
    from zeus_bench.sim.model import RUN_FIELDS

    configs = model.at_jit_limits()
    assert configs is not None
    n_fields = len(RUN_FIELDS)
    order_pos = sorted(prefix)
    flat = [row for p in order_pos for row in prefix[p]]
    scalar = np.array(flat, dtype=float).reshape(len(flat), n_fields)
    parts: list[np.ndarray] = [scalar[:, k] for k in range(n_fields)]
    pos = np.repeat(np.array(order_pos, dtype=np.int64), [len(prefix[p]) for p in order_pos])
    if steps:
        ids, rec, att, bi, epochs, energy, time, cost, reached, ran, emit = (
            np.concatenate([s[k] for s in steps]) for k in range(11)
        )
        profiled = np.concatenate(
            [np.zeros(len(s[0]), dtype=bool) if s[11] is None else s[11] for s in steps]
        )
        in_pruning = np.repeat(np.arange(len(steps)) < pruned, [len(s[0]) for s in steps])
        if drop_pruning:
            emit &= ~(in_pruning & np.isin(ids, np.array(sorted(drop_pruning), dtype=np.int64)))
        if drop_steady:
            emit &= ~(~in_pruning & np.isin(ids, np.array(sorted(drop_steady), dtype=np.int64)))
        bi, ran = bi[emit], ran[emit]
        limit, exp_e, exp_t, exp_c = (np.array([c[k] for c in configs])[bi] for k in (7, 8, 9, 10))
        sizes = model.job.batch_sizes.astype(float)[bi]
        vec = [
            rec[emit].astype(float), att[emit].astype(float), sizes, limit,
            np.where(ran, epochs[emit], 0.0), np.where(ran, energy[emit], 0.0), np.where(ran, time[emit], 0.0),
            np.where(ran, cost[emit], 0.0), (reached[emit] & ran).astype(float), profiled[emit].astype(float),
            ran.astype(float), exp_e, exp_t, exp_c,
        ]  # fmt: skip
        parts = [np.concatenate([p, v]) for p, v in zip(parts, vec, strict=True)]
        pos = np.concatenate([pos, ids[emit]])
    order = np.argsort(pos, kind="stable")
    columns: Columns = {}
    for name, part in zip(RUN_FIELDS, parts, strict=True):
        col = part[order]
        if name in ("reached", "profiled", "ran"):
            columns[name] = col != 0.0
        elif name in ("recurrence", "attempt", "batch_size"):
            columns[name] = col.astype(np.int64)
        else:
            columns[name] = col
    return np.asarray(seeds, dtype=np.int64)[pos[order]], columns
