"""What the replay knows of one job for one cost: per-configuration figures, JIT limits, paths.

:class:`JobModel` is computed once per (job, cost) and read by every executor of the replay (the
executor of :mod:`zeus_bench.sim.executor` and the arrival replays); the rows they write have the
fields :data:`RUN_FIELDS`, kept as columns over a run of seeds (:class:`SeedTries`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.optimizers.jit import jit_power_limit
from zeus_bench.traces.jobs import JobTrace

# Row layout of a try (see RUN_FIELDS); identity columns are added per block.
RUN_FIELDS = (
    "recurrence",
    "attempt",
    "batch_size",
    "power_limit_w",
    "epochs",
    "energy_j",
    "time_s",
    "cost",
    "reached",
    "profiled",
    "ran",
    "expected_energy_j",
    "expected_time_s",
    "expected_cost",
)
Row = tuple[int, int, int, float, float, float, float, float, bool, bool, bool, float, float, float]


class JitConfig(NamedTuple):
    """One batch size's figures at its JIT limit (:meth:`JobModel.at_jit_limits`)."""

    paths: list[float]  # target epoch of each training path (inf: never)
    n_paths: int
    budget_epoch_cost: float  # the early-stop budget's epoch cost (per-batch-size MAXPOWER)
    energy_per_epoch_j: float
    time_per_epoch_s: float
    profile_energy_j: float  # the JIT profiling first epoch
    profile_time_s: float
    limit_w: float
    expected_energy_j: float
    expected_time_s: float
    expected_cost: float


def default_recurrences(job: JobTrace) -> int:
    """2 x |B| x |P| of the job on its GPU."""
    return 2 * len(job.batch_sizes) * len(job.power_limits)


def first_recurrence_error(model: JobModel, batch_size: int) -> ConfigError:
    """The error of a try of the first recurrence that ran and did not reach the target."""
    job = model.job
    return ConfigError(
        f"workload {job.workload.id!r} on {job.gpu!r}: batch size {batch_size} did "
        f"not reach the target in the first recurrence (the default must converge)"
    )


def check_job(job: JobTrace) -> None:
    """Refuse a job that cannot be replayed: b0 that never converges within max epochs."""
    reach = job.reach_fraction()[job.bs_index(job.b0)]
    if reach == 0.0:
        raise ConfigError(
            f"workload {job.workload.id!r} on {job.gpu!r}: default batch size {job.b0} never "
            f"reaches the target within {job.max_epochs} epochs"
        )


class JobModel:
    """Per-configuration figures of one job for one cost, as Python lists for a fast loop.

    ``when_s``: each recurrence's place in time (index: the recurrence, from 1; s after the
    first's), or None: the tries have none. With it and a priced term in the cost
    (:attr:`Cost.terms <zeus_bench.core.cost.Cost.terms>`), a try's cost and its early-stop
    budget's epoch cost add the terms' price at the try's place (:meth:`when`); the
    per-configuration figures here stay the energy-time cost's.
    """

    def __init__(self, job: JobTrace, cost: Cost, when_s: Sequence[float] | np.ndarray | None = None) -> None:
        """Precompute epoch energy, time and cost, JIT choices and path target epochs."""
        if not isinstance(cost, Cost):  # a bare eta, as before the Cost: say so at once
            raise TypeError(
                f"JobModel takes a zeus_bench.core.cost.Cost, got {cost!r} (wrap an eta: Cost(eta))"
            )
        check_job(job)
        self.job = job
        self.cost = cost
        # The places in time, kept only when they change a cost (a priced term).
        self.when_s = None if when_s is None or not cost.priced else np.asarray(when_s, dtype=float)
        self.max_power_w = job.max_power_w
        self.max_epochs = job.max_epochs
        self.bs_index = {int(b): i for i, b in enumerate(job.batch_sizes)}
        self.limit_index = {float(p): j for j, p in enumerate(job.power_limits)}
        tpe = job.time_per_epoch_s
        pw = job.avg_power_w
        energy = tpe * pw
        self.energy_per_epoch_j: list[list[float]] = energy.tolist()
        self.time_per_epoch_s: list[list[float]] = tpe.tolist()
        # Epoch cost for the early-stop budget: the cost of one epoch's energy (time x power of
        # the trace row) and time, with the per-batch-size MAXPOWER (quirk), as the paper's code.
        cost_b = cost.zeus_cost(energy, tpe, job.max_power_by_bs_w[:, None])
        self.budget_epoch_cost: list[list[float]] = cost_b.tolist()
        prof_e, prof_t = job.profile_energy_j, job.profile_time_s
        self.profile_energy_j = (np.nanmean(energy, axis=1) if prof_e is None else prof_e).tolist()
        self.profile_time_s = (np.nanmean(tpe, axis=1) if prof_t is None else prof_t).tolist()
        jit_t = tpe if job.jit_time_per_epoch_s is None else job.jit_time_per_epoch_s
        jit_p = pw if job.jit_avg_power_w is None else job.jit_avg_power_w
        self.jit_limit_w: list[float] = []
        for i in range(len(job.batch_sizes)):
            ok = ~np.isnan(jit_t[i])
            self.jit_limit_w.append(
                jit_power_limit(
                    job.power_limits[ok], jit_t[i, ok], jit_p[i, ok], cost, float(job.max_power_by_bs_w[i])
                )
            )
        # Paths: target epoch (inf = never), per batch size.
        self.paths: list[list[float]] = [np.where(np.isnan(t), np.inf, t).tolist() for t in job.target_epochs]
        epochs = job.mean_target_epochs()
        exp_e = epochs[:, None] * energy
        exp_t = epochs[:, None] * tpe
        self.expected_energy_j: list[list[float]] = exp_e.tolist()
        self.expected_time_s: list[list[float]] = exp_t.tolist()
        self.expected_cost: list[list[float]] = cost.zeus_cost(exp_e, exp_t, job.max_power_w).tolist()
        self._at_jit: list[JitConfig] | bool | None = False  # not computed yet

    def at_jit_limits(self) -> list[JitConfig] | None:
        """Per batch-size index, its figures at its JIT limit (computed once); None if one is unmeasured.

        The executors that replay JIT-limit policies over many seeds read these tables instead of
        looking each try's configuration up (None: they do not apply, the executor reports it).
        """
        if self._at_jit is False:
            configs: list[JitConfig] | None = []
            for bi, limit in enumerate(self.jit_limit_w):
                pj = self.limit_index.get(limit)
                if pj is None or math.isnan(self.time_per_epoch_s[bi][pj]) or configs is None:
                    configs = None
                    continue
                paths = self.paths[bi]
                configs.append(
                    JitConfig(
                        paths, len(paths), self.budget_epoch_cost[bi][pj], self.energy_per_epoch_j[bi][pj],
                        self.time_per_epoch_s[bi][pj], self.profile_energy_j[bi], self.profile_time_s[bi],
                        limit, self.expected_energy_j[bi][pj], self.expected_time_s[bi][pj],
                        self.expected_cost[bi][pj],
                    )
                )  # fmt: skip
            self._at_jit = configs
        return self._at_jit  # type: ignore[return-value]

    def when(self, recurrence: np.ndarray) -> np.ndarray | None:
        """Each ``recurrence``'s place in time, s; None when no priced term needs it (the cost is the paper's)."""
        return None if self.when_s is None else self.when_s[recurrence]

    def indices(self, decision: tuple[int, float | None]) -> tuple[int, int]:
        """(batch size index, limit index) of a decision (batch size, limit); ConfigError if unknown."""
        try:
            bi = self.bs_index[decision[0]]
            pj = self.limit_index[float(decision[1])]  # type: ignore[arg-type]
        except KeyError:
            raise ConfigError(f"policy chose an unmeasured configuration {decision}") from None
        if math.isnan(self.time_per_epoch_s[bi][pj]):
            raise ConfigError(f"policy chose an unmeasured configuration {decision}")
        return bi, pj


