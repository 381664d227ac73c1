"""The ``zeus`` policy's replay of many seeds at once: the rows of :func:`replay.replay`, in columns.

Every try of every seed is one step of NumPy array operations over the seeds, in lockstep (the
seeds' timelines are independent: a step is simply the next try of each):

* first pruning (:func:`~zeus_bench.sim.pruning.prune_seeds`): the batch-size optimizer's pruning draws nothing, so each
  seed's next batch size follows from its own outcomes, kept as arrays (round, candidates,
  directions, good batch sizes, the round's best);
* then Thompson Sampling (:func:`_run`), from a :class:`Handover` per seed (a seed whose first
  prediction would still explore an arm is replayed by the executor instead);
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
  rejectable one (about one try in a billion) makes that seed replay again in the executor.

The environment's rules (path draw, budget, penalty, JIT first epoch, cost) are
:mod:`zeus_bench.sim.env`'s, called on arrays over the seeds.

The rows are therefore the same as :func:`replay.replay`'s, seed by seed; the tests compare them
(``tests/sim/test_sim_lockstep.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.optimizers.rng import MASK32, normal_tables
from zeus_bench.optimizers.seed_bandits import SeedThompson
from zeus_bench.sim.env import (
    draw_paths,
    early_stop_budget,
    stop_bound,
    try_cost,
    try_energy_time,
    try_epochs,
    zero_budget_cost,
)
from zeus_bench.sim.pruning import Columns, Handover, Step, assemble, bookkeeping, prune_seeds

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel, Row
_U32 = np.uint64(MASK32)
_SHIFT32 = np.uint64(32)


class _Seeds:
    """The environment's side of the steady seeds (one array row or element per seed), and their optimizer."""

    def __init__(
        self, model: JobModel, beta: float, recurrences: int, handovers: list[Handover], ids: list[int]
    ) -> None:
        self.recurrences = recurrences
        self.beta = beta
        a = len(handovers)
        self.ids = np.array(ids, dtype=np.int64)  # each row's position among the seeds replayed
        self.live = np.ones(a, dtype=bool)  # False: finished or left, kept until the next compaction
        self.handovers = handovers
        self.policy = SeedThompson(list(handovers), ids)  # the batch-size optimizer of every seed
        self.rec = np.array([h.recurrence for h in handovers], dtype=np.int64)
        self.att = np.array([h.attempt for h in handovers], dtype=np.int64)
        self.total = np.array([h.total for h in handovers])
        self.ran = np.array([h.ran for h in handovers], dtype=bool)
        self.min_cost = np.array([h.min_cost for h in handovers])
        # Environment words: the handed-over rest of the fetched block, then further outputs.
        self.env_pos = np.zeros(a, dtype=np.int64)
        self.env_len = np.array([len(h.env_words) for h in handovers], dtype=np.int64)
        self.env = np.zeros((a, int(self.env_len.max())), dtype=np.uint64)
        for i, h in enumerate(handovers):
            self.env[i, : len(h.env_words)] = h.env_words

    def remaining(self) -> np.ndarray:
        """Per seed, a bound on the recurrences left."""
        return np.maximum(self.recurrences - self.rec + 1, 1)

    def refill_env(self) -> None:
        """Fetch more environment outputs when a seed could run out of words this step."""
        short = self.env_pos + 4 > self.env_len
        if not short.any():
            return
        outputs = int(self.remaining().max() * 0.75) + 32
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

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the seed rows ``rows`` (the others finished or left)."""
        for name in ("ids", "live", "rec", "att", "total", "ran", "min_cost", "env_pos", "env_len", "env"):
            setattr(self, name, getattr(self, name)[rows])
        self.handovers = [self.handovers[i] for i in rows.tolist()]
        self.policy.keep(rows)


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
    word) is replayed by ``one_seed`` (the executor), its lockstep rows dropped.

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
        handovers, handed, again = prune_seeds(model, seeds, beta, recurrences, steps)
    pruned = len(steps)
    redo: list[int] = []
    if handovers:
        with np.errstate(all="ignore"):
            redo = _run(model, _Seeds(model, beta, recurrences, handovers, handed), steps)
    left = sorted(set(again) | set(redo))
    if left and one_seed is None:
        return None
    prefix = {pos: one_seed(seeds[pos]) for pos in left}  # type: ignore[misc]
    return assemble(model, seeds, prefix, steps, pruned, set(left), set(redo))


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
    while True:
        a = len(st.ids)
        # --- the prediction: the batch-size optimizer of every seed
        win, bi, gone = st.policy.decide(st.live, st.remaining())
        st.refill_env()
        # --- the path (Lemire's method on the environment's words)
        span = n_paths[bi]
        index, st.env_pos, short = draw_paths(st.env, st.env_pos, st.env_len, span, st.live)
        gone |= short
        target = paths[bi, index]
        # --- the budget, the try and its cost (the executor's rules at the JIT limit)
        min_cost = st.min_cost
        budget = early_stop_budget(stop_bound(beta, min_cost), epoch_cost[bi], max_epochs)
        epochs, reached = try_epochs(target, budget)
        energy, time = try_energy_time(epochs, e_ep[bi], t_ep[bi], False, 0.0, 0.0)
        cost = try_cost(energy, time, eta, max_power_w, budget, zero_budget_cost(min_cost, beta))
        # --- the observation: the arm's running sums and approximate posterior
        st.policy.observe(win, cost)
        # --- the rows and the recurrence bookkeeping
        valid = st.live & ~gone
        rec_before, att_before = st.rec, st.att
        st.rec, st.att, st.total, st.ran, st.min_cost, ran_try, emit = bookkeeping(
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
