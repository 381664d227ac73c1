"""The replay's executor: the tries of one job's seeds, step by step, on arrays over the seeds.

Each step is the next try of every seed still replaying (the seeds' timelines are independent):

* the decisions of a policy's face over seeds (from
  :meth:`Policy.batched <zeus_bench.sim.policies.Policy.batched>`): a face of the array protocol
  (:class:`~zeus_bench.sim.policies.seeds.SeedArrays`; ``zeus``'s,
  :class:`~zeus_bench.sim.policies.seed_zeus.SeedZeus`) says them as indices, the default
  (:class:`~zeus_bench.sim.policies.seeds.ScalarPolicies`: one scalar policy object per seed) as a
  :meth:`~zeus_bench.sim.policies.Policy.predict` per seed; a decision without a power limit
  profiles its batch size just in time (its JIT limit; the first epoch at the profile's figures);
* each seed's training path, drawn from its environment generator's words fetched in blocks
  (:class:`~zeus_bench.sim.env.EnvWords`: ``rng.integers(0, n_paths)`` draw for draw), its target
  epoch scaled by the drift hook's factor (:mod:`zeus_bench.sim.scenarios.drift`; one hook for
  every seed, or each seed its own: :class:`SeedDrifts`);
* the rules of :mod:`zeus_bench.sim.env` on the arrays: the early-stop budget (through the
  face's ``stop_cost``), the epochs, the JIT first epoch, the cost or a zero budget's penalty;
* per-try noise on time and power from each seed's own noise generator (:func:`noisy`);
* the observation, then the recurrence bookkeeping (:func:`~zeus_bench.sim.env.recurrence_step`);
  the rows are kept as the steps' arrays and put together as columns at the end
  (:class:`~zeus_bench.sim.model.SeedTries`).

A seed the face cannot continue exactly (it says so: ``gone``) leaves the steps; once they end,
the executor replays it from scratch, its generators back at their start, with the face's scalar
:meth:`~zeus_bench.sim.policies.seeds.SeedArrays.fallback`, and splices its rows in place.

:func:`execute` runs seeds to their last recurrence; :func:`zeus_bench.sim.replay.replay` is it
with one seed, :func:`~zeus_bench.sim.replay.replay_many` with many. :class:`OneTry` runs single
tries with the same rules (the arrival replay's generic path, whose tries overlap in time).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from zeus_bench.optimizers.rng import PathDraws
from zeus_bench.sim import env
from zeus_bench.sim.blocks import Blocks, ObjectArrays
from zeus_bench.sim.model import RUN_FIELDS, JobModel, Row, SeedTries, first_recurrence_error
from zeus_bench.sim.policies.base import Policy, scalar_face
from zeus_bench.sim.policies.seeds import (
    Decided,
    Decision,
    Outcome,
    SeedArrays,
    SeedPolicies,
    Tried,
    decision_indices,
    outcomes,
    settle,
)
from zeus_bench.sim.rules import NOISE_CLIP, ZERO_BUDGET_PENALTY

__all__ = [
    "Lanes",
    "OneTry",
    "Run",
    "SeedDrifts",
    "drift_factors",
    "execute",
    "execute_blocks",
    "missed_row",
    "noisy",
    "try_row",
]

#: A drift hook: (recurrence, batch-size index) -> factor on the sampled path's target epoch.
DriftHook = Callable[[int, int], float]


def drift_factors(hook: DriftHook, recurrences: int, n_bs: int) -> np.ndarray:
    """``hook``'s factors over recurrences 1..``recurrences`` (rows) and batch-size indices (columns).

    A hook with a ``table(recurrences, n_bs)`` method (:class:`~zeus_bench.sim.scenarios.drift.Drift`)
    gives them at once, the floats its calls give; any other is asked once per recurrence and index.
    """
    table = getattr(hook, "table", None)
    if callable(table):
        return np.asarray(table(recurrences, n_bs), dtype=float)
    return np.array([[hook(r, b) for b in range(n_bs)] for r in range(1, recurrences + 1)], dtype=float)


@dataclasses.dataclass(frozen=True, eq=False)  # (arrays: compared and hashed by identity)
class SeedDrifts:
    """Per seed, the drift hook whose factors scale its target epochs: several hooks in one walk.

    ``factors[g, r, b]`` is hook ``g``'s factor of recurrence ``r`` (row 0 unused) and batch-size
    index ``b`` (1 for a group without a hook); ``group[i]`` is seed ``i``'s hook. A seed's target
    epochs are those of a walk with its hook alone (the same float products: the hook's own
    floats, each asked once, :meth:`of`).
    """

    factors: np.ndarray
    group: np.ndarray

    @classmethod
    def of(
        cls, hooks: Sequence[DriftHook | None], group: Sequence[int], recurrences: int, n_bs: int
    ) -> SeedDrifts:
        """The table of ``hooks`` over recurrences 1..``recurrences`` and ``n_bs`` batch sizes; ``group``: each seed's hook."""
        factors = np.ones((len(hooks), recurrences + 1, n_bs))
        for g, hook in enumerate(hooks):
            if hook is not None:
                factors[g, 1:] = drift_factors(hook, recurrences, n_bs)
        return cls(factors, np.asarray(group, dtype=np.int64))

    def subset(self, ids: Sequence[int]) -> SeedDrifts:
        """The drifts of seeds ``ids`` (in that order)."""
        return SeedDrifts(self.factors, self.group[np.asarray(ids, dtype=np.int64)])