def row_columns(rows: list[Row]) -> dict[str, np.ndarray]:
    """The try fields of ``rows`` as one array per field (what ``np.asarray`` of each gives).

    Every field is a number, so the rows go into one float matrix in a single conversion; a
    field whose first value is a ``bool`` or an ``int`` is cast back (exactly: they are small).
    """
    if not rows:
        return {name: np.asarray([]) for name in RUN_FIELDS}
    matrix = np.array(rows, dtype=float)
    columns: dict[str, np.ndarray] = {}
    for k, (name, first) in enumerate(zip(RUN_FIELDS, rows[0], strict=True)):
        col = np.ascontiguousarray(matrix[:, k])
        if isinstance(first, bool):
            columns[name] = col != 0.0
        elif isinstance(first, int) and np.array_equal(np.trunc(col), col):
            columns[name] = col.astype(np.int64)
        else:
            columns[name] = col
    return columns


class SeedTries:
    """The rows of a run of seeds as columns: each row's seed (its position) and the try fields.

    Rows go seed by seed (positions ascending), each seed's in its replay's order. Indexing (and
    iterating) gives one seed's rows as :data:`Row` tuples.

    Attributes:
        seeds: The number of seeds.
        seed: Each row's seed position (int64).
        columns: One array per field of :data:`RUN_FIELDS`.
    """

    def __init__(self, seeds: int, seed: np.ndarray, columns: dict[str, np.ndarray]) -> None:
        """Rows of ``seeds`` seeds, ``seed`` ascending."""
        self.seeds = seeds
        self.seed = seed
        self.columns = columns
        self._bounds = np.searchsorted(seed, np.arange(seeds + 1)).tolist()

    def __len__(self) -> int:
        """The number of seeds."""
        return self.seeds

    def __getitem__(self, k: int) -> list[Row]:
        """Seed ``k``'s rows."""
        if not -self.seeds <= k < self.seeds:
            raise IndexError(k)
        k %= self.seeds
        lo, hi = self._bounds[k], self._bounds[k + 1]
        return list(zip(*(self.columns[name][lo:hi].tolist() for name in RUN_FIELDS), strict=True))  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[list[Row]]:
        """Each seed's rows in turn."""
        return (self[k] for k in range(self.seeds))

    def __eq__(self, other: object) -> bool:
        """The same rows, seed by seed (as lists of rows compare)."""
        if isinstance(other, SeedTries):
            return list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def seed_range(self, lo: int, hi: int) -> SeedTries:
        """The rows of seeds ``lo`` to ``hi - 1``, as seeds 0, 1, ... of their own (rows are in seed order)."""
        a, b = np.searchsorted(self.seed, [lo, hi]).tolist()
        return SeedTries(hi - lo, self.seed[a:b] - lo, {name: col[a:b] for name, col in self.columns.items()})

    def splice(self, positions: Sequence[int], other: SeedTries) -> SeedTries:
        """These rows with ``other``'s (its seed ``k`` this run's ``positions[k]``, who have no row here)."""
        seed = np.concatenate([self.seed, np.asarray(positions, dtype=np.int64)[other.seed]])
        order = np.argsort(seed, kind="stable")
        columns = {n: np.concatenate([self.columns[n], other.columns[n]])[order] for n in RUN_FIELDS}
        return SeedTries(self.seeds, seed[order], columns)
