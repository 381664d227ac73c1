"""The batch-size optimizer across recurrences of a job, with its state on disk.

The policy is one of the simulator's own batch-size optimizers, found by name in
:data:`zeus_bench.optimizers.OPTIMIZERS` (``zeus``: pruning, then Gaussian Thompson Sampling;
``zeus-plus``: safe hill climbing) and driven through their one contract
(:class:`zeus_bench.optimizers.Optimizer`); this module only persists it in a small JSON file
between recurrences, records each run, and decides early stopping: a run whose cost so far
passes ``beta`` times the best cost of the runs that reached the target, or the optimizer's own
cap for it (:meth:`~zeus_bench.optimizers.Optimizer.stop_cost`), is stopped.

State file layout (``version`` 1)::

    {"version": 1, "job": {"batch_sizes": [...], "default_batch_size": b0, "eta": .., "beta": ..,
     "seed": .., "prune_rounds": .., "window": .., "policy": name}, "policy": <optimizer.state_dict()>,
     "runs": [{"batch_size", "cost_j", "energy_j", "time_s", "reached", "early_stopped",
               "epochs", "finished_unix_s"}, ...]}
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_COST, Cost, check_beta
from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import atomic_write_text
from zeus_bench.optimizers import OPTIMIZERS, PRUNE_ROUNDS, Optimizer

POLICY_NAMES = tuple(OPTIMIZERS)

log = logging.getLogger(__name__)

STATE_VERSION = 1


@dataclass(frozen=True)
class RunRecord:
    """One finished recurrence of the job."""

    batch_size: int
    cost_j: float
    energy_j: float
    time_s: float
    reached: bool
    early_stopped: bool
    epochs: int
    finished_unix_s: float


def check_recurrences(recurrences: object) -> int:
    """``recurrences`` as the job's number of runs: a whole number >= 0 (0: unknown).

    Raises:
        ConfigError: anything else (a bool, a fraction, a negative number).
    """
    if isinstance(recurrences, bool) or not isinstance(recurrences, int) or recurrences < 0:
        raise ConfigError(f"recurrences must be a whole number >= 0 (0: unknown), got {recurrences!r}")
    return recurrences


@dataclass(frozen=True)
class OptimizerSettings:
    """How :class:`BatchSizeOptimizer` chooses the batch size and charges a run.

    Attributes:
        cost: The cost each run is charged (:class:`~zeus_bench.core.cost.Cost`); its ``eta`` is
            saved in the state. No term placed in time, nor any priced term: a run here
            has no place in time, and its cost is the energy-time one.
        beta: Early-stop threshold (multiple of the best cost; ``inf`` turns it off).
        seed: Seed of the policy's generator (used only when the state is created).
        policy: A name in :data:`~zeus_bench.optimizers.OPTIMIZERS`: ``zeus`` (pruning + Thompson
            Sampling) or ``zeus-plus`` (:class:`~zeus_bench.optimizers.hill_climb.SafeHillClimb`:
            budgeted neighbour probes, stopped at ``(1 + margin) x`` the incumbent's cost).
        window: Observations per arm in the posterior (0: all).
        recurrences: How many times the job will run, when known (``zeus-plus`` spreads its 2 %
            allowance over them and explores sooner); 0, unknown: ``zeus-plus`` keeps to the
            anytime budget (never more than 2 % over b0 so far, whenever the job stops).
        prune_rounds: Pruning rounds of the policy (``zeus``).
    """

    cost: Cost = DEFAULT_COST
    beta: float = DEFAULT_BETA
    seed: int = 0
    policy: str = "zeus"
    window: int = 0
    recurrences: int = 0
    prune_rounds: int = PRUNE_ROUNDS


class BatchSizeOptimizer:
    """Chooses each recurrence's batch size and learns from its outcome; state in ``state_path``.

    Args:
        state_path: JSON state file (created on first :meth:`report`).
        batch_sizes: Feasible batch sizes.
        default_batch_size: The job's default batch size.
        settings: The policy, cost and seed (:class:`OptimizerSettings`; None: its defaults).
        **fields: Any field of :class:`OptimizerSettings` by name (``policy="zeus-plus",
            recurrences=50``), overriding ``settings``'.

    Raises:
        ConfigError: the state file belongs to a different job configuration, or is corrupt.
        TypeError: a keyword that names no setting.
    """

    def __init__(
        self,
        state_path: str | Path,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        settings: OptimizerSettings | None = None,
        **fields: Any,
    ) -> None:
        settings = OptimizerSettings() if settings is None else settings
        settings = dataclasses.replace(settings, **fields) if fields else settings
        cost, policy = settings.cost, settings.policy
        if policy not in POLICY_NAMES:
            raise ConfigError(f"unknown online policy {policy!r}; known: {', '.join(POLICY_NAMES)}")
        refused = [t.column for t in cost.terms if t.in_time or t.price > 0.0]
        if refused:
            raise ConfigError(
                f"the online optimizer places no run in time and prices no cost term: give a Cost without "
                f"{', '.join(refused)}"
            )
        self.state_path = Path(state_path)
        self.job: dict[str, Any] = {
            "batch_sizes": sorted({int(b) for b in batch_sizes}),
            "default_batch_size": int(default_batch_size),
            "eta": cost.eta,
            "beta": check_beta(settings.beta),
            "seed": int(settings.seed),
            "prune_rounds": int(settings.prune_rounds),
            "window": int(settings.window),
            "policy": policy,
            "recurrences": check_recurrences(settings.recurrences),
        }
        self.runs: list[RunRecord] = []
        self.policy = self._load()
        self._loaded_runs = len(self.runs)

    def _saved_run_count(self) -> int:
        """Runs in the state file now (0 without one; -1 if unreadable, so that it is re-read)."""
        if not self.state_path.exists():
            return 0
        try:
            return len(json.loads(self.state_path.read_text())["runs"])
        except (OSError, ValueError, KeyError, TypeError):
            return -1

    def _load(self) -> Optimizer:
        if not self.state_path.exists():
            j = self.job
            return OPTIMIZERS[j["policy"]].for_job(
                j["batch_sizes"],
                j["default_batch_size"],
                seed=j["seed"],
                window=j["window"],
                prune_rounds=j["prune_rounds"],
                recurrences=j["recurrences"],
            )
        try:
            data = json.loads(self.state_path.read_text())
            if data.get("version") != STATE_VERSION:
                raise ConfigError(
                    f"{self.state_path}: optimizer state version {data.get('version')!r}, this zeus-bench reads {STATE_VERSION}"
                )
            saved_job = data["job"]
            saved_job.setdefault("policy", "zeus")  # states written before zeus-plus existed
            saved_job.setdefault("recurrences", 0)  # states written before it could be given
            self.runs = [RunRecord(**r) for r in data["runs"]]
            cls = OPTIMIZERS.get(saved_job["policy"])
            if cls is None:
                raise ConfigError(
                    f"{self.state_path}: unknown optimizer {saved_job['policy']!r} (known: {', '.join(OPTIMIZERS)})"
                )
            policy = cls.from_state_dict(data["policy"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{self.state_path}: corrupt batch-size optimizer state ({exc})") from None
        differ = [
            k
            for k in (
                "batch_sizes",
                "default_batch_size",
                "eta",
                "prune_rounds",
                "window",
                "policy",
                "recurrences",
            )
            if saved_job.get(k) != self.job[k]
        ]
        if differ:
            raise ConfigError(
                f"{self.state_path} belongs to a job with different {', '.join(differ)} "
                f"({', '.join(f'{k}={saved_job.get(k)}' for k in differ)}); use another state file"
            )
        self.job["seed"] = saved_job["seed"]
        return policy

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.state_path.with_name(self.state_path.name + ".lock"), "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    def save(self) -> None:
        """Write the state atomically."""
        data: dict[str, Any] = {
            "version": STATE_VERSION,
            "job": self.job,
            "policy": self.policy.state_dict(),
            "runs": [asdict(r) for r in self.runs],
        }
        atomic_write_text(self.state_path, json.dumps(data, indent=1) + "\n")

    # Decisions ------------------------------------------------------------------------------
    @property
    def cost(self) -> Cost:
        """The cost each run is charged (its eta the state's)."""
        return Cost(float(self.job["eta"]))

    @property
    def beta(self) -> float:
        """Early-stop threshold."""
        return float(self.job["beta"])

    def next_batch_size(self) -> int:
        """Batch size for this recurrence (the policy's prediction).

        The prediction draws from the policy's generator; it is not saved until :meth:`report`,
        so a recurrence that crashes before reporting is asked again identically.
        """
        return self.policy.predict()

    def best_cost_j(self) -> float:
        """Least cost of the runs that reached the target (``inf`` before any)."""
        costs = [r.cost_j for r in self.runs if r.reached]
        return min(costs) if costs else math.inf

    def should_stop(self, cost_so_far_j: float, epochs_done: int = 0) -> bool:
        """Whether a run that has cost ``cost_so_far_j`` should stop early.

        Cost > beta x best; and, once an epoch is done, before the epoch that would pass the
        optimizer's cap for this run (:meth:`~zeus_bench.optimizers.Optimizer.stop_cost`, given the
        mean epoch cost so far; ``zeus`` has none, ``zeus-plus`` caps its probes).
        """
        best = self.best_cost_j()
        default = self.beta * best if math.isfinite(best) else math.inf
        if epochs_done > 0:
            epoch_cost = cost_so_far_j / epochs_done
            cap = self.policy.stop_cost(default, epoch_cost)
            if cap < default and cost_so_far_j + epoch_cost > cap:
                return True
        return math.isfinite(best) and cost_so_far_j > default

    def report(
        self,
        batch_size: int,
        cost_j: float,
        reached: bool,
        energy_j: float = math.nan,
        time_s: float = math.nan,
        early_stopped: bool = False,
        epochs: int = 0,
    ) -> RunRecord:
        """Record a finished run, feed it to the policy and save the state.

        The state is re-read under the file lock first, so concurrent reports all land.
        """
        record = RunRecord(
            batch_size=int(batch_size),
            cost_j=float(cost_j),
            energy_j=float(energy_j),
            time_s=float(time_s),
            reached=bool(reached),
            early_stopped=bool(early_stopped),
            epochs=int(epochs),
            finished_unix_s=time.time(),
        )
        with self._locked():
            # Another recurrence may have reported since this one loaded the state: then start
            # from the file, as ProfileCache.put does, so that neither report is lost. (Else keep
            # the policy in memory: its generator has advanced by this run's prediction.)
            if self._saved_run_count() != self._loaded_runs:
                log.info(
                    "%s: another recurrence reported meanwhile; adding this run to its state", self.state_path
                )
                self.policy = self._load()
            self.policy.observe(record.batch_size, record.cost_j, record.reached, float(record.epochs))
            self.runs.append(record)
            self.save()
            self._loaded_runs = len(self.runs)
        log.debug(
            "run at batch size %d: cost %.4g J, %s%s",
            batch_size,
            cost_j,
            "reached the target" if reached else "did not reach the target",
            " (stopped early)" if early_stopped else "",
        )
        return record

    def best_batch_size(self) -> int:
        """The policy's best batch size so far."""
        return self.policy.best_batch_size()

    def phase(self) -> str:
        """The policy's phase in a word: ``pruning`` or ``thompson`` (``zeus``), else the policy's name."""
        pruning = getattr(self.policy, "pruning", None)  # the Zeus bandit's phase; others have none
        if pruning is None:
            return str(self.job["policy"])
        return "pruning" if pruning else "thompson"

    def choice_reason(self) -> str:
        """Why the policy is choosing as it does now, in a few words (logs and summaries).

        ``zeus``: pruning exploration (each candidate batch size tried in turn, those that fail or
        cost more than beta x the best dropped) or Thompson sampling over the remaining arms;
        other policies: their name and the runs so far.
        """
        name, phase = self.job["policy"], self.phase()
        if phase == "pruning":
            return f"{name}: pruning, each batch size in turn"
        if phase == "thompson":
            arms = ", ".join(str(b) for b in getattr(self.policy, "arms", []))
            return f"{name}: Thompson sampling over {arms}"
        return f"{name} after {len(self.runs)} run(s)"
