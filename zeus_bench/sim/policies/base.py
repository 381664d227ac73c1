"""The policy interface of the simulator and its registry.

A policy decides, before every try of a recurring job, which batch size and power limit to run
(:meth:`Policy.predict`), and learns from the outcome (:meth:`Policy.observe`). It is pure: no
I/O, no clock; its randomness comes only from the injected :class:`numpy.random.Generator` in its
:class:`PolicyContext`. A power limit of ``None`` asks the environment to profile the batch size
just in time (JIT): the try's first epoch is spread over all limits, the rest runs at the limit
of least epoch cost, and the outcome reports that limit with ``profiled=True``.

Policies are found by name in :data:`POLICIES`; :func:`register_policy` adds one::

    @register_policy
    class Smallest(Policy):
        name = "smallest"

        def predict(self) -> Decision:
            return Decision(int(self.ctx.job.batch_sizes[0]), None)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies.seeds import Decision, Outcome, ScalarPolicies, SeedArrays, SeedPolicies
from zeus_bench.traces.jobs import JobTrace

if TYPE_CHECKING:
    from zeus_bench.sim.model import JobModel

__all__ = [
    "POLICIES", "Decision", "Outcome", "Policy", "PolicyContext", "UnknownPolicyError", "changes_rules",
    "defines_methods",
    "get_policy", "horizon_blind", "load_policy_module", "register_policy", "scalar_face",
]  # fmt: skip


class UnknownPolicyError(ConfigError):
    """A policy name that is not in the registry."""


@dataclass(frozen=True)
class PolicyContext:
    """What a policy is given at construction.

    Attributes:
        job: The job's joined trace (batch sizes, limits, b0; reference policies may also use
            its measurements, learning policies should not).
        cost: The cost tries are charged (:class:`~zeus_bench.core.cost.Cost`).
        beta: Early-stopping threshold (multiple of the best cost so far).
        window: Observation window for drift handling (0 = unbounded).
        rng: The policy's own random generator.
        recurrences: How many recurrences the job is replayed for, when the caller knows (the
            simulator does); None otherwise. A deployment knows it when the job runs on a
            schedule; ``zeus-plus`` budgets its exploration over it.
        prior_mean: Mean of the batch-size optimizer's Gaussian prior per arm (reward = -cost, J).
        prior_precision: Precision of that prior (1 / J^2; 0 = none, the paper's default).
        prune_rounds: Rounds of pruning exploration of the batch-size optimizer (the paper's 2).
        concurrent: Tries may overlap (an arrival table): the optimizer follows the paper's
            concurrency rules.
    """

    job: JobTrace
    cost: Cost
    beta: float
    window: int
    rng: np.random.Generator
    recurrences: int | None = None
    prior_mean: float = 0.0
    prior_precision: float = 0.0
    prune_rounds: int = 2
    concurrent: bool = False


class Policy(ABC):
    """Base class of simulator policies.

    Class attributes:
        name: Registry name.
        early_stopping: Whether the job runner stops a try at ``beta x`` the best cost so far
            (``False`` for the reference policies, which model running without Zeus).
        randomized: Whether different seeds may give different decisions (contract tests).
        description: One line for ``--help`` and the docs.
        reads_paths: Whether the policy reads its job's training paths (``ctx.job.target_epochs``
            or anything derived from them, as the reference policies max-batch and oracle do).
            False lets a replay of one job's several sets of paths (the arena's splits, folds and
            replicate traces: :func:`~zeus_bench.sim.replay.replay_lanes`) ask one face for all of
            them, every object built on one set's job. True by default; a subclass of a policy
            that declares False and reads the paths must declare True again.
    """

    name: ClassVar[str]
    early_stopping: ClassVar[bool] = True
    reads_paths: ClassVar[bool] = True
    randomized: ClassVar[bool] = False
    description: ClassVar[str] = ""

    def __init__(self, ctx: PolicyContext) -> None:
        """Create the policy for one recurring job."""
        self.ctx = ctx

    @abstractmethod
    def predict(self) -> Decision:
        """Batch size and power limit of the next try."""

    def observe(self, outcome: Outcome) -> None:  # noqa: B027 - optional hook
        """Learn from the outcome of a try (default: ignore it)."""

    def started(self, batch_size: int, power_limit_w: float, profiled: bool) -> None:  # noqa: B027 - optional hook
        """A try was launched at this configuration (concurrent replays call it at launch).

        ``profiled``: its first epoch profiled the batch size's limits and ``power_limit_w`` is
        the limit chosen. Default: ignore it (the outcome comes to :meth:`observe` at the end).
        """

    def stop_cost(self, default: float, epoch_cost: float = float("nan")) -> float:
        """Cost at which the runner stops the try just predicted (default: ``beta x`` best cost).

        Args:
            default: ``beta x`` the best recurrence cost so far (``inf`` before any).
            epoch_cost: Cost of one epoch of the try's configuration (what its first epoch
                measures).
        """
        return default

    @classmethod
    def reads_horizon(cls) -> bool:
        """Whether the policy reads the number of recurrences it is told (``ctx.recurrences``, the horizon).

        False lets a replay under several horizons (``zeus-bench arena --horizon known,unknown``:
        :func:`~zeus_bench.studies.arena_protocol.parts_draws`) replay it once for all of them: its
        rows are the same under every horizon. It also promises that the policy's decisions do not
        depend on the recurrences left (the ``left`` its array face is given may size a read-ahead,
        nothing else), so a shorter replay's rows are a longer one's first recurrences and a run
        over several numbers of recurrences (``--recurrences 200,100``) replays it once, the
        longest. True by default, always correct; a built-in that never reads either says False,
        and a subclass of one that reads it must say True again.
        """
        return True

    @classmethod
    def inert_constants(cls, horizon_known: bool) -> frozenset[str]:
        """Constants (class attributes) this policy does not read under a horizon.

        ``horizon_known``: the policy is told a number of recurrences. An override of such a
        constant (``zeus-bench arena --set``) is refused, not silently ignored.
        """
        return frozenset()

    @classmethod
    def face_family(cls) -> type[Policy]:
        """The class whose face over seeds (:meth:`batched`) also asks this class's seeds in a walk of several classes.

        Classes of one family (the same answer) that a walk replays together
        (:func:`~zeus_bench.sim.replay.replay_lanes`) share one face: the family's ``batched``,
        given each seed's object of its own class. A face asks each seed's object (or state made
        from it) alone, so a seed's rows do not depend on the seeds beside it; sharing saves the
        face's work per step. Default: the class itself (a face of its own). ``zeus-plus``'s
        face (its variants with other constants, ``zeus-plus-safe``) says :class:`ZeusPlus
        <zeus_bench.sim.policies.zeus_plus.ZeusPlus>`.
        """
        return cls

    @classmethod
    def batched(cls, model: JobModel, policies: Sequence[Policy]) -> SeedPolicies | SeedArrays:
        """This policy's face over seeds, which the replay's executor asks (:mod:`zeus_bench.sim.executor`).

        ``policies``: one object of this class per seed (seed ``i``'s at position ``i``), or of a
        class of its :meth:`face_family`. The
        default wraps them (:class:`~zeus_bench.sim.policies.seeds.ScalarPolicies`): each seed's
        object is asked for its :meth:`predict` and told its :meth:`observe` in turn, so a policy
        needs nothing more. A face may also offer the array protocol
        (:class:`~zeus_bench.sim.policies.seeds.SeedArrays`; ``zeus``'s does), which the executor
        then asks instead.
        """
        return scalar_face(model, policies)

    def best(self) -> Decision:
        """Best configuration known so far (used by jobs submitted while others run).

        Defaults to :meth:`predict`; learning policies override it.
        """
        return self.predict()


def scalar_face(model: JobModel, policies: Sequence[Policy]) -> ScalarPolicies:
    """The default face over seeds of ``policies`` (one class): each object asked in turn."""
    return ScalarPolicies(model, policies, any(type(p).stop_cost is not Policy.stop_cost for p in policies))


P = TypeVar("P", bound=type[Policy])

POLICIES: dict[str, type[Policy]] = {}


def _between(cls: type, owner: type) -> tuple[type, ...]:
    """The classes from ``cls`` up to ``owner`` (``owner`` excluded) in ``cls``'s method resolution order."""
    mro = cls.__mro__
    return mro[: mro.index(owner)]


def changes_rules(cls: type, owner: type, names: Sequence[str]) -> bool:
    """Whether a class between ``cls`` and ``owner`` (``owner`` excluded) defines one of ``names``."""
    return any(name in vars(k) for k in _between(cls, owner) for name in names)


def defines_methods(cls: type, owner: type) -> bool:
    """Whether a class between ``cls`` and ``owner`` (``owner`` excluded) defines a method, not only constants.

    (A function, class or static method, or property. An arena variant of a policy,
    :func:`~zeus_bench.studies.crossfit.variant`, sets constants only.)
    """
    kinds = (FunctionType, classmethod, staticmethod, property)
    return any(isinstance(v, kinds) for k in _between(cls, owner) for v in vars(k).values())


def horizon_blind(owner: P) -> P:
    """Class decorator of a policy that never reads the horizon it is told (:meth:`Policy.reads_horizon` False).

    Its subclasses that only set constants are blind too; one that defines a method of its own
    may read the horizon there, so it counts as reading it (unless it says otherwise itself).
    """

    def reads_horizon(cls: type[Policy]) -> bool:
        return defines_methods(cls, owner)

    owner.reads_horizon = classmethod(reads_horizon)  # type: ignore[assignment, method-assign]
    return owner


def register_policy(cls: P) -> P:
    """Class decorator: add a policy to :data:`POLICIES` under its ``name``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__} needs a class attribute 'name'")
    if name in POLICIES and POLICIES[name] is not cls:
        raise ValueError(f"policy {name!r} is already registered")
    POLICIES[name] = cls
    return cls


def get_policy(name: str) -> type[Policy]:
    """The policy class registered as ``name``."""
    try:
        return POLICIES[name]
    except KeyError:
        raise UnknownPolicyError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None


def load_policy_module(spec: str) -> None:
    """Import a module that registers policies: a dotted module name or a ``.py`` file path.

    Raises:
        ConfigError: the module cannot be found or fails to import.
    """
    import importlib
    import importlib.util
    import sys
    from pathlib import Path

    try:
        if spec.endswith(".py"):
            path = Path(spec)
            if not path.is_file():
                raise ConfigError(f"policy module {spec!r}: no such file")
            name = f"zeus_bench_user_policies_{path.stem}"
            if name in sys.modules:
                return
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise ConfigError(f"policy module {spec!r}: cannot be loaded")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            importlib.import_module(spec)
    except ConfigError:
        raise
    except ImportError as exc:
        raise ConfigError(f"policy module {spec!r}: {exc}") from None
    except Exception as exc:  # a user's module may fail in any way: one line, not a traceback
        raise ConfigError(f"policy module {spec!r} failed to import: {type(exc).__name__}: {exc}") from None
