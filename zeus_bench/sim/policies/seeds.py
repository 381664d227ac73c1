"""A policy's decision and outcome, and its face over seeds (beneath :mod:`zeus_bench.sim.policies.base`).

:class:`Decision` and :class:`Outcome` are what a policy says and is told about one try.
:class:`SeedPolicies` is the face the replay's executor (:mod:`zeus_bench.sim.executor`) asks:
one decision and one observation per seed and step. :class:`ScalarPolicies`, the default
(:meth:`Policy.batched <zeus_bench.sim.policies.Policy.batched>`), holds one scalar policy object
per seed and asks each in turn, so a policy needs only ``predict`` and ``observe``.
A face may also offer the array protocol :class:`SeedArrays` (indices in, arrays out, no object
per seed and try), which the executor then asks instead; such a face may leave seeds to the
executor to replay from scratch with its scalar :meth:`~SeedArrays.fallback`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from zeus_bench.core.errors import ConfigError

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel

__all__ = [
    "Decided", "Decision", "Outcome", "ScalarPolicies", "ScalarPolicy", "SeedArrays", "SeedList",
    "SeedPolicies", "Tried", "decision_indices", "outcomes", "settle",
]  # fmt: skip


class Decision(NamedTuple):
    """What to run next.

    Attributes:
        batch_size: Batch size of the try.
        power_limit_w: Power limit (W), or ``None`` to profile the batch size just in time.
    """

    batch_size: int
    power_limit_w: float | None


class Outcome(NamedTuple):
    """Result of one try, as the policy observes it.

    Attributes:
        batch_size: Batch size of the try.
        power_limit_w: Power limit it ran at (after profiling, the limit chosen), W.
        cost: Zeus cost of the try (J); for a try whose early-stop budget was zero, the
            penalty ``100 x beta x min_cost``.
        reached: Whether it reached the target.
        epochs: Epochs it ran (0 for a zero-budget try).
        energy_j: Energy it used (J).
        time_s: Time it took (s).
        profiled: Whether this try profiled the batch size's power limits.
    """

    batch_size: int
    power_limit_w: float
    cost: float
    reached: bool
    epochs: float
    energy_j: float
    time_s: float
    profiled: bool


class ScalarPolicy(Protocol):
    """What :class:`ScalarPolicies` asks of one seed's policy object (a :class:`~zeus_bench.sim.policies.Policy`)."""

    @property
    def early_stopping(self) -> bool:
        """Whether its tries stop at their cost bound."""
        ...

    def predict(self) -> Decision:
        """Its next decision."""
        ...

    def observe(self, outcome: Outcome) -> None:
        """Its try's outcome."""
        ...

    def stop_cost(self, default: float, epoch_cost: float = ...) -> float:
        """Its try's cost bound."""
        ...


