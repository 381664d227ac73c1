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
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from zeus_bench.core.cost import DEFAULT_COST, Cost, max_power_w
from zeus_bench.core.errors import ConfigError, TraceFormatError, UnknownWorkloadError
from zeus_bench.store import read_columns, read_table
from zeus_bench.traces._columns import Columns, floats, group_first, group_mean, inner_join, series_mean
from zeus_bench.traces.workloads import WorkloadSpec, load_workloads

if TYPE_CHECKING:  # frames for the analyses; jobs are built from NumPy columns (no pandas)
    import pandas as pd

log = logging.getLogger(__name__)

#: Columns of the train and power traces a job is built from.
TRAIN_COLUMNS = (
    "dataset", "network", "optimizer", "batch_size", "learning_rate", "run", "target_metric", "target_epoch",
)  # fmt: skip
POWER_COLUMNS = (
    "gpu", "dataset", "network", "optimizer", "batch_size", "power_limit_w", "time_per_epoch_s", "avg_power_w",
    "num_gpus",
)  # fmt: skip
_JOIN_KEYS = ("dataset", "network", "optimizer", "batch_size")
#: A table as columns: a pandas frame, or a mapping of column name to array (e.g. :func:`read_columns`).

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

    def same_as(self, other: JobTrace) -> bool:
        """Whether ``other`` holds the same job: every field equal (arrays element by element, NaN equal to NaN)."""
        if self is other:
            return True

        def same(a: object, b: object) -> bool:
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                x, y = np.asarray(a), np.asarray(b)
                return (
                    x.shape == y.shape
                    and x.dtype == y.dtype
                    and bool(np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))
                )
            if isinstance(a, tuple) and isinstance(b, tuple):
                return len(a) == len(b) and all(same(u, v) for u, v in zip(a, b, strict=True))
            return a == b

        return all(same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

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
        """Per batch size, the fraction of paths that reach the target within max epochs (read-only, made once)."""
        return self._reach_fraction

    @functools.cached_property
    def _reach_fraction(self) -> ArrayF:
        out = np.array([np.mean(~np.isnan(t) & (t <= self.max_epochs)) for t in self.target_epochs])
        out.setflags(write=False)
        return out

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

    def configuration_arrays(self, cost: Cost = DEFAULT_COST) -> dict[str, np.ndarray]:
        """The columns of :meth:`configurations` as NumPy arrays (no pandas: the simulator's oracle)."""
        epochs = self.mean_target_epochs()
        reach = self.reach_fraction()
        b_idx, p_idx = np.nonzero(~np.isnan(self.time_per_epoch_s))
        tpe = self.time_per_epoch_s[b_idx, p_idx]
        pw = self.avg_power_w[b_idx, p_idx]
        tta = epochs[b_idx] * tpe
        eta_j = tta * pw
        return {
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
            "cost": epochs[b_idx] * cost.epoch_cost(tpe, pw, self.max_power_w),
        }

    def least_cost_configuration(self, cost: Cost = DEFAULT_COST) -> tuple[int, float]:
        """(batch size, limit) of least expected cost among those every path of which converges.

        Ties go to the smaller batch size, then the lower limit. The oracle policy runs it, and the
        potential table's least-cost columns are its configuration.

        Raises:
            ConfigError: no configuration reaches the target in every run.
        """
        cfg = self.configuration_arrays(cost)
        ok = cfg["feasible"]
        if not ok.any():
            raise ConfigError(
                f"{self.workload.id} on {self.gpu}: no configuration reaches the target in every run"
            )
        bs, pl, costs = cfg["batch_size"][ok], cfg["power_limit_w"][ok], cfg["cost"][ok]
        best = int(np.lexsort((pl, bs, costs))[0])  # the last key sorts first; NaN costs last
        return int(bs[best]), float(pl[best])

    def configurations(self, cost: Cost = DEFAULT_COST) -> pd.DataFrame:
        """Expected ETA, TTA and cost of every measured (batch size, power limit).

        Expected values are means over the training paths that reach the target within max
        epochs; ``feasible`` is True only when every path does. Columns: ``batch_size,
        power_limit_w, time_per_epoch_s, avg_power_w, energy_per_epoch_j, reach_fraction,
        mean_epochs, feasible, eta_j, tta_s, cost``.
        """
        import pandas as pd

        return pd.DataFrame(self.configuration_arrays(cost))


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

    def _train_path(self) -> Path:
        path = self.directory / "train.parquet"
        if not path.exists():
            if (self.directory / "summary_train.csv").exists():
                raise self.unknown_gpu("")
            raise TraceFormatError(
                f"{self.directory}: no train.parquet (run 'zeus-bench traces import-zeus')"
            )
        return path

    def _power_path(self, gpu: str) -> Path:
        path = self.directory / f"power-{gpu}.parquet"
        if not path.exists():
            raise self.unknown_gpu(gpu)
        return path

    @functools.cached_property
    def train(self) -> pd.DataFrame:
        """The train trace."""
        return read_table(self._train_path(), "train")

    @functools.cache  # noqa: B019 - one TraceSet per folder; the cache is its purpose
    def power(self, gpu: str) -> pd.DataFrame:
        """The power trace of one GPU kind."""
        df = read_table(self._power_path(gpu), "power")
        _check_one_gpu(self._power_path(gpu), df["gpu"].to_numpy(), gpu)
        return df

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

    @functools.cached_property
    def _train_columns(self) -> dict[str, np.ndarray]:
        return read_columns(self._train_path(), "train", TRAIN_COLUMNS)

    @functools.cache  # noqa: B019
    def _power_columns(self, gpu: str) -> dict[str, np.ndarray]:
        columns = read_columns(self._power_path(gpu), "power", POWER_COLUMNS)
        _check_one_gpu(self._power_path(gpu), columns["gpu"], gpu)
        return columns

    @functools.cache  # noqa: B019
    def _joined_columns(self, gpu: str) -> dict[str, np.ndarray]:
        return inner_join(self._train_columns, self._power_columns(gpu), _JOIN_KEYS)

    def workload_ids(self, gpu: str) -> list[str]:
        """Registered workloads that have rows in this GPU's joined trace, in registry order."""
        joined = self._joined_columns(gpu)
        triples = zip(
            joined["dataset"].tolist(), joined["network"].tolist(), joined["optimizer"].tolist(), strict=True
        )
        present = set(triples)
        return [w.id for w in self.workloads.values() if (w.dataset, w.network, w.optimizer) in present]

    @functools.cache  # noqa: B019
    def job(self, gpu: str, workload: str) -> JobTrace:
        """Build the :class:`JobTrace` of one workload on one GPU."""
        if workload not in self.workloads:
            raise UnknownWorkloadError(f"unknown workload {workload!r}; known: {', '.join(self.workloads)}")
        return build_job(self._joined_columns(gpu), self._power_columns(gpu), self.workloads[workload], gpu)


def _check_one_gpu(path: Path, gpus: np.ndarray, gpu: str) -> None:
    """Refuse a power trace whose ``gpu`` column names another GPU kind than its file (mixed GPUs).

    Raises:
        TraceFormatError: the file, the column and the kinds found.
    """
    others = sorted(set(gpus.astype(str).tolist()) - {gpu})  # (a set: np.unique would import numpy.ma)
    if others:
        raise TraceFormatError(
            f"{path}: column gpu holds {', '.join(others)} besides {gpu}: a power trace holds one GPU kind "
            f"(split it into power-<gpu>.parquet files)"
        )


def _job_rows(joined: Columns, spec: WorkloadSpec, gpu: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the workload's family (dataset, network, optimizer) in ``joined``, and of its target's rows.

    Raises:
        ConfigError: no row has the workload's target.
    """
    dataset, network, optimizer = (np.asarray(joined[k]) for k in ("dataset", "network", "optimizer"))
    family = np.flatnonzero(
        (dataset == spec.dataset) & (network == spec.network) & (optimizer == spec.optimizer)
    )
    metric = floats(joined, "target_metric")
    rows = family[np.isclose(metric[family], spec.target_metric)]
    if len(rows) == 0:
        raise ConfigError(
            f"workload {spec.id!r} has no rows on GPU {gpu!r} "
            f"({spec.dataset}/{spec.network}/{spec.optimizer}, target {spec.target_metric})"
        )
    return family, rows


def _num_gpus(joined: Columns) -> int:
    """GPUs of the job: the largest ``num_gpus`` of the table (a missing count is 1; no column: 1)."""
    if "num_gpus" in joined:
        counts = floats(joined, "num_gpus")
        if (~np.isnan(counts)).any():
            return int(np.nanmax(np.where(np.isnan(counts), 1.0, counts)))
    return 1


def _target_epochs(
    joined: Columns,
    rows: np.ndarray,
    row_bs: np.ndarray,
    batch_sizes: np.ndarray,
    spec: WorkloadSpec,
    gpu: str,
) -> list[np.ndarray]:
    """Epochs to the target of each training path, per batch size (in ``batch_sizes``' order).

    One path per train row (all learning rates and runs) among ``rows`` (of batch sizes
    ``row_bs``); the power rows only repeat them.

    Raises:
        ConfigError: a batch size without a path to the target.
    """
    lr, run = floats(joined, "learning_rate")[rows], floats(joined, "run")[rows]
    _, first = np.unique(np.stack([row_bs.astype(float), lr, run], axis=1), axis=0, return_index=True)
    path_rows = np.sort(first)
    target_epoch = floats(joined, "target_epoch")[rows][path_rows]
    path_bs = row_bs[path_rows]
    target_epochs = [target_epoch[path_bs == b] for b in batch_sizes]
    empty = [int(b) for b, t in zip(batch_sizes, target_epochs, strict=True) if len(t) == 0]
    if empty:
        raise ConfigError(
            f"workload {spec.id!r} on {gpu!r}: batch size(s) {empty} have no training path for "
            f"target {spec.target_metric}"
        )
    return target_epochs


def _default_batch_size(power: Columns, batch_sizes: np.ndarray, spec: WorkloadSpec, gpu: str) -> int:
    """The job's b0: the workload's default, capped at the largest batch size its dataset's power trace has.

    Raises:
        ConfigError: that batch size is not among ``batch_sizes``.
    """
    ds_bs = np.asarray(power["batch_size"])[np.asarray(power["dataset"]) == spec.dataset]
    b0 = min(spec.default_batch_size, int(ds_bs.max()))
    if b0 not in batch_sizes:
        raise ConfigError(
            f"workload {spec.id!r} on {gpu!r}: default batch size {b0} is not in the traces "
            f"(batch sizes: {batch_sizes.tolist()})"
        )
    return b0


def build_job(joined: Columns, power: Columns, spec: WorkloadSpec, gpu: str) -> JobTrace:
    """Build a :class:`JobTrace` from a joined table (train x power of one GPU) and the power table.

    Either may be a pandas frame or a mapping of column name to array (:func:`inner_join` of
    :func:`~zeus_bench.store.read_columns`); the figures are the same.

    Raises:
        ConfigError: the workload has no rows, or its b0 is missing on this GPU.
    """
    family, rows = _job_rows(joined, spec, gpu)
    num_gpus = _num_gpus(joined)
    bs_all = np.asarray(joined["batch_size"]).astype(np.int64)
    limit_all = floats(joined, "power_limit_w")
    tpe_all, pw_all = floats(joined, "time_per_epoch_s"), floats(joined, "avg_power_w")
    # (return_index: a plain np.unique imports numpy.ma to check for masked input)
    batch_sizes = np.unique(bs_all[family], return_index=True)[0]
    limits = np.unique(limit_all[family], return_index=True)[0]
    n_b, n_p = len(batch_sizes), len(limits)
    bi_all = np.searchsorted(batch_sizes, bs_all[family])
    pi_all = np.searchsorted(limits, limit_all[family])
    config = bi_all * n_p + pi_all  # (b, p) of each family row
    # The power trace has one row per (b, p) (its key): the joined rows only repeat it.
    tpe = np.full(n_b * n_p, np.nan)
    pw = np.full(n_b * n_p, np.nan)
    for target, values in ((tpe, tpe_all[family]), (pw, pw_all[family])):
        where, first = group_first(config, values)
        target[where] = first
    # What the paper's profiler and first epoch see: means over the job's rows (see JobTrace).
    in_rows = np.isin(family, rows)
    jit_t, jit_p = np.full(n_b * n_p, np.nan), np.full(n_b * n_p, np.nan)
    for target, values in ((jit_t, tpe_all[rows]), (jit_p, pw_all[rows])):
        where, means = group_mean(config[in_rows], values)
        target[where] = means
    row_bs = bs_all[rows]
    row_energy = tpe_all[rows] * pw_all[rows]
    prof_e = np.array([series_mean(row_energy[row_bs == b]) for b in batch_sizes])
    prof_t = np.array([series_mean(tpe_all[rows][row_bs == b]) for b in batch_sizes])
    target_epochs = _target_epochs(joined, rows, row_bs, batch_sizes, spec, gpu)
    b0 = _default_batch_size(power, batch_sizes, spec, gpu)
    tpe_bp, pw_bp = tpe.reshape(n_b, n_p), pw.reshape(n_b, n_p)
    max_power = max_power_w(float(np.max(limit_all)), num_gpus)
    max_by_bs = max_power_w(np.nanmax(np.where(np.isnan(tpe_bp), np.nan, limits[None, :]), axis=1), num_gpus)
    return JobTrace(
        workload=spec,
        gpu=gpu,
        b0=b0,
        batch_sizes=batch_sizes,
        power_limits=limits,
        time_per_epoch_s=tpe_bp,
        avg_power_w=pw_bp,
        target_epochs=tuple(target_epochs),
        max_power_w=max_power,
        max_power_by_bs_w=max_by_bs,
        num_gpus=num_gpus,
        jit_time_per_epoch_s=jit_t.reshape(n_b, n_p),
        jit_avg_power_w=jit_p.reshape(n_b, n_p),
        profile_energy_j=prof_e,
        profile_time_s=prof_t,
    )
