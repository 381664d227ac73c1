"""Join train and power traces into per-job arrays: the data every analysis and replay uses.

A *job* is one workload (dataset, network, optimizer, target metric, max epochs, b0) on one GPU
kind. :class:`JobTrace` holds, per batch size ``b`` and power limit ``p`` of the joined traces,
the time per epoch and average power, and per batch size the target epochs of its training paths
(NaN: never reached). Everything is NumPy so that replay loops stay out of pandas.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from zeus_bench.cost import epoch_cost
from zeus_bench.errors import ConfigError, TraceFormatError, UnknownWorkloadError
from zeus_bench.registry import WorkloadSpec, load_workloads
from zeus_bench.store import read_table

log = logging.getLogger(__name__)

ArrayF = npt.NDArray[np.float64]
ArrayI = npt.NDArray[np.int64]
_POWER_RE = re.compile(r"^power-(?P<gpu>[A-Za-z0-9][A-Za-z0-9_-]*)\.parquet$")


@dataclass(frozen=True, eq=False)
class JobTrace:
    """Joined trace of one workload on one GPU kind.

    Attributes:
        workload: The job's registry entry.
        gpu: GPU kind.
        b0: Default batch size, capped at the largest batch size in this GPU's power trace.
        batch_sizes: Feasible batch sizes B (sorted ascending), whether or not they converge.
        power_limits: All power limits of the job (sorted ascending), W.
        time_per_epoch_s: Shape (len(B), len(P)); NaN where a (b, p) was not measured.
        avg_power_w: Shape (len(B), len(P)); NaN where not measured.
        target_epochs: One float array per batch size: each training path's target epoch, NaN
            for a path that never reached the target.
        max_power_w: Largest power limit in the GPU's joined data times the number of GPUs
            (MAXPOWER of the cost).
        max_power_by_bs_w: Per batch size, its largest limit times the number of GPUs (the
            replay's per-batch-size MAXPOWER quirk).
        num_gpus: GPUs per job.
        jit_time_per_epoch_s: Shape (len(B), len(P)): the time per epoch the JIT profiler sees,
            the mean over the job's trace rows of each (b, p) (one per training path, all equal
            to the measurement), as the paper's profiler averages them; ``None``: use
            :attr:`time_per_epoch_s`. The mean of repeated values can differ from the value in
            the last bit, which decides ties between limits.
        jit_avg_power_w: The same for the average power.
        profile_energy_j: Per batch size, the energy of a profiling first epoch: the mean of
            time x power over all the job's trace rows of that batch size (every path repeats
            every limit), in trace order as the paper's simulator takes it; ``None``: the mean
            over its limits.
        profile_time_s: The same for the time of a profiling first epoch.
    """

    workload: WorkloadSpec
    gpu: str
    b0: int
    batch_sizes: ArrayI
    power_limits: ArrayF
    time_per_epoch_s: ArrayF
    avg_power_w: ArrayF
    target_epochs: tuple[ArrayF, ...]
    max_power_w: float
    max_power_by_bs_w: ArrayF
    num_gpus: int = 1
    jit_time_per_epoch_s: ArrayF | None = None
    jit_avg_power_w: ArrayF | None = None
    profile_energy_j: ArrayF | None = None
    profile_time_s: ArrayF | None = None

    @property
    def max_epochs(self) -> int:
        """Epoch budget of one run."""
        return self.workload.max_epochs

    def bs_index(self, batch_size: int) -> int:
        """Index of ``batch_size`` in :attr:`batch_sizes`."""
        idx = int(np.searchsorted(self.batch_sizes, batch_size))
        if idx >= len(self.batch_sizes) or self.batch_sizes[idx] != batch_size:
            raise KeyError(batch_size)
        return idx

    def limits_of(self, batch_size: int) -> ArrayF:
        """Power limits measured for one batch size, ascending (W)."""
        row = self.time_per_epoch_s[self.bs_index(batch_size)]
        return self.power_limits[~np.isnan(row)]

    @property
    def energy_per_epoch_j(self) -> ArrayF:
        """Energy of one epoch per (b, p): time per epoch x average power (J)."""
        return self.time_per_epoch_s * self.avg_power_w

    def reach_fraction(self) -> ArrayF:
        """Per batch size, the fraction of paths that reach the target within max epochs."""
        return np.array([np.mean(~np.isnan(t) & (t <= self.max_epochs)) for t in self.target_epochs])

    def converging_batch_sizes(self) -> ArrayI:
        """Batch sizes every path of which reaches the target within max epochs."""
        return self.batch_sizes[self.reach_fraction() == 1.0]

    def mean_target_epochs(self) -> ArrayF:
        """Per batch size, mean target epoch over the paths that reach within max epochs."""
        out = np.full(len(self.batch_sizes), np.nan)
        for i, t in enumerate(self.target_epochs):
            ok = t[~np.isnan(t) & (t <= self.max_epochs)]
            if len(ok):
                out[i] = ok.mean()
        return out

    def max_batch(self) -> int:
        """Largest batch size whose paths all reach the target within max epochs."""
        conv = self.converging_batch_sizes()
        if len(conv) == 0:
            raise ConfigError(f"{self.workload.id} on {self.gpu}: no batch size converges")
        return int(conv[-1])

    def configurations(self, eta: float = 0.5) -> pd.DataFrame:
        """Expected ETA, TTA and cost of every measured (batch size, power limit).

        Expected values are means over the training paths that reach the target within max
        epochs; ``feasible`` is True only when every path does. Columns: ``batch_size,
        power_limit_w, time_per_epoch_s, avg_power_w, energy_per_epoch_j, reach_fraction,
        mean_epochs, feasible, eta_j, tta_s, cost``.
        """
        epochs = self.mean_target_epochs()
        reach = self.reach_fraction()
        b_idx, p_idx = np.nonzero(~np.isnan(self.time_per_epoch_s))
        tpe = self.time_per_epoch_s[b_idx, p_idx]
        pw = self.avg_power_w[b_idx, p_idx]
        tta = epochs[b_idx] * tpe
        eta_j = tta * pw
        return pd.DataFrame(
            {
                "batch_size": self.batch_sizes[b_idx],
                "power_limit_w": self.power_limits[p_idx],
                "time_per_epoch_s": tpe,
                "avg_power_w": pw,
                "energy_per_epoch_j": tpe * pw,
                "reach_fraction": reach[b_idx],
                "mean_epochs": epochs[b_idx],
                "feasible": reach[b_idx] == 1.0,
                "eta_j": eta_j,
                "tta_s": tta,
                "cost": epochs[b_idx] * epoch_cost(tpe, pw, eta, self.max_power_w),
            }
        )


class TraceSet:
    """A folder of imported traces: ``train.parquet`` and ``power-<gpu>.parquet`` files."""

    def __init__(self, directory: str | Path, workloads_file: str | Path | None = None) -> None:
        """Open a trace folder; files are read lazily and once."""
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise TraceFormatError(f"{self.directory}: no such trace folder")
        self.workloads = load_workloads(workloads_file)

    @property
    def gpus(self) -> list[str]:
        """GPU kinds with a power trace in the folder, sorted."""
        return sorted(m["gpu"] for p in self.directory.iterdir() if (m := _POWER_RE.match(p.name)))

    @functools.cached_property
    def train(self) -> pd.DataFrame:
        """The train trace."""
        path = self.directory / "train.parquet"
        if not path.exists():
            if (self.directory / "summary_train.csv").exists():
                raise self.unknown_gpu("")
            raise TraceFormatError(
                f"{self.directory}: no train.parquet (run 'zeus-bench traces import-zeus')"
            )
        return read_table(path, "train")

    @functools.cache  # noqa: B019 - one TraceSet per folder; the cache is its purpose
    def power(self, gpu: str) -> pd.DataFrame:
        """The power trace of one GPU kind."""
        path = self.directory / f"power-{gpu}.parquet"
        if not path.exists():
            raise self.unknown_gpu(gpu)
        return read_table(path, "power")

    def unknown_gpu(self, gpu: str) -> ConfigError:
        """The error for a GPU kind without a power trace here; it recognises a folder of raw Zeus CSVs."""
        if (self.directory / "summary_train.csv").exists() or any(self.directory.glob("summary_power_*.csv")):
            return ConfigError(
                f"{self.directory} holds the raw Zeus CSV traces, not imported ones; import them first: "
                f"zeus-bench traces import-zeus {self.directory} --out DIR, then pass --traces DIR"
            )
        known = ", ".join(self.gpus) or "none"
        return ConfigError(f"unknown GPU {gpu!r} in {self.directory}; traces exist for: {known}")

    @functools.cache  # noqa: B019
    def joined(self, gpu: str) -> pd.DataFrame:
        """Inner join of the train trace with one GPU's power trace."""
        keys = ["dataset", "network", "optimizer", "batch_size"]
        return self.train.merge(self.power(gpu), on=keys, how="inner")

    def workload_ids(self, gpu: str) -> list[str]:
        """Registered workloads that have rows in this GPU's joined trace, in registry order."""
        joined = self.joined(gpu)
        triples = joined[["dataset", "network", "optimizer"]].drop_duplicates()
        present = set(zip(triples["dataset"], triples["network"], triples["optimizer"], strict=True))
        return [w.id for w in self.workloads.values() if (w.dataset, w.network, w.optimizer) in present]

    @functools.cache  # noqa: B019
    def job(self, gpu: str, workload: str) -> JobTrace:
        """Build the :class:`JobTrace` of one workload on one GPU."""
        if workload not in self.workloads:
            raise UnknownWorkloadError(f"unknown workload {workload!r}; known: {', '.join(self.workloads)}")
        return build_job(self.joined(gpu), self.power(gpu), self.workloads[workload], gpu)


