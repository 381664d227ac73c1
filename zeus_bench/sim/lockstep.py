"""The ``zeus`` policy's replay of many seeds at once: the rows of :func:`replay.replay`, in columns.

Every try of every seed is one step of NumPy array operations over the seeds, in lockstep (the
seeds' timelines are independent: a step is simply the next try of each):

* first pruning (:func:`_prune`): the batch-size optimizer's pruning draws nothing, so each
  seed's next batch size follows from its own outcomes, kept as arrays (round, candidates,
  directions, good batch sizes, the round's best);
* then Thompson Sampling (:func:`_run`), from a :class:`~zeus_bench.sim.fastzeus.Handover` per
  seed (a seed whose first prediction would still explore an arm is pruned in the fused scalar
  loop, :mod:`zeus_bench.sim.fastzeus`, which hands it over once steady);
* the draws come from each seed's generators' raw 64-bit outputs, fetched in blocks: the visiting
  order's words (:class:`~zeus_bench.sim.draws.ChoiceDraws` skips ``n - 1`` whole outputs) and
  one normal draw per arm, each from one output as NumPy's ziggurat takes it
  (:func:`~zeus_bench.sim.draws.fast_normals`); a draw that needs more outputs (about 0.7% of
  them) is resolved from them when the ziggurat's wedge test is decided beyond doubt, else made
  by NumPy itself on a generator moved to that output (which tells how many it took);
* the winner is the arm of largest sample from the certified approximate posteriors (as the
  scalar loop decides); a near-tie is decided from the exact posteriors of the arm's rewards;
* the path, budget, cost (with a batch size's profiling first epoch) and observation are the
  scalar loop's arithmetic, element by element (IEEE operations give the same doubles in NumPy
  and in Python);
* a rejected Lemire word is redrawn as NumPy does; a visiting order whose words include a
  rejectable one (about one try in a billion) makes that seed replay again in the scalar loop.

The rows are therefore the same as :func:`replay.replay`'s, seed by seed; the tests compare them
(``tests/sim/test_sim_lockstep.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from zeus_bench.errors import ConfigError
from zeus_bench.sim.draws import (
    MASK32,
    REJECT_SET_MAX_N,
    fast_normals,
    normal_tables,
    pcg64_steps_between,
    rejectable_words,
    strip_densities,
)
from zeus_bench.sim.env import (
    draw_paths,
    early_stop_budget,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.fastzeus import HANDOVER_OUTPUTS, Handover, _configs, _replay, replay_zeus
from zeus_bench.sim.policies.bandit import (
    _EPS,
    _EPS3,
    _EPS4,
    _ONE_EPS4,
    _SAFETY,
    _SAFETY_EPS3,
    MIN_OBSERVATIONS,
    PRUNE_ROUNDS,
    largest_sample,
    posterior,
)
from zeus_bench.sim.rules import MAX_TRIES, seed_generators

if TYPE_CHECKING:
    from zeus_bench.sim.replay import JobModel, Row

#: The try fields (RUN_FIELDS order) as the lockstep's columns hold them.
Columns = dict[str, np.ndarray]
#: One lockstep step's rows: seed positions, recurrence, attempt, batch-size index, epochs, energy,
#: time, cost, reached, ran, whether written, and profiled (None: none was).
Step = tuple[Any, ...]

_U32 = np.uint64(MASK32)
# A wedge test is decided here only when its two sides differ by more than this: the stored
# densities are within about 1e-16 of NumPy's (tests/sim/test_sim_lockstep.py), both sides' rounding
# a few units of 1e-16; closer calls (about one in 10**12) are left to NumPy.
_WEDGE_MARGIN = 1e-12
_ASK_NUMPY = -2  # res_next of an output whose draw NumPy makes when a draw starts there
_SHIFT32 = np.uint64(32)


def _approx(n: np.ndarray, s1: np.ndarray, s2: np.ndarray, s_abs: np.ndarray) -> tuple[np.ndarray, ...]:
    """:func:`~zeus_bench.sim.policies.bandit.approx_from_sums` element by element."""
    mean = s1 / n
    var = s2 / n - mean * mean
    var = np.where(var < 0.0, 0.0, var)  # NaN kept, as there
    abs_mean = np.abs(mean)
    g = (n + 4.0) * _EPS
    mean_err = _SAFETY * (g * s_abs / n + _EPS3 * abs_mean)
    var_err = _SAFETY * (g * s2 / n + 2.0 * abs_mean * mean_err + 3.0 * mean_err * mean_err)
    std = np.sqrt(var / n)
    std_err = np.sqrt(var_err / n) * _ONE_EPS4 + _SAFETY_EPS3 * std
    c0 = mean_err + _EPS4 * abs_mean
    c1 = std_err + _EPS4 * std
    bad = ~((abs_mean < math.inf) & (std < math.inf) & (c0 < math.inf))
    if bad.any():
        mean, std, c0, c1 = (
            np.where(bad, v, x) for v, x in ((0.0, mean), (0.0, std), (math.inf, c0), (0.0, c1))
        )
    return mean, std, c0, c1


def holds_word(raw: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Whether each 64-bit output's low or high 32-bit word is one of ``words``."""
    return np.isin(raw & _U32, words) | np.isin(raw >> _SHIFT32, words)