def noisy(energy: float, time: float, noise: float, rng: np.random.Generator) -> tuple[float, float]:
    """Energy and time of a try whose time and average power are off by seeded factors.

    Each factor is ``1 + noise x z`` with ``z`` standard normal clipped at
    :data:`~zeus_bench.sim.rules.NOISE_CLIP`; the energy takes both (time x power).
    """
    z = np.clip(rng.standard_normal(2), -NOISE_CLIP, NOISE_CLIP)
    f_time = 1.0 + noise * float(z[0])
    f_power = 1.0 + noise * float(z[1])
    return energy * f_time * f_power, time * f_time


def try_row(m: JobModel, rec: int, att: int, out: Outcome, ratio: float = 1.0) -> Row:
    """The row of a try that ran; energy, time and cost scaled by ``ratio``."""
    bi = m.bs_index[out.batch_size]
    pj = m.limit_index[out.power_limit_w]
    return (
        rec, att, out.batch_size, out.power_limit_w, out.epochs, out.energy_j * ratio, out.time_s * ratio,
        out.cost * ratio, out.reached, out.profiled, True,
        m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
    )  # fmt: skip


def missed_row(m: JobModel, rec: int, attempts: int, last: Outcome, ratio: float = 1.0) -> Row:
    """The one row of a recurrence in which no try ran (every budget was zero).

    ``ran`` and ``reached`` False, no epochs, energy, time or cost; ``attempt`` is the number
    of tries attempted; the configuration is the last try's, with its expected figures.
    """
    bi = m.bs_index[last.batch_size]
    pj = m.limit_index[last.power_limit_w]
    return (
        rec, attempts, last.batch_size, last.power_limit_w, 0.0, 0.0, 0.0, 0.0, False, False, False,
        m.expected_energy_j[bi][pj] * ratio, m.expected_time_s[bi][pj] * ratio, m.expected_cost[bi][pj] * ratio,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Lanes:
    """Per seed, the model whose training paths it draws: models that differ in their paths alone.

    ``models[k]`` is lane ``k`` (the same job but for its target epochs: its configurations'
    figures are the same, its paths and their numbers its own); ``of_seed[i]`` is seed ``i``'s lane. A seed's rows are those an :func:`execute` on its
    lane's model alone gives it (the expected figures of its rows are its lane's).
    """

    models: tuple[JobModel, ...]
    of_seed: np.ndarray

    def subset(self, ids: Sequence[int]) -> Lanes:
        """The lanes of seeds ``ids`` (in that order)."""
        return Lanes(self.models, self.of_seed[np.asarray(ids, dtype=np.int64)])


class _Tables:
    """A model's per-configuration figures as arrays (what a step gathers from).

    With ``lanes``, the paths and the expected figures are per lane (``lane_paths``,
    ``lane_expected``: lane first) and ``lane`` is each seed's.
    """

    lane: np.ndarray | None = None

    def __init__(self, m: JobModel, lanes: Lanes | None = None) -> None:
        self.budget_epoch_cost = np.array(m.budget_epoch_cost)
        self.energy = np.array(m.energy_per_epoch_j)
        self.time = np.array(m.time_per_epoch_s)
        self.profile_energy = np.array(m.profile_energy_j)
        self.profile_time = np.array(m.profile_time_s)
        self.jit_limit = np.array(m.jit_limit_w)
        self.limits = np.asarray(m.job.power_limits, dtype=float)
        self.n_limits = len(self.limits)
        self.batch_sizes = np.array([int(b) for b in m.job.batch_sizes], dtype=np.int64)
        self.n_paths = np.array([len(p) for p in m.paths], dtype=np.uint64)
        self.paths = np.full((len(m.paths), max(1, int(self.n_paths.max()))), math.inf)
        for k, p in enumerate(m.paths):
            self.paths[k, : len(p)] = p
        self.expected = [np.array(x) for x in (m.expected_energy_j, m.expected_time_s, m.expected_cost)]
        if lanes is not None:
            self._lanes(m, lanes)

    def _lanes(self, m: JobModel, lanes: Lanes) -> None:
        """The lanes' paths (padded to the widest), their numbers and expected figures, stacked (lane first).

        Raises:
            ValueError: a lane of another job's configurations (batch sizes, limits, per-epoch and
                profiling figures, JIT limits or maximum epochs): lanes differ in their paths alone.
        """
        shared = (
            "budget_epoch_cost",
            "energy",
            "time",
            "profile_energy",
            "profile_time",
            "jit_limit",
            "limits",
            "batch_sizes",
        )
        tables = [_Tables(lm) for lm in lanes.models]
        for lm, t in zip(lanes.models, tables, strict=True):
            same = all(np.array_equal(getattr(t, k), getattr(self, k), equal_nan=True) for k in shared)
            if (
                not same
                or lm.max_epochs != m.max_epochs
                or lm.cost != m.cost
                or lm.max_power_w != m.max_power_w
                or not _same_times(lm.when_s, m.when_s)
            ):
                raise ValueError("lanes differ in more than their training paths")
        width = max(t.paths.shape[1] for t in tables)
        self.lane_paths = np.full((len(tables), len(self.batch_sizes), width), math.inf)
        for k, t in enumerate(tables):
            self.lane_paths[k, :, : t.paths.shape[1]] = t.paths
        self.lane_n_paths = np.stack([t.n_paths for t in tables])
        self.lane_expected = [np.stack([t.expected[k] for t in tables]) for k in range(3)]
        self.lane = np.asarray(lanes.of_seed, dtype=np.int64)


def _same_times(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two models' recurrence times are the same (both none, or equal)."""
    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(a, b))


class _Inputs(NamedTuple):
    """A step's tries, one per seed ``ids``: configuration indices, profiled, target epoch, least cost, recurrence.

    ``rec``: each try's recurrence, whose place in time prices an epoch's cost terms (with a priced one).
    """

    ids: Any
    bi: np.ndarray
    pj: np.ndarray
    profiled: np.ndarray
    target: np.ndarray
    min_cost: np.ndarray
    rec: np.ndarray | None = None


def _tries(
    m: JobModel, t: _Tables, policies: SeedPolicies | SeedArrays, x: _Inputs, beta: float
) -> tuple[np.ndarray, ...]:
    """The tries ``x`` (the rules of :mod:`zeus_bench.sim.env`): budget, epochs, reached, energy, time."""
    ids, bi, pj, profiled, target, min_cost, rec = x
    at = bi * t.n_limits + pj  # the configurations' flat indices
    epoch_cost = t.budget_epoch_cost.take(at)
    when = None if rec is None else m.when(rec)
    if when is not None:
        epoch_cost = epoch_cost + m.cost.term_cost(t.energy.take(at), t.time.take(at), when)
    stops = policies.early_stopping(ids)
    max_epochs = float(m.max_epochs)
    if stops.any():
        cost_ub = policies.stop_cost(ids, env.stop_bound(beta, min_cost), epoch_cost)
        stopped = env.early_stop_budget(cost_ub, epoch_cost, max_epochs)
        budget = stopped if stops.all() else np.where(stops, stopped, max_epochs)
    else:
        budget = np.full(len(ids), max_epochs)
    epochs, reached = env.try_epochs(target, budget)
    energy_pe, time_pe = t.energy.take(at), t.time.take(at)
    if profiled.any():
        energy, time = env.try_energy_time(
            epochs, energy_pe, time_pe, profiled, t.profile_energy[bi], t.profile_time[bi]
        )
    else:  # no try profiles (every try of Thompson Sampling): the rule's other branch alone
        energy, time = env.try_energy_time(epochs, energy_pe, time_pe, False, 0.0, 0.0)
    return budget, epochs, reached, energy, time


def _outcomes(decisions: list[Decision], t: _Tables, tried: Tried) -> list[Outcome]:
    """The outcomes the policies observe (Python numbers, as a scalar policy expects them)."""
    return outcomes(decisions, t.limits, tried)


#: A step's record: seeds, recurrence, attempt, batch-size and limit indices, profiled, epochs,
#: energy, time, cost, reached, whether the try ran, whether it is a row.
_Step = tuple[np.ndarray, ...]


def _columns(t: _Tables, seeds: int, log: list[_Step], dropped: Sequence[int]) -> SeedTries:
    """The rows of the steps ``log`` as columns, seed by seed (the seeds ``dropped`` left out)."""
    if not log:
        empty = {
            n: np.zeros(0, dtype=bool if n in ("reached", "profiled", "ran") else float) for n in RUN_FIELDS
        }
        for n in ("recurrence", "attempt", "batch_size"):
            empty[n] = np.zeros(0, dtype=np.int64)
        return SeedTries(seeds, np.zeros(0, dtype=np.int64), empty)
    seed, rec, att, bi, pj, profiled, epochs, energy, time, cost, reached, ran, emit = (
        np.concatenate([s[k] for s in log]) for k in range(13)
    )
    if dropped:
        emit &= ~np.isin(seed, np.asarray(dropped, dtype=np.int64))
    order = np.flatnonzero(emit)
    order = order[np.argsort(seed[order], kind="stable")]
    bi, pj, ran = bi[order], pj[order], ran[order]
    if t.lane is None:
        exp_e, exp_t, exp_c = (x[bi, pj] for x in t.expected)
    else:
        lane = t.lane[seed[order]]
        exp_e, exp_t, exp_c = (x[lane, bi, pj] for x in t.lane_expected)
    values = (
        rec[order], att[order], t.batch_sizes[bi], t.limits[pj], np.where(ran, epochs[order], 0.0),
        np.where(ran, energy[order], 0.0), np.where(ran, time[order], 0.0), np.where(ran, cost[order], 0.0),
        reached[order] & ran, profiled[order] & ran, ran, exp_e, exp_t, exp_c,
    )  # fmt: skip
    return SeedTries(seeds, seed[order], dict(zip(RUN_FIELDS, values, strict=True)))


@dataclasses.dataclass(frozen=True)
class _SeedState:
    """Per seed still replaying: its recurrence, attempt, cost so far, whether a try ran, least cost."""

    rec: np.ndarray
    att: np.ndarray
    total: np.ndarray
    ran: np.ndarray
    least: np.ndarray

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self.rec, self.att, self.total, self.ran, self.least)

    def rows(self, idx: np.ndarray) -> _SeedState:
        """The seeds at positions ``idx`` (copies: fancy indexing)."""
        return _SeedState(*(v[idx] for v in self._arrays()))

    def put(self, idx: np.ndarray, new: _SeedState) -> _SeedState:
        """A copy with ``new`` at positions ``idx`` (the old arrays may be in a step's record)."""
        return _SeedState(*(_put(v, idx, x) for v, x in zip(self._arrays(), new._arrays(), strict=True)))