class SeedPolicies(Protocol):
    """A policy's face over seeds: one decision and one observation per seed and step."""

    def decide(self, ids: Sequence[int]) -> tuple[list[Decision], np.ndarray, np.ndarray, np.ndarray]:
        """The next decision of each seed ``ids``: decisions, batch-size and limit indices, profiled."""
        ...

    def early_stopping(self, ids: Sequence[int]) -> np.ndarray:
        """Whether each seed's try stops at its cost bound."""
        ...

    def stop_cost(self, ids: Sequence[int], bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """Each seed's cost bound of the try just decided (``bound``: ``beta x`` its best cost)."""
        ...

    def observe(self, ids: Sequence[int], outcomes: list[Outcome]) -> None:
        """Each seed's outcome of the try just run."""
        ...


class Decided(NamedTuple):
    """A step's decisions of an array face (:meth:`SeedArrays.decide_arrays`), over the seeds that try.

    Attributes:
        bi: Batch-size index of each try.
        pj: Power-limit index of each try.
        profiled: Whether each try profiles its batch size just in time.
        step: Positions (among the seeds asked) of the seeds that try now, ascending; None: all.
        gone: Positions of the seeds the face cannot continue exactly (none of ``step``): the
            executor replays them again from scratch with :meth:`SeedArrays.fallback`; None: none.
    """

    bi: np.ndarray
    pj: np.ndarray
    profiled: np.ndarray
    step: np.ndarray | None = None
    gone: np.ndarray | None = None


class Tried(NamedTuple):
    """What the seeds that tried observe (:meth:`SeedArrays.observe_arrays`): one element per try."""

    bi: np.ndarray
    pj: np.ndarray
    profiled: np.ndarray
    cost: np.ndarray
    reached: np.ndarray
    epochs: np.ndarray
    energy_j: np.ndarray
    time_s: np.ndarray


class SeedArrays(Protocol):
    """A face over seeds that decides and observes on arrays (the executor's array protocol)."""

    def decide_arrays(self, ids: np.ndarray, left: np.ndarray) -> Decided:
        """The next tries of seeds ``ids`` (ascending); ``left``: each one's recurrences left (at least 1)."""
        ...

    def early_stopping(self, ids: np.ndarray) -> np.ndarray:
        """Whether each seed's try stops at its cost bound."""
        ...

    def stop_cost(self, ids: np.ndarray, bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """Each seed's cost bound of the try just decided (``bound``: ``beta x`` its best cost)."""
        ...

    def observe_arrays(self, ids: np.ndarray, tried: Tried) -> None:
        """The outcomes of the tries of the seeds that tried (``ids``: theirs, in the decided order)."""
        ...

    def fallback(self, ids: Sequence[int]) -> SeedPolicies | SeedArrays:
        """The scalar face of seeds ``ids`` from their start (for the seeds reported ``gone``; one that never goes)."""
        ...


def settle(face: object) -> None:
    """The end of a walk for ``face``: its seeds' objects brought up to date, where it left them behind.

    Such a face has a ``settle`` method (:class:`~zeus_bench.sim.policies.seed_zeus_plus.ZeusPlusArrays`);
    any other face has nothing to do.
    """
    done = getattr(face, "settle", None)
    if callable(done):
        done()


class ScalarPolicies:
    """The default seed-batch face: one scalar policy object per seed, asked one by one."""

    def __init__(self, model: JobModel, policies: Sequence[ScalarPolicy], stops: bool = True) -> None:
        """Face ``policies`` (seed ``i``'s at position ``i``) on ``model``'s configurations.

        ``stops``: whether their ``stop_cost`` is their own (False: the bound itself, no call needed).
        """
        self.model = model
        self.policies = list(policies)
        self._stops = stops
        self._at: dict[Decision, tuple[int, int, bool]] = {}  # decision_indices of the decisions seen

    def indices(self, decision: Decision) -> tuple[int, int, bool]:
        """:func:`decision_indices` of ``decision``, kept per decision (the model does not change)."""
        at = self._at.get(decision)
        if at is None:
            at = self._at[decision] = decision_indices(self.model, decision)
        return at

    def decide(self, ids: Sequence[int]) -> tuple[list[Decision], np.ndarray, np.ndarray, np.ndarray]:
        """Each policy's :meth:`~zeus_bench.sim.policies.Policy.predict`, as configuration indices."""
        decisions, bis, pjs, profiled = [], [], [], []
        indices = self.indices
        for i in ids:
            d = self.policies[i].predict()
            bi, pj, jit = indices(d)
            decisions.append(d)
            bis.append(bi)
            pjs.append(pj)
            profiled.append(jit)
        return decisions, np.array(bis, dtype=np.intp), np.array(pjs, dtype=np.intp), np.array(profiled)

    def early_stopping(self, ids: Sequence[int]) -> np.ndarray:
        """Each policy's ``early_stopping``."""
        return np.array([self.policies[i].early_stopping for i in ids], dtype=bool)

    def stop_cost(self, ids: Sequence[int], bound: np.ndarray, epoch_cost: np.ndarray) -> np.ndarray:
        """Each policy's :meth:`~zeus_bench.sim.policies.Policy.stop_cost` (the bound where not overridden)."""
        if not self._stops:
            return bound
        out = bound.copy()
        for k, (i, b, c) in enumerate(zip(ids, bound.tolist(), epoch_cost.tolist(), strict=True)):
            out[k] = self.policies[i].stop_cost(b, c)
        return out

    def observe(self, ids: Sequence[int], outcomes: list[Outcome]) -> None:
        """Each policy's :meth:`~zeus_bench.sim.policies.Policy.observe`."""
        for i, out in zip(ids, outcomes, strict=True):
            self.policies[i].observe(out)


class SeedList:
    """A step's seed ids as a Python list, converted once per step.

    The executor passes the same array to every call of a step, so the list is kept until
    another array comes.
    """

    def __init__(self) -> None:
        """No step seen yet."""
        self._ids: np.ndarray | None = None
        self._list: list[int] = []

    def __call__(self, ids: np.ndarray) -> list[int]:
        """``ids`` as a list (the last one's, when ``ids`` is the last array)."""
        if ids is not self._ids:
            self._ids, self._list = ids, ids.tolist()
        return self._list


def outcomes(decisions: Sequence[Decision], limits: np.ndarray, tried: Tried) -> list[Outcome]:
    """The outcomes of ``decisions``' tries (Python numbers, as a scalar policy expects them).

    ``limits``: the trace's power limits (W), which ``tried.pj`` indexes.
    """
    return [
        Outcome(d.batch_size, lim, c, r, e, en, ti, p)
        for d, lim, c, r, e, en, ti, p in zip(
            decisions, limits[tried.pj].tolist(), tried.cost.tolist(), tried.reached.tolist(),
            tried.epochs.tolist(), tried.energy_j.tolist(), tried.time_s.tolist(), tried.profiled.tolist(),
            strict=True,
        )
    ]  # fmt: skip


def decision_indices(m: JobModel, decision: Decision) -> tuple[int, int, bool]:
    """(batch-size index, limit index, profiled) of a decision; a JIT one takes its batch size's JIT limit.

    Raises:
        ConfigError: the batch size or the configuration is not in the trace.
    """
    bi = m.bs_index.get(decision.batch_size)
    if bi is None:
        raise ConfigError(f"policy chose an unknown batch size {decision.batch_size}")
    if decision.power_limit_w is None:
        return bi, m.limit_index[m.jit_limit_w[bi]], True
    bi, pj = m.indices(decision)
    return bi, pj, False