def build_job(joined: pd.DataFrame, power: pd.DataFrame, spec: WorkloadSpec, gpu: str) -> JobTrace:
    """Build a :class:`JobTrace` from a joined frame (train x power of one GPU).

    Raises:
        ConfigError: the workload has no rows, or its b0 is missing on this GPU.
    """
    ident = (
        (joined["dataset"] == spec.dataset)
        & (joined["network"] == spec.network)
        & (joined["optimizer"] == spec.optimizer)
    )
    family = joined[ident]
    rows = family[np.isclose(family["target_metric"].to_numpy(dtype=float), spec.target_metric)]
    if rows.empty:
        raise ConfigError(
            f"workload {spec.id!r} has no rows on GPU {gpu!r} "
            f"({spec.dataset}/{spec.network}/{spec.optimizer}, target {spec.target_metric})"
        )
    num_gpus = 1
    if "num_gpus" in joined.columns and joined["num_gpus"].notna().any():
        num_gpus = int(joined["num_gpus"].fillna(1).max())
    batch_sizes = np.array(sorted(family["batch_size"].unique()), dtype=np.int64)
    limits = np.array(sorted(family["power_limit_w"].unique()), dtype=float)
    n_b, n_p = len(batch_sizes), len(limits)
    tpe = np.full((n_b, n_p), np.nan)
    pw = np.full((n_b, n_p), np.nan)
    # The power trace has one row per (b, p) (its key): the joined rows only repeat it.
    measured = ["time_per_epoch_s", "avg_power_w"]
    per_config = family.groupby(["batch_size", "power_limit_w"], sort=True)[measured].first()
    bi = np.searchsorted(batch_sizes, per_config.index.get_level_values(0).to_numpy())
    pi = np.searchsorted(limits, per_config.index.get_level_values(1).to_numpy())
    tpe[bi, pi] = per_config["time_per_epoch_s"].to_numpy()
    pw[bi, pi] = per_config["avg_power_w"].to_numpy()
    # What the paper's profiler and first epoch see: means over the job's rows (see JobTrace).
    jit_t, jit_p = np.full((n_b, n_p), np.nan), np.full((n_b, n_p), np.nan)
    jit = rows.groupby(["batch_size", "power_limit_w"], sort=True)[measured].mean()
    ji = np.searchsorted(batch_sizes, jit.index.get_level_values(0).to_numpy())
    jj = np.searchsorted(limits, jit.index.get_level_values(1).to_numpy())
    jit_t[ji, jj] = jit["time_per_epoch_s"].to_numpy()
    jit_p[ji, jj] = jit["avg_power_w"].to_numpy()
    row_energy = rows["time_per_epoch_s"] * rows["avg_power_w"]
    prof_e = np.array([row_energy[rows["batch_size"] == b].mean() for b in batch_sizes])
    prof_t = np.array([rows.loc[rows["batch_size"] == b, "time_per_epoch_s"].mean() for b in batch_sizes])
    # One path per train row (all learning rates and runs); the power rows only repeat them.
    paths = rows.drop_duplicates(["batch_size", "learning_rate", "run"])
    target_epochs = []
    for b in batch_sizes:
        t = paths.loc[paths["batch_size"] == b, "target_epoch"].astype("Float64")
        target_epochs.append(t.to_numpy(dtype=float, na_value=np.nan))
    empty = [int(b) for b, t in zip(batch_sizes, target_epochs, strict=True) if len(t) == 0]
    if empty:
        raise ConfigError(
            f"workload {spec.id!r} on {gpu!r}: batch size(s) {empty} have no training path for "
            f"target {spec.target_metric}"
        )
    ds_bs = power.loc[power["dataset"] == spec.dataset, "batch_size"]
    b0 = min(spec.default_batch_size, int(ds_bs.max()))
    if b0 not in batch_sizes:
        raise ConfigError(
            f"workload {spec.id!r} on {gpu!r}: default batch size {b0} is not in the traces "
            f"(batch sizes: {batch_sizes.tolist()})"
        )
    max_power = float(joined["power_limit_w"].max()) * num_gpus
    max_by_bs = np.nanmax(np.where(np.isnan(tpe), np.nan, limits[None, :]), axis=1) * num_gpus
    return JobTrace(
        workload=spec,
        gpu=gpu,
        b0=b0,
        batch_sizes=batch_sizes,
        power_limits=limits,
        time_per_epoch_s=tpe,
        avg_power_w=pw,
        target_epochs=tuple(target_epochs),
        max_power_w=max_power,
        max_power_by_bs_w=max_by_bs,
        num_gpus=num_gpus,
        jit_time_per_epoch_s=jit_t,
        jit_avg_power_w=jit_p,
        profile_energy_j=prof_e,
        profile_time_s=prof_t,
    )