def _outputs(recurrences: int, rec: np.ndarray) -> int:
    """Environment outputs to fetch per seed at a refill: about the draws left, at most ~16 MiB in all."""
    left = max(1, recurrences - int(rec.min()) + 1)
    return min(left * 3 // 4 + 32, max(64, (16 << 20) // (16 * len(rec))))


@dataclasses.dataclass(frozen=True)
class Run:
    """What :func:`execute` replays: the beta, the last recurrence, the drift hook, the per-try noise and the start.

    The replay starts at recurrence ``first`` with ``least`` the least recurrence cost so far (the
    defaults: the job's start); ``noise`` > 0 needs a noise generator per seed.
    """

    beta: float
    recurrences: int
    drift: DriftHook | SeedDrifts | None = None
    noise: float = 0.0
    first: int = 1
    least: float = math.inf


def _face(
    policies: SeedPolicies | SeedArrays,
    t: _Tables,
    env_rngs: Sequence[np.random.Generator],
    noise_rngs: Sequence[np.random.Generator],
) -> tuple[SeedArrays, list[Any], list[Any]]:
    """The array face of ``policies``; for a face of the array protocol (whose seeds may go) the generators' start states."""
    if callable(getattr(policies, "decide_arrays", None)):  # the array protocol, by method
        starts = [r.bit_generator.state for r in env_rngs]  # for the seeds that go
        return cast("SeedArrays", policies), starts, [r.bit_generator.state for r in noise_rngs]
    return ObjectArrays(cast("SeedPolicies", policies), t.limits), [], []


class _Walk:
    """One walk of the step loop: the seeds still replaying, their state, the steps' record."""

    def __init__(
        self,
        m: JobModel,
        t: _Tables,
        face: SeedArrays,
        run: Run,
        env_rngs: Sequence[np.random.Generator],
        nrngs: list[np.random.Generator],
    ) -> None:
        """A walk of every seed from ``run``'s start on tables ``t`` (``nrngs``: the noise generators, or none)."""
        self.m, self.t, self.face, self.run, self.nrngs = m, t, face, run, nrngs
        a = len(env_rngs)
        self.words = env.EnvWords(env_rngs)
        self.log: list[_Step] = []
        self.gone: list[int] = []
        self.ids = np.arange(a if run.first <= run.recurrences else 0)
        n = len(self.ids)
        self.state = _SeedState(
            np.full(n, run.first, dtype=np.int64), np.ones(n, dtype=np.int64), np.zeros(n),
            np.zeros(n, dtype=bool), np.full(n, float(run.least)),
        )  # fmt: skip
        self.final = np.full(a, float(run.least))  # each seed's, written when it ends

    def walk(self) -> None:
        """Step until every seed has ended or gone."""
        with np.errstate(all="ignore"):  # inf and NaN as the rules have them
            while len(self.ids):
                d = self.face.decide_arrays(
                    self.ids, np.maximum(self.run.recurrences - self.state.rec + 1, 1)
                )
                if d.step is None or len(d.step):
                    self._step(d)
                self._retire(d)

    def _step(self, d: Decided) -> None:
        """The tries of the seeds ``d`` decided for: drawn, run, observed, recorded."""
        m, t, run, face, step, state = self.m, self.t, self.run, self.face, d.step, self.state
        bi, pj, profiled = d.bi, d.pj, d.profiled
        seeds, now = (self.ids, state) if step is None else (self.ids[step], state.rows(step))
        rec, min_cost = now.rec, now.least
        # The path is drawn before the budget is known, as in the paper's simulator.
        refill = functools.partial(_outputs, run.recurrences, state.rec)
        if t.lane is None:
            target = t.paths[bi, self.words.draw(step, t.n_paths[bi], refill)]
        else:
            lane = t.lane[seeds]
            target = t.lane_paths[lane, bi, self.words.draw(step, t.lane_n_paths[lane, bi], refill)]
        if isinstance(run.drift, SeedDrifts):
            target = target * run.drift.factors[run.drift.group[seeds], rec, bi]
        elif run.drift is not None:
            factors = [run.drift(r, b) for r, b in zip(rec.tolist(), bi.tolist(), strict=True)]
            target = target * np.array(factors)
        x = _Inputs(seeds, bi, pj, profiled, target, min_cost, rec)
        budget, epochs, reached, energy, time = _tries(m, t, face, x, run.beta)
        if run.noise > 0.0:
            for k in np.flatnonzero(budget != 0.0).tolist():
                energy[k], time[k] = noisy(float(energy[k]), float(time[k]), run.noise, self.nrngs[seeds[k]])
        penalty = env.zero_budget_cost(min_cost, run.beta)
        cost = env.try_cost(energy, time, m.cost, m.max_power_w, budget, penalty, m.when(rec))
        face.observe_arrays(seeds, Tried(bi, pj, profiled, cost, reached, epochs, energy, time))
        *new, ran_try, emit, failed, _ = env.recurrence_step(
            rec, now.att, now.total, now.ran, min_cost, epochs, cost, reached
        )
        if failed.any():
            raise first_recurrence_error(m, int(t.batch_sizes[bi[int(np.flatnonzero(failed)[0])]]))
        self.log.append(
            (seeds, rec, now.att, bi, pj, profiled, epochs, energy, time, cost, reached, ran_try, emit)
        )
        self.state = _SeedState(*new) if step is None else state.put(step, _SeedState(*new))

    def _retire(self, d: Decided) -> None:
        """Drop the seeds past the last recurrence or gone (the face said so)."""
        going = self.state.rec <= self.run.recurrences
        if d.gone is not None and len(d.gone):
            going[d.gone] = False
            self.gone.extend(self.ids[d.gone].tolist())
        if not going.all():
            self.final[self.ids] = self.state.least
            keep = np.flatnonzero(going)
            self.ids, self.state = self.ids[keep], self.state.rows(keep)
            self.words.keep(keep)


def execute(
    model: JobModel,
    policies: SeedPolicies | SeedArrays,
    env_rngs: Sequence[np.random.Generator],
    run: Run,
    noise_rngs: Sequence[np.random.Generator] | None = None,
    lanes: Lanes | None = None,
) -> tuple[SeedTries, np.ndarray]:
    """Replay every seed (seed ``i``: ``policies``' seed ``i``, ``env_rngs[i]``) from ``run``'s start up to its last recurrence.

    ``lanes``: each seed's training paths from its lane's model (:class:`Lanes`; None: ``model``'s).

    Returns the seeds' rows (one per try that ran, and one per recurrence in which none ran:
    :func:`missed_row`) and each seed's least recurrence cost at the end. The generators are
    owned from now on (the environment's are read ahead).

    Raises:
        ConfigError: a try of the first recurrence does not reach the target, or a policy chose
            a configuration the trace does not have.
    """
    if run.noise > 0.0 and (noise_rngs is None or len(noise_rngs) != len(env_rngs)):
        raise ValueError("per-try noise needs a generator of its own per seed (noise_rngs)")
    t = _Tables(model, lanes)
    nrngs = list(noise_rngs or ())
    face, starts, noise_starts = _face(policies, t, env_rngs, nrngs)
    walk = _Walk(model, t, face, run, env_rngs, nrngs)
    walk.walk()
    settle(face)  # a face that left its seeds' objects behind brings them up to date
    tries, gone, final = _columns(t, len(env_rngs), walk.log, walk.gone), walk.gone, walk.final
    if gone:  # replayed from scratch: their generators back at their start, the scalar face
        gone.sort()
        for i in gone:
            env_rngs[i].bit_generator.state = starts[i]
            if noise_starts:
                nrngs[i].bit_generator.state = noise_starts[i]
        again_rngs = [nrngs[i] for i in gone] if nrngs else None
        again_lanes = None if lanes is None else lanes.subset(gone)
        again_run = run
        if isinstance(run.drift, SeedDrifts):
            again_run = dataclasses.replace(run, drift=run.drift.subset(gone))
        again, again_least = execute(
            model, face.fallback(gone), [env_rngs[i] for i in gone], again_run, again_rngs, again_lanes
        )
        final[gone] = again_least
        tries = tries.splice(gone, again)
    return tries, final


def execute_blocks(
    model: JobModel,
    faces: Sequence[SeedPolicies | SeedArrays],
    env_rngs: Sequence[Sequence[np.random.Generator]],
    run: Run,
    noise_rngs: Sequence[Sequence[np.random.Generator]] | None = None,
    lanes: Lanes | None = None,
) -> list[SeedTries]:
    """:func:`execute` of each face (its seeds' generators ``env_rngs[k]``, ``noise_rngs[k]``) in one walk.

    ``lanes``: the model whose paths each seed draws, the faces' seeds in order (:class:`Lanes`;
    None: ``model``'s).

    The faces are asked as one (:class:`~zeus_bench.sim.blocks.Blocks`): the executor's work per step is shared by
    every face's seeds. Returns each face's rows, as its own :func:`execute` gives them.
    """
    blocks = Blocks(faces, [len(r) for r in env_rngs], _Tables(model).limits)
    flat_noise = None if noise_rngs is None else [g for rngs in noise_rngs for g in rngs]
    tries, _ = execute(model, blocks, [g for rngs in env_rngs for g in rngs], run, flat_noise, lanes)
    starts = blocks.starts.tolist()
    return [tries.seed_range(lo, hi) for lo, hi in itertools.pairwise(starts)]


def _put(v: np.ndarray, rows: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A copy of ``v`` with ``x`` at ``rows`` (the old array may be in a step's record)."""
    out = v.copy()
    out[rows] = x
    return out


class OneTry:
    """Single tries of one seed under the executor's rules (tries that overlap in time: arrivals).

    ``min_cost`` is the caller's to keep (what the budget's bound follows); ``zero_budget_penalty``
    scales the cost a zero-budget try reports (``x beta x min_cost``).
    """

    def __init__(
        self,
        model: JobModel,
        policy: Policy,
        beta: float,
        env_rng: np.random.Generator,
        zero_budget_penalty: float = ZERO_BUDGET_PENALTY,
        min_cost: float = math.inf,
    ) -> None:
        """Tries of ``policy``'s decisions on ``model``, paths drawn from ``env_rng`` (owned from now on)."""
        self.model = model
        self.beta = beta
        self.penalty = zero_budget_penalty
        self.min_cost = min_cost
        self._policies = scalar_face(model, [policy])
        self._draw = PathDraws(env_rng)
        self._tables = _Tables(model)

    def run(self, decision: Decision) -> Outcome:
        """Run one try of ``decision`` on a sampled training path (``epochs == 0``: zero budget)."""
        m = self.model
        bi, pj, jit = decision_indices(m, decision)
        paths = m.paths[bi]
        target = np.array([paths[self._draw(len(paths))]])
        min_cost = np.array([self.min_cost])
        b, p, prof = np.array([bi]), np.array([pj]), np.array([jit])
        with np.errstate(all="ignore"):  # inf and NaN as the rules have them
            x = _Inputs([0], b, p, prof, target, min_cost)
            budget, epochs, reached, energy, time = _tries(m, self._tables, self._policies, x, self.beta)
            penalty = env.zero_budget_cost(min_cost, self.beta, self.penalty)
            cost = env.try_cost(energy, time, m.cost, m.max_power_w, budget, penalty)
        return _outcomes([decision], self._tables, Tried(b, p, prof, cost, reached, epochs, energy, time))[0]