class _Seeds:
    """Per-seed state of the steady seeds, one array row (or element) per seed."""

    def __init__(
        self, model: JobModel, beta: float, recurrences: int, handovers: list[Handover], ids: list[int]
    ) -> None:
        configs = _configs(model)
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
        mean, std, c0, c1 = _approx(*sums)
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

    # ------------------------------------------------------------------------------- the draws
    def _remaining(self) -> np.ndarray:
        return np.maximum(self.recurrences - self.rec + 1, 1)

    def refill_policy(self, need: np.ndarray) -> None:
        """Fetch more policy outputs so that every seed has at least ``need`` past its position.

        Outputs before every seed's position are dropped (:attr:`pol_base` counts them); each
        output's normal draw is resolved (:meth:`_resolve`).
        """
        have = self.pol_raw.shape[1]
        short = self.pol_pos + need - have
        if short.max() <= 0:
            return
        est = int((self._remaining() * (2 * self.n_arms - 1) * 1.1).max()) + 64
        # At most about 48 MiB of outputs and their resolutions (some 48 bytes each) at a time.
        cap = max(256, (48 << 20) // (48 * len(self.ids)))
        grow = max(int(short.max()), min(est, cap))
        fresh = np.stack([h.pol_rng.bit_generator.random_raw(grow) for h in self.handovers])
        cut = int(self.pol_pos.min())
        self.pol_base += cut
        self.pol_pos = self.pol_pos - cut
        self.pol_raw = np.concatenate([self.pol_raw[:, cut:], fresh], axis=1)
        self._resolve()
        bad = np.zeros(self.pol_raw.shape, dtype=bool)
        for n, words in self.rejectable.items():
            rows = self.n_arms == n
            bad[rows] = holds_word(self.pol_raw[rows], words)
        zero = np.zeros((len(bad), 1), np.int32)
        self.reject_cum = np.concatenate([zero, np.cumsum(bad, axis=1, dtype=np.int32)], axis=1)

    def _resolve(self) -> None:
        """Per policy output, the normal draw that starts there: its value and the next output.

        :attr:`z`: the draw of one output, ``slow``: it takes more; :attr:`res_val` and
        :attr:`res_next` (-1: not known within the fetched outputs) resolve every draw: one output;
        a wedge test decided with certainty from the approximate densities (two outputs, or a new
        attempt two outputs on); else NumPy's own draw (:meth:`slow_normal`), made when a draw
        starts there (:data:`_ASK_NUMPY` until then).
        """
        raw = self.pol_raw
        a, width = raw.shape
        x, fast = fast_normals(raw, self.widths, self.thresholds)
        slow = ~fast
        self.z, self.slow = x, slow
        zero = np.zeros((a, 1), np.int32)
        self.slow_cum = np.concatenate([zero, np.cumsum(slow, axis=1, dtype=np.int32)], axis=1)
        val = x.copy()
        nxt = np.broadcast_to(np.arange(1, width + 1, dtype=np.int64), (a, width)).copy()
        rows, cols = np.nonzero(slow)
        if len(rows):
            q_raw = raw[rows, cols]
            idx = (q_raw & np.uint64(0xFF)).astype(np.intp)
            has_u = cols + 1 < width
            u = np.where(has_u, (raw[rows, np.minimum(cols + 1, width - 1)] >> np.uint64(11)) * 2.0**-53, 0.0)
            xq = x[rows, cols]
            dens = self.densities
            lhs = (dens[idx - 1] - dens[idx]) * u + dens[idx]
            rhs = np.exp(-0.5 * xq * xq)
            wedge = (idx != 0) & has_u
            accept = wedge & (lhs < rhs - _WEDGE_MARGIN)
            reject = wedge & (lhs > rhs + _WEDGE_MARGIN)
            nxt[rows[accept], cols[accept]] = cols[accept] + 2
            numpy_made = ~accept & ~reject
            nxt[rows[numpy_made], cols[numpy_made]] = _ASK_NUMPY  # drawn if a draw starts there
            # A rejected attempt starts again two outputs on (which may itself be rejected).
            rejected = np.zeros((a, width), dtype=bool)
            rr, rc = rows[reject], cols[reject]
            rejected[rr, rc] = True
            target = rc + 2
            while True:
                again = np.zeros(len(target), dtype=bool)
                inside = target < width
                again[inside] = rejected[rr[inside], target[inside]]
                if not again.any():
                    break
                target = np.where(again, target + 2, target)
            inside = target < width
            val[rr[inside], rc[inside]] = val[rr[inside], target[inside]]
            nxt[rr[inside], rc[inside]] = nxt[rr[inside], target[inside]]
            nxt[rr[~inside], rc[~inside]] = -1
        self.res_val, self.res_next = val, nxt

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

    def slow_normal(self, i: int, col: int) -> tuple[float, int] | None:
        """NumPy's normal draw starting at policy output column ``col`` of seed row ``i``, and outputs taken.

        NumPy draws it on a twin of the seed's policy generator (made at the first such draw),
        moved forward to that output; the outputs it took are counted from the twin's state.
        """
        seed_id = int(self.ids[i])
        pos = self.pol_base + col
        known = self.made.get((seed_id, pos))
        if known is not None:
            return known
        twin = self.twins.get(seed_id)
        if twin is None:
            bit_gen = np.random.PCG64(0)
            bit_gen.state = self.handovers[i].pol_state
            twin = self.twins[seed_id] = [bit_gen, np.random.Generator(bit_gen), 0]
        bit_gen, gen, at = twin
        if pos < at:
            return None
        bit_gen.advance(pos - at)
        state = bit_gen.state["state"]
        before, inc = state["state"], state["inc"]
        x = float(gen.standard_normal())
        taken = pcg64_steps_between(before, bit_gen.state["state"]["state"], inc)
        if taken is None:
            return None
        twin[2] = pos + taken
        self.made[seed_id, pos] = x, taken
        return x, taken

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

    def slow_draws(self, sub: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The normal draws of seed rows ``sub`` from output columns ``first`` when some take more outputs.

        Draw ``j`` starts ``j`` outputs on plus the outputs every earlier draw took beyond one
        (:attr:`res_next`); that sum is found by iterating from none: each pass gets the starts of
        the draws before the first wrong one right, so it ends (mostly after two or three passes)
        when nothing moves. Each draw is then its start's resolved value (:attr:`res_val`).
        Returns the draws (one row per seed), the column after the last draw, and whether all
        were resolved within the fetched outputs.
        """
        n = self.n_arms[sub]
        width = self.pol_raw.shape[1]
        in_use = self.cols[None, :] < n[:, None]
        slots = first[:, None] + self.cols[None, :]
        rows = sub[:, None]
        moved = np.zeros(slots.shape, dtype=np.int64)
        while True:
            starts = np.clip(slots + moved, 0, width - 1)
            nxt = self.res_next[rows, starts]
            taken = np.where(in_use, nxt - starts, 1)  # outputs each draw took
            again = np.zeros(slots.shape, dtype=np.int64)
            np.cumsum(taken[:, :-1] - 1, axis=1, out=again[:, 1:])
            if np.array_equal(again, moved):
                ask = in_use & (nxt == _ASK_NUMPY)
                if not ask.any():
                    break
                # The first such draw of each row starts where it is (the draws before it are
                # known): NumPy draws it, then the pass goes on.
                for r in np.flatnonzero(ask.any(axis=1)).tolist():
                    row, start = int(sub[r]), int(starts[r, int(ask[r].argmax())])
                    drawn = self.slow_normal(row, start)
                    self.res_next[row, start] = -1 if drawn is None else start + drawn[1]
                    if drawn is not None:
                        self.res_val[row, start] = drawn[0]
            moved = again
        ends = slots + moved
        ok = ((taken > 0) & (ends < width) | ~in_use).all(axis=1)
        last = n - 1
        end = ends[np.arange(len(sub)), last] + taken[np.arange(len(sub)), last]
        return self.res_val[rows, starts], end, ok

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
    model: JobModel, seeds: list[int], beta: float, recurrences: int
) -> tuple[np.ndarray, Columns] | None:
    """The rows of ``replay(model, Zeus, seed, beta, recurrences)`` for every seed, as columns.

    Returns:
        ``(seed, columns)``: the seed of each row and one array per try field (RUN_FIELDS), rows
        seed by seed in ``seeds`` order, each seed's in its replay's order; None when this path
        does not apply (see :func:`~zeus_bench.sim.fastzeus.replay_zeus`, or NumPy's normal draws
        not the ones measured).

    Raises:
        ConfigError: a try of the first recurrence does not reach the target.
    """
    if _configs(model) is None or normal_tables() is None:
        return None
    steps: list[Step] = []
    with np.errstate(all="ignore"):  # inf and NaN are handled as the scalar loop does
        handovers, handed, again = _prune(model, seeds, beta, recurrences, steps)
    pruned = len(steps)
    prefix: dict[int, list[Row]] = {}
    for pos in again:  # pruned in the scalar loop instead (its lockstep rows are dropped)
        done = _replay(model, seeds[pos], beta, recurrences, True)
        if done is None:
            return None
        prefix[pos] = done[0]
        if done[1] is not None:
            handovers.append(done[1])
            handed.append(pos)
    redo: list[int] = []
    if handovers:
        with np.errstate(all="ignore"):
            redo = _run(model, _Seeds(model, beta, recurrences, handovers, handed), steps)
    for pos in redo:  # replayed in the scalar loop from the start (its lockstep rows are dropped)
        rows = replay_zeus(model, seeds[pos], beta, recurrences)
        if rows is None:  # it applies whenever the lockstep does (the checks above): never empty
            raise RuntimeError(f"fused replay of seed {seeds[pos]} does not apply where the lockstep did")
        prefix[pos] = rows
    return _assemble(model, seeds, prefix, steps, pruned, set(again) | set(redo), set(redo))


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
    configs = _configs(model)
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
                arm_sums = [0.0, 0.0, 0.0, 0.0]
                for v in r:  # in the rewards' order, as the optimizer's running sums are made
                    arm_sums[0] += 1.0
                    arm_sums[1] += v
                    arm_sums[2] += v * v
                    arm_sums[3] += abs(v)
                sums.append(arm_sums)
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
    configs = _configs(model)
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
        arm_sums = (count + 1.0, total_reward - cost, squares + cost * cost, magnitudes + np.abs(cost))
        st.sums[:, rows, win] = arm_sums
        mean, std, c0, c1 = _approx(*arm_sums)
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
    """One try's effect on each seed's recurrence (Runner.run_recurrence), element by element.

    ``state``: recurrence, attempt, cost so far, whether a try ran, least cost. A try with no
    epochs (a zero budget) is no row, unless it is the recurrence's last and none ran (the
    missed row). Returns the new state, then whether each try ran and whether it is a row (only
    ``valid`` ones are).

    Raises:
        ConfigError: a valid try of the first recurrence ran and did not reach the target.
    """
    rec, att, total, ran, min_cost = state
    ran_try = epochs != 0.0
    emit = (ran_try | (~ran_try & (att == MAX_TRIES) & ~ran)) & valid
    total = np.where(ran_try, total + cost, total)
    done = ran_try & reached
    failed = ran_try & ~reached & (rec == 1) & valid
    if failed.any():
        job = model.job
        i = int(np.flatnonzero(failed)[0])
        raise ConfigError(
            f"workload {job.workload.id!r} on {job.gpu!r}: batch size {int(job.batch_sizes[bi[i]])} "
            f"did not reach the target in the first recurrence (the default must converge)"
        )
    min_cost = np.where(done & (total < min_cost), total, min_cost)
    end = done | (att == MAX_TRIES)
    return (
        np.where(end, rec + 1, rec), np.where(end, 1, att + 1), np.where(end, 0.0, total), ~end & (ran | ran_try),
        min_cost, ran_try, emit,
    )  # fmt: skip


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
    from zeus_bench.sim.replay import RUN_FIELDS

    configs = _configs(model)
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
